"""openglue_runtime.bookmarks.s3_select: the S3/local bookmark model as a pure function (no server)."""
import json
import random

import pytest

from openglue_runtime.bookmarks import (DEFAULT_MAX_BAND_MS, BookmarkStateError, is_done,
                                        reads_summary, s3_select, source_options)

MIN = 60000
BAND = DEFAULT_MAX_BAND_MS


def uris(files):
    return sorted(f[0] for f in files)


def test_a_first_run_reads_everything_up_to_its_start_and_remembers_only_the_band():
    now = 100 * MIN
    files = [("s3://b/old1", 10, now - 60 * MIN), ("s3://b/old2", 10, now - 20 * MIN),
             ("s3://b/recent", 10, now - 5 * MIN), ("s3://b/edge", 10, now - BAND),
             ("s3://b/now", 10, now)]
    selected, state = s3_select(files, None, now_ms=now)
    assert uris(selected) == uris(files)
    assert state["type"] == "s3" and state["high"] == now and state["floor"] == now - BAND
    assert state["maxBand"] == BAND
    # Only the versions above the floor are remembered one by one; "edge" is at the floor.
    assert state["band"] == [["s3://b/recent", now - 5 * MIN], ["s3://b/now", now]]
    assert json.loads(json.dumps(state)) == state


def test_the_next_run_reads_only_new_versions():
    t1 = 100 * MIN
    files = [("s3://b/a", 1, t1 - 30 * MIN), ("s3://b/b", 1, t1 - MIN)]
    _, s1 = s3_select(files, None, now_ms=t1)
    files2 = files + [("s3://b/c", 1, t1 + MIN)]
    selected, s2 = s3_select(files2, s1, now_ms=t1 + 2 * MIN)
    assert uris(selected) == ["s3://b/c"]
    selected, s3 = s3_select(files2, s2, now_ms=t1 + 3 * MIN)
    assert selected == []
    assert s3["floor"] >= s2["floor"] >= s1["floor"]


def test_a_version_listed_late_inside_the_band_is_read_once_and_not_lost():
    t1 = 100 * MIN
    a = ("s3://b/a", 1, t1 - 2 * MIN)
    late = ("s3://b/late", 1, t1 - 3 * MIN)  # older than a, but not in run 1's listing
    sel1, s1 = s3_select([a], None, now_ms=t1)
    assert sel1 == [a]
    sel2, s2 = s3_select([a, late], s1, now_ms=t1 + MIN)
    assert sel2 == [late]
    sel3, _ = s3_select([a, late], s2, now_ms=t1 + 20 * MIN)
    assert sel3 == []


def test_a_version_listed_later_than_the_band_is_below_the_floor():
    t1 = 100 * MIN
    sel1, s1 = s3_select([], None, now_ms=t1)
    too_late = ("s3://b/x", 1, t1 - BAND - 1)  # its mtime says it should have been listed
    sel2, _ = s3_select([too_late], s1, now_ms=t1 + MIN)
    assert sel2 == []
    assert is_done(s1, "s3://b/x", t1 - BAND - 1)


def test_an_object_rewritten_in_place_is_read_again():
    t1 = 100 * MIN
    v1 = ("s3://b/a", 5, t1 - MIN)
    _, s1 = s3_select([v1], None, now_ms=t1)
    v2 = ("s3://b/a", 7, t1 + MIN)
    sel, s2 = s3_select([v2], s1, now_ms=t1 + 2 * MIN)
    assert sel == [v2]
    # Rewritten long after: far below the band, still a new mtime.
    v3 = ("s3://b/a", 9, t1 + 60 * MIN)
    sel, _ = s3_select([v3], s2, now_ms=t1 + 90 * MIN)
    assert sel == [v3]


def test_versions_newer_than_the_run_start_wait_for_the_next_run():
    t1 = 100 * MIN
    future = ("s3://b/f", 1, t1 + 5)
    sel, s1 = s3_select([future], None, now_ms=t1)
    assert sel == [] and s1["band"] == []
    sel, _ = s3_select([future], s1, now_ms=t1 + 10)
    assert sel == [future]


