"""openglue_runtime.bookmark_tool's pure parts (no server): which history entry set a ctx, what a diff
reports, which sources plan knows after a reset, and how states and reads are described.
The end-to-end behaviour through a real server is tests/test_bookmark_tool.py."""
import json

import pytest

from openglue_runtime import bookmark_tool as tool
from openglue_runtime.bookmarks import s3_select

MIN = 60000


def entry(version, action, run_id, state, reads=None, reset_to=None):
    e = {"Version": version, "Action": action, "RunId": run_id, "State": state,
         "JobBookmark": json.dumps(state), "Reads": reads or {}, "CommittedOn": 1764567000 + version}
    if reset_to:
        e["ResetToRunId"] = reset_to
    return e


def test_last_setters_names_the_entry_that_last_changed_each_ctx():
    a1, b1 = {"type": "s3", "floor": 1}, {"type": "s3", "floor": 5}
    a2 = {"type": "s3", "floor": 2}
    history = [entry(1, "COMMIT", "jr_1", {"a": a1, "b": b1}),
               entry(2, "COMMIT", "jr_2", {"a": a2, "b": b1}),   # b untouched by jr_2
               entry(3, "RESET", "jr_2", {}),
               entry(4, "COMMIT", "jr_4", {"a": a2})]            # a re-set after the reset
    setters = tool.last_setters(history)
    assert set(setters) == {"a"}
    assert setters["a"]["Version"] == 4
    setters = tool.last_setters(history[:2])
    assert setters["a"]["RunId"] == "jr_2" and setters["b"]["RunId"] == "jr_1"


def test_state_diff_reports_band_entries_as_added_and_removed():
    before = {"type": "s3", "floor": 10, "band": [["s3://b/x", 11], ["s3://b/y", 12]],
              "paths": ["s3://b/"]}
    after = {"type": "s3", "floor": 12, "band": [["s3://b/y", 12], ["s3://b/z", 13]],
             "paths": ["s3://b/"]}
    diff = tool.state_diff(before, after)
    assert diff["floor"] == [10, 12]
    assert diff["band"] == {"added": [["s3://b/z", 13]], "removed": [["s3://b/x", 11]]}
    assert "paths" not in diff
    assert tool.state_diff(before, before) == {}


def test_known_sources_keeps_a_ctx_that_a_reset_removed_without_a_start():
    state = {"type": "s3", "paths": ["s3://b/in/"], "floor": 3}
    history = [entry(1, "COMMIT", "jr_1", {"src": state}), entry(2, "RESET", "jr_1", {})]
    assert tool.known_sources(None, history) == {"src": (state, False)}
    current = {"State": {"src": state}}
    assert tool.known_sources(current, history[:1]) == {"src": (state, True)}


def test_plan_of_a_source_uses_the_runtimes_selection(monkeypatch):
    now = 100 * MIN
    listing = [("s3://b/in/old", 5, now - 60 * MIN), ("s3://b/in/new", 7, now - 1 * MIN)]
    _, state = s3_select(listing[:1], None, now_ms=now - 30 * MIN)
    state.update(paths=["s3://b/in/"], format="json", options={})
    monkeypatch.setattr(tool, "list_storage", lambda paths, st: list(listing))
    plan = tool.plan_s3("src", state, state, "job-bookmark-enable", now)
    assert plan["objects"] == ["s3://b/in/new"] and plan["count"] == 1 and plan["bytes"] == 7
    assert plan["listed"] == 2
    everything = tool.plan_s3("src", state, state, "job-bookmark-disable", now)
    assert everything["count"] == 2
    fresh = tool.plan_s3("src", state, None, "job-bookmark-enable", now)
    assert fresh["count"] == 2


def test_plan_reports_a_malformed_recorded_option_instead_of_failing(monkeypatch):
    monkeypatch.setattr(tool, "list_storage", lambda paths, st: [])
    state = {"type": "s3", "paths": ["s3://b/in/"], "options": {"boundedFiles": "many"}}
    plan = tool.plan_s3("src", state, state, "job-bookmark-enable", 1)
    assert "boundedFiles" in plan["error"]


def test_descriptions_of_states_and_reads():
    s3 = {"type": "s3", "paths": ["s3://b/in/"], "format": "csv", "floor": 1764566100000,
          "high": 1764567000000, "maxBand": 900000, "band": [["s3://b/in/a", 1764566900000]],
          "options": {"boundedFiles": 10}}
    lines = tool.describe_state(s3)
    assert lines[0] == "paths s3://b/in/; format csv"
    assert "high-water (floor) 2025-12-01 05:15:00.000 UTC" in lines[1]
    assert "band 1 object" in lines[1] and "boundedFiles=10" in lines[2]
    jdbc = {"type": "jdbc", "connection": "pg", "table": "public.orders", "keys": ["id"],
            "sort_order": "asc", "high": [42]}
    assert tool.describe_state(jdbc) == [
        "table public.orders via pg; keys [\"id\"] asc; high-water [42]"]
    assert tool.describe_reads({"type": "jdbc", "rows": 1, "high": [42]}) == "1 row, high [42]"
    text = tool.describe_reads({"type": "s3", "objects": 2, "bytes": 2048,
                                "floor": 1764566100000, "first": ["s3://b/1", "s3://b/2"]})
    assert text.startswith("2 objects, 2.0 KiB, high-water (floor) 2025-12-01 05:15:00.000 UTC")


def test_usage_errors_exit_with_status_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        tool.main(["diff", "job-only"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        tool.main([])
    assert exit_info.value.code == 2


def test_no_credentials_is_a_clear_error(monkeypatch, capsys, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    assert tool.main(["show", "j", "--endpoint-url", "http://127.0.0.1:1"]) == 1
    assert "no AWS credentials found" in capsys.readouterr().err
