"""Job bookmark state on the wire: GetJobBookmark / ResetJobBookmark (Glue's shapes) and the
OpenGlue extension operations OpenGlueCommitJobBookmark / OpenGlueGetJobBookmarkHistory, driven
by boto3 and by real job runs that sign with their own credentials (docs/bookmarks.md).
"""
import json
import os
import shutil
import tempfile
import textwrap
import urllib.error
import urllib.request

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest

from conftest import ACCESS_KEY, REGION, SECRET_KEY, Server, raises_glue, unique  # noqa: F401
from jobkit import kit, wait_file, wait_run  # noqa: F401  (kit is a fixture)

ENABLE = {"--job-bookmark-option": "job-bookmark-enable"}

# One signed POST of an extension operation; the same text runs inside the job scripts below
# (with the run's credentials from its environment) and in the test (with captured ones).
CALL = textwrap.dedent('''
    def call(operation, body, endpoint, key, secret, region="us-east-1"):
        import json, urllib.error, urllib.request
        import botocore.auth, botocore.awsrequest, botocore.credentials
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/x-amz-json-1.1",
                   "X-Amz-Target": "AWSGlue." + operation}
        request = botocore.awsrequest.AWSRequest(method="POST", url=endpoint + "/", data=data,
                                                 headers=headers)
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "glue",
                                region).add_auth(request)
        http = urllib.request.Request(endpoint + "/", data=data, method="POST",
                                      headers=dict(request.headers.items()))
        try:
            with urllib.request.urlopen(http, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")
''')
namespace = {}
exec(CALL, namespace)
call = namespace["call"]


def admin_call(server, operation, body):
    return call(operation, body, server.endpoint, ACCESS_KEY, SECRET_KEY, REGION)


# A run that commits twice with its own credentials, asks for another job's bookmark, saves
# its credentials, and waits for the test to release it. Results go to <out>/result.json.
RUN_SCRIPT = CALL + textwrap.dedent('''
    import json, os, sys, time
    import boto3
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    out = args["--out"]
    env = os.environ
    endpoint, key, secret = (env["AWS_ENDPOINT_URL_GLUE"], env["AWS_ACCESS_KEY_ID"],
                             env["AWS_SECRET_ACCESS_KEY"])
    job, run_id = env["OPENGLUE_JOB_NAME"], env["OPENGLUE_JOB_RUN_ID"]
    state = json.dumps({"orders": {"type": "s3", "paths": ["s3://b/orders/"], "high": 42}})
    body = {"JobName": job, "RunId": run_id, "JobBookmark": state,
            "Reads": {"orders": {"type": "s3", "objects": 3, "bytes": 300}}}
    result = {"run_id": run_id, "key": key, "secret": secret}
    result["first"] = call("OpenGlueCommitJobBookmark", body, endpoint, key, secret)
    result["second"] = call("OpenGlueCommitJobBookmark", body, endpoint, key, secret)
    other = args.get("--other")
    if other:
        result["other_commit"] = call("OpenGlueCommitJobBookmark",
                                      dict(body, JobName=other), endpoint, key, secret)
        result["other_history"] = call("OpenGlueGetJobBookmarkHistory", {"JobName": other},
                                       endpoint, key, secret)
        glue = boto3.client("glue")
        try:
            glue.get_job_bookmark(JobName=other)
            result["other_get"] = "allowed"
        except Exception as error:
            result["other_get"] = error.response["Error"]["Code"]
        try:
            glue.reset_job_bookmark(JobName=job)
            result["reset"] = "allowed"
        except Exception as error:
            result["reset"] = error.response["Error"]["Code"]
        result["own_get"] = glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]
        result["own_history"] = call("OpenGlueGetJobBookmarkHistory", {"JobName": job},
                                     endpoint, key, secret)
    with open(os.path.join(out, "result.json.tmp"), "w") as f:
        json.dump(result, f)
    os.rename(os.path.join(out, "result.json.tmp"), os.path.join(out, "result.json"))
    deadline = time.time() + 60
    while not os.path.exists(os.path.join(out, "release")) and time.time() < deadline:
        time.sleep(0.05)
''')


