"""Schemathesis against the OpenAPI document of a real `reclass-ng serve`: generated requests,
valid and invalid, must never get a server error, except the documented 500
classification-conflict."""

from __future__ import annotations

import os

import pytest
from server_helpers import TOKEN, serve_example_copy

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

# Small and fixed, so the whole run stays well under a minute on a busy 2-core machine (the
# count of examples bounds it, not a wall-clock assertion, which a busy machine would fail); the
# generation is derandomized, so a failure found once is found again.
# RECLASS_NG_FUZZ_EXAMPLES=200 runs a deeper search by hand.
EXAMPLES_PER_OPERATION = int(os.environ.get("RECLASS_NG_FUZZ_EXAMPLES", "12"))
DOCUMENTED_SERVER_ERRORS = {"classification-conflict"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("fuzz")) as running:
        yield running


def _kind(response) -> str | None:
    try:
        return response.json().get("kind")
    except ValueError:
        return None


def test_no_server_errors_for_generated_requests(server) -> None:
    base, _ = server
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    failures: list[str] = []
    calls = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                      derandomize=True, suppress_health_check=list(HealthCheck))
            def exercise(case) -> None:
                nonlocal calls
                response = case.call(base_url=base, headers={"X-Authentication": TOKEN},
                                     timeout=30)
                calls += 1
                if response.status_code >= 500 and \
                        _kind(response) not in DOCUMENTED_SERVER_ERRORS:
                    failures.append(f"{case.method} {case.formatted_path} "
                                    f"query={case.query} body={case.body!r:.300} -> "
                                    f"{response.status_code} {response.text[:300]}")

            try:
                exercise()
            except Unsatisfiable:
                # Negative mode on an operation with nothing to get wrong (no parameters, no
                # body schema) has no cases at all.
                assert mode is GenerationMode.NEGATIVE, operation.label
    assert calls > 200, f"only {calls} requests were generated"
    assert not failures, f"{len(failures)} server error(s) in {calls} requests:\n" + \
        "\n".join(failures[:20])
