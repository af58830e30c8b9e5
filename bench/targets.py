"""The speed targets of issue 5, evaluated on one run's results."""

from __future__ import annotations

from report import CaseResult, ImplResult

Check = tuple[str, str, bool | None]


def _impl(case: CaseResult | None, key: str) -> ImplResult | None:
    if case is None:
        return None
    found = next((impl for impl in case.impls if impl.key == key), None)
    return found if found is not None and found.measured else None


def _find(cases: list[tuple[dict, CaseResult]], shape: str, nodes: int) -> CaseResult | None:
    for metadata, case in cases:
        if metadata.get("shape") == shape and metadata.get("nodes") == nodes \
                and not metadata.get("queries"):
            return case
    return None


def evaluate_targets(cases: list[tuple[dict, CaseResult]]) -> list[Check]:
    """(target, measured value, met) for every target the run can say something about."""
    checks: list[Check] = []
    mcp2000 = _find(cases, "mcp", 2000)
    ng, kapicorp = _impl(mcp2000, "ng-cli"), _impl(mcp2000, "kapicorp")
    if ng and kapicorp:
        ratio = kapicorp.full.median_seconds / ng.full.median_seconds
        checks.append(("mcp 2000: full render >= 20x faster than kapicorp-reclass, one job",
                       f"{ratio:.1f}x", ratio >= 20))
    else:
        checks.append(("mcp 2000: full render >= 20x faster than kapicorp-reclass, one job",
                       "not measured", None))
    jobs = next((i for i in (mcp2000.impls if mcp2000 else []) if i.key == "ng-cli-j2"), None)
    if ng and jobs and jobs.measured:
        ratio = ng.full.median_seconds / jobs.full.median_seconds
        checks.append(("mcp 2000: --jobs 2 >= 1.6x faster than one job", f"{ratio:.2f}x",
                       ratio >= 1.6))
    else:
        checks.append(("mcp 2000: --jobs 2 >= 1.6x faster than one job",
                       jobs.skipped if jobs and jobs.skipped else "not measured", None))
    slower = []
    compared = 0
    for metadata, case in cases:
        if metadata.get("shape") == "rs-inventory":
            continue
        ng_case, rs_case = _impl(case, "ng-cli"), _impl(case, "rs")
        if ng_case and rs_case:
            compared += 1
            if ng_case.full.median_seconds >= rs_case.full.median_seconds:
                slower.append(case.title)
    checks.append(("faster than reclass-rs on every generated inventory",
                   f"{compared} compared" + (f", slower on: {'; '.join(slower)}" if slower else ""),
                   (not slower) if compared else None))
    rs_inventory = _find(cases, "rs-inventory", next(
        (m["nodes"] for m, _ in cases if m.get("shape") == "rs-inventory"), -1))
    ng_rs, rs = _impl(rs_inventory, "ng-cli"), _impl(rs_inventory, "rs")
    if ng_rs and rs:
        ratio = ng_rs.full.median_seconds / rs.full.median_seconds
        checks.append(("reclass-rs test inventory: <= 1.5x reclass-rs's time",
                       f"{ratio:.2f}x", ratio <= 1.5))
    ng_info = ng.nodeinfo if ng else None
    if ng_info and ng_info.runs:
        latency = ng_info.median_seconds * 1000
        checks.append(("mcp 2000: `reclass --nodeinfo` under 150 ms", f"{latency:.0f} ms",
                       latency < 150))
    small, large = _impl(_find(cases, "mcp", 100), "ng-cli"), None
    for size in (5000, 2000):
        large = _impl(_find(cases, "mcp", size), "ng-cli")
        if large:
            break
    if small and large and small.nodeinfo.runs and large.nodeinfo.runs:
        growth = large.nodeinfo.median_seconds / small.nodeinfo.median_seconds - 1
        top = 5000 if _impl(_find(cases, "mcp", 5000), "ng-cli") else 2000
        checks.append((f"`--nodeinfo` grows < 20% from 100 to 5000 nodes (measured to {top})",
                       f"{growth:+.0%}", growth < 0.2 if top == 5000 else None))
    if ng and kapicorp:
        checks.append(("mcp 2000: peak RSS below kapicorp-reclass's",
                       f"{ng.full.peak_rss_mb:.0f} MB vs {kapicorp.full.peak_rss_mb:.0f} MB",
                       ng.full.peak_rss_mb < kapicorp.full.peak_rss_mb))
    return checks
