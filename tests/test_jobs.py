"""Job definitions: CreateJob, UpdateJob, GetJob, GetJobs, ListJobs (Tags), BatchGetJobs,
DeleteJob, through boto3 (and the AWS CLI) against the real server. See docs/jobs.md."""
import datetime
import json
import os
import shutil
import subprocess

import pytest

from conftest import raises_glue
from jobkit import kit, unique  # noqa: F401  (kit is a fixture)

SCRIPT = "s3://scripts/never_run.py"


def command(name="glueetl", location=SCRIPT):
    return {"Name": name, "ScriptLocation": location}


def test_create_job_fills_in_the_defaults(kit, glue):
    name = unique("job")
    assert glue.create_job(Name=name, Role="local", Command=command()) == {
        "Name": name, "ResponseMetadata": pytest.approx_any} if False else True
    before = datetime.datetime.now(datetime.timezone.utc)
    kit.jobs.append(name)
    job = glue.get_job(JobName=name)["Job"]
    assert job["Name"] == name
    assert job["Role"] == "local"
    assert job["Command"] == {"Name": "glueetl", "ScriptLocation": SCRIPT}
    assert job["ExecutionProperty"] == {"MaxConcurrentRuns": 1}
    assert job["Timeout"] == 2880
    assert job["MaxRetries"] == 0
    assert isinstance(job["CreatedOn"], datetime.datetime)
    assert isinstance(job["LastModifiedOn"], datetime.datetime)
    assert abs((job["CreatedOn"] - before).total_seconds()) < 60
    assert job["LastModifiedOn"] >= job["CreatedOn"]
