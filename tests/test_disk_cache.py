"""`reclass --inventory --cache-dir DIR` (reclass_ng.incremental.disk_cache), driven through
the command line: the output is always a fresh render's; only changed nodes are rendered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory
from test_incremental import apply_edit, edits, start_inventory
from test_incremental_corpus import run_cli

from reclass_ng.incremental import cache_file as cache_file_module
from reclass_ng.incremental.file_stamps import local_devices


def inventory(tmp_path: Path) -> Path:
    return write_inventory(tmp_path / "inv", {
        "classes/common.yml": "parameters: {ntp: a}\napplications: [ntp]\n",
        "classes/web.yml": "classes: [common]\nparameters: {port: 80, url: 'http://${name}'}\n",
        "nodes/w1.yml": "classes: [web]\nparameters: {name: w1}\n",
        "nodes/w2.yml": "classes: [web]\nparameters: {name: w2}\n",
        "nodes/db.yml": "classes: [common]\nparameters: {name: db}\n",
    })


def reclass(base: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["-b", str(base), "--inventory", *extra], base)


def cache_file(cache: Path) -> Path:
    (found,) = cache.glob("inventory-*.cache")
    return found


INDEX_MAGIC = b"reclass-ng render cache\n"


def index_record(path: Path) -> bytes:
    """A cache's index without its first two lines (the format, the CRC-32 of the rest),
    checked against that CRC."""
    content = path.read_bytes()
    assert content.startswith(INDEX_MAGIC)
    crc_line, _, record = content[len(INDEX_MAGIC):].partition(b"\n")
    assert int(crc_line, 16) == zlib.crc32(record)
    return record


def write_index(path: Path, record: bytes) -> None:
    """Write an index whose CRC-32 matches `record` (header, entries and listing lines)."""
    path.write_bytes(INDEX_MAGIC + b"%08x\n" % zlib.crc32(record) + record)


def index_lines(path: Path) -> tuple[dict, bytes, bytes]:
    """The header, the entries line and the listing line of a cache's index file."""
    header_line, _, rest = index_record(path).partition(b"\n")
    header = json.loads(header_line)
    size = header["entries_size"]
    return header, rest[:size], rest[size + 1:-1]


def cache_parts(path: Path) -> tuple[dict, dict, bytes]:
    """The header, the entries and the output (the layout's ranges of the segments, without
    the timestamps) of a cache (doc: cache_file.py)."""
    header, entries_line, _ = index_lines(path)
    segments = [(path.parent / item[0]).read_bytes() for item in header["segments"]]
    return header, json.loads(entries_line), b"".join(
        segments[segment][start:end] for segment, start, end in header["layout"])


def edit_cache(path: Path, header: Callable[[dict], None] = lambda header: None,
               entries: Callable[[dict], None] = lambda entries: None,
               output: Callable[[bytes], bytes] = lambda output: output,
               listing: Callable[[dict], None] = lambda listing: None) -> None:
    """Change a cache's index and segments (`output` applies to each segment and keeps its
    size), keeping sizes and checksums consistent."""
    head, entries_line, listing_line = index_lines(path)
    body, nodes = json.loads(entries_line), json.loads(listing_line)
    header(head)
    entries(body)
    listing(nodes)
    listing_line = json.dumps(nodes).encode()
    for item in head["segments"]:
        segment = path.parent / item[0]
        content = output(segment.read_bytes())
        assert len(content) == item[1]
        segment.write_bytes(content)
        item[2] = zlib.crc32(content)
    encoded = json.dumps(body).encode()
    rest = encoded + b"\n" + listing_line + b"\n"
    head.update(entries_size=len(encoded), listing_size=len(listing_line))
    write_index(path, json.dumps(head).encode() + b"\n" + rest)


def segment_files(cache: Path) -> set[str]:
    return {path.name for path in cache.glob("inventory-*.out")}


def mark_cached_texts(path: Path) -> None:
    """Give every cached node's text a mark: `ntp: a` becomes `ntp: Z` (the same size); a node
    rendered again loses it."""
    edit_cache(path, output=lambda text: text.replace(b"ntp: a", b"ntp: Z"))


