"""Hostile OpenGlue bookmark extension requests: deep, oversized and mistyped bodies are refused
with 400 and a Glue error name, never crash the server, and change no state."""
import json
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_bookmark_api import admin_call  # noqa: E402
from conftest import unique  # noqa: E402

COMMIT = "OpenGlueCommitJobBookmark"


def refused(server, body, error="InvalidInputException", operation=COMMIT):
    status, answer = admin_call(server, operation, body)
    assert status == 400 and answer["__type"] == error, (status, str(answer)[:300])
    return answer["message"]


def test_hostile_commit_bodies_are_refused(server, glue):
    job = unique("job")
    glue.create_job(Name=job, Role="local",
                    Command={"Name": "pythonshell", "ScriptLocation": "s3://x/y.py"})
    base = {"JobName": job, "RunId": "jr_x"}
    deep = "[" * 500_000 + "]" * 500_000
    assert "JSON object" in refused(server, {**base, "JobBookmark": deep})
    deep_ctx = '{"a": ' + "[" * 500_000 + "]" * 500_000 + "}"
    assert "nested deeper" in refused(server, {**base, "JobBookmark": deep_ctx})
    big = json.dumps({"a": {"x": "y" * (4 * 1024 * 1024)}})
    assert "bytes" in refused(server, {**base, "JobBookmark": big})
    refused(server, {**base, "JobBookmark": "{}", "Reads": {"a": [[[[[[[[]]]]]]]] * 40000}})
    refused(server, {**base, "JobBookmark": 5})
    refused(server, {**base, "JobBookmark": "\"just a string\""})
    refused(server, {**base, "JobBookmark": "{}", "Reads": "x"})
    refused(server, {"JobName": job + "\u001f", "RunId": "r", "JobBookmark": "{}"})
    refused(server, {"JobName": "x" * 256, "RunId": "r", "JobBookmark": "{}"})
    refused(server, {"JobName": job, "RunId": "", "JobBookmark": "{}"})
    refused(server, {**base, "JobBookmark": "{}", "Surprise": 1})
    refused(server, "a string body", error="SerializationException")
    refused(server, {"JobName": job, "MaxResults": 10**30}, operation="OpenGlueGetJobBookmarkHistory")
    refused(server, {"JobName": job, "NextToken": "!!"}, operation="OpenGlueGetJobBookmarkHistory")
    # The server still answers, and the job has no bookmark.
    status, history = admin_call(server, "OpenGlueGetJobBookmarkHistory", {"JobName": job})
    assert status == 200 and history["History"] == []
    glue.delete_job(JobName=job)
