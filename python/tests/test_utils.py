import pytest

from awsglue.job import Job
from awsglue.utils import GlueArgumentError, getResolvedOptions


def test_resolves_named_options_from_a_glue_command_line():
    argv = ["script.py", "--JOB_NAME", "orders", "--JOB_RUN_ID", "jr_1", "--day", "2024-01-02",
            "--flag=x"]
    assert getResolvedOptions(argv, ["JOB_NAME", "day", "flag"]) == {
        "JOB_NAME": "orders", "day": "2024-01-02", "flag": "x"}


def test_missing_options_are_named():
    with pytest.raises(GlueArgumentError, match="--day, --month"):
        getResolvedOptions(["script.py", "--JOB_NAME", "x"], ["JOB_NAME", "day", "month"])


def test_commit_requires_init():
    job = Job()
    with pytest.raises(RuntimeError):
        job.commit()
    job.init("orders", {"JOB_NAME": "orders"})
    job.commit()
    assert job.committed