def test_state_size_depends_on_the_band_not_on_the_number_of_objects():
    now = 10_000 * MIN
    state = None
    total = 0
    for run in range(20):
        t = now + run * 30 * MIN
        files = [(f"s3://b/r{run}/f{i}", 1, t - 29 * MIN + i) for i in range(500)]
        total += len(files)
        files += [(f"s3://b/extra{run}", 1, t - 100)]
        sel, state = s3_select(files, state, now_ms=t)
        assert len(sel) == 501
        # Only the one object written within the band before the run is remembered.
        assert len(state["band"]) == 1
    assert total == 10_000
    assert len(json.dumps(state)) < 400


def test_bounded_files_takes_the_oldest_first_and_the_rest_waits():
    t = 100 * MIN
    files = [(f"s3://b/f{i}", 10, t - 60 * MIN + i * MIN) for i in range(10)]  # all below band
    random.Random(1).shuffle(files)
    sel, s1 = s3_select(files, None, now_ms=t, bounded_files=3)
    assert uris(sel) == ["s3://b/f0", "s3://b/f1", "s3://b/f2"]
    # The floor did not pass what waits.
    assert s1["floor"] < t - 60 * MIN + 3 * MIN
    assert not is_done(s1, "s3://b/f3", t - 57 * MIN)
    sel, s2 = s3_select(files, s1, now_ms=t + 1, bounded_files=3)
    assert uris(sel) == ["s3://b/f3", "s3://b/f4", "s3://b/f5"]
    sel, s3 = s3_select(files, s2, now_ms=t + 2, bounded_files=100)
    assert uris(sel) == [f"s3://b/f{i}" for i in range(6, 10)]
    sel, _ = s3_select(files, s3, now_ms=t + 3)
    assert sel == []


def test_bounded_files_with_equal_mtimes_reads_each_exactly_once():
    t = 100 * MIN
    files = [(f"s3://b/f{i:02d}", 1, t - 60 * MIN) for i in range(7)]
    state, seen = None, []
    for run in range(5):
        sel, state = s3_select(files, state, now_ms=t + run, bounded_files=2)
        seen += uris(sel)
    assert sorted(seen) == uris(files) and len(seen) == len(set(seen))


def test_bounded_size_counts_bytes_and_always_takes_at_least_one():
    t = 100 * MIN
    files = [("s3://b/a", 60, t - 50 * MIN), ("s3://b/b", 60, t - 40 * MIN),
             ("s3://b/c", 500, t - 30 * MIN), ("s3://b/d", 1, t - 20 * MIN)]
    sel, s1 = s3_select(files, None, now_ms=t, bounded_size=130)
    assert uris(sel) == ["s3://b/a", "s3://b/b"]
    sel, s2 = s3_select(files, s1, now_ms=t, bounded_size=130)
    assert uris(sel) == ["s3://b/c"]  # alone larger than the bound: read alone
    sel, _ = s3_select(files, s2, now_ms=t, bounded_size=130)
    assert uris(sel) == ["s3://b/d"]


def test_max_files_in_band_defers_the_newest_band_objects_to_a_later_run():
    t = 100 * MIN
    old = [(f"s3://b/old{i}", 1, t - 60 * MIN + i) for i in range(5)]
    fresh = [(f"s3://b/new{i}", 1, t - 5 * MIN + i) for i in range(10)]
    sel, s1 = s3_select(old + fresh, None, now_ms=t, max_files_in_band=4)
    # Everything below the band plus the 4 oldest inside it.
    assert uris(sel) == uris(old + fresh[:4])
    assert len(s1["band"]) == 4
    # A run soon after cannot remember more: the band is full, nothing more is read.
    sel, s2 = s3_select(old + fresh, s1, now_ms=t + MIN, max_files_in_band=4)
    assert sel == []
    # Once the band has moved past them they need no remembering: all read, none twice.
    sel, s3 = s3_select(old + fresh, s2, now_ms=t + 20 * MIN, max_files_in_band=4)
    assert uris(sel) == uris(fresh[4:])
    assert s3["band"] == []