def test_cached_runs_print_what_a_fresh_run_prints(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    for fmt in ("yaml", "json"):
        plain = reclass(base, "-o", fmt)
        assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain
        assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain
    (base / "classes" / "web.yml").write_text("classes: [common]\nparameters: {port: 81}\n")
    assert reclass(base, "--cache-dir", str(cache)) == reclass(base)


@pytest.mark.parametrize("change", ["a warning added", "a range of the output cut short",
                                    "a file's stored digest"])
def test_a_changed_header_is_caught_by_the_checksum_and_the_cache_rebuilt(tmp_path: Path,
                                                                          change: str) -> None:
    """The header line is under the index's checksum: a header changed in place (valid JSON,
    the same key and sizes) is never taken for the output's description."""
    base, cache = inventory(tmp_path), tmp_path / "cache"
    plain = reclass(base)
    reclass(base, "--cache-dir", str(cache))
    path = cache_file(cache)
    content = path.read_bytes()
    header_start = content.index(b'{"key":')  # the header line, wherever the format puts it
    header_end = content.index(b"\n", header_start)
    header = json.loads(content[header_start:header_end])
    if change == "a warning added":
        header["warnings"].append("[WARNING] planted")
    elif change == "a range of the output cut short":
        header["layout"][-1][2] -= 2
    else:
        header["files"][0][1] = "00" * 16  # another digest: the output would count as stale
    path.write_bytes(content[:header_start] + json.dumps(header).encode() + content[header_end:])
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert (status, out) == plain[:2]
    assert "planted" not in err
    assert "ignoring the cache file" in err and "does not match its checksum" in err, err
    assert reclass(base, "--cache-dir", str(cache)) == plain  # rebuilt: no warning now


def test_the_lock_file_is_never_followed_through_a_symbolic_link(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    plain = reclass(base)
    reclass(base, "--cache-dir", str(cache))
    lock = Path(str(cache_file(cache)) + ".lock")
    lock.unlink()
    victim, kept = tmp_path / "created-through-the-link", tmp_path / "kept"
    kept.write_text("precious\n")
    for target in (victim, kept):
        lock.symlink_to(target)
        (base / "classes" / "web.yml").write_text(
            "classes: [common]\nparameters: {port: 81}\n")  # the next run writes the cache
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert (status, out) == reclass(base)[:2]
        assert "cannot write the cache file" in err, err
        lock.unlink()
        (base / "classes" / "web.yml").write_text(
            "classes: [common]\nparameters: {port: 80, url: 'http://${name}'}\n")
    assert not victim.exists()
    assert kept.read_text() == "precious\n"
    assert reclass(base, "--cache-dir", str(cache)) == plain  # a lock file of its own again


def test_only_nodes_whose_inputs_changed_are_rendered_again(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    reclass(base, "--cache-dir", str(cache))
    mark_cached_texts(cache_file(cache))
    (base / "classes" / "web.yml").write_text("classes: [common]\nparameters: {port: 81}\n")
    out = reclass(base, "--cache-dir", str(cache))[1]
    assert out.count("ntp: Z") == 1  # db does not use web: its stored text is printed
    assert out.count("ntp: a") == 2 and out.count("port: 81") == 2


def test_a_corrupted_or_foreign_cache_file_is_ignored_with_a_warning(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    plain = reclass(base)
    reclass(base, "--cache-dir", str(cache))
    path = cache_file(cache)
    good = path.read_bytes()
    for content in (b"\x00not json", json.dumps({"key": "another", "nodes": {}}).encode(),
                    good[:100], good[:-1] + b"!", good + b"\n", b""):
        path.write_bytes(content)
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert (status, out) == plain[:2]
        assert "ignoring the cache file" in err or content == b"", content[:40]
    edit_cache(path, header=lambda header: header.update(files="nonsense"))
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert (status, out) == plain[:2] and "malformed" in err
    # An entry is decoded only when something changed: change a node nobody else reads.
    node = base / "nodes" / "db.yml"
    for malformed in ({"deps": {"files": "nonsense"}}, {"deps": {"files": [-1]}},
                      {"text": [0, 10 ** 9]}, {"merge_warnings": [1]}):
        reclass(base, "--cache-dir", str(cache))  # a good cache again

        def spoil(entries: dict, malformed: dict = malformed) -> None:
            for field, value in malformed.items():
                if isinstance(value, dict):
                    entries["nodes"]["w1"][field].update(value)
                else:
                    entries["nodes"]["w1"][field] = value

        edit_cache(path, entries=spoil)
        node.write_text(node.read_text() + "# edited\n")
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert (status, out) == reclass(base)[:2] and "malformed" in err, malformed


def test_errors_and_warnings_are_those_of_a_fresh_run(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    (base / "nodes" / "db.yml").write_text("classes: [missing, common]\n")
    reclass(base, "--cache-dir", str(cache))
    plain = reclass(base)
    assert plain[0] != 0 and "missing" in plain[2]
    assert reclass(base, "--cache-dir", str(cache)) == plain
    plain = reclass(base, "-z", "true")
    assert "[WARNING]" in plain[2]
    assert reclass(base, "-z", "true", "--cache-dir", str(cache)) == plain
    assert reclass(base, "-z", "true", "--cache-dir", str(cache)) == plain


def test_concurrent_runs_leave_a_complete_cache(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    command = [sys.executable, "-m", "reclass_ng", "-b", str(base), "--inventory", "-o", "json",
               "--cache-dir", str(cache)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(4)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    nodes = [json.loads(out)["nodes"] for out, _ in outputs]
    assert all(set(n) == {"db", "w1", "w2"} for n in nodes)
    assert all(err == b"" for _, err in outputs)
    header, entries, text = cache_parts(cache_file(cache))  # one complete cache
    assert set(header["nodes"]) == set(entries["nodes"]) == {"db", "w1", "w2"}
    assert header["complete"] and text.count(b'"db": {') == 1
    index_record(cache_file(cache))  # its CRC-32 matches
    for name, size, crc, _ in header["segments"]:
        assert zlib.crc32((cache / name).read_bytes()) == crc and (cache / name).stat().st_size == size
    assert segment_files(cache) == {item[0] for item in header["segments"]}
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []


def test_the_setting_cache_dir_turns_the_cache_on(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    (base / "reclass-config.yml").write_text(f"cache_dir: {cache}\n")
    plain = reclass(base)
    assert cache_file(cache).exists()
    assert reclass(base) == plain
    os.unlink(cache_file(cache))


def stamps_trusted(header: dict) -> None:
    """Move the moment the stamps were taken well after every file's times: the stamps are
    trusted (what they are once the files are older than the racy margin, two seconds)."""
    header["taken_at"] = time.time_ns() + 60 * 10 ** 9


def same_size_edit_keeping_mtime(path: Path, old: str, new: str) -> None:
    before = os.stat(path)
    text = path.read_text()
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_edit_that_restores_the_mtime_is_seen(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    reclass(base, "--cache-dir", str(cache))
    edit_cache(cache_file(cache), header=stamps_trusted)
    mark_cached_texts(cache_file(cache))
    # Nothing changed: the stored output, marks and all (no file needed reading).
    assert reclass(base, "--cache-dir", str(cache))[1].count("ntp: Z") == 3
    same_size_edit_keeping_mtime(base / "nodes" / "w1.yml", "name: w1", "name: w9")
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert "http://w9" in out  # its ctime moved: hashed, changed, rendered again
    assert out.count("ntp: Z") == 2  # the other two nodes' stored texts
    marks = out.replace("ntp: Z", "ntp: a")
    assert (status, marks, err) == reclass(base)


def test_an_edit_right_after_the_cache_was_written_is_seen(tmp_path: Path) -> None:
    """The racy case: a file changed within the clock's granularity of being hashed can keep
    its whole stamp (a coarse clock gives the second write the same ctime). Such a stamp is
    never trusted; shown by forging the stamp a coarse clock would leave."""
    base, cache = inventory(tmp_path), tmp_path / "cache"
    node = base / "nodes" / "w1.yml"
    reclass(base, "--cache-dir", str(cache))
    same_size_edit_keeping_mtime(node, "name: w1", "name: w9")
    stat = os.stat(node)
    stamp = [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]

    def same_stamp(header: dict) -> None:
        for entry in header["files"]:
            if entry[0].endswith("w1.yml"):
                entry[2] = stamp

    edit_cache(cache_file(cache), header=same_stamp)
    saved = cache_file(cache).read_bytes()
    assert "http://w9" in reclass(base, "--cache-dir", str(cache))[1]  # racy: hashed
    # The same forged stamp taken long after the files changed is trusted (the rule above is
    # what saw the edit): the run prints the stored output. Not on a file system whose stat
    # data is never trusted (file_stamps.LOCAL_FILE_SYSTEMS): there it is hashed.
    cache_file(cache).write_bytes(saved)
    edit_cache(cache_file(cache), header=stamps_trusted)
    trusted = (os.major(stat.st_dev), os.minor(stat.st_dev)) in local_devices()
    assert ("http://w1" if trusted else "http://w9") in reclass(
        base, "--cache-dir", str(cache))[1]


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(edits, min_size=1, max_size=6), st.sampled_from(["yaml", "json"]))
def test_cached_runs_equal_fresh_runs_after_any_edits(edit_list: list[tuple], fmt: str) -> None:
    """The property test of the incremental render (test_incremental.py), through the cache:
    after every edit, a cached run prints what a run without the cache prints."""
    with tempfile.TemporaryDirectory() as tmp:
        base, cache = Path(tmp) / "inventory", Path(tmp) / "cache"
        start_inventory(base)
        assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == reclass(base, "-o", fmt)
        for edit in edit_list:
            apply_edit(base, edit)
            plain = reclass(base, "-o", fmt)
            assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain, edit
            assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain, edit


def test_the_cached_forms_are_those_assembled_from_node_fragments() -> None:
    from reclass_ng.incremental.disk_cache import CACHED_FORMS
    from reclass_ng.output.fragments import FRAGMENT_FORMS

    assert set(FRAGMENT_FORMS) == CACHED_FORMS


def test_a_changed_run_writes_only_what_it_rendered_and_compacts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    for index in range(6):  # nodes nobody edits: the first segment stays mostly live
        (base / "nodes" / f"n{index}.yml").write_text("classes: [common]\n")
    reclass(base, "--cache-dir", str(cache))
    (first,) = segment_files(cache)
    node = base / "nodes" / "w1.yml"
    node.write_text(node.read_text() + "# edited\n")
    assert reclass(base, "--cache-dir", str(cache)) == reclass(base)
    (new,) = segment_files(cache) - {first}
    assert first in segment_files(cache)  # the other nodes' texts stay where they were
    written = (cache / new).read_bytes()
    assert b"w1" in written and b"w2:" not in written and b"db:" not in written
    monkeypatch.setattr(cache_file_module, "MAX_SEGMENTS", 3)
    for edited in ("w2", "db", "w1", "w2"):  # one segment each, while they stay live
        node = base / "nodes" / f"{edited}.yml"
        node.write_text(node.read_text() + "# edited\n")
        assert reclass(base, "--cache-dir", str(cache)) == reclass(base)
        header = cache_parts(cache_file(cache))[0]
        assert len(header["segments"]) <= 3
        assert segment_files(cache) == {item[0] for item in header["segments"]}
    assert first in segment_files(cache)


def test_a_corrupted_or_missing_segment_is_ignored_with_a_warning(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    plain = reclass(base)
    reclass(base, "--cache-dir", str(cache))
    (segment,) = cache.glob("inventory-*.out")
    content = segment.read_bytes()
    segment.write_bytes(content.replace(b"ntp: a", b"ntp: Z"))  # same size, not its CRC
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert (status, out) == plain[:2] and "does not match its checksum" in err
    (segment,) = cache.glob("inventory-*.out")
    segment.unlink()
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert (status, out) == plain[:2] and "cannot be read" in err

    def elsewhere(header: dict) -> None:  # a copy of the segment, outside the cache directory
        (tmp_path / "outside.out").write_bytes((cache / header["segments"][0][0]).read_bytes())
        header["segments"][0][0] = "../outside.out"

    reclass(base, "--cache-dir", str(cache))
    edit_cache(cache_file(cache), header=elsewhere)
    status, out, err = reclass(base, "--cache-dir", str(cache))
    assert (status, out) == plain[:2] and "is not a segment of this cache" in err


def test_a_changed_class_list_dumps_the_frame_with_the_stored_listing(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    node = base / "nodes" / "w1.yml"
    for classes, listing_edit in (("[common]", None), ("[web]", {"w2": [["web"], 7]})):
        reclass(base, "--cache-dir", str(cache))
        mark_cached_texts(cache_file(cache))
        if listing_edit is not None:  # malformed: the kept nodes are rendered again too
            edit_cache(cache_file(cache), listing=lambda nodes, edit=listing_edit: nodes.update(edit))
        node.write_text(f"classes: {classes}\nparameters: {{name: w1}}\n")
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert out.count("ntp: Z") == (2 if listing_edit is None else 0)
        plain = reclass(base)
        assert (status, out.replace("ntp: Z", "ntp: a")) == plain[:2]
        assert err == plain[2] if listing_edit is None else "listing is malformed" in err


def modules_imported(base: Path, cache: Path) -> set[str]:
    """The reclass_ng modules a `reclass --inventory --cache-dir` process imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "reclass_ng", "-b",
                           str(base), "--inventory", "--cache-dir", str(cache)],
                          capture_output=True, text=True, check=True)
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


def test_a_cached_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    reclass(base, "--cache-dir", str(cache))
    unchanged = modules_imported(base, cache)
    assert "reclass_ng.incremental.disk_cache" in unchanged
    assert not {"reclass_ng.incremental.cached_run", "reclass_ng.parallel.chunks",
                "reclass_ng.output.block_yaml"} & unchanged  # the stored output is printed
    node = base / "nodes" / "w1.yml"
    node.write_text(node.read_text() + "# edited\n")
    changed = modules_imported(base, cache)
    assert "reclass_ng.incremental.cached_run" in changed  # the render's modules
    assert "reclass_ng.parallel.chunks" not in changed  # not the process pool's


def test_the_listing_holds_the_classes_of_the_nodes_rendered_again(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    reclass(base, "--cache-dir", str(cache))
    (base / "nodes" / "w1.yml").write_text("classes: [common]\nparameters: {name: w1}\n")
    assert reclass(base, "--cache-dir", str(cache)) == reclass(base)
    # w1 is kept now: the frame is dumped again with its classes from the stored listing.
    (base / "nodes" / "w2.yml").write_text("classes: [common]\nparameters: {name: w2}\n")
    assert reclass(base, "--cache-dir", str(cache)) == reclass(base)
