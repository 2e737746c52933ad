"""GlueContext.transition_s3_path / transition_table / add_ingestion_time_columns (the GlueContext
page of the AWS Glue developer guide; openglue_runtime/storage_classes.py): arguments checked as
AWS documents them, files selected by retentionPeriod, the Success.csv/Failed.csv manifest, and
the ingestion-time columns on Spark."""
import datetime
import os
import time

import pytest

from engine_kit import glue_context
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)

OPTIONS = {"accountId": "123456789012", "roleArn": "arn:aws:iam::123456789012:role/tier"}


@pytest.fixture
def store(monkeypatch, tmp_path):
    import openglue_runtime.engines.embedded._engine  # noqa: F401  (built by `make build`)
    root = tmp_path / "s3"
    root.mkdir()
    monkeypatch.setenv("OPENGLUE_S3_ROOT", str(root))
    return root


def put(root, key, age_hours=0):
    p = root / key
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("x\n")
    then = time.time() - age_hours * 3600
    os.utime(p, (then, then))
    return p


def test_transition_selects_old_files_writes_the_manifest_and_keeps_the_files(store):
    ctx = glue_context("embedded")
    put(store, "data/t/old/a.json", age_hours=200)
    put(store, "data/t/b.json", age_hours=200)
    put(store, "data/t/new.json", age_hours=1)
    picked = ctx.transition_s3_path("s3://data/t/", "GLACIER",
                                    dict(OPTIONS, manifestFilePath="s3://data/manifests/run1/"))
    assert sorted(picked) == ["s3://data/t/b.json", "s3://data/t/old/a.json"]
    success = (store / "data/manifests/run1/Success.csv").read_text().split()
    assert sorted(success) == sorted(picked)
    assert (store / "data/manifests/run1/Failed.csv").read_text() == ""
    assert (store / "data/t/old/a.json").read_text() == "x\n"  # nothing changes in the files
    assert ctx.transition_s3_path("s3://data/t/", "STANDARD_IA",
                                  dict(OPTIONS, retentionPeriod=0)) != []
    assert ctx.transition_s3_path("s3://data/t/", "GLACIER",
                                  dict(OPTIONS, excludeStorageClasses=["STANDARD"])) == []


def test_transition_refuses_what_aws_refuses(store):
    ctx = glue_context("embedded")
    with pytest.raises(ValueError, match="storage class"):
        ctx.transition_s3_path("s3://data/t/", "COLD", OPTIONS)
    with pytest.raises(ValueError, match="accountId is mandatory"):
        ctx.transition_s3_path("s3://data/t/", "GLACIER", {"roleArn": OPTIONS["roleArn"]})
    with pytest.raises(ValueError, match="roleArn is mandatory"):
        ctx.transition_table("db", "t", "GLACIER", {"accountId": "1"})


def test_add_ingestion_time_columns_on_spark(store):
    ctx = glue_context("spark")
    df = ctx.spark_session.createDataFrame([(1,), (2,)], ["id"])
    before = datetime.datetime.now()
    out = ctx.add_ingestion_time_columns(df, "hour")
    assert out.columns == ["id", "ingest_year", "ingest_month", "ingest_day", "ingest_hour"]
    row = out.collect()[0]
    stamp = datetime.datetime(int(row["ingest_year"]), int(row["ingest_month"]),
                              int(row["ingest_day"]), int(row["ingest_hour"]))
    assert abs((stamp - before.replace(minute=0, second=0, microsecond=0)).total_seconds()) <= 3600
    assert len(row["ingest_month"]) == 2 and len(row["ingest_hour"]) == 2
    assert ctx.add_ingestion_time_columns(df, "day").columns[-1] == "ingest_day"
    assert ctx.add_ingestion_time_columns(df).columns[-1] == "ingest_minute"
    with pytest.raises(ValueError, match="timeGranularity"):
        ctx.add_ingestion_time_columns(df, "second")


def test_add_ingestion_time_columns_needs_spark(store):
    from openglue_runtime.engines.embedded.spark_api import SparkApiUnavailable
    with pytest.raises(SparkApiUnavailable, match="add_ingestion_time_columns"):
        glue_context("embedded").add_ingestion_time_columns(None, "day")
