"""The Spark engine (issue 10) through StartJobRun: Glue scripts that mix DynamicFrames and
Spark DataFrames run on a real PySpark (local[*]); `--engine auto` sends them there and keeps
Glue-only scripts on the embedded engine (no JVM); Glue-only scripts give the same rows on both
engines; bookmarks work on Spark runs; a bad engine or a failing Spark script ends FAILED with
the message. Each Spark run starts one JVM (5-20 s here), so the runs are few (6)."""
import json
import os
import uuid

import pyarrow.dataset as ds
import pytest

from jobkit import ERROR, kit, log_messages, unique  # noqa: F401
from test_etl_jobs import CSV, ETL
from test_s3_api import s3_server

SPARK_TIMEOUT = 240


@pytest.fixture(scope="module")
def server():
    yield from s3_server("openglue-spark-")


def bucket(server, prefix):
    name = prefix + "-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=name)
    return name


def put(server, bucket_name, key, body):
    server.s3().put_object(Bucket=bucket_name, Key=key, Body=body.encode())


def read_report(server, bucket_name, key="report.json"):
    with open(os.path.join(server.data_dir, "s3", bucket_name, key)) as f:
        return json.load(f)


def rows_of(server, bucket_name, prefix, fmt):
    folder = os.path.join(server.data_dir, "s3", bucket_name, prefix)
    return ds.dataset(folder, format=fmt, partitioning="hive").to_table().to_pylist()


ORDERS = ("id,name,qty,price,day\n"
          "1,ann,1,1.50,2024-03-01\n"
          "2,bob,3,2.25,2024-03-01\n"
          "3,cy,5,0.10,2024-03-02\n"
          "4,dee,2,,2024-03-03\n")
MIXED = '{"k": 1, "v": 7}\n{"k": 2, "v": "seven"}\n'

# A public-style Glue 4 script: DynamicFrame source -> toDF -> DataFrame work -> spark.sql over
# a temporary view -> fromDF -> DynamicFrame sink. Its report says what Spark saw.
MIXED_SCRIPT = """
    import json, os, sys
    from awsglue.context import GlueContext
    from awsglue.dynamicframe import DynamicFrame
    from awsglue.job import Job
    from awsglue.transforms import ApplyMapping
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from pyspark.sql import functions as F

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "mixed", "out", "report"])
    sc = SparkContext()
    glueContext = GlueContext(sc)
    spark = glueContext.spark_session
    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    orders = glueContext.create_dynamic_frame.from_options(
        "s3", {"paths": [args["src"]]}, "csv", {"withHeader": True}, transformation_ctx="orders")
    typed = ApplyMapping.apply(frame=orders, mappings=[
        ("id", "long", "id", "long"), ("name", "string", "name", "string"),
        ("qty", "int", "qty", "int"), ("price", "string", "price", "decimal(10,2)"),
        ("day", "string", "day", "date")])
    df = typed.toDF()
    big = df.filter(F.col("qty") > 1).withColumn("total", F.col("price") * F.col("qty"))
    big.createOrReplaceTempView("big")
    summary = spark.sql("SELECT id, upper(name) AS name, qty, total, day FROM big")
    result = DynamicFrame.fromDF(summary, glueContext, "result")
    glueContext.write_dynamic_frame.from_options(
        frame=result, connection_type="s3",
        connection_options={"path": args["out"], "partitionKeys": ["day"]}, format="parquet")
    mixed = glueContext.create_dynamic_frame.from_options(
        "s3", {"paths": [args["mixed"]]}, "json")
    mixed_df = mixed.toDF()
    report = {
        "is_spark": type(df).__module__.startswith("pyspark.sql"),
        "schema": df.schema.simpleString(),
        "mixed_schema": mixed_df.schema.simpleString(),
        "mixed_rows": [r.asDict(recursive=True) for r in mixed_df.orderBy("k").collect()],
        "result_schema": str(result.schema()),
        "local_dirs": os.environ.get("SPARK_LOCAL_DIRS", ""),
        "session_is_shared": spark is glueContext.spark_session,
        "master": sc.master,
    }
    glueContext.write_dynamic_frame.from_options(
        frame=DynamicFrame.from_records([{"report": json.dumps(report)}], glueContext),
        connection_type="s3", connection_options={"path": args["report"]}, format="json")
    job.commit()
"""


def report_of(server, bucket_name, prefix="report"):
    (row,) = rows_of(server, bucket_name, prefix, "json")
    return json.loads(row["report"])


