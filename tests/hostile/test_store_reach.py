"""Issue 18, "documented, but too much": a run's reach into the object store follows its Role.

A job run used to be admin on the store: a `readonly` job overwrote s3://scripts/otherjob.py (code
execution under another job's Role) over the S3 API and through the store folder. Now the S3 API's
gate holds every run credential to the `s3:` statements of its Role (with resources), and no run
changes any job's code whatever its Role says; the folder route is a per-run mount view of the
store that matches the same policy (tests below the S3 ones).

Each probe is a pythonshell job using its own run credential (AWS_ACCESS_KEY_ID, ...) and
AWS_ENDPOINT_URL_S3, as a hostile job script would, and reporting what each call answered.
"""
import json
import os
import shutil
import tempfile

import re

import boto3
import pytest

from conftest import ACCESS_KEY, SECRET_KEY, Server
from jobkit import JobKit, unique, wait_for, wait_run, write_script

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="per-run mount views need the server to run as root")

POLICY = """
role_policy = readonly: glue:GetTable*, logs:*, s3:GetObject arn:aws:s3:::lake/*, s3:ListBucket s3://lake
role_policy = writer: s3:GetObject*, s3:ListBucket*, s3:PutObject s3://lake/out/*, s3:PutObject s3://scripts/*
"""