def test_a_lowered_cap_keeps_what_is_remembered_and_reads_what_needs_no_memory():
    t = 100 * MIN
    fresh = [(f"s3://b/n{i}", 1, t - MIN + i) for i in range(5)]
    _, s1 = s3_select(fresh, None, now_ms=t)
    assert len(s1["band"]) == 5
    older = ("s3://b/late-old", 1, t - 14 * MIN)  # late, inside the band of s1
    newer = ("s3://b/newer", 1, t + 10)
    sel, s2 = s3_select(fresh + [older, newer], s1, now_ms=t + 2 * MIN, max_files_in_band=2)
    # older is below the new band (t + 2 min - 15 min): it is read without being remembered;
    # the 5 remembered ones stay; "newer" would add to an over-full band: it waits.
    assert sel == [older]
    assert {tuple(e) for e in s2["band"]} >= {(f[0], f[2]) for f in fresh}
    sel, _ = s3_select(fresh + [older, newer], s2, now_ms=t + 40 * MIN, max_files_in_band=2)
    assert sel == [newer]


def test_a_pause_window_reads_what_runs_after_start_read_up_to_end():
    t = 100 * MIN
    a = ("s3://b/a", 1, t - 30 * MIN)
    b = ("s3://b/b", 1, t + 5 * MIN)
    c = ("s3://b/c", 1, t + 25 * MIN)
    d = ("s3://b/d", 1, t + 45 * MIN)
    _, s1 = s3_select([a], None, now_ms=t)
    _, s2 = s3_select([a, b], s1, now_ms=t + 20 * MIN)
    _, s3 = s3_select([a, b, c], s2, now_ms=t + 40 * MIN)
    listing = [a, b, c, d]
    sel, end = s3_select(listing, s1, s3, now_ms=t + 60 * MIN)
    assert uris(sel) == ["s3://b/b", "s3://b/c"]
    assert end == s3
    assert uris(s3_select(listing, s2, s3, now_ms=0)[0]) == ["s3://b/c"]
    assert uris(s3_select(listing, None, s1, now_ms=0)[0]) == ["s3://b/a"]
    assert s3_select(listing, s1, {}, now_ms=0)[0] == []  # ctx had no state at the end
    assert uris(s3_select(listing, s1, s3, now_ms=0, bounded_files=1)[0]) == ["s3://b/b"]


def test_pause_without_end_reads_what_enable_would():
    t = 100 * MIN
    files = [("s3://b/a", 1, t - MIN)]
    _, s1 = s3_select(files, None, now_ms=t)
    new = files + [("s3://b/b", 1, t + MIN)]
    assert uris(s3_select(new, s1, None, now_ms=t + 2 * MIN)[0]) == ["s3://b/b"]


def test_state_keeps_the_callers_keys_and_rejects_foreign_states():
    start = {"type": "s3", "paths": ["s3://b/"], "format": "csv", "floor": 5, "band": []}
    _, state = s3_select([], start, now_ms=100)
    assert state["paths"] == ["s3://b/"] and state["format"] == "csv"
    with pytest.raises(BookmarkStateError, match="jdbc"):
        s3_select([], {"type": "jdbc", "high": [1]}, now_ms=1)
    with pytest.raises(BookmarkStateError, match="damaged"):
        s3_select([], {"type": "s3", "floor": "x"}, now_ms=1)
    with pytest.raises(BookmarkStateError, match="damaged"):
        s3_select([], {"type": "s3", "band": [[1, 2]]}, now_ms=1)


def test_the_floor_never_moves_back():
    _, s1 = s3_select([], None, now_ms=100 * MIN)
    _, s2 = s3_select([], s1, now_ms=50 * MIN)  # a clock that went back
    assert s2["floor"] == s1["floor"] and s2["high"] == s1["high"]
    _, s3 = s3_select([], s1, now_ms=101 * MIN, max_band_ms=60 * MIN)  # a wider band
    assert s3["floor"] == s1["floor"]