def test_a_glue_script_mixing_dynamicframes_and_spark_runs_on_spark_with_auto(kit, server):
    data, out = bucket(server, "in"), bucket(server, "out")
    put(server, data, "orders/a.csv", ORDERS)
    put(server, data, "mixed/m.json", MIXED)
    job = kit.job(MIXED_SCRIPT)
    run = kit.run(job, timeout=SPARK_TIMEOUT, Arguments={
        "--src": f"s3://{data}/orders/", "--mixed": f"s3://{data}/mixed/",
        "--out": f"s3://{out}/summary/", "--report": f"s3://{out}/report/"})
    if run["JobRunState"] != "SUCCEEDED":
        print("\n".join(log_messages(server.client("logs"), ERROR, run["Id"])))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")

    rows = sorted(rows_of(server, out, "summary", "parquet"), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["qty"], str(r["total"]), str(r["day"])) for r in rows] == [
        (2, "BOB", 3, "6.75", "2024-03-01"), (3, "CY", 5, "0.50", "2024-03-02"),
        (4, "DEE", 2, "None", "2024-03-03")]
    report = report_of(server, out)
    assert report["is_spark"] and report["session_is_shared"]
    assert report["master"] == "local[*]"
    # The frame's Glue types become the same Spark types.
    assert report["schema"] == ("struct<id:bigint,name:string,qty:int,price:decimal(10,2),"
                                "day:date>")
    # A choice column becomes a struct with one field per type, as in Glue.
    assert report["mixed_schema"] == "struct<k:int,v:struct<int:int,string:string>>"
    assert report["mixed_rows"] == [{"k": 1, "v": {"int": 7, "string": None}},
                                    {"k": 2, "v": {"int": None, "string": "seven"}}]
    assert report["local_dirs"].startswith(os.path.join(server.data_dir, "runs", run["Id"]))

    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert errors[0].startswith("[openglue] engine: spark (--engine not set, auto: the script "
                                "uses Spark's API (line 22: toDF(), line 23: "), errors[0]
    assert any(m.startswith("[openglue] spark: master local[*], application local-")
               and ", UI http://" in m for m in errors), errors
    # Spark's INFO lines stay out of the log.
    assert not any(" INFO " in m for m in errors), [m for m in errors if " INFO " in m][:5]
    settings = open(os.path.join(server.data_dir, "runs", run["Id"], "spark-conf",
                                 "spark-defaults.conf")).read()
    assert "spark.master local[*]" in settings


GLUE_ONLY = """
    import json, os, sys
    import pyspark
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["src", "report"])
    sc = SparkContext.getOrCreate()
    glueContext = GlueContext(sc)
    frame = glueContext.create_dynamic_frame.from_options(
        "s3", {"paths": [args["src"]]}, "csv", {"withHeader": True})
    children = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid():
                with open(f"/proc/{pid}/comm") as f:
                    children.append(f.read().strip())
        except (OSError, ValueError, IndexError):
            pass
    report = {"standin": getattr(pyspark, "__openglue_standin__", False), "children": children,
              "rows": frame.count()}
    with open(args["report"], "w") as f:
        json.dump(report, f)
"""


def test_auto_keeps_a_glue_only_script_on_the_embedded_engine_without_a_jvm(kit, server):
    data = bucket(server, "in")
    put(server, data, "orders/a.csv", ORDERS)
    job = kit.job(GLUE_ONLY)
    run = kit.run(job, timeout=60, Arguments={
        "--src": f"s3://{data}/orders/",
        "--report": os.path.join(server.data_dir, "s3", data, "report.json")})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    report = read_report(server, data)
    assert report == {"standin": True, "children": [], "rows": 4}
    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert errors[0] == ("[openglue] engine: embedded (--engine not set, auto: the script uses "
                         "only the Glue API)")


def test_a_bad_engine_and_a_failing_spark_script_end_failed_with_the_message(kit, server):
    job = kit.job("print('never runs')\n", DefaultArguments={"--engine": "warp"})
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == "--engine 'warp' is not an engine: use auto, embedded or spark"

    job = kit.job("""
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.getOrCreate()
        spark.sql("SELECT * FROM no_such_table").show()
    """)
    run = kit.run(job, timeout=SPARK_TIMEOUT)
    assert run["JobRunState"] == "FAILED"
    assert "AnalysisException" in run["ErrorMessage"], run["ErrorMessage"]
    assert "no_such_table" in run["ErrorMessage"], run["ErrorMessage"]
    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert errors[0].startswith("[openglue] engine: spark (--engine not set, auto: the script "
                                "uses Spark's API (line 2: SparkSession.builder")


# Glue-only scripts give the same rows on both engines. ETL is test_etl_jobs' catalog job
# (CSV table -> ApplyMapping -> partitioned Parquet table, the catalog updated); TRANSFORMS
# exercises a join, resolveChoice, filter, a map and a JSON sink.
TRANSFORMS = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.transforms import ApplyMapping, Filter, Join, Map, ResolveChoice
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["orders", "mixed", "out"])
    gc = GlueContext(SparkContext.getOrCreate())
    orders = gc.create_dynamic_frame.from_options("s3", {"paths": [args["orders"]]}, "csv",
                                                  {"withHeader": True})
    # A CSV read gives strings, as on Glue: the script types its columns.
    orders = ApplyMapping.apply(orders, [("id", "string", "id", "long"),
                                         ("name", "string", "name", "string"),
                                         ("qty", "string", "qty", "int"),
                                         ("price", "string", "price", "double"),
                                         ("day", "string", "day", "string")])
    mixed = gc.create_dynamic_frame.from_options("s3", {"paths": [args["mixed"]]}, "json")
    mixed = ResolveChoice.apply(mixed, specs=[("v", "cast:string")])
    joined = Join.apply(orders, mixed, "id", "k")
    kept = Filter.apply(joined, lambda r: r["qty"] > 0)
    tagged = Map.apply(kept, lambda r: dict(r, tag=r["name"] + "-" + r["v"]))
    gc.write_dynamic_frame.from_options(tagged, "s3", {"path": args["out"]}, "json")
