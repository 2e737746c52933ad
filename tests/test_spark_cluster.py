"""Glue jobs on a Spark standalone cluster, through StartJobRun (issue 10: "a job on the
standalone cluster"): a real master and one worker started from pyspark's own distribution
(tests/sparkkit.py), and a server whose config names that master (`spark_master`).

Two runs, each one driver JVM plus one executor JVM on the worker:
- a Glue-style script mixing DynamicFrames and Spark (toDF, a Python UDF that runs on the
  executor, fromDF, write_dynamic_frame), sent to the cluster by its `--spark-master` argument;
- a script without the argument, which goes to the server's `spark_master`.

When the tests run as root the server runs each job under a uid of its own that has no user
name (`job_user = auto`), the case where Spark's launcher used to fail in Hadoop's OS login.
"""
import json
import os
import shutil
import tempfile
import time
import uuid

import pyarrow.dataset as ds
import pytest

from jobkit import ERROR, kit, log_messages  # noqa: F401  (fixture)
from sparkkit import spark_cluster  # noqa: F401  (fixture)
from test_s3_api import S3Server

SPARK_TIMEOUT = 300


@pytest.fixture(scope="module")
def server(spark_cluster):  # noqa: F811
    """A server with the S3 API whose config file sends Spark jobs to the test cluster."""
    data_dir = tempfile.mkdtemp(prefix="openglue-spark-cluster-")
    config = os.path.join(data_dir, "openglue.conf")
    with open(config, "w") as f:
        f.write(f"spark_master = {spark_cluster.url}\n")
    srv = S3Server(data_dir, extra_args=["--config", config]).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def new_bucket(server, prefix):
    name = prefix + "-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=name)
    return name


def rows_of(server, bucket_name, prefix, fmt):
    folder = os.path.join(server.data_dir, "s3", bucket_name, prefix)
    return ds.dataset(folder, format=fmt).to_table().to_pylist()


def report_of(server, bucket_name):
    (row,) = rows_of(server, bucket_name, "report", "json")
    return json.loads(row["report"])


def run_or_show_log(kit, server, job, **kwargs):  # noqa: F811
    run = kit.run(job, timeout=SPARK_TIMEOUT, **kwargs)
    if run["JobRunState"] != "SUCCEEDED":
        print("\n".join(log_messages(server.client("logs"), ERROR, run["Id"])))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    return run


def completed_app(spark_cluster, app_id, timeout=20):  # noqa: F811
    """The master's record of a finished application (it may take the master a moment after
    the driver leaves)."""
    deadline = time.time() + timeout
    while True:
        state = spark_cluster.state()
        for app in state.get("completedapps", []):
            if app["id"] == app_id:
                return app
        if time.time() > deadline:
            pytest.fail(f"{app_id} is not among the master's completed applications: {state}")
        time.sleep(0.5)


# REPORT: a DynamicFrame sink writes the script's findings as one JSON row.
REPORT = """
def write_report(glueContext, path, report):
    from awsglue.dynamicframe import DynamicFrame
    glueContext.write_dynamic_frame.from_options(
        frame=DynamicFrame.from_records([{"report": json.dumps(report)}], glueContext),
        connection_type="s3", connection_options={"path": path}, format="json")
"""

MIXED = """
import json, os, sys
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql import functions as F
from pyspark.sql.types import StringType
""" + REPORT + """
args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "out", "report"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
people = glueContext.create_dynamic_frame.from_options(
    "s3", {"paths": [args["src"]]}, "csv", {"withHeader": True}, transformation_ctx="people")
# A Glue step's function runs in the executors' tasks too (the frames are Spark DataFrames).
people = people.map(lambda r: dict(r, glue_pid=os.getpid()))
df = people.toDF()


@F.udf(StringType())
def tag(name):
    import os
    return "%s|%d|%d" % (name.upper(), os.getpid(), os.getuid())


tagged = df.where(F.col("city") == "oslo").repartition(2).withColumn("tag", tag(F.col("name")))
result = DynamicFrame.fromDF(tagged, glueContext, "result")
glueContext.write_dynamic_frame.from_options(
    frame=result, connection_type="s3", connection_options={"path": args["out"]}, format="parquet")
import pwd
try:
    user = pwd.getpwuid(os.getuid()).pw_name
except KeyError:
    user = None
write_report(glueContext, args["report"], {
    "master": sc.master, "app_id": sc.applicationId, "driver_pid": os.getpid(),
    "driver_uid": os.getuid(), "driver_user": user, "spark_user": sc.sparkUser()})
job.commit()
"""