def test_duplicate_listing_entries_are_read_once_and_listing_order_is_kept():
    t = 100 * MIN
    files = [("s3://b/z", 1, t - 2), ("s3://b/a", 1, t - 1), ("s3://b/z", 1, t - 2)]
    sel, _ = s3_select(files, None, now_ms=t)
    assert sel == [("s3://b/z", 1, t - 2), ("s3://b/a", 1, t - 1)]


def test_source_options_parse_glue_spellings():
    assert source_options({}) == {"max_band_ms": BAND, "max_files_in_band": None,
                                  "bounded_files": None, "bounded_size": None}
    assert source_options({"maxBand": "1000", "maxFilesInBand": 5, "boundedFiles": "10",
                           "boundedSize": " 2048 "}) == {
        "max_band_ms": 1000, "max_files_in_band": 5, "bounded_files": 10, "bounded_size": 2048}
    with pytest.raises(ValueError, match="boundedFiles"):
        source_options({"boundedFiles": "ten"})
    with pytest.raises(ValueError, match="boundedFiles"):
        source_options({"boundedFiles": 0})
    with pytest.raises(ValueError, match="maxBand"):
        source_options({"maxBand": -1})


def test_reads_summary_is_small():
    files = [(f"s3://b/{i}", 10, i) for i in range(100)]
    summary = reads_summary(files, {"high": 7, "floor": 3})
    assert summary == {"type": "s3", "objects": 100, "bytes": 1000, "high": 7, "floor": 3,
                       "first": ["s3://b/0", "s3://b/1", "s3://b/2"]}


# ---------------------------------------------------------------------------------------------
# Property: over random histories of writes, overwrites, late listings and runs (some of which
# never commit), every object version is read by committed runs exactly once.

def _simulate(seed):
    rng = random.Random(seed)
    band = rng.choice([0, 1, 5, 20, 50])
    cap = rng.choice([None, 1, 3, 10, 1000])
    bounded_files = rng.choice([None, None, 1, 2, 5])
    bounded_size = rng.choice([None, None, 15, 40])
    versions = []  # dicts: uri, mtime, visible (first listed at), size, replaced (or None)
    latest = {}
    t = 1000
    last_run = 0
    state = None
    reads = {}  # (uri, mtime) -> committed reads
    history = []  # (state after commit, set of versions read by that commit)
    for step in range(rng.randint(5, 60)):
        for _ in range(rng.randint(0, 6)):  # writes since the previous step
            t += rng.randint(0, 3)
            uri = f"s3://b/k{rng.randint(0, 15)}"
            mtime = t + rng.choice([0, 0, 0, -rng.randint(0, 3), rng.randint(1, 4)])  # skew
            # The model's one assumption: a version is listed by any run starting maxBand or
            # more after its mtime. So a version appearing now has an mtime above
            # (previous run - band), and is listed by mtime + band at the latest.
            mtime = max(mtime, last_run - band + 1)
            prior = latest.get(uri)
            if prior is not None and prior["mtime"] >= mtime:
                continue  # an overwrite gets a newer time
            visible = t + rng.choice([0, 0, rng.randint(0, max(0, mtime + band - t))])
            version = {"uri": uri, "mtime": mtime, "visible": visible,
                       "size": rng.randint(1, 20), "replaced": None}
            if prior is not None:
                prior["replaced"] = version["visible"]
            versions.append(version)
            latest[uri] = version
        t += rng.randint(0, 8)
        last_run = t
        listing = _listing(versions, t, rng)
        selected, new_state = s3_select(listing, state, now_ms=t, max_band_ms=band,
                                        max_files_in_band=cap, bounded_files=bounded_files,
                                        bounded_size=bounded_size)
        if bounded_files is not None:
            assert len(selected) <= bounded_files
        if rng.random() < 0.8:  # committed
            read = {(u, m) for u, _, m in selected}
            for key in read:
                reads[key] = reads.get(key, 0) + 1
            state = new_state
            history.append((state, read))
        assert len(state["band"] if state else []) <= max(cap or 1000, 15)
    # Let time pass until nothing is new (bounded runs need several).
    for _ in range(200):
        t += band + 10
        listing = _listing(versions, t, rng)
        selected, state = s3_select(listing, state, now_ms=t, max_band_ms=band,
                                    max_files_in_band=cap, bounded_files=bounded_files,
                                    bounded_size=bounded_size)
        read = {(u, m) for u, _, m in selected}
        for key in read:
            reads[key] = reads.get(key, 0) + 1
        history.append((state, read))
        if not selected:
            break
    return versions, reads, history, t