# Runs `--calls` (a JSON list of [label, what, args]) with the run's own credentials over the S3
# API and writes {label: "ok" | "ok:<body>" | "<error code>: <message>"} to --out.
S3_PROBE = """
    import json, os, sys, urllib.request, urllib.error
    import boto3, botocore.auth, botocore.awsrequest, botocore.config, botocore.exceptions
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    endpoint = os.environ["AWS_ENDPOINT_URL_S3"]
    s3 = boto3.client("s3", endpoint_url=endpoint, config=botocore.config.Config(retries={"max_attempts": 1}))
    credentials = boto3.Session().get_credentials().get_frozen_credentials()

    def raw(method, path, body=""):
        body = body.encode()
        # A request signed by hand for a path boto3 would not send as it is.
        request = botocore.awsrequest.AWSRequest(method=method, url=endpoint + path, data=body)
        botocore.auth.S3SigV4Auth(credentials, "s3", "us-east-1").add_auth(request)
        prepared = request.prepare()
        req = urllib.request.Request(prepared.url, data=body or None, method=method,
                                     headers=dict(prepared.headers))
        try:
            with urllib.request.urlopen(req) as response:
                return "ok"
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            code = text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in text else str(e.code)
            return code + ": " + text

    def pipelined(first, second, line_end):
        # Two signed requests in one write: an allowed one, then one the gate must never let through.
        import socket, urllib.parse
        wire = b""
        for method, path, body in (first, second):
            body = body.encode()
            request = botocore.awsrequest.AWSRequest(method=method, url=endpoint + path, data=body)
            botocore.auth.S3SigV4Auth(credentials, "s3", "us-east-1").add_auth(request)
            prepared = request.prepare()
            head = f"{method} {path} HTTP/1.1" + line_end
            headers = dict(prepared.headers)
            headers["Host"] = urllib.parse.urlsplit(endpoint).netloc
            headers["Content-Length"] = str(len(body))
            for name, value in headers.items():
                head += f"{name}: {value}" + line_end
            wire += (head + line_end).encode() + body
        host, port = urllib.parse.urlsplit(endpoint).netloc.split(":")
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(wire)
            answer = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        return "responses:" + str(answer.count(b"HTTP/1.1 "))

    results = {}
    for label, what, call in json.loads(args["--calls"]):
        try:
            if what == "pipelined":
                results[label] = pipelined(*call)
                continue
            if what == "raw":
                results[label] = raw(*call)
                continue
            if what == "presigned_put":
                url = s3.generate_presigned_url("put_object", Params=call)
                req = urllib.request.Request(url, data=b"print('presigned')", method="PUT")
                try:
                    urllib.request.urlopen(req).read()
                    results[label] = "ok"
                except urllib.error.HTTPError as e:
                    results[label] = str(e.code) + ": " + e.read().decode()
                continue
            if what == "multipart":
                upload = s3.create_multipart_upload(**call)
                results[label] = "ok"
                continue
            answer = getattr(s3, what)(**call)
            if what == "get_object":
                results[label] = "ok:" + answer["Body"].read().decode()
            elif what == "delete_objects":
                results[label] = "ok" if not answer.get("Errors") else "errors: " + json.dumps(answer["Errors"])
            else:
                results[label] = "ok"
        except botocore.exceptions.ClientError as e:
            results[label] = e.response["Error"]["Code"] + ": " + e.response["Error"].get("Message", "")
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""

VICTIM = "print('the victim job ran its own code')\n"


@pytest.fixture(scope="module")
def store_server():
    data_dir = tempfile.mkdtemp(prefix="openglue-store-reach-")
    path = os.path.join(data_dir, "openglue.conf")
    with open(path, "w") as f:
        f.write(POLICY)
    srv = Server(data_dir, extra_args=["--config", path]).start()
    found = wait_for(lambda: re.search(r"S3 API gate listening on (http://[0-9.:]+)", srv.log()), 10,
                     "the S3 gate's log line")
    srv.s3_endpoint = found.group(1)
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def setup(store_server, tmp_path):
    glue = store_server.client()
    kit = JobKit(store_server, glue)
    victim_script = write_script(store_server, VICTIM, bucket="scripts", name=unique("victim"))
    victim = unique("victim")
    glue.create_job(Name=victim, Role="local", Command={"Name": "pythonshell", "ScriptLocation": victim_script})
    kit.jobs.append(victim)
    lake = os.path.join(store_server.data_dir, "s3", "lake")
    os.makedirs(lake, exist_ok=True)
    with open(os.path.join(lake, "input.csv"), "w") as f:
        f.write("a,b\n1,2\n")
    yield kit, glue, victim, victim_script, tmp_path
    kit.close()


def probe(kit, glue, calls, out, role):
    job = unique("probe")
    glue.create_job(Name=job, Role=role, Command={"Name": "pythonshell", "ScriptLocation": kit.script(S3_PROBE)})
    kit.jobs.append(job)
    run = kit.run(job, timeout=90, Arguments={"--calls": json.dumps(calls), "--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run
    return json.loads(out.read_text())


def operator_s3(server):
    return boto3.client("s3", endpoint_url=server.s3_endpoint, region_name="us-east-1",
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)


def victim_file(server, script):
    bucket, key = script[len("s3://"):].split("/", 1)
    return os.path.join(server.data_dir, "s3", bucket, key)


def test_a_run_cannot_change_another_jobs_script_over_the_s3_api(store_server, setup):
    kit, glue, victim, script, tmp = setup
    key = script.split("/", 3)[3]
    evil = "print('attacker code')"
    results = probe(kit, glue, [
        ["put", "put_object", {"Bucket": "scripts", "Key": key, "Body": evil}],
        ["delete", "delete_object", {"Bucket": "scripts", "Key": key}],
        ["delete_many", "delete_objects", {"Bucket": "scripts", "Delete": {"Objects": [{"Key": "nothing.py"}, {"Key": key}]}}],
        ["copy", "copy_object", {"Bucket": "scripts", "Key": key, "CopySource": {"Bucket": "lake", "Key": "input.csv"}}],
        ["multipart", "multipart", {"Bucket": "scripts", "Key": key}],
        ["presigned", "presigned_put", {"Bucket": "scripts", "Key": key}],
        # The same key spelled with a percent-escape, with '.' and empty segments.
        ["escaped", "raw", ["PUT", "/scripts/%" + format(ord(key[0]), "02x") + key[1:], evil]],
        ["dot", "raw", ["PUT", "/scripts/./" + key, evil]],
        ["double_slash", "raw", ["PUT", "/scripts//" + key, evil]],
        # A forbidden request pipelined behind an allowed one, with CRLF and with bare LF line ends.
        ["pipelined", "pipelined", [["GET", "/lake/input.csv", ""], ["PUT", "/scripts/" + key, evil], "\r\n"]],
        ["pipelined_lf", "pipelined", [["GET", "/lake/input.csv", ""], ["PUT", "/scripts/" + key, evil], "\n"]],
        # What the default Role may do still works.
        ["read_script", "get_object", {"Bucket": "scripts", "Key": key}],
        ["write_data", "put_object", {"Bucket": "lake", "Key": "out/part-0.csv", "Body": "a\n1\n"}],
        ["delete_data", "delete_object", {"Bucket": "lake", "Key": "out/part-0.csv"}],
    ], tmp / "out.json", role="local")
    for label in ("put", "delete", "delete_many", "copy", "multipart"):
        assert results[label].startswith("AccessDenied: "), (label, results[label])
        assert f"code of job {victim}" in results[label], results[label]
    assert results["presigned"].startswith("403: ") and f"code of job {victim}" in results["presigned"], results["presigned"]
    assert results["escaped"].startswith("AccessDenied: ") and victim in results["escaped"], results["escaped"]
    for label in ("dot", "double_slash"):
        assert results[label].startswith("InvalidRequest: "), (label, results[label])
    # One request per connection: the second is never answered, let alone run.
    assert results["pipelined"] == "responses:1" and results["pipelined_lf"] == "responses:1", results
    assert results["read_script"] == "ok:" + VICTIM
    assert results["write_data"] == "ok" and results["delete_data"] == "ok", results
    with open(victim_file(store_server, script)) as f:
        assert f.read() == VICTIM
    # The victim still runs its own code.
    run = kit.run(victim, timeout=60)
    assert run["JobRunState"] == "SUCCEEDED", run


def test_s3_statements_with_resources_scope_a_role(store_server, setup):
    kit, glue, victim, script, tmp = setup
    key = script.split("/", 3)[3]
    results = probe(kit, glue, [
        ["read_lake", "get_object", {"Bucket": "lake", "Key": "input.csv"}],
        ["list_lake", "list_objects_v2", {"Bucket": "lake"}],
        ["write_lake", "put_object", {"Bucket": "lake", "Key": "x.csv", "Body": "x"}],
        ["read_scripts", "get_object", {"Bucket": "scripts", "Key": key}],
        ["list_scripts", "list_objects_v2", {"Bucket": "scripts"}],
        ["make_bucket", "create_bucket", {"Bucket": unique("made").replace("_", "-")}],
        ["list_buckets", "list_buckets", {}],
    ], tmp / "readonly.json", role="readonly")
    assert results["read_lake"] == "ok:a,b\n1,2\n"
    assert results["list_lake"] == "ok"
    for label, action, resource in [("write_lake", "s3:PutObject", "arn:aws:s3:::lake/x.csv"),
                                    ("read_scripts", "s3:GetObject", f"arn:aws:s3:::scripts/{key}"),
                                    ("list_scripts", "s3:ListBucket", "arn:aws:s3:::scripts"),
                                    ("make_bucket", "s3:CreateBucket", "arn:aws:s3:::made"),
                                    ("list_buckets", "s3:ListAllMyBuckets", "arn:aws:s3:::")]:
        assert results[label].startswith("AccessDenied: "), (label, results[label])
        assert action in results[label] and resource in results[label] and "role 'readonly'" in results[label], results[label]
    assert not os.path.exists(os.path.join(store_server.data_dir, "s3", "lake", "x.csv"))

    # A Role that may write to s3://scripts/* still cannot touch a job's code there.
    results = probe(kit, glue, [
        ["out", "put_object", {"Bucket": "lake", "Key": "out/y.csv", "Body": "y"}],
        ["elsewhere", "put_object", {"Bucket": "lake", "Key": "y.csv", "Body": "y"}],
        ["new_script", "put_object", {"Bucket": "scripts", "Key": unique("new") + ".py", "Body": "pass"}],
        ["victim", "put_object", {"Bucket": "scripts", "Key": key, "Body": "evil"}],
    ], tmp / "writer.json", role="writer")
    assert results["out"] == "ok" and results["new_script"] == "ok", results
    assert results["elsewhere"].startswith("AccessDenied: "), results
    assert results["victim"].startswith("AccessDenied: ") and f"code of job {victim}" in results["victim"], results
    with open(victim_file(store_server, script)) as f:
        assert f.read() == VICTIM


def test_operators_keep_full_access_through_the_gate(store_server, setup):
    kit, glue, victim, script, tmp = setup
    key = script.split("/", 3)[3]
    s3 = operator_s3(store_server)
    s3.put_object(Bucket="scripts", Key=key, Body=VICTIM.encode())
    assert s3.get_object(Bucket="scripts", Key=key)["Body"].read() == VICTIM.encode()
    s3.copy_object(Bucket="scripts", Key=key + ".bak", CopySource={"Bucket": "scripts", "Key": key})
    s3.delete_objects(Bucket="scripts", Delete={"Objects": [{"Key": key + ".bak"}]})
    assert "Contents" in s3.list_objects_v2(Bucket="scripts", Prefix=key)


# Runs `--ops` (a JSON list of [label, op, path, other]) on the store folder OPENGLUE_S3_ROOT and
# writes {label: "ok" | "ok:<text>" | "<errno name>"} to --out.
FOLDER_PROBE = """
    import errno, json, os, sys
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    root = os.environ["OPENGLUE_S3_ROOT"]
    results = {}
    for label, op, path, other in json.loads(args["--ops"]):
        target = os.path.join(root, path)
        try:
            if op == "write":
                with open(target, "w") as f:
                    f.write(other)
                results[label] = "ok"
            elif op == "read":
                with open(target) as f:
                    results[label] = "ok:" + f.read()
            elif op == "list":
                results[label] = "ok:" + ",".join(sorted(os.listdir(target)))
            elif op == "unlink":
                os.unlink(target)
                results[label] = "ok"
            elif op == "rename":
                os.rename(target, os.path.join(root, other))
                results[label] = "ok"
            elif op == "mkdir":
                os.makedirs(target)
                results[label] = "ok"
            elif op == "symlink":
                os.symlink(other, target)
                results[label] = "ok"
        except OSError as e:
            results[label] = errno.errorcode.get(e.errno, str(e.errno))
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""


