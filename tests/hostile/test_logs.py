"""Hostile and careless clients of the CloudWatch Logs subset (issue 6, defect 5; issue 7).

FilterLogEvents' filterPattern is capped at CloudWatch's 1,024 characters (a 50,000-term
pattern once cost 64 s of CPU) and matched in time linear in each message; Logs requests are
validated against botocore's `logs` model with CloudWatch's error names; text a job writes
that is not UTF-8 comes back sanitized. Everything talks to 127.0.0.1 with bounded loops.
"""
import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobkit import OUTPUT, ERROR, kit, wait_for  # noqa: E402,F401

# Lines that make a naive substring search slow: long runs of one letter.
NOISY_JOB = """
    import sys
    line = "a" * 250 + "\\n"
    for i in range(64000):
        sys.stdout.write(line)
    print("needle " + "a" * 50)
"""


@pytest.fixture()
def logs(server):
    client = server.client("logs", parameter_validation=False)
    yield client
    client.close()


def raw_logs_call(server, operation, body):
    """A signed Logs request with any body, as botocore would sign it; returns (status, json)."""
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    import requests
    from conftest import ACCESS_KEY, REGION, SECRET_KEY
    url = server.endpoint + "/"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = botocore.awsrequest.AWSRequest(
        method="POST", url=url, data=data,
        headers={"Content-Type": "application/x-amz-json-1.1",
                 "X-Amz-Target": "Logs_20140328." + operation})
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(ACCESS_KEY, SECRET_KEY),
                            "logs", REGION).add_auth(request)
    response = requests.post(url, data=data, headers=dict(request.headers), timeout=30)
    return response.status_code, response.json()


def error_code(excinfo):
    return excinfo.value.response["Error"]["Code"]


def test_a_50000_term_filter_pattern_is_refused_at_once(server, logs):
    pattern = " ".join("t%d" % i for i in range(50000))
    start = time.monotonic()
    with pytest.raises(logs.exceptions.InvalidParameterException) as excinfo:
        logs.filter_log_events(logGroupName=OUTPUT, filterPattern=pattern)
    assert time.monotonic() - start < 5
    assert "filterPattern" in str(excinfo.value)


def test_a_1024_character_pattern_answers_quickly_over_noisy_output(kit, server, logs):
    job = kit.job(NOISY_JOB)
    run = kit.run(job, timeout=60)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    # Fifteen ?terms that almost match at every position of every line: each costs a naive
    # search ~60 comparisons per byte; a linear matcher one step per byte for all of them.
    terms = ["?" + "a" * 61 + chr(ord("b") + i) for i in range(15)]
    pattern = " ".join(terms)
    pattern += " ?needle"
    pattern = pattern + " " * (1024 - len(pattern))
    assert len(pattern) == 1024
    start = time.monotonic()
    found = []
    kwargs = {"logGroupName": OUTPUT, "logStreamNames": [run["Id"]], "filterPattern": pattern}
    for _ in range(100):
        page = logs.filter_log_events(**kwargs)
        found += [e["message"] for e in page["events"]]
        if "nextToken" not in page:
            break
        kwargs["nextToken"] = page["nextToken"]
    elapsed = time.monotonic() - start
    assert found == ["needle " + "a" * 50]
    # A substring search per term took about 7 s over these 16 MB; linear matching well under 1.
    assert elapsed < 3, f"a 1,024-character pattern over 16 MB took {elapsed:.1f} s"
    # One character more is refused.
    with pytest.raises(logs.exceptions.InvalidParameterException):
        logs.filter_log_events(logGroupName=OUTPUT, filterPattern=pattern + "x")


def test_logs_requests_are_validated_by_the_model_with_cloudwatch_names(server):
    status, body = raw_logs_call(server, "GetLogEvents",
                                 {"logGroupName": OUTPUT, "logStreamName": 5})
    assert (status, body["__type"]) == (400, "SerializationException")
    status, body = raw_logs_call(server, "GetLogEvents",
                                 {"logGroupName": OUTPUT, "logStreamName": "s", "limit": 0})
    assert (status, body["__type"]) == (400, "InvalidParameterException")
    assert "limit" in body["message"]
    status, body = raw_logs_call(server, "DescribeLogStreams",
                                 {"logGroupName": OUTPUT, "orderBy": "Size"})
    assert (status, body["__type"]) == (400, "InvalidParameterException")
    status, body = raw_logs_call(server, "FilterLogEvents",
                                 {"logGroupName": OUTPUT, "logStreamNames": ["x"] * 101})
    assert (status, body["__type"]) == (400, "InvalidParameterException")
    status, body = raw_logs_call(server, "FilterLogEvents", b"[1, 2]")
    assert (status, body["__type"]) == (400, "SerializationException")
    status, body = raw_logs_call(server, "FilterLogEvents", b"{\"logGroupName\": \"/a\xff\"}")
    assert status == 400
    assert body["__type"] in ("SerializationException", "ResourceNotFoundException",
                              "InvalidParameterException")


def test_invalid_and_cut_utf8_from_a_job_comes_back_sanitized(kit, server, logs):
    job = kit.job("""
        import sys
        sys.stdout.buffer.write(b"bad \\xff byte\\n" + b"\\xc3\\xa9" * 300000 + b"\\n")
        sys.stderr.buffer.write(b"cut caf\\xc3")
        sys.stdout.flush(); sys.stderr.flush()
    """)
    run = kit.run(job, timeout=60)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    out = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"],
                              startFromHead=True)["events"]
    assert out[0]["message"] == "bad \ufffd byte"
    # 600,000 bytes of é: cut into events of at most 256 KiB, never inside a character.
    assert "".join(e["message"] for e in out[1:]) == "\u00e9" * 300000
    assert all(len(e["message"].encode()) <= 256 * 1024 - 26 for e in out)
    err = logs.get_log_events(logGroupName=ERROR, logStreamName=run["Id"],
                              startFromHead=True)["events"]
    assert [e["message"] for e in err] == ["cut caf\ufffd"]
    # The server is still there.
    assert logs.describe_log_groups()["logGroups"]
