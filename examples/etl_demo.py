"""A real Glue ETL job on OpenGlue: CSV files in the catalog -> typed Parquet partitioned by date.

Usage: python3 examples/etl_demo.py ENDPOINT DATA_DIR

Places three CSV files in the server's embedded object store (s3://demo-raw/orders/, i.e.
DATA_DIR/s3/demo-raw/orders/), catalogs them as the table shop.orders_raw and the Parquet target
as shop.orders (partitioned by order_date), runs examples/scripts/orders_etl.py as a glueetl job
(StartJobRun, GetJobRun polled to SUCCEEDED), then shows the partitions the job added
(GetPartitions), the files it wrote and a few rows read back with pyarrow.
"""
import os
import random
import shutil
import sys
import time

import boto3
import botocore.exceptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
endpoint, data_dir = sys.argv[1], sys.argv[2]


kw = dict(endpoint_url=endpoint, region_name="us-east-1",
          aws_access_key_id="test", aws_secret_access_key="test")
glue, logs = boto3.client("glue", **kw), boto3.client("logs", **kw)
DB, RAW, CURATED = "shop", "orders_raw", "orders"

print("== Raw CSV orders in the embedded object store (s3://demo-raw/orders/)")
rng = random.Random(8)
customers = ["Ana Lima", "Smith, Jr.", "Chen Wei", "O'Neil", "\"Bud\" Jones", "Zoë Weber"]
cities = ["Seattle", "Washington, D.C.", "Lagos", "São Paulo", "Berlin"]


def csv_field(text):
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


raw_dir = os.path.join(data_dir, "s3", "demo-raw", "orders")
os.makedirs(raw_dir, exist_ok=True)
order_id = 1000
for part in range(3):
    lines = ["order_id,customer,city,quantity,unit_price,is_gift,created_at,order_date"]
    for _ in range(20):
        order_id += 1
        day = 17 + rng.randrange(3)
        lines.append(",".join([
            str(order_id), csv_field(rng.choice(customers)), csv_field(rng.choice(cities)),
            "" if rng.random() < 0.1 else str(rng.randint(1, 9)),
            f"{rng.randint(99, 99999) / 100:.2f}", rng.choice(["true", "false"]),
            f"2024-03-{day} {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
            f"2024-03-{day}"]))
    with open(os.path.join(raw_dir, f"orders-{part}.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")
print(f"   3 files, {order_id - 1000} orders; the first lines of orders-0.csv:")
for line in open(os.path.join(raw_dir, "orders-0.csv")).read().splitlines()[:3]:
    print("     " + line)

print(f"== Catalog: database {DB}, CSV table {RAW}, Parquet table {CURATED} partitioned by order_date")
glue.create_database(DatabaseInput={"Name": DB})
glue.create_table(DatabaseName=DB, TableInput={
    "Name": RAW, "TableType": "EXTERNAL_TABLE",
    "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
    "StorageDescriptor": {
        "Columns": [{"Name": "order_id", "Type": "bigint"}, {"Name": "customer", "Type": "string"},
                    {"Name": "city", "Type": "string"}, {"Name": "quantity", "Type": "int"},
                    {"Name": "unit_price", "Type": "string"}, {"Name": "is_gift", "Type": "string"},
                    {"Name": "created_at", "Type": "string"}, {"Name": "order_date", "Type": "string"}],
        "Location": "s3://demo-raw/orders/",
        "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde",
                      "Parameters": {"separatorChar": ",", "quoteChar": "\""}}}})
glue.create_table(DatabaseName=DB, TableInput={
    "Name": CURATED, "TableType": "EXTERNAL_TABLE",
    "Parameters": {"classification": "parquet"},
    "PartitionKeys": [{"Name": "order_date", "Type": "date"}],
    "StorageDescriptor": {
        "Columns": [{"Name": "order_id", "Type": "bigint"}, {"Name": "customer", "Type": "string"},
                    {"Name": "city", "Type": "string"}, {"Name": "quantity", "Type": "int"},
                    {"Name": "unit_price", "Type": "decimal(10,2)"}, {"Name": "is_gift", "Type": "boolean"},
                    {"Name": "created_at", "Type": "timestamp"}],
        "Location": "s3://demo-curated/orders/",
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}})

print("== A glueetl job: from_catalog -> ApplyMapping (casts) -> Parquet partitioned by order_date")
scripts = os.path.join(data_dir, "s3", "demo-scripts")
os.makedirs(scripts, exist_ok=True)
shutil.copy(os.path.join(ROOT, "examples", "scripts", "orders_etl.py"), scripts)
glue.create_job(Name="orders-etl", Role="local",
                Command={"Name": "glueetl", "ScriptLocation": "s3://demo-scripts/orders_etl.py",
                         "PythonVersion": "3"},
                DefaultArguments={"--database": DB, "--source_table": RAW, "--target_table": CURATED})
start = time.perf_counter()
run_id = glue.start_job_run(JobName="orders-etl")["JobRunId"]
state, run = None, {}
while time.perf_counter() - start < 300:
    run = glue.get_job_run(JobName="orders-etl", RunId=run_id)["JobRun"]
    if run["JobRunState"] != state:
        state = run["JobRunState"]
        print(f"   {time.perf_counter() - start:6.3f}s  {state}")
    if state in ("SUCCEEDED", "FAILED", "TIMEOUT", "STOPPED", "ERROR"):
        break
    time.sleep(0.05)
time.sleep(0.3)  # the last log lines reach the log store


def run_log(group):
    try:
        return [e["message"] for e in logs.get_log_events(
            logGroupName=group, logStreamName=run_id, startFromHead=True)["events"]]
    except botocore.exceptions.ClientError:
        return []


if state != "SUCCEEDED":
    print("\n".join(run_log("/aws-glue/jobs/output") + run_log("/aws-glue/jobs/error")))
    sys.exit(f"ETL job run ended {state}: {run.get('ErrorMessage')}")
print("== The run's output, through the CloudWatch Logs API")
for message in run_log("/aws-glue/jobs/output")[:20]:
    print("  ", message)

print(f"== Partitions the job added to {DB}.{CURATED} (GetPartitions)")
partitions = glue.get_partitions(DatabaseName=DB, TableName=CURATED)["Partitions"]
for p in sorted(partitions, key=lambda p: p["Values"]):
    print(f"   {p['Values']}  {p['StorageDescriptor']['Location']}")
if not partitions:
    sys.exit("the job added no partition")

print("== The Parquet files in s3://demo-curated/orders/ and a few rows read back with pyarrow")
import pyarrow.dataset as ds  # noqa: E402

out_dir = os.path.join(data_dir, "s3", "demo-curated", "orders")
for dirpath, _, filenames in sorted(os.walk(out_dir)):
    for name in sorted(filenames):
        path = os.path.join(dirpath, name)
        print(f"   {os.path.relpath(path, os.path.join(data_dir, 's3'))}  {os.path.getsize(path)} bytes")
table = ds.dataset(out_dir, format="parquet", partitioning="hive").to_table()
print(f"   {table.num_rows} rows; schema: " + ", ".join(f"{f.name} {f.type}" for f in table.schema))
for row in table.sort_by("order_id").slice(0, 5).to_pylist():
    print("   ", row)
if table.num_rows != order_id - 1000:
    sys.exit(f"expected {order_id - 1000} rows in the output, read {table.num_rows}")
