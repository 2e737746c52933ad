"""Apache Airflow's amazon provider against a real server: `airflow dags test` runs
tests/airflow/dags/openglue_dag.py (a crawler, a partition sensor, a Glue job the operator
creates from a local script and waits for, a job sensor on its run id) in a subprocess, from the
Airflow virtual environment `make deps` installs (tests/airflow/requirements.txt). The results
are read back through boto3 and from Airflow's own metadata database. docs/airflow.md.

Airflow runs offline: its home and SQLite database in a temporary folder, the `aws_default`
connection from AIRFLOW_CONN_AWS_DEFAULT, pointing at this module's server (Glue, Logs, IAM and
STS on its port, S3 on its S3 API).
"""
import io
import json
import os
import sqlite3
import subprocess
import uuid

import pyarrow.parquet as pq
import pytest

from conftest import ACCESS_KEY, ACCOUNT_ID, REGION, ROOT, SECRET_KEY
from test_s3_api import s3_server

AIRFLOW_VENV = os.environ.get("OPENGLUE_AIRFLOW_VENV", os.path.join(ROOT, ".venv-airflow"))
AIRFLOW = os.path.join(AIRFLOW_VENV, "bin", "airflow")
DAGS = os.path.join(ROOT, "tests", "airflow", "dags")
SCRIPT = os.path.join(ROOT, "tests", "airflow", "jobs", "big_orders.py")
DAG_ID = "openglue_orders"
TASKS = ["create_database", "crawl_orders", "wait_for_partition", "run_job", "wait_for_job"]
ORDERS = {"year=2024/part-0.csv": "id,customer,amount\n1,ann,5\n2,bob,20\n3,cid,30\n",
          "year=2023/part-0.csv": "id,customer,amount\n4,dan,7\n5,eve,50\n"}


@pytest.fixture(scope="module")
def srv():
    yield from s3_server("openglue-airflow-")


class Airflow:
    """An Airflow home (SQLite metadata database, migrated) whose aws_default connection is the
    server's; runs `airflow` commands in it."""

    def __init__(self, home, server, bucket, database):
        self.home = str(home)
        self.bucket = bucket
        self.database = database
        connection = {
            "conn_type": "aws", "login": ACCESS_KEY, "password": SECRET_KEY,
            "extra": {"region_name": REGION, "endpoint_url": server.endpoint,
                      "service_config": {"s3": {"endpoint_url": server.s3_endpoint}}},
        }
        # Nothing of this machine's AWS set-up or Airflow configuration leaks in.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("AWS_", "AIRFLOW", "PYTHON", "VIRTUAL_ENV"))}
        env.update({
            "PATH": os.path.join(AIRFLOW_VENV, "bin") + os.pathsep + env.get("PATH", ""),
            "AIRFLOW_HOME": self.home,
            "AIRFLOW__CORE__DAGS_FOLDER": DAGS,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW_CONN_AWS_DEFAULT": json.dumps(connection),
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
            "OPENGLUE_DAG_BUCKET": bucket,
            "OPENGLUE_DAG_DATABASE": database,
        })
        self.env = env

    def run(self, *args, timeout=300, **env):
        result = subprocess.run([AIRFLOW, *args], capture_output=True, text=True, timeout=timeout,
                                env={**self.env, **env}, cwd=self.home)
        assert result.returncode == 0, (
            f"airflow {' '.join(args)} exited with {result.returncode}:\n"
            f"{result.stdout[-6000:]}\n{result.stderr[-6000:]}")
        return result

    def query(self, sql, *params):
        with sqlite3.connect(os.path.join(self.home, "airflow.db")) as db:
            return db.execute(sql, params).fetchall()

    def last_run(self):
        """The latest DAG run: (run id, state, {task id: state})."""
        run_id, state = self.query("SELECT run_id, state FROM dag_run WHERE dag_id = ? "
                                   "ORDER BY id DESC LIMIT 1", DAG_ID)[0]
        tasks = dict(self.query("SELECT task_id, state FROM task_instance WHERE dag_id = ? AND "
                                "run_id = ?", DAG_ID, run_id))
        return run_id, state, tasks

    def rendered(self, run_id, task_id):
        (fields,), = self.query("SELECT rendered_fields FROM rendered_task_instance_fields "
                                "WHERE dag_id = ? AND run_id = ? AND task_id = ?", DAG_ID, run_id,
                                task_id)
        return json.loads(fields)

    def xcom(self, run_id, task_id, key="return_value"):
        (value,), = self.query("SELECT value FROM xcom WHERE dag_id = ? AND run_id = ? AND "
                               "task_id = ? AND key = ?", DAG_ID, run_id, task_id, key)
        return json.loads(value)


