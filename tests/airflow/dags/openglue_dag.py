"""An Apache Airflow DAG that drives OpenGlue through the amazon provider, as it would drive AWS
Glue (docs/airflow.md; run by tests/test_airflow_dag.py):

    create_database >> crawl_orders >> wait_for_partition >> run_job >> wait_for_job

crawl_orders crawls the CSV files under s3://<bucket>/orders/ (partitioned by year) into the
table `orders`; run_job creates (or updates) the Glue job `big_orders` from the local script
jobs/big_orders.py, which Airflow uploads to s3://<bucket>/artifacts/glue-scripts/, runs it and
waits for it; wait_for_job checks that run again by its id. Every call goes to the endpoints of
the `aws_default` connection (Glue, Logs, IAM and STS on the server's port, S3 on its S3 API).
"""
import os

import pendulum
from airflow.providers.amazon.aws.operators.glue import GlueJobOperator
from airflow.providers.amazon.aws.operators.glue_catalog import GlueCatalogCreateDatabaseOperator
from airflow.providers.amazon.aws.operators.glue_crawler import GlueCrawlerOperator
from airflow.providers.amazon.aws.sensors.glue import GlueJobSensor
from airflow.providers.amazon.aws.sensors.glue_catalog_partition import GlueCatalogPartitionSensor
from airflow.sdk import DAG

BUCKET = os.environ.get("OPENGLUE_DAG_BUCKET", "lake")
DATABASE = os.environ.get("OPENGLUE_DAG_DATABASE", "sales")
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jobs",
                      "big_orders.py")
# The Role of the crawler and the job. The job operator asks iam:GetRole for its ARN.
ROLE = os.environ.get("OPENGLUE_DAG_ROLE", "local")
TAGS = {"team": os.environ.get("OPENGLUE_DAG_TEAM", "sales")}
POLL = 1  # seconds between status calls (a local server answers at once)

with DAG(dag_id="openglue_orders", schedule=None, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["openglue"]) as dag:
    create_database = GlueCatalogCreateDatabaseOperator(
        task_id="create_database", database_name=DATABASE, if_exists="skip")

    # Creates the crawler, or updates it (and its tags) when it exists, then runs it and waits.
    crawl_orders = GlueCrawlerOperator(
        task_id="crawl_orders", poll_interval=POLL,
        config={
            "Name": "orders_crawler",
            "Role": ROLE,
            "DatabaseName": DATABASE,
            "Targets": {"S3Targets": [{"Path": f"s3://{BUCKET}/orders/"}]},
            "Tags": TAGS,
        })

    wait_for_partition = GlueCatalogPartitionSensor(
        task_id="wait_for_partition", database_name=DATABASE, table_name="orders",
        expression="year='2024'", poke_interval=POLL, timeout=60)

    # Creates the job (update_config: or updates it, tags included), starts a run, prints its
    # log streams while it runs (verbose) and fails the task unless it SUCCEEDED.
    run_job = GlueJobOperator(
        task_id="run_job", job_name="big_orders", script_location=SCRIPT, s3_bucket=BUCKET,
        replace_script_file=True, iam_role_name=ROLE, update_config=True, verbose=True,
        job_poll_interval=POLL,
        create_job_kwargs={"GlueVersion": "5.0", "WorkerType": "G.1X", "NumberOfWorkers": 2,
                           "Tags": TAGS},
        script_args={"--database": DATABASE, "--table": "orders",
                     "--output": f"s3://{BUCKET}/big_orders/"})

    wait_for_job = GlueJobSensor(
        task_id="wait_for_job", job_name="big_orders", verbose=True, poke_interval=POLL,
        timeout=120, run_id="{{ ti.xcom_pull(task_ids='run_job') }}")

    create_database >> crawl_orders >> wait_for_partition >> run_job >> wait_for_job