def _listing(versions, t, rng):
    listed = [(v["uri"], v["size"], v["mtime"]) for v in versions
              if v["visible"] <= t and (v["replaced"] is None or v["replaced"] > t)]
    rng.shuffle(listed)
    return listed


@pytest.mark.parametrize("seed", range(200))
def test_property_every_version_is_read_exactly_once(seed):
    versions, reads, history, end = _simulate(seed)
    assert all(n == 1 for n in reads.values()), {k: n for k, n in reads.items() if n != 1}
    for v in versions:
        if v["replaced"] is None:  # still there at the end: must have been read
            assert reads.get((v["uri"], v["mtime"])) == 1, (v, seed)


@pytest.mark.parametrize("seed", range(60))
def test_property_a_pause_window_reads_exactly_what_the_runs_in_it_read(seed):
    versions, reads, history, end = _simulate(seed)
    final = [(v["uri"], v["size"], v["mtime"]) for v in versions if v["replaced"] is None]
    rng = random.Random(seed)
    states = [None] + [s for s, _ in history]
    read_by = [set()] + [r for _, r in history]
    for _ in range(5):
        i = rng.randint(0, len(states) - 1)
        j = rng.randint(i, len(states) - 1)
        expected = set().union(*read_by[i + 1:j + 1]) if j > i else set()
        expected &= {(u, m) for u, _, m in final}
        end_state = states[j] if states[j] is not None else {}
        selected, _ = s3_select(final, states[i], end_state, now_ms=end)
        assert {(u, m) for u, _, m in selected} == expected, (seed, i, j)


# ---------------------------------------------------------------------------------------------
# signed_call: the SigV4-signed POST of the extension operations.

def _http_server(status, body):
    import http.server
    import threading

    seen = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen["headers"] = dict(self.headers)
            seen["body"] = self.rfile.read(int(self.headers["Content-Length"]))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, seen


def test_signed_call_posts_a_signed_json_request_and_parses_errors():
    import botocore.credentials
    from openglue_runtime.bookmarks import BookmarkServiceError, signed_call

    creds = botocore.credentials.Credentials("OGRUNKEY", "secret")
    httpd, seen = _http_server(200, {"JobBookmarkEntry": {"Version": 1}})
    try:
        endpoint = f"http://127.0.0.1:{httpd.server_port}"
        out = signed_call("OpenGlueCommitJobBookmark", {"JobName": "j"}, endpoint=endpoint,
                          region="eu-west-1", credentials=creds)
        assert out == {"JobBookmarkEntry": {"Version": 1}}
        headers = {k.lower(): v for k, v in seen["headers"].items()}
        assert headers["x-amz-target"] == "AWSGlue.OpenGlueCommitJobBookmark"
        assert headers["content-type"] == "application/x-amz-json-1.1"
        assert headers["authorization"].startswith(
            "AWS4-HMAC-SHA256 Credential=OGRUNKEY/") and "/eu-west-1/glue/aws4_request" in \
            headers["authorization"]
        assert json.loads(seen["body"]) == {"JobName": "j"}
    finally:
        httpd.shutdown()
    httpd, _ = _http_server(400, {"__type": "com.amazonaws#ConcurrentModificationException",
                                  "message": "already committed"})
    try:
        with pytest.raises(BookmarkServiceError) as err:
            signed_call("OpenGlueCommitJobBookmark", {}, credentials=creds,
                        endpoint=f"http://127.0.0.1:{httpd.server_port}")
        assert err.value.code == "ConcurrentModificationException" and err.value.status == 400
        assert "already committed" in str(err.value)
    finally:
        httpd.shutdown()
    with pytest.raises(BookmarkServiceError) as err:
        signed_call("X", {}, credentials=creds, endpoint="http://127.0.0.1:1")
    assert err.value.code == "ConnectionError"
