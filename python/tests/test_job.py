import json
import os

import pytest

from awsglue.job import STATE_FILE, Job, current_job
from awsglue.utils import GlueArgumentError
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)


def test_init_makes_the_job_current_and_validates_bookmark_options():
    job = Job()
    job.init("orders", {"JOB_NAME": "orders", "job-bookmark-option": "job-bookmark-enable"})
    assert current_job() is job
    assert job.bookmark_option == "job-bookmark-enable"
    with pytest.raises(GlueArgumentError):
        Job().init("orders", {"job-bookmark-option": "bad"})
    with pytest.raises(GlueArgumentError):
        Job().init("orders", {"job-bookmark-from": "jr_1", "job-bookmark-to": "jr_2"})
    with pytest.raises(ValueError):
        Job().init("", {})


def test_sources_are_recorded_per_transformation_ctx():
    job = Job()
    job.init("orders", {"JOB_NAME": "orders"})
    files = [("s3://b/a.csv", 10, 1000), ("s3://b/b.csv", 20, 2000)]
    assert job.select_new("src", files) == files  # bookmarks disabled: everything is new
    job.register_source("src", {"type": "s3", "paths": ["s3://b/"], "files": files[:1]})
    job.register_source("src", {"type": "s3", "paths": ["s3://b/"], "files": files})
    job.register_source(None, {"type": "s3", "files": files})  # no ctx: not recorded
    job.register_source("", {"type": "s3", "files": files})
    sources = job.sources()
    assert list(sources) == ["src"]
    assert [tuple(f) for f in sources["src"]["files"]] == files
    sources["src"]["files"].clear()  # a copy
    assert len(job.sources()["src"]["files"]) == 2


def test_commit_in_a_job_run_writes_the_record_and_a_log_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENGLUE_JOB_RUN_ID", "jr_abc")
    job = Job()
    job.init("orders", {"JOB_NAME": "orders", "JOB_RUN_ID": "jr_abc"})
    job.register_source("in", {"type": "s3", "files": [["s3://b/k", 7, 5]]})
    job.commit()
    record = json.loads((tmp_path / STATE_FILE).read_text())
    assert record["job_name"] == "orders" and record["run_id"] == "jr_abc"
    assert record["bookmark_option"] == "job-bookmark-disable"
    assert record["sources"] == {"in": {"type": "s3", "files": [["s3://b/k", 7, 5]]}}
    assert record["committed_ms"] >= record["started_ms"]
    out = capsys.readouterr().out
    assert "job.commit(): job orders run jr_abc committed" in out
    assert "in (1 objects, 7 bytes)" in out


def test_commit_outside_a_job_run_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENGLUE_JOB_RUN_ID", raising=False)
    job = Job()
    job.init("orders", {})
    job.commit()
    assert os.listdir(tmp_path) == []