def start_run(kit, tmp_path, job, **arguments):
    out = tmp_path / unique("out")
    out.mkdir()
    os.chmod(out, 0o777)
    run_id = kit.start(job, Arguments={"--out": str(out), **arguments})
    result = json.loads(wait_file(str(out / "result.json"), timeout=60))
    assert result["run_id"] == run_id
    return run_id, out, result


# ---- Glue's operations ----------------------------------------------------------------------------

def test_get_job_bookmark_without_state_is_entity_not_found(glue, kit):
    job = kit.job("print('x')\n", command="pythonshell")
    with raises_glue("EntityNotFoundException", f"Continuation for job {job} not found"):
        glue.get_job_bookmark(JobName=job)
    with raises_glue("EntityNotFoundException"):
        glue.get_job_bookmark(JobName=unique("nosuchjob"))
    with raises_glue("EntityNotFoundException"):
        glue.get_job_bookmark(JobName=job, RunId="jr_" + "0" * 64)


def test_reset_job_bookmark_shapes(glue, kit):
    job = kit.job("print('x')\n", command="pythonshell")
    entry = glue.reset_job_bookmark(JobName=job)["JobBookmarkEntry"]
    assert entry == {"JobName": job, "Version": 1, "Run": 0, "Attempt": 0, "JobBookmark": "{}"}
    # Reset to nothing: no continuation until a run commits.
    with raises_glue("EntityNotFoundException", "Continuation"):
        glue.get_job_bookmark(JobName=job)
    assert glue.reset_job_bookmark(JobName=job)["JobBookmarkEntry"]["Version"] == 2
    with raises_glue("EntityNotFoundException"):
        glue.reset_job_bookmark(JobName=unique("nosuchjob"))
    with raises_glue("EntityNotFoundException", "not found"):
        glue.reset_job_bookmark(JobName=job, RunId="jr_unknown")
    status, history = admin_call(kit.server, "OpenGlueGetJobBookmarkHistory", {"JobName": job})
    assert status == 200
    assert [(e["Version"], e["Action"]) for e in history["History"]] == [(1, "RESET"), (2, "RESET")]


def test_extension_operations_validate_by_hand(kit):
    server = kit.server
    status, body = admin_call(server, "OpenGlueGetJobBookmarkHistory", {"JobName": unique("none")})
    assert (status, body["__type"]) == (400, "EntityNotFoundException")
    status, body = admin_call(server, "OpenGlueGetJobBookmarkHistory", {})
    assert (status, body["__type"]) == (400, "InvalidInputException")
    assert "JobName" in body["message"]
    status, body = admin_call(server, "OpenGlueCommitJobBookmark",
                              {"JobName": "j", "RunId": "r", "JobBookmark": "[]"})
    assert (status, body["__type"]) == (400, "InvalidInputException")
    assert "JSON object" in body["message"]
    status, body = admin_call(server, "OpenGlueCommitJobBookmark", ["not", "an", "object"])
    assert (status, body["__type"]) == (400, "SerializationException")


# ---- Commits from real runs -----------------------------------------------------------------------

