"""A relative --data-dir, as the default ./openglue-data of the README's quick start: job runs
(each in a folder of its own) still find their files, because the server resolves the data
directory against its working directory once, at start."""
import os
import subprocess
import time

import boto3
import pytest

from conftest import ACCESS_KEY, BIN, REGION, SECRET_KEY, open_to_job_users
from jobkit import wait_run


@pytest.fixture()
def relative_server(tmp_path):
    os.makedirs(tmp_path / "cwd")
    cwd = open_to_job_users(tmp_path / "cwd")
    port_file = tmp_path / "port"
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen([BIN, "serve", "--port", "0", "--s3-api", "off", "--data-dir",
                             "openglue-data", "--port-file", str(port_file)],
                            cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while not port_file.exists() or not port_file.read_text().strip():
        assert proc.poll() is None, (tmp_path / "server.log").read_text()
        assert time.time() < deadline, "server did not start"
        time.sleep(0.05)
    yield os.path.join(cwd, "openglue-data"), f"http://127.0.0.1:{port_file.read_text().strip()}"
    proc.terminate()
    proc.wait(timeout=10)


def test_a_job_runs_under_a_relative_data_dir(relative_server):
    data_dir, endpoint = relative_server
    scripts = os.path.join(data_dir, "s3", "scripts")
    os.makedirs(scripts)
    with open(os.path.join(scripts, "hello.py"), "w") as f:
        f.write("import sys\nprint('hello from', sys.argv[sys.argv.index('--who') + 1])\n")
    glue = boto3.client("glue", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    glue.create_job(Name="hello", Role="local",
                    Command={"Name": "pythonshell", "ScriptLocation": "s3://scripts/hello.py"})
    run_id = glue.start_job_run(JobName="hello", Arguments={"--who": "a relative dir"})["JobRunId"]
    run = wait_run(glue, "hello", run_id, timeout=60)
    assert run["JobRunState"] == "SUCCEEDED", run
    logs = boto3.client("logs", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    events = logs.get_log_events(logGroupName="/aws-glue/jobs/output", logStreamName=run_id,
                                 startFromHead=True)["events"]
    assert "hello from a relative dir" in [e["message"] for e in events]
