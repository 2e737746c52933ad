"""Glue ETL scripts as OpenGlue job runs (issue 8): StartJobRun of an unchanged Glue script on
the embedded engine, data in the embedded store (uploaded over its S3 API), output files and
catalog partitions checked; malformed input ends the run FAILED with a message naming the file."""
import os
import uuid

import pyarrow.dataset as ds
import pytest

from jobkit import OUTPUT, kit, log_messages, unique  # noqa: F401
from test_s3_api import s3_server


@pytest.fixture(scope="module")
def server():
    """This module's server has the S3 API on a known port (conftest's glue and jobkit's kit
    fixtures then use it)."""
    yield from s3_server("openglue-etl-")


CSV = ("id,name,amount,day\n"
       "1,ann,1.50,2024-03-01\n"
       "2,\"Smith, Jr.\",2.25,2024-03-01\n"
       "3,cy,x,2024-03-02\n"
       "4,dee,,2024-03-03\n")

ETL = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.transforms import ApplyMapping
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "database"])
    glue_context = GlueContext(SparkContext.getOrCreate())
    job = Job(glue_context)
    job.init(args["JOB_NAME"], args)
    raw = glue_context.create_dynamic_frame.from_catalog(
        database=args["database"], table_name="raw", transformation_ctx="raw")
    typed = ApplyMapping.apply(frame=raw, mappings=[
        ("id", "string", "id", "long"), ("name", "string", "name", "string"),
        ("amount", "string", "amount", "decimal(10,2)"), ("day", "string", "day", "string")])
    glue_context.write_dynamic_frame.from_catalog(
        frame=typed, database=args["database"], table_name="curated",
        additional_options={"enableUpdateCatalog": True, "partitionKeys": ["day"]})
    job.commit()
"""

READ = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["path", "format"])
    glue_context = GlueContext(SparkContext.getOrCreate())
    frame = glue_context.create_dynamic_frame.from_options(
        "s3", {"paths": [args["path"]]}, args["format"], {"withHeader": True})
    print("rows", frame.count())
"""


def put(server, bucket, key, body):
    server.s3().put_object(Bucket=bucket, Key=key, Body=body)


def test_a_glue_script_turns_a_csv_table_into_partitioned_parquet_in_the_catalog(kit, glue, server):
    db = unique("etl")
    raw, out = "raw-" + uuid.uuid4().hex[:8], "cur-" + uuid.uuid4().hex[:8]
    s3 = server.s3()
    s3.create_bucket(Bucket=raw)
    s3.create_bucket(Bucket=out)
    put(server, raw, "orders/part-1.csv", CSV.encode())
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "raw", "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": "string"} for n in ("id", "name", "amount", "day")],
            "Location": f"s3://{raw}/orders/",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde",
                          "Parameters": {"separatorChar": ",", "quoteChar": "\""}}}})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "curated", "Parameters": {"classification": "parquet"},
        "PartitionKeys": [{"Name": "day", "Type": "string"}],
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "name", "Type": "string"},
                        {"Name": "amount", "Type": "decimal(10,2)"}],
            "Location": f"s3://{out}/orders/",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}})
    job = kit.job(ETL)
    run = kit.run(job, timeout=120, Arguments={"--database": db})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")

    parts = glue.get_partitions(DatabaseName=db, TableName="curated")["Partitions"]
    assert sorted(p["Values"][0] for p in parts) == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert all(p["StorageDescriptor"]["Location"].startswith(f"s3://{out}/orders/day=") for p in parts)
    folder = os.path.join(server.data_dir, "s3", out, "orders")
    assert sorted(os.listdir(folder)) == ["day=2024-03-01", "day=2024-03-02", "day=2024-03-03"]
    rows = ds.dataset(folder, format="parquet", partitioning="hive").to_table().to_pylist()
    got = sorted(((r["id"], r["name"], None if r["amount"] is None else str(r["amount"]), str(r["day"]))
                  for r in rows))
    # "x" is not a decimal and "" is null: both become null (Glue's casts), never an error.
    assert got == [(1, "ann", "1.50", "2024-03-01"), (2, "Smith, Jr.", "2.25", "2024-03-01"),
                   (3, "cy", None, "2024-03-02"), (4, "dee", None, "2024-03-03")]


@pytest.mark.parametrize("name,body,fmt", [
    ("broken.csv", b'id,name\n1,"a" "b",c,d\n', "csv"),
    ("open-quote.csv", b'id,name\n1,"never closed\n2,b\n', "csv"),
    ("truncated.parquet", b"PAR1\x00\x00garbage", "parquet"),
])
def test_malformed_input_fails_the_run_with_a_message_naming_the_file(kit, server, name, body, fmt):
    bucket = "bad-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    put(server, bucket, "in/" + name, body)
    job = kit.job(READ)
    run = kit.run(job, timeout=120, Arguments={"--path": f"s3://{bucket}/in/", "--format": fmt})
    assert run["JobRunState"] == "FAILED"
    assert f"s3://{bucket}/in/{name}" in run["ErrorMessage"], run["ErrorMessage"]


def test_a_malformed_json_record_is_an_error_record_not_a_failed_run(kit, server):
    """As in Glue (the developer guide's errorsAsDynamicFrame example), a JSON record that does
    not parse is left out of the frame and counted as an error record; the run goes on."""
    bucket = "bad-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    put(server, bucket, "in/broken.json", b'{"a": 1}\n{"a": \n{"a": 3}\n')
    job = kit.job(READ + '    print("errors", frame.errorsCount())\n')
    run = kit.run(job, timeout=120, Arguments={"--path": f"s3://{bucket}/in/", "--format": "json"})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    out = log_messages(server.client("logs"), OUTPUT, run["Id"])
    # Line 2 is left open, so it goes on onto line 3, where it breaks: one error, one record.
    assert "rows 1" in out and "errors 1" in out, out


def test_a_missing_path_fails_the_run_naming_it(kit, server):
    job = kit.job(READ)
    run = kit.run(job, timeout=120, Arguments={"--path": "s3://no-such-bucket-og/x/", "--format": "csv"})
    assert run["JobRunState"] == "FAILED"
    assert "s3://no-such-bucket-og/x/" in run["ErrorMessage"], run["ErrorMessage"]
