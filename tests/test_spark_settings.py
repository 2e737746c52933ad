"""The settings of openglue_runtime.engines.spark.conf.session_conf() on real Spark (pyspark 3.5.9, Java 17): a
standalone master + worker (tests/sparkkit.py), S3A to the OpenGlue server's S3 API (versitygw),
Spark's JDBC source with the PostgreSQL and MariaDB drivers of spark-jars.txt against real
servers (tests/dbkit.py), and event logs under the run's folder.

JVMs are few: one standalone cluster and one driver for the cluster test (a subprocess, with the
environment a run gets), one local session in this process for the S3A and JDBC tests.
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid

import pyarrow.parquet as pq
import pytest

from conftest import ACCESS_KEY, REGION, SECRET_KEY
from dbkit import maria, pg  # noqa: F401  (fixtures)
from jobkit import ERROR, kit, log_messages  # noqa: F401  (fixture)
from sparkkit import own_jvm_session, spark_cluster  # noqa: F401  (fixture)
from test_s3_api import s3_server

from openglue_runtime.engines.spark.conf import session_conf, spark_jars, spark_jdbc, this_machine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DRIVER = textwrap.dedent("""
    import json, os, sys
    from openglue_runtime.engines.spark.conf import session_conf, spark_environment
    from openglue_runtime.engines.spark.engine import host_name_resolves
    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import udf

    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    conf = session_conf(args)
    # What the runtime's engine set-up does before the JVM starts (openglue_runtime.engines.spark.engine).
    os.environ.update(spark_environment(conf))
    if not host_name_resolves():
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            os.environ.pop(name, None)
    spark = SparkSession.builder.config(conf=SparkConf().setAll(list(conf.items()))).getOrCreate()

    def where(_):
        import awsglue  # from the py-files archive: the worker has no PYTHONPATH
        return awsglue.__file__ + "|" + str(os.getpid())

    rows = spark.range(4).repartition(2).select(udf(where)("id").alias("w")).collect()
    sc = spark.sparkContext
    print(json.dumps({"where": sorted({r.w for r in rows}), "driver_pid": os.getpid(),
                      "app_id": sc.applicationId, "master": sc.master, "ui": sc.uiWebUrl,
                      "pyfiles": conf.get("spark.submit.pyFiles")}))
    spark.stop()
""")


def run_env(tmp, **extra):
    """The environment the server gives a glueetl run (src/jobs/job_service.cc), for a driver
    started here."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENGLUE_", "SPARK_", "PYSPARK_"))}
    os.makedirs(os.path.join(tmp, "tmp"), exist_ok=True)
    env.update(PYTHONPATH=os.path.join(REPO, "python"), TMPDIR=os.path.join(tmp, "tmp"),
               OPENGLUE_RUN_DIR=tmp, OPENGLUE_ENGINE="spark", AWS_ACCESS_KEY_ID=ACCESS_KEY,
               AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION, **extra)
    return env


@pytest.fixture(scope="module")
def cluster_run(spark_cluster):  # noqa: F811
    """One job-like driver on the standalone cluster, with --enable-spark-ui."""
    tmp = tempfile.mkdtemp(prefix="og-spark-run-")
    name = "settings-" + uuid.uuid4().hex[:8]
    script = os.path.join(tmp, "driver.py")
    with open(script, "w") as f:
        f.write(DRIVER)
    env = run_env(tmp, OPENGLUE_SPARK_MASTER=spark_cluster.url, OPENGLUE_JOB_NAME=name)
    proc = subprocess.run([sys.executable, script, "--JOB_NAME", name, "--enable-spark-ui", "true"],
                          env=env, cwd=tmp, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    yield name, tmp, result
    shutil.rmtree(tmp, ignore_errors=True)


def test_udf_on_a_standalone_executor_imports_awsglue_from_the_archive(spark_cluster, cluster_run):  # noqa: F811
    name, _, result = cluster_run
    assert result["master"] == spark_cluster.url
    assert result["ui"].startswith("http://127.0.0.1:"), result["ui"]  # the driver listens on loopback only
    assert result["pyfiles"] and os.path.basename(result["pyfiles"]).startswith("awsglue-")
    archive = os.path.basename(result["pyfiles"])
    assert result["where"], "the UDF returned nothing"
    for entry in result["where"]:
        path, pid = entry.split("|")
        assert archive in path and path.endswith("awsglue/__init__.py"), path
        assert int(pid) != result["driver_pid"]  # an executor's Python worker, not the driver
    apps = spark_cluster.state()
    seen = {a["id"]: a["name"] for a in apps.get("completedapps", []) + apps.get("activeapps", [])}
    assert seen.get(result["app_id"]) == name, apps


def test_enable_spark_ui_leaves_event_logs_in_the_run_dir(cluster_run):
    _, run_dir, result = cluster_run
    folder = os.path.join(run_dir, "spark-events")
    logs = os.listdir(folder)
    assert result["app_id"] in logs, logs  # finished: no `.inprogress` left
    with open(os.path.join(folder, result["app_id"])) as f:
        events = [json.loads(line)["Event"] for line in f if line.strip()]
    assert "SparkListenerApplicationStart" in events and "SparkListenerApplicationEnd" in events


# ---- one local session in this process: S3A and JDBC ---------------------------------------

@pytest.fixture(scope="module")
def s3srv():
    yield from s3_server("og-spark-s3-")


@pytest.fixture(scope="module")
def server(s3srv):
    """jobkit's `kit` runs its jobs on this module's server (the one with the S3 API)."""
    return s3srv


@pytest.fixture(scope="module")
def local_run_dir():
    tmp = tempfile.mkdtemp(prefix="og-spark-local-")
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def spark(s3srv, local_run_dir):
    assert spark_jars(), "no Spark jars: `make deps` fetches spark-jars.txt"
    env = run_env(local_run_dir, AWS_ENDPOINT_URL_S3=s3srv.s3_endpoint, OPENGLUE_SPARK_MASTER="local[2]")
    with own_jvm_session(session_conf({"--JOB_NAME": "settings-local"}, env)) as session:
        yield session


def test_s3_and_s3a_paths_read_and_write_the_embedded_store(s3srv, spark):
    s3 = s3srv.s3()
    bucket = "spark-" + uuid.uuid4().hex[:10]
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="in/people.csv", Body=b"id,name,city\n1,ann,oslo\n2,bob,rome\n3,cy,oslo\n")
    for scheme in ("s3", "s3a"):
        df = spark.read.option("header", "true").csv(f"{scheme}://{bucket}/in/people.csv")
        assert sorted((r.id, r.name, r.city) for r in df.collect()) == [
            ("1", "ann", "oslo"), ("2", "bob", "rome"), ("3", "cy", "oslo")]
    df = spark.read.option("header", "true").csv(f"s3://{bucket}/in/")
    df.write.mode("overwrite").partitionBy("city").parquet(f"s3a://{bucket}/out/")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="out/")["Contents"]]
    assert "out/_SUCCESS" in keys
    rows = []
    for key in keys:
        if key.endswith(".parquet"):
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            city = key.split("city=")[1].split("/")[0]
            rows += [(r["id"], r["name"], city) for r in pq.read_table(io.BytesIO(body)).to_pylist()]
    assert sorted(rows) == [("1", "ann", "oslo"), ("2", "bob", "rome"), ("3", "cy", "oslo")]
    assert {k.split("/")[1] for k in keys if "city=" in k} == {"city=oslo", "city=rome"}