def folder_probe(kit, glue, ops, out, role):
    job = unique("folder")
    glue.create_job(Name=job, Role=role, Command={"Name": "pythonshell", "ScriptLocation": kit.script(FOLDER_PROBE, bucket="probes")})
    kit.jobs.append(job)
    run = kit.run(job, timeout=90, Arguments={"--ops": json.dumps(ops), "--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run
    return json.loads(out.read_text())


@ROOT_ONLY
def test_a_run_cannot_change_another_jobs_script_through_the_store_folder(store_server, setup):
    kit, glue, victim, script, tmp = setup
    key = script.split("/", 3)[3]
    os.chmod(tmp, 0o777)  # the probe runs as its own uid and writes its answer here
    with open(os.path.join(store_server.data_dir, "s3", "lake", "evil.py"), "w") as f:
        f.write("print('attacker code')")
    # A second job keeps its script in a folder: that folder is read-only as a whole.
    nested = write_script(store_server, VICTIM, bucket="scripts", name="jobs/" + unique("nested"))
    nested_job = unique("nested")
    glue.create_job(Name=nested_job, Role="local", Command={"Name": "pythonshell", "ScriptLocation": nested})
    kit.jobs.append(nested_job)
    nested_key = nested.split("/", 3)[3]
    results = folder_probe(kit, glue, [
        ["nested_overwrite", "write", f"scripts/{nested_key}", "evil"],
        ["nested_beside", "write", "scripts/jobs/other.py", "x"],
        ["nested_rename_folder", "rename", "scripts/jobs", "scripts/jobs-old"],
        ["overwrite", "write", f"scripts/{key}", "print('attacker code')"],
        ["unlink", "unlink", f"scripts/{key}", None],
        ["rename_away", "rename", f"scripts/{key}", "lake/stolen.py"],
        ["rename_in", "rename", "lake/evil.py", f"scripts/{key}"],
        ["rename_bucket", "rename", "scripts", "scripts-old"],
        ["new_file_beside", "write", "scripts/other.py", "x"],
        ["read", "read", f"scripts/{key}", None],
        # The rest of the store is the default Role's: read and write.
        ["write_data", "write", "lake/out.csv", "a\n1\n"],
        ["new_bucket", "mkdir", "madebyrun/x", None],
        ["rename_data", "rename", "lake/out.csv", "lake/moved.csv"],
    ], tmp / "folder.json", role="local")
    for label in ("overwrite", "unlink", "rename_away", "rename_in", "rename_bucket",
                  "nested_overwrite", "nested_beside", "nested_rename_folder"):
        assert results[label] in ("EROFS", "EBUSY", "EXDEV"), (label, results[label])
    # Code at a bucket's top level is protected object by object: the rest of the bucket is not frozen.
    assert results["new_file_beside"] == "ok", results
    assert results["read"] == "ok:" + VICTIM
    assert results["write_data"] == "ok" and results["new_bucket"] == "ok" and results["rename_data"] == "ok", results
    with open(victim_file(store_server, script)) as f:
        assert f.read() == VICTIM
    assert os.path.exists(os.path.join(store_server.data_dir, "s3", "lake", "moved.csv"))
    run = kit.run(victim, timeout=60)
    assert run["JobRunState"] == "SUCCEEDED", run


@ROOT_ONLY
def test_the_store_folder_of_a_run_matches_its_roles_grants(store_server, setup):
    kit, glue, victim, script, tmp = setup
    key = script.split("/", 3)[3]
    os.chmod(tmp, 0o777)
    # readonly: s3:GetObject on lake/* only. The folder shows lake, read-only, and nothing else.
    results = folder_probe(kit, glue, [
        ["buckets", "list", "", None],
        ["read_lake", "read", "lake/input.csv", None],
        ["write_lake", "write", "lake/x.csv", "x"],
        ["read_scripts", "read", f"scripts/{key}", None],
        ["new_bucket", "mkdir", "other", None],
    ], tmp / "readonly.json", role="readonly")
    assert results["buckets"] == "ok:lake", results
    assert results["read_lake"] == "ok:a,b\n1,2\n"
    assert results["write_lake"] == "EROFS" and results["new_bucket"] == "EROFS", results
    assert results["read_scripts"] == "ENOENT", results
    assert not os.path.exists(os.path.join(store_server.data_dir, "s3", "lake", "x.csv"))

    # writer: reads everything, writes lake/out/* and scripts/*; the folder of a job's code stays
    # read-only on this route even where the Role may write (the S3 API checks per object).
    results = folder_probe(kit, glue, [
        ["out", "write", "lake/out/y.csv", "y"],
        ["elsewhere", "write", "lake/y.csv", "y"],
        ["victim", "write", f"scripts/{key}", "evil"],
        ["read_probe", "list", "probes", None],
    ], tmp / "writer.json", role="writer")
    assert results["out"] == "ok", results
    assert results["elsewhere"] == "EROFS", results
    assert results["victim"] == "EROFS", results
    assert results["read_probe"].startswith("ok:"), results
    with open(victim_file(store_server, script)) as f:
        assert f.read() == VICTIM


# FOLDER_PROBE that first waits for the file --go to appear (so a test can change jobs while it runs).
WAITING_FOLDER_PROBE = FOLDER_PROBE.replace(
    '    root = os.environ["OPENGLUE_S3_ROOT"]\n',
    '    root = os.environ["OPENGLUE_S3_ROOT"]\n'
    '    import time\n'
    '    open(args["--ready"], "w").close()\n'
    '    while not os.path.exists(args["--go"]):\n'
    '        time.sleep(0.05)\n')


@ROOT_ONLY
def test_code_a_job_names_while_a_run_runs_is_protected_in_that_runs_view(store_server, setup):
    kit, glue, victim, script, tmp = setup
    os.chmod(tmp, 0o777)
    folder = unique("late")
    late_key = f"{folder}/job.py"
    ops = [["overwrite", "write", f"scripts/{late_key}", "print('attacker code')"],
           ["beside", "write", f"scripts/{folder}/other.py", "x"],
           ["rename_folder", "rename", f"scripts/{folder}", "lake/stolen"],
           ["unlink", "unlink", f"scripts/{late_key}", None]]
    attacker = unique("attacker")
    glue.create_job(Name=attacker, Role="local", Command={"Name": "pythonshell",
                                                          "ScriptLocation": kit.script(WAITING_FOLDER_PROBE, bucket="probes")})
    kit.jobs.append(attacker)
    go, ready, out = tmp / "go", tmp / "ready", tmp / "late.json"
    run_id = kit.start(attacker, Arguments={"--ops": json.dumps(ops), "--out": str(out), "--go": str(go),
                                            "--ready": str(ready)})
    wait_for(lambda: ready.exists(), 60, "the attacker run to start")
    # Only now does a job name code in a folder that did not exist when the attacker started.
    late_job = unique("latejob")
    glue.create_job(Name=late_job, Role="local",
                    Command={"Name": "pythonshell", "ScriptLocation": f"s3://scripts/{late_key}"})
    kit.jobs.append(late_job)
    operator_s3(store_server).put_object(Bucket="scripts", Key=late_key, Body=VICTIM.encode())
    go.touch()
    wait_for(lambda: out.exists(), 60, "the attacker's results")
    results = json.loads(out.read_text())
    for label in ("overwrite", "beside", "rename_folder", "unlink"):
        assert results[label] in ("EROFS", "EBUSY", "EXDEV"), (label, results)
    with open(os.path.join(store_server.data_dir, "s3", "scripts", late_key)) as f:
        assert f.read() == VICTIM
    assert wait_run(glue, attacker, run_id, timeout=60)["JobRunState"] == "SUCCEEDED"
    assert kit.run(late_job, timeout=60)["JobRunState"] == "SUCCEEDED"