@pytest.fixture(scope="module")
def airflow(srv, tmp_path_factory):
    if not os.access(AIRFLOW, os.X_OK):
        pytest.fail(f"{AIRFLOW} is missing: `make deps` installs Airflow into {AIRFLOW_VENV} "
                    "(tests/airflow/requirements.txt)")
    suffix = uuid.uuid4().hex[:8]
    flow = Airflow(tmp_path_factory.mktemp("airflow-home"), srv, "lake-" + suffix,
                   "sales_" + suffix)
    s3 = srv.s3()
    s3.create_bucket(Bucket=flow.bucket)
    for key, body in ORDERS.items():
        s3.put_object(Bucket=flow.bucket, Key="orders/" + key, Body=body.encode())
    flow.run("db", "migrate")
    return flow


@pytest.fixture(scope="module")
def first_run(airflow):
    """The first `airflow dags test`: creates the database, crawler and job."""
    result = airflow.run("dags", "test", DAG_ID)
    return result, airflow.last_run()


def test_dag_crawls_runs_the_job_and_senses_it(srv, airflow, first_run):
    result, (run_id, state, tasks) = first_run
    assert state == "success", result.stdout[-4000:]
    assert tasks == {task: "success" for task in TASKS}
    glue = srv.client()

    # The crawler made the table, partitioned by year, with the CSV's columns.
    crawler = glue.get_crawler(Name="orders_crawler")["Crawler"]
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED"
    table = glue.get_table(DatabaseName=airflow.database, Name="orders")["Table"]
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [
        ("id", "bigint"), ("customer", "string"), ("amount", "bigint")]
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == [("year", "string")]
    partitions = glue.get_partitions(DatabaseName=airflow.database, TableName="orders")["Partitions"]
    assert sorted(p["Values"] for p in partitions) == [["2023"], ["2024"]]

    # The operator uploaded the local script over the S3 API and created the job from it, with
    # the Role ARN iam:GetRole answered for the role name.
    s3 = srv.s3()
    script_key = "artifacts/glue-scripts/big_orders.py"
    uploaded = s3.get_object(Bucket=airflow.bucket, Key=script_key)["Body"].read()
    assert uploaded == open(SCRIPT, "rb").read()
    job = glue.get_job(JobName="big_orders")["Job"]
    assert job["Role"] == f"arn:aws:iam::{ACCOUNT_ID}:role/local"
    assert job["Command"]["ScriptLocation"] == f"s3://{airflow.bucket}/{script_key}"
    assert (job["GlueVersion"], job["WorkerType"], job["NumberOfWorkers"]) == ("5.0", "G.1X", 2)

    # One run, SUCCEEDED; the operator's result and the sensor's run id are that run.
    runs = glue.get_job_runs(JobName="big_orders")["JobRuns"]
    assert [r["JobRunState"] for r in runs] == ["SUCCEEDED"]
    job_run_id = runs[0]["Id"]
    assert runs[0]["Arguments"]["--table"] == "orders"
    assert airflow.xcom(run_id, "run_job") == job_run_id
    assert airflow.rendered(run_id, "wait_for_job")["run_id"] == job_run_id
    # verbose=True: the run's output stream reached the task log through FilterLogEvents.
    assert "wrote 3 of 5 orders" in result.stdout + result.stderr

    # The job wrote the orders over 10 as Parquet.
    listed = s3.list_objects_v2(Bucket=airflow.bucket, Prefix="big_orders/").get("Contents", [])
    files = [o["Key"] for o in listed if o["Key"].endswith(".parquet")]
    assert files, listed
    rows = []
    for key in files:
        data = s3.get_object(Bucket=airflow.bucket, Key=key)["Body"].read()
        rows += pq.read_table(io.BytesIO(data)).to_pylist()
    assert sorted((r["id"], r["customer"], r["amount"]) for r in rows) == [
        (2, "bob", 20), (3, "cid", 30), (5, "eve", 50)]


def test_a_second_run_updates_the_crawler_and_the_job_tags(srv, airflow, first_run):
    """Runs after the first find the crawler and the job: the operators update them in place,
    their tags through sts:GetCallerIdentity (for the ARN), GetTags and TagResource."""
    glue = srv.client()
    crawler_arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:crawler/orders_crawler"
    job_arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:job/big_orders"
    assert glue.get_tags(ResourceArn=crawler_arn)["Tags"] == {"team": "sales"}
    assert glue.get_tags(ResourceArn=job_arn)["Tags"] == {"team": "sales"}

    result = airflow.run("dags", "test", DAG_ID, OPENGLUE_DAG_TEAM="finance")
    run_id, state, tasks = airflow.last_run()
    assert state == "success", result.stdout[-4000:]
    assert tasks == {task: "success" for task in TASKS}
    assert glue.get_tags(ResourceArn=crawler_arn)["Tags"] == {"team": "finance"}
    assert glue.get_tags(ResourceArn=job_arn)["Tags"] == {"team": "finance"}
    runs = glue.get_job_runs(JobName="big_orders")["JobRuns"]
    assert [r["JobRunState"] for r in runs] == ["SUCCEEDED", "SUCCEEDED"]
    assert airflow.xcom(run_id, "run_job") == runs[0]["Id"]  # the newest run