def test_run_commits_once_with_its_own_credentials(glue, kit, tmp_path):
    other = kit.job("print('x')\n", command="pythonshell")
    job = kit.job(RUN_SCRIPT, command="pythonshell", DefaultArguments=ENABLE)
    run_id, out, result = start_run(kit, tmp_path, job, **{"--other": other})

    status, first = result["first"]
    assert status == 200, first
    entry = first["JobBookmarkEntry"]
    assert entry["JobName"] == job
    assert (entry["Version"], entry["Run"], entry["Attempt"], entry["RunId"]) == (1, 1, 0, run_id)
    assert json.loads(entry["JobBookmark"])["orders"]["high"] == 42

    # The same run again: refused, naming the run and the reason.
    status, second = result["second"]
    assert (status, second["__type"]) == (400, "ConcurrentModificationException")
    assert "duplicate" in second["message"] and run_id in second["message"]
    # A run acting on another job: refused.
    assert result["other_commit"][1]["__type"] == "AccessDeniedException"
    assert result["other_history"][1]["__type"] == "AccessDeniedException"
    assert result["other_get"] == "AccessDeniedException"
    assert result["reset"] == "AccessDeniedException"
    assert result["own_get"]["RunId"] == run_id
    assert [e["Version"] for e in result["own_history"][1]["History"]] == [1]

    # Someone else (the administrator's credentials) commits for the running run: refused.
    status, body = admin_call(kit.server, "OpenGlueCommitJobBookmark",
                              {"JobName": job, "RunId": run_id, "JobBookmark": "{}"})
    assert (status, body["__type"]) == (400, "AccessDeniedException")
    assert run_id in body["message"]

    (out / "release").write_text("go")
    assert wait_run(glue, job, run_id, timeout=60)["JobRunState"] == "SUCCEEDED"

    # After the run, its credential is revoked: a late commit with it is refused.
    status, body = call("OpenGlueCommitJobBookmark",
                        {"JobName": job, "RunId": run_id, "JobBookmark": "{}"},
                        kit.server.endpoint, result["key"], result["secret"])
    assert (status, body["__type"]) == (403, "UnrecognizedClientException")

    # Nothing of the refused commits changed the state.
    entry = glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]
    assert (entry["Version"], entry["Run"], entry["RunId"]) == (1, 1, run_id)
    assert json.loads(entry["JobBookmark"]) == {
        "orders": {"type": "s3", "paths": ["s3://b/orders/"], "high": 42}}
    assert glue.get_job_bookmark(JobName=job, RunId=run_id)["JobBookmarkEntry"] == entry
    status, history = admin_call(kit.server, "OpenGlueGetJobBookmarkHistory", {"JobName": job})
    assert status == 200 and "NextToken" not in history
    (row,) = history["History"]
    assert row["Action"] == "COMMIT" and row["RunId"] == run_id and row["Version"] == 1
    assert row["Reads"] == {"orders": {"type": "s3", "objects": 3, "bytes": 300}}
    assert isinstance(row["CommittedOn"], (int, float)) and row["JobBookmark"] == entry["JobBookmark"]

    # A second run continues the counters; then a rewind to the first run and DeleteJob.
    run2, out2, result2 = start_run(kit, tmp_path, job)
    entry2 = result2["first"][1]["JobBookmarkEntry"]
    assert (entry2["Version"], entry2["Run"], entry2["RunId"], entry2["PreviousRunId"]) == (
        2, 2, run2, run_id)
    (out2 / "release").write_text("go")
    wait_run(glue, job, run2, timeout=60)
    rewound = glue.reset_job_bookmark(JobName=job, RunId=run_id)["JobBookmarkEntry"]
    assert rewound["Version"] == 3 and rewound["JobBookmark"] == entry["JobBookmark"]
    glue.delete_job(JobName=job)
    with raises_glue("EntityNotFoundException"):
        glue.get_job_bookmark(JobName=job)
    status, body = admin_call(kit.server, "OpenGlueGetJobBookmarkHistory", {"JobName": job})
    assert body["__type"] == "EntityNotFoundException"
    kit.glue.create_job(Name=job, Role="local",
                        Command={"Name": "pythonshell", "ScriptLocation": "s3://x/y.py"})
    status, body = admin_call(kit.server, "OpenGlueGetJobBookmarkHistory", {"JobName": job})
    assert status == 200 and body["History"] == []