PEOPLE = "id,name,city\n1,ann,oslo\n2,bob,rome\n3,cy,oslo\n"


def test_a_glue_script_mixing_dynamicframes_and_spark_runs_on_the_standalone_cluster(
        kit, server, spark_cluster):  # noqa: F811
    data, out = new_bucket(server, "in"), new_bucket(server, "out")
    server.s3().put_object(Bucket=data, Key="people/p.csv", Body=PEOPLE.encode())
    # The argument names the same master as the server's config, spelt differently: the log
    # shows which one the run used.
    port = spark_cluster.url.rsplit(":", 1)[1]
    master = f"spark://localhost:{port}"
    job = kit.job(MIXED, DefaultArguments={"--engine": "spark"})
    run = run_or_show_log(kit, server, job, Arguments={
        "--spark-master": master, "--src": f"s3://{data}/people/",
        "--out": f"s3://{out}/result/", "--report": f"s3://{out}/report/"})

    report = report_of(server, out)
    assert report["master"] == master
    assert report["app_id"].startswith("app-"), report  # a standalone application, not local-
    rows = sorted(rows_of(server, out, "result", "parquet"), key=lambda r: str(r["id"]))
    assert [(str(r["id"]), r["name"], r["city"]) for r in rows] == [
        ("1", "ann", "oslo"), ("3", "cy", "oslo")]
    for r in rows:
        name, pid, uid = r["tag"].split("|")
        assert name == r["name"].upper()
        # The UDF ran in a Python worker of the executor, not in the driver's process; the
        # executor runs as the worker's user. So did the Glue map, and the CSV read before it
        # (the embedded reader, shipped to the executor with the engine's extension, read the
        # S3 API with the run's credentials).
        assert int(pid) != report["driver_pid"]
        assert r["glue_pid"] != report["driver_pid"]
        assert int(uid) == os.getuid()
    if os.geteuid() == 0:
        # The run had a uid of its own, without a user name: Spark's user is the name the
        # runtime gave Hadoop.
        assert report["driver_uid"] != 0 and report["driver_user"] is None, report
        assert report["spark_user"] == f"openglue-{report['driver_uid']}"

    app = completed_app(spark_cluster, report["app_id"])
    assert app["name"] == job and app["state"] == "FINISHED", app
    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert errors[0] == "[openglue] engine: spark (--engine spark)", errors[0]
    assert any(m.startswith(f"[openglue] spark: master {master}, application {report['app_id']}")
               for m in errors), errors


SQUARES = """
import json, sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
""" + REPORT + """
args = getResolvedOptions(sys.argv, ["report"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
total = sc.parallelize(range(1, 11), 2).map(lambda x: x * x).sum()
write_report(glueContext, args["report"], {"master": sc.master, "app_id": sc.applicationId,
                                           "total": total})
"""


def test_the_servers_spark_master_setting_sends_jobs_to_the_cluster(kit, server, spark_cluster):  # noqa: F811
    out = new_bucket(server, "out")
    job = kit.job(SQUARES, DefaultArguments={"--engine": "spark"})
    run = run_or_show_log(kit, server, job, Arguments={"--report": f"s3://{out}/report/"})
    report = report_of(server, out)
    assert report["total"] == 385
    assert report["master"] == spark_cluster.url  # from the server's config file
    app = completed_app(spark_cluster, report["app_id"])
    assert app["name"] == job, app
    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert any(m.startswith(f"[openglue] spark: master {spark_cluster.url}, application app-")
               for m in errors), errors