@pytest.mark.parametrize("db_fixture", ["pg", "maria"])
def test_jdbc_source_and_sink_with_the_maven_drivers(request, spark, db_fixture):
    db = request.getfixturevalue(db_fixture)
    table = "spark_" + uuid.uuid4().hex[:8]
    db.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, name VARCHAR(20))")
    db.execute(f"INSERT INTO {table} VALUES (1, 'ann'), (2, 'bob')")
    url, driver = spark_jdbc(db.url)
    options = {"url": url, "driver": driver, "user": db.user, "password": db.password}
    df = spark.read.format("jdbc").options(dbtable=table, **options).load()
    assert sorted((r.id, r.name) for r in df.collect()) == [(1, "ann"), (2, "bob")]
    out = table + "_out"
    df.where("id = 2").write.format("jdbc").options(dbtable=out, **options).mode("overwrite").save()
    assert db.execute(f"SELECT id, name FROM {out}") == [(2, "bob")]


# A job run on Spark through StartJobRun: Spark's own reader and writer on s3:// and s3a://
# paths reach the server's S3 API with the run's own credentials; the worker type sizes local
# mode; --enable-spark-ui leaves the event log in the run's folder.
S3A_JOB = """
import json, sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["bucket"])
sc = SparkContext.getOrCreate()
spark = GlueContext(sc).spark_session
df = spark.read.option("header", "true").csv("s3://%s/in/" % args["bucket"])
df.write.mode("overwrite").partitionBy("city").parquet("s3a://%s/out/" % args["bucket"])
conf = dict(sc.getConf().getAll())
report = {"master": sc.master, "app_id": sc.applicationId,
          "driver_memory": conf.get("spark.driver.memory"),
          "event_log": conf.get("spark.eventLog.enabled"),
          "rows": spark.read.parquet("s3a://%s/out/" % args["bucket"]).count()}
spark.createDataFrame([(json.dumps(report),)], ["report"]).coalesce(1).write.mode("overwrite").text(
    "s3://%s/report/" % args["bucket"])
"""


def test_a_spark_job_run_reads_and_writes_the_store_through_s3a(kit, s3srv):  # noqa: F811
    s3 = s3srv.s3()
    bucket = "sparkjob-" + uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="in/people.csv", Body=b"id,name,city\n1,ann,oslo\n2,bob,rome\n3,cy,oslo\n")
    job = kit.job(S3A_JOB, WorkerType="G.1X", NumberOfWorkers=2,
                  DefaultArguments={"--engine": "spark", "--enable-spark-ui": "true"})
    run = kit.run(job, timeout=240, Arguments={"--bucket": bucket})
    if run["JobRunState"] != "SUCCEEDED":
        print("\n".join(log_messages(s3srv.client("logs"), ERROR, run["Id"])))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="report/")["Contents"]]
    (part,) = [k for k in keys if k.endswith(".txt")]
    report = json.loads(s3.get_object(Bucket=bucket, Key=part)["Body"].read())
    assert report["rows"] == 3
    out = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="out/")["Contents"]]
    assert {k.split("/")[1] for k in out if "city=" in k} == {"city=oslo", "city=rome"}
    # G.1X x 2 workers = one executor of 4 vCPU / 10 GB: local[min(4, CPUs)] here.
    machine = this_machine()
    assert report["master"] == f"local[{min(4, machine.cpus)}]"
    assert report["driver_memory"] == f"{min(10240, max(1024, machine.memory_mb // 2))}m"
    assert report["event_log"] == "true"
    events = os.path.join(s3srv.data_dir, "runs", run["Id"], "spark-events")
    assert any(name.startswith(report["app_id"]) for name in os.listdir(events)), os.listdir(events)