@pytest.mark.parametrize("option", [None, "job-bookmark-disable", "job-bookmark-pause"])
def test_commit_of_a_run_without_enable_is_refused(glue, kit, tmp_path, option):
    # The job enables bookmarks; the run overrides it (or, with None, nothing enables them).
    defaults = ENABLE if option else {}
    job = kit.job(RUN_SCRIPT, command="pythonshell", DefaultArguments=defaults)
    arguments = {"--job-bookmark-option": option} if option else {}
    run_id, out, result = start_run(kit, tmp_path, job, **arguments)
    status, body = result["first"]
    assert (status, body["__type"]) == (400, "InvalidInputException")
    assert job in body["message"] and run_id in body["message"]
    assert (option or "job-bookmark-disable") in body["message"]
    (out / "release").write_text("go")
    wait_run(glue, job, run_id, timeout=60)
    with raises_glue("EntityNotFoundException", "Continuation"):
        glue.get_job_bookmark(JobName=job)


@pytest.fixture()
def open_server():
    """A server without auth: every caller is anonymous, so only the run's state guards a commit."""
    data_dir = tempfile.mkdtemp(prefix="openglue-bm-")
    srv = Server(data_dir, ["--auth", "none"]).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def test_late_commit_is_refused_by_run_state(open_server, tmp_path):
    from jobkit import JobKit
    glue = open_server.client()
    kit = JobKit(open_server, glue)
    try:
        job = kit.job(RUN_SCRIPT, command="pythonshell", DefaultArguments=ENABLE)
        run_id, out, result = start_run(kit, tmp_path, job)
        assert result["first"][0] == 200
        (out / "release").write_text("go")
        assert wait_run(glue, job, run_id, timeout=60)["JobRunState"] == "SUCCEEDED"
        status, body = call("OpenGlueCommitJobBookmark",
                            {"JobName": job, "RunId": run_id, "JobBookmark": '{"x": {}}'},
                            open_server.endpoint, "anyone", "anything")
        assert (status, body["__type"]) == (400, "ConcurrentModificationException")
        assert "late" in body["message"] and "SUCCEEDED" in body["message"]
        entry = glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]
        assert entry["Version"] == 1 and "x" not in json.loads(entry["JobBookmark"])
    finally:
        kit.close()
        glue.close()


# A run whose first attempt fails before committing; the retry (Attempt 1) commits.
RETRY_SCRIPT = CALL + textwrap.dedent('''
    import json, os, sys
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    marker = os.path.join(args["--out"], "attempted")
    if not os.path.exists(marker):
        open(marker, "w").close()
        sys.exit("first attempt fails before its commit")
    env = os.environ
    status, body = call("OpenGlueCommitJobBookmark",
                        {"JobName": env["OPENGLUE_JOB_NAME"], "RunId": env["OPENGLUE_JOB_RUN_ID"],
                         "JobBookmark": json.dumps({"src": {"type": "s3", "high": 7}})},
                        env["AWS_ENDPOINT_URL_GLUE"], env["AWS_ACCESS_KEY_ID"],
                        env["AWS_SECRET_ACCESS_KEY"])
    assert status == 200, body
''')


def test_retried_attempt_commits_with_its_attempt_number(glue, kit, tmp_path):
    job = kit.job(RETRY_SCRIPT, command="pythonshell", DefaultArguments=ENABLE, MaxRetries=1)
    out = tmp_path / unique("out")
    out.mkdir()
    os.chmod(out, 0o777)
    first = kit.start(job, Arguments={"--out": str(out)})
    assert wait_run(glue, job, first, timeout=60)["JobRunState"] == "FAILED"

    def retry():
        runs = glue.get_job_runs(JobName=job)["JobRuns"]
        return next((r for r in runs if r.get("Attempt") == 1), None)

    from jobkit import wait_for
    retried = wait_for(retry, 60, "the retry of " + first)
    assert wait_run(glue, job, retried["Id"], timeout=60)["JobRunState"] == "SUCCEEDED"
    entry = glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]
    assert (entry["Version"], entry["Run"], entry["Attempt"], entry["RunId"]) == (
        1, 1, 1, retried["Id"])
    # The failed attempt committed nothing: its state is the one it started from (none).
    as_of_first = glue.get_job_bookmark(JobName=job, RunId=first)["JobBookmarkEntry"]
    assert (as_of_first["Version"], as_of_first["JobBookmark"]) == (0, "{}")
