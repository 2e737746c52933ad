"""Issue 6, defect 3: a job run's credential is scoped, and job code cannot read secrets.

A pythonshell job uses the credentials of its own environment (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, granted by the server for the run) and reports what each call answered.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, Server, table_input
from jobkit import JobKit, unique, wait_file, wait_for, wait_run

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="job users need the server to run as root")

# Runs `--calls` (a JSON list of [label, operation, kwargs]) with the run's own credentials and
# writes {label: "ok" | "<error code>: <message>"} to --out.
PROBE = """
    import json, os, sys
    import boto3, botocore.config, botocore.exceptions
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    glue = boto3.client("glue", endpoint_url=os.environ["AWS_ENDPOINT_URL_GLUE"],
                        config=botocore.config.Config(retries={"max_attempts": 1}))
    results = {}
    for label, operation, kwargs in json.loads(args["--calls"]):
        try:
            getattr(glue, operation)(**kwargs)
            results[label] = "ok"
        except botocore.exceptions.ClientError as e:
            results[label] = e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"]
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""

SLEEP = """
    import time
    time.sleep(120)
"""


def probe(kit, glue, calls, out, role="local"):
    job = unique("probe")
    glue.create_job(Name=job, Role=role, Command={"Name": "pythonshell",
                                                  "ScriptLocation": kit.script(PROBE)})
    kit.jobs.append(job)
    run = kit.run(job, timeout=60, Arguments={"--calls": json.dumps(calls), "--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run
    return json.loads(out.read_text())


@pytest.fixture()
def own_server():
    data_dir = tempfile.mkdtemp(prefix="openglue-hostile-")
    servers = []

    def start(config_text=None, env=None):
        args = []
        if config_text is not None:
            path = os.path.join(data_dir, "openglue.conf")
            with open(path, "w") as f:
                f.write(config_text)
            args = ["--config", path]
        srv = Server(data_dir, extra_args=args, env=env).start()
        servers.append(srv)
        return srv
    yield start
    for srv in servers:
        srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def test_default_run_credential_cannot_administer_jobs_or_drop_databases(server, glue, db,
                                                                          tmp_path):
    kit = JobKit(server, glue)
    try:
        victim = kit.job(SLEEP, command="pythonshell")
        victim_run = kit.start(victim)
        wait_run(glue, victim, victim_run, states=("RUNNING",))
        glue.create_table(DatabaseName=db, TableInput=table_input("existing"))
        calls = [
            ["DeleteJob", "delete_job", {"JobName": victim}],
            ["StartJobRun", "start_job_run", {"JobName": victim}],
            ["BatchStopJobRun", "batch_stop_job_run", {"JobName": victim, "JobRunIds": [victim_run]}],
            ["DeleteDatabase", "delete_database", {"Name": db}],
            ["UpdateJob", "update_job", {"JobName": victim, "JobUpdate": {
                "Role": "x", "Command": {"Name": "pythonshell", "ScriptLocation": "s3://a/b.py"}}}],
            ["GetTable", "get_table", {"DatabaseName": db, "Name": "existing"}],
            ["CreateTable", "create_table", {"DatabaseName": db, "TableInput": table_input("made_by_job")}],
            ["BatchCreatePartition", "batch_create_partition", {
                "DatabaseName": db, "TableName": "made_by_job",
                "PartitionInputList": [{"Values": ["2024"], "StorageDescriptor": {
                    "Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://bucket/p/"}}]}],
        ]
        results = probe(kit, glue, calls, tmp_path / "results.json")
        for action in ("DeleteJob", "StartJobRun", "BatchStopJobRun", "DeleteDatabase", "UpdateJob"):
            assert results[action].startswith("AccessDeniedException: "), (action, results)
            assert "glue:" + action in results[action]
        for action in ("GetTable", "CreateTable", "BatchCreatePartition"):
            assert results[action] == "ok", (action, results)
        # Nothing was touched: the job, its run and the database are still there.
        assert glue.get_job(JobName=victim)["Job"]["Name"] == victim
        assert glue.get_job_run(JobName=victim, RunId=victim_run)["JobRun"]["JobRunState"] == "RUNNING"
        assert glue.get_database(Name=db)["Database"]["Name"] == db
        assert glue.get_partition(DatabaseName=db, TableName="made_by_job",
                                  PartitionValues=["2024"])["Partition"]["Values"] == ["2024"]
    finally:
        kit.close()


def test_role_policy_narrows_and_widens_what_a_run_may_do(own_server, tmp_path):
    srv = own_server("role_policy = Narrow: glue:GetTable, glue:GetDatabase\n"
                     "role_policy = Wide: glue:*\n"
                     "role_policy = Wide: logs:*\n")
    glue = srv.client()
    kit = JobKit(srv, glue)
    try:
        glue.create_database(DatabaseInput={"Name": "keep"})
        glue.create_database(DatabaseInput={"Name": "drop_me"})
        glue.create_table(DatabaseName="keep", TableInput=table_input("t"))
        calls = [["GetTable", "get_table", {"DatabaseName": "keep", "Name": "t"}],
                 ["CreateTable", "create_table", {"DatabaseName": "keep", "TableInput": table_input("u")}]]
        narrow = probe(kit, glue, calls, tmp_path / "narrow.json", role="Narrow")
        assert narrow["GetTable"] == "ok"
        assert narrow["CreateTable"].startswith("AccessDeniedException: ")
        assert "glue:CreateTable" in narrow["CreateTable"]
        wide = probe(kit, glue, [["DeleteDatabase", "delete_database", {"Name": "drop_me"}]],
                     tmp_path / "wide.json", role="Wide")
        assert wide["DeleteDatabase"] == "ok"
        names = [d["Name"] for d in glue.get_databases()["DatabaseList"]]
        assert "drop_me" not in names and "keep" in names
    finally:
        kit.close()


def test_secret_flag_is_refused_and_points_to_the_file_or_environment(tmp_path):
    result = subprocess.run([BIN, "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
                             "--secret-access-key", "hunter2"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "OPENGLUE_SECRET_ACCESS_KEY" in result.stderr and "config" in result.stderr
    for flag in ("--credentials", "--server-key"):
        result = subprocess.run([BIN, "serve", flag, "a:b"], capture_output=True, text=True,
                                timeout=30)
        assert result.returncode != 0 and "refused" in result.stderr


def test_job_finds_no_secret_on_the_command_line_or_at_rest(own_server, tmp_path):
    server_secret = "S3cr3t-" + unique("server")
    srv = own_server(env={"OPENGLUE_ACCESS_KEY_ID": "admin",
                          "OPENGLUE_SECRET_ACCESS_KEY": server_secret})
    glue = srv.client(key="admin", secret=server_secret)
    kit = JobKit(srv, glue)
    try:
        out = tmp_path / "seen.json"
        release = tmp_path / "release"
        job = kit.job(f"""
            import json, os, sys, time
            args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
            seen = {{"secret": os.environ["AWS_SECRET_ACCESS_KEY"]}}
            with open("/proc/{srv.proc.pid}/cmdline", "rb") as f:
                seen["cmdline"] = f.read().decode("utf-8", "replace")
            try:
                with open("/proc/{srv.proc.pid}/environ", "rb") as f:
                    seen["environ"] = f.read().decode("utf-8", "replace")
            except OSError as e:
                seen["environ"] = "refused: " + type(e).__name__
            with open(args["--out"] + ".tmp", "w") as f:
                json.dump(seen, f)
            os.rename(args["--out"] + ".tmp", args["--out"])
            while not os.path.exists(args["--release"]):
                time.sleep(0.05)
        """, command="pythonshell")
        run_id = kit.start(job, Arguments={"--out": str(out), "--release": str(release)})
        seen = json.loads(wait_file(out))
        assert server_secret not in seen["cmdline"]
        assert "secret" not in seen["cmdline"].lower()
        if os.geteuid() == 0:
            assert server_secret not in seen["environ"], "a job read the server's environment"
        run_secret = seen["secret"]
        assert len(run_secret) >= 32

        def grep_data_dir():
            hits = []
            for folder, _, files in os.walk(srv.data_dir):
                for name in files:
                    path = os.path.join(folder, name)
                    try:
                        with open(path, "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    if run_secret.encode() in data:
                        hits.append(path)
            return hits
        # While the run goes (its state is in catalog.db and its WAL) and after it ended.
        assert grep_data_dir() == []
        release.write_text("go")
        assert wait_run(glue, job, run_id)["JobRunState"] == "SUCCEEDED"
        assert grep_data_dir() == []
    finally:
        kit.close()


@ROOT_ONLY
def test_job_user_cannot_read_metadata_or_other_runs_but_shares_the_object_store(server, glue,
                                                                                   tmp_path):
    kit = JobKit(server, glue)
    try:
        other = kit.job(SLEEP, command="pythonshell")
        other_run = kit.start(other)
        wait_run(glue, other, other_run, states=("RUNNING",))
        other_dir = os.path.join(server.data_dir, "runs", other_run)
        # An object written by root, in a folder made by root, before the job runs.
        bucket = os.path.join(server.data_dir, "s3", unique("bucket"))
        os.makedirs(os.path.join(bucket, "in"))
        with open(os.path.join(bucket, "in", "data.txt"), "w") as f:
            f.write("from root")
        out = tmp_path / "access.json"
        job = kit.job(f"""
            import json, os, sys
            args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
            s3 = os.environ["OPENGLUE_S3_ROOT"]
            bucket = os.path.join(s3, "{os.path.basename(bucket)}")
            result = {{"uid": os.getuid()}}
            def attempt(label, fn):
                try:
                    value = fn()
                    result[label] = "ok" if value is None else value
                except OSError as e:
                    result[label] = "refused: " + type(e).__name__
            def read(path):
                with open(path, "rb") as f:
                    return "read " + str(len(f.read()))
            def write(path, text):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            data_dir = os.path.dirname(s3)
            attempt("catalog.db", lambda: read(os.path.join(data_dir, "catalog.db")))
            attempt("server.key", lambda: read(os.path.join(data_dir, "server.key")))
            attempt("list data dir", lambda: os.listdir(data_dir) and None)
            attempt("logs", lambda: os.listdir(os.path.join(data_dir, "logs")) and None)
            attempt("other run", lambda: os.listdir("{other_dir}") and None)
            attempt("other script", lambda: read("{other_dir}/script/" + os.listdir("{other_dir}/script")[0]))
            attempt("read object", lambda: read(os.path.join(bucket, "in", "data.txt")))
            attempt("overwrite object", lambda: write(os.path.join(bucket, "in", "data.txt"), "by job"))
            attempt("new object in root's folder", lambda: write(os.path.join(bucket, "in", "new.txt"), "new"))
            attempt("new object in a new folder", lambda: write(os.path.join(bucket, "out", "part-0.txt"), "out"))
            attempt("own run dir", lambda: write(os.path.join(os.environ["TMPDIR"], "x"), "x"))
            with open(args["--out"], "w") as f:
                json.dump(result, f)
        """, command="pythonshell")
        assert kit.run(job, Arguments={"--out": str(out)})["JobRunState"] == "SUCCEEDED"
        result = json.loads(out.read_text())
        assert result["uid"] != 0
        for denied in ("catalog.db", "server.key", "list data dir", "logs", "other run",
                       "other script"):
            assert str(result[denied]).startswith("refused: "), (denied, result)
        for allowed in ("overwrite object", "new object in root's folder",
                        "new object in a new folder", "own run dir"):
            assert result[allowed] == "ok", (allowed, result)
        assert result["read object"] == "read 9"
        with open(os.path.join(bucket, "in", "data.txt")) as f:
            assert f.read() == "by job"
        # A second run (another uid) can still read and replace what the first one wrote.
        second_out = tmp_path / "second.json"
        second = kit.job(f"""
            import json, os, sys
            args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
            path = "{bucket}/out/part-0.txt"
            text = open(path).read()
            with open(path, "w") as f:
                f.write("second")
            json.dump({{"uid": os.getuid(), "text": text}}, open(args["--out"], "w"))
        """, command="pythonshell")
        assert kit.run(second, Arguments={"--out": str(second_out)})["JobRunState"] == "SUCCEEDED"
        second_result = json.loads(second_out.read_text())
        assert second_result["text"] == "out"
        assert second_result["uid"] not in (0, result["uid"])
    finally:
        kit.close()


def test_a_run_reads_only_the_passwords_of_the_connections_its_job_lists(server, glue, tmp_path):
    """Issue 18, "too much": GetConnection(HidePassword=False) gave any run every password."""
    kit = JobKit(server, glue)
    mine, other = unique("conn_mine"), unique("conn_other")
    for name, password in ((mine, "mine-secret"), (other, "OTHER-SECRET-123")):
        glue.create_connection(ConnectionInput={
            "Name": name, "ConnectionType": "JDBC", "ConnectionProperties": {
                "JDBC_CONNECTION_URL": "jdbc:postgresql://127.0.0.1:5432/x", "USERNAME": "u",
                "PASSWORD": password}})
    try:
        script = kit.script(CONNECTION_PROBE)
        job = unique("connprobe")
        glue.create_job(Name=job, Role="local", Command={"Name": "pythonshell", "ScriptLocation": script},
                        Connections={"Connections": [mine]})
        kit.jobs.append(job)
        out = tmp_path / "connections.json"
        run = kit.run(job, timeout=60, Arguments={"--mine": mine, "--other": other, "--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        seen = json.loads(out.read_text())
        assert seen["mine"] == "mine-secret"
        assert seen["other"].startswith("AccessDeniedException: ") and other in seen["other"], seen
        assert "Connections" in seen["other"]
        assert seen["other_hidden"] == "no password"
        assert seen["listed"][mine] == "mine-secret" and seen["listed"][other] == "no password", seen
        # An administrator still reads both.
        got = glue.get_connection(Name=other)["Connection"]["ConnectionProperties"]
        assert got["PASSWORD"] == "OTHER-SECRET-123"
    finally:
        kit.close()
        for name in (mine, other):
            glue.delete_connection(ConnectionName=name)


CONNECTION_PROBE = """
    import json, os, sys
    import boto3, botocore.exceptions
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    glue = boto3.client("glue", endpoint_url=os.environ["AWS_ENDPOINT_URL_GLUE"])

    def password(connection):
        return connection["ConnectionProperties"].get("PASSWORD", "no password")

    seen = {"mine": password(glue.get_connection(Name=args["--mine"])["Connection"])}
    try:
        seen["other"] = password(glue.get_connection(Name=args["--other"])["Connection"])
    except botocore.exceptions.ClientError as e:
        seen["other"] = e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"]
    seen["other_hidden"] = password(glue.get_connection(Name=args["--other"], HidePassword=True)["Connection"])
    seen["listed"] = {c["Name"]: password(c) for c in glue.get_connections()["ConnectionList"]}
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(seen, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""


ARGV_PROBE = """
    import json, os, sys, time
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    # What Glue gives a script: sys.argv[0] is the script, then the arguments in pairs.
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump({"argv0": os.path.basename(sys.argv[0]), "secret": args.get("--mysecretarg"),
                   "name": __name__}, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
    time.sleep(60)
"""


@ROOT_ONLY
def test_job_arguments_are_not_on_any_command_line(server, glue, tmp_path):
    """Issue 18, defect 8: --mysecretarg ARG-SECRET-123 was readable in /proc/<pid>/cmdline."""
    kit = JobKit(server, glue)
    try:
        job = kit.job(ARGV_PROBE, command="pythonshell")
        out = tmp_path / "argv.json"
        run_id = kit.start(job, Arguments={"--mysecretarg": "ARG-SECRET-123", "--out": str(out)})
        wait_file(out, timeout=60)
        seen = json.loads(out.read_text())
        assert seen == {"argv0": seen["argv0"], "secret": "ARG-SECRET-123", "name": "__main__"}
        assert seen["argv0"].endswith(".py")
        # No process's command line (readable by every local user) carries the arguments. The run
        # id stays visible as the name of the run's folder (docs/security.md): it grants nothing.
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            assert b"ARG-SECRET-123" not in cmdline, (pid, cmdline)
            assert b"--JOB_RUN_ID" not in cmdline and b"--mysecretarg" not in cmdline, (pid, cmdline)
        glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])
    finally:
        kit.close()
