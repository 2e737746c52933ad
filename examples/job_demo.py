"""Runs a Glue job against OpenGlue with plain boto3: create, start, poll, read its logs.

Usage: python3 examples/job_demo.py ENDPOINT DATA_DIR
"""
import os
import shutil
import sys
import time

import boto3

endpoint, data_dir = sys.argv[1], sys.argv[2]
kw = dict(endpoint_url=endpoint, region_name="us-east-1",
          aws_access_key_id="test", aws_secret_access_key="test")
glue, logs = boto3.client("glue", **kw), boto3.client("logs", **kw)

# s3://demo-scripts/orders_report.py lives in the server's embedded object store.
scripts = os.path.join(data_dir, "s3", "demo-scripts")
os.makedirs(scripts, exist_ok=True)
shutil.copy(os.path.join(os.path.dirname(__file__), "scripts", "orders_report.py"), scripts)
report = os.path.join(data_dir, "s3", "demo-reports", "orders.json")

print("== Create a Python shell job and start a run")
glue.create_job(Name="orders-report", Role="local",
                Command={"Name": "pythonshell", "ScriptLocation": "s3://demo-scripts/orders_report.py"},
                DefaultArguments={"--database": "sales", "--table": "orders", "--report": report})
start = time.perf_counter()
run_id = glue.start_job_run(JobName="orders-report")["JobRunId"]
state = None
while True:
    run = glue.get_job_run(JobName="orders-report", RunId=run_id)["JobRun"]
    if run["JobRunState"] != state:
        state = run["JobRunState"]
        print(f"   {time.perf_counter() - start:6.3f}s  {state}")
    if state in ("SUCCEEDED", "FAILED", "TIMEOUT", "STOPPED", "ERROR"):
        break
    time.sleep(0.02)
if state != "SUCCEEDED":
    sys.exit(f"job run ended {state}: {run.get('ErrorMessage')}")
print("== The run's output, through the CloudWatch Logs API")
time.sleep(0.3)
for event in logs.get_log_events(logGroupName="/aws-glue/jobs/output", logStreamName=run_id,
                                 startFromHead=True)["events"]:
    print("  ", event["message"])
print("== The file the job wrote:", open(report).read())