"""


def comparable(rows):
    return sorted(json.dumps({k: (str(v) if v is not None else None) for k, v in r.items()},
                             sort_keys=True) for r in rows)


def test_glue_only_scripts_give_the_same_rows_on_both_engines(kit, glue, server):
    data = bucket(server, "in")
    put(server, data, "orders/a.csv", ORDERS)
    put(server, data, "mixed/m.json", MIXED)
    put(server, data, "raw/part-1.csv", CSV)
    out = {}
    for engine in ("embedded", "spark"):
        db, target = unique("cmp"), bucket(server, "out")
        glue.create_database(DatabaseInput={"Name": db})
        glue.create_table(DatabaseName=db, TableInput={
            "Name": "raw", "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
            "StorageDescriptor": {
                "Columns": [{"Name": n, "Type": "string"}
                            for n in ("id", "name", "amount", "day")],
                "Location": f"s3://{data}/raw/",
                "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde",
                              "Parameters": {"separatorChar": ",", "quoteChar": "\""}}}})
        glue.create_table(DatabaseName=db, TableInput={
            "Name": "curated", "Parameters": {"classification": "parquet"},
            "PartitionKeys": [{"Name": "day", "Type": "string"}],
            "StorageDescriptor": {"Columns": [], "Location": f"s3://{target}/curated/"}})
        run = kit.run(kit.job(ETL), timeout=SPARK_TIMEOUT,
                      Arguments={"--database": db, "--engine": engine})
        assert run["JobRunState"] == "SUCCEEDED", (engine, run.get("ErrorMessage"))
        errors = log_messages(server.client("logs"), ERROR, run["Id"])
        assert errors[0] == f"[openglue] engine: {engine} (--engine {engine})"
        frames_line = ("[openglue] frames: DynamicFrames over Spark DataFrames, their steps in "
                       "Spark tasks")
        assert (frames_line in errors) == (engine == "spark"), errors[:3]
        run = kit.run(kit.job(TRANSFORMS), timeout=SPARK_TIMEOUT, Arguments={
            "--orders": f"s3://{data}/orders/", "--mixed": f"s3://{data}/mixed/",
            "--out": f"s3://{target}/joined/", "--engine": engine})
        assert run["JobRunState"] == "SUCCEEDED", (engine, run.get("ErrorMessage"))
        parts = glue.get_partitions(DatabaseName=db, TableName="curated")["Partitions"]
        out[engine] = {
            "curated": comparable(rows_of(server, target, "curated", "parquet")),
            "joined": comparable(rows_of(server, target, "joined", "json")),
            "partitions": sorted(p["Values"][0] for p in parts),
        }
    assert len(out["embedded"]["curated"]) == 4 and len(out["embedded"]["joined"]) == 2
    assert out["spark"] == out["embedded"]
    assert out["spark"]["partitions"] == ["2024-03-01", "2024-03-02", "2024-03-03"]


BOOKMARKED = """
    import json, sys
    from awsglue.context import GlueContext
    from awsglue.dynamicframe import DynamicFrame
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "JOB_RUN_ID", "src", "report"])
    glueContext = GlueContext(SparkContext.getOrCreate())
    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    frame = glueContext.create_dynamic_frame.from_options(
        "s3", {"paths": [args["src"]]}, "json", transformation_ctx="events")
    ids = sorted(r["id"] for r in frame.toDF().collect())
    glueContext.write_dynamic_frame.from_options(
        frame=DynamicFrame.from_records([{"ids": json.dumps(ids)}], glueContext),
        connection_type="s3", connection_options={"path": args["report"] + args["JOB_RUN_ID"]},
        format="json")
    job.commit()
"""


def test_bookmarks_on_a_spark_run_read_only_the_new_file(kit, glue, server):
    data, out = bucket(server, "in"), bucket(server, "out")
    put(server, data, "events/a.json", '{"id": "a1"}\n{"id": "a2"}\n')
    job = kit.job(BOOKMARKED, DefaultArguments={
        "--job-bookmark-option": "job-bookmark-enable", "--src": f"s3://{data}/events/",
        "--report": f"s3://{out}/runs/"})
    read = []
    for new_file in ("b.json", None):
        run = kit.run(job, timeout=SPARK_TIMEOUT)
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        errors = log_messages(server.client("logs"), ERROR, run["Id"])
        assert errors[0].startswith("[openglue] engine: spark (--engine not set, auto: the "
                                    "script uses Spark's API (line 14: toDF()"), errors[0]
        (row,) = rows_of(server, out, "runs/" + run["Id"], "json")
        read.append(json.loads(row["ids"]))
        if new_file:
            put(server, data, "events/" + new_file, '{"id": "b1"}\n')
    assert read == [["a1", "a2"], ["b1"]]
    entry = glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]
    assert entry["Run"] == 2
