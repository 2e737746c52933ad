"""Job bookmarks and a crawler on OpenGlue: incremental runs, as AWS Glue does them.

Usage: python3 examples/bookmark_demo.py ENDPOINT DATA_DIR OPENGLUE_BIN

Places two CSV files of click events in the embedded store (s3://demo-raw/events/), lets a
crawler catalog them (StartCrawler, GetTables), then runs examples/scripts/events_incremental.py
as a bookmarked job: the first run reads both files; after a third file arrives,
`openglue bookmarks plan` says what the next run will read and the second run reads just that
file; a run with job-bookmark-pause reads a fourth file without moving the bookmark; after
ResetJobBookmark a run reads everything.
"""
import os
import shutil
import subprocess
import sys
import time

import boto3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
endpoint, data_dir, binary = sys.argv[1], sys.argv[2], sys.argv[3]
kw = dict(endpoint_url=endpoint, region_name="us-east-1",
          aws_access_key_id="test", aws_secret_access_key="test")
glue, logs = boto3.client("glue", **kw), boto3.client("logs", **kw)
DB, JOB = "clicks", "events-incremental"
raw_dir = os.path.join(data_dir, "s3", "demo-raw", "events")
os.makedirs(raw_dir, exist_ok=True)
next_id = [1]


def add_file(name, rows):
    lines = ["event_id,user_name,action,amount"]
    for _ in range(rows):
        lines.append(f"{next_id[0]},user{next_id[0] % 4},{['view', 'cart', 'buy'][next_id[0] % 3]},{next_id[0] * 1.5:.2f}")
        next_id[0] += 1
    with open(os.path.join(raw_dir, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"   + s3://demo-raw/events/{name} ({rows} rows)")


def wait(predicate, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    sys.exit(f"timed out waiting for {what}")


print("== Click events arrive in the embedded store (s3://demo-raw/events/)")
add_file("events-1.csv", 6)
add_file("events-2.csv", 4)

print("== A crawler catalogs them (CreateCrawler, StartCrawler)")
glue.create_database(DatabaseInput={"Name": DB})
glue.create_crawler(Name="events-crawler", Role="local", DatabaseName=DB,
                    Targets={"S3Targets": [{"Path": "s3://demo-raw/events/"}]})
glue.start_crawler(Name="events-crawler")
crawler = wait(lambda: (lambda c: c if c["State"] == "READY" and c.get("LastCrawl") else None)(
    glue.get_crawler(Name="events-crawler")["Crawler"]), "the crawl")
print(f"   crawl {crawler['LastCrawl']['Status']}; tables in {DB}:")
table = None
for t in glue.get_tables(DatabaseName=DB)["TableList"]:
    table = t
    columns = ", ".join(f"{c['Name']} {c['Type']}" for c in t["StorageDescriptor"]["Columns"])
    print(f"   {t['Name']} ({t['Parameters'].get('classification')}): {columns}")
if table is None:
    sys.exit("the crawler made no table")

scripts = os.path.join(data_dir, "s3", "demo-scripts")
os.makedirs(scripts, exist_ok=True)
shutil.copy(os.path.join(ROOT, "examples", "scripts", "events_incremental.py"), scripts)
glue.create_job(Name=JOB, Role="local",
                Command={"Name": "glueetl", "ScriptLocation": "s3://demo-scripts/events_incremental.py"},
                DefaultArguments={"--job-bookmark-option": "job-bookmark-enable", "--database": DB,
                                  "--table": table["Name"], "--output": "s3://demo-curated/events/"})


def run(label, **arguments):
    run_id = glue.start_job_run(JobName=JOB, Arguments=arguments)["JobRunId"]
    job_run = wait(lambda: (lambda r: r if r["JobRunState"] in ("SUCCEEDED", "FAILED", "ERROR", "STOPPED", "TIMEOUT") else None)(
        glue.get_job_run(JobName=JOB, RunId=run_id)["JobRun"]), "the job run")
    time.sleep(0.2)  # the last log lines reach the log store
    lines = [e["message"] for e in logs.get_log_events(logGroupName="/aws-glue/jobs/output",
                                                       logStreamName=run_id, startFromHead=True)["events"]]
    said = next((line for line in lines if "this run read" in line), "(no output)")
    print(f"   {label}: {job_run['JobRunState']} in {job_run.get('ExecutionTime', 0)} s; {said.strip()}")
    if job_run["JobRunState"] != "SUCCEEDED":
        sys.exit(f"job run ended {job_run['JobRunState']}: {job_run.get('ErrorMessage')}")
    return said


def bookmarks(*command):
    print(f"   $ openglue bookmarks {' '.join(command)} {JOB}")
    extra = ["--data-dir", data_dir] if command[0] == "plan" else []
    out = subprocess.run([binary, "bookmarks", *command, "--endpoint-url", endpoint, *extra, JOB],
                         capture_output=True, text=True, env={**os.environ, "AWS_ACCESS_KEY_ID": "test",
                                                              "AWS_SECRET_ACCESS_KEY": "test"})
    for line in (out.stdout + out.stderr).strip().splitlines():
        print("     " + line)


print(f"== A bookmarked job ({JOB}, --job-bookmark-option job-bookmark-enable)")
first = run("run 1")
print("== A third file arrives; what will the next run read?")
add_file("events-3.csv", 3)
bookmarks("plan")
second = run("run 2 (only the new file)")
bookmarks("show")
print("== A fourth file; a run with job-bookmark-pause reads it but leaves the bookmark where it was")
add_file("events-4.csv", 2)
paused = run("run 3 (paused)", **{"--job-bookmark-option": "job-bookmark-pause"})
print("   the bookmark is still run 2's: the next enabled run would read the fourth file again")
print("== ResetJobBookmark: the next run reads everything again")
glue.reset_job_bookmark(JobName=JOB)
last = run("run 4 (after the reset)")
expected = [("run 1", 10, first), ("run 2", 3, second), ("run 3", 2, paused), ("run 4", 15, last)]
for label, rows, said in expected:
    if f"read {rows} rows" not in said:
        sys.exit(f"{label} should have read {rows} rows: {said}")
print("== Triggers and workflows: `make demo-workflow` runs a workflow on demand and on its schedule")
