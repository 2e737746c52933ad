"""Hostile and careless HTTP clients against the real server (issue 6, defects 2, 6, 8, 10-14,
and the wire behaviour that held and must keep holding). Raw sockets where boto3 cannot say
it; 127.0.0.1 only; every loop and wait bounded."""
import json
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest

from conftest import REGION, Server
from wire import CONTENT_TYPE, op, post, signed_headers
from wirekit import (Reader, connect, glue_error, raise_fd_limit, request_bytes, rss_kib,
                     wait_until)


@pytest.fixture()
def start_server():
    """Starts servers with extra flags; stops them after the test."""
    started = []

    def start(*extra_args):
        srv = Server(tempfile.mkdtemp(prefix="openglue-hostile-"), extra_args=extra_args).start()
        started.append(srv)
        return srv
    yield start
    for srv in started:
        srv.stop()
        shutil.rmtree(srv.data_dir, ignore_errors=True)


def quick_calls(srv, stop, latencies, failures):
    """Calls GetDatabases over and over with boto3 until `stop` is set."""
    client = srv.client()
    client.meta.config.read_timeout = 5
    while not stop.is_set():
        started = time.time()
        try:
            client.get_databases()
        except Exception as e:  # noqa: BLE001 - reported by the test
            failures.append(repr(e))
        latencies.append(time.time() - started)
        time.sleep(0.05)


# ---- Defect 2: slow clients -------------------------------------------------------------------

def test_slow_header_trickle_does_not_starve_others_and_is_cut_off(start_server):
    """1,300 connections send a request head one byte at a time. A boto3 client keeps getting
    answers at once, and the trickling connections are closed once the header timeout passes."""
    assert raise_fd_limit() > 3000
    srv = start_server("--http-header-timeout-seconds", "3")
    head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AWSGlue.GetDatabases\r\n"
    socks = []
    for _ in range(1300):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", srv.port))
        socks.append(s)
    stop, latencies, failures = threading.Event(), [], []
    caller = threading.Thread(target=quick_calls, args=(srv, stop, latencies, failures))
    caller.start()
    closed = set()
    started = time.time()
    try:
        position = 0
        while time.time() - started < 8 and len(closed) < len(socks):
            byte = head[position % len(head):position % len(head) + 1]
            position += 1
            for i, s in enumerate(socks):
                if i in closed:
                    continue
                try:
                    s.send(byte)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    closed.add(i)
            # What the server closed shows up as readable with nothing to read.
            readable, _, _ = select.select([s for i, s in enumerate(socks[:1000]) if i not in closed],
                                           [], [], 0)
            for s in readable:
                try:
                    if s.recv(4096) == b"":
                        closed.add(socks.index(s))
                except OSError:
                    closed.add(socks.index(s))
            time.sleep(0.5)
    finally:
        stop.set()
        caller.join(timeout=30)
        for s in socks:
            s.close()
    assert failures == [], failures[:3]
    assert len(latencies) >= 10
    assert max(latencies) < 2, f"a normal client waited {max(latencies):.1f} s"
    # Header timeout 3 s (+ the sweep): by 8 s every trickler has been cut off.
    assert len(closed) >= 1250, f"only {len(closed)} of 1300 slow connections were closed"
    assert srv.proc.poll() is None


def test_connections_per_client_are_capped_and_idle_ones_make_room(start_server):
    srv = start_server("--http-max-connections-per-client", "20",
                       "--http-header-timeout-seconds", "30")
    glue = srv.client()
    # 20 connections that started a request and hold their slots.
    busy = [connect(srv.port) for _ in range(20)]
    for s in busy:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
    time.sleep(0.3)
    extra = connect(srv.port)
    extra.sendall(request_bytes(srv, op("GetDatabases"), {}))
    status, _, body = Reader(extra).response()
    assert status == 503, body
    assert glue_error(body)[0] == "ThrottlingException"
    extra.close()
    # Slots freed: normal clients get through again.
    for s in busy[:5]:
        s.close()
    time.sleep(0.3)
    assert isinstance(glue.get_databases()["DatabaseList"], list)
    for s in busy[5:]:
        s.close()
    time.sleep(0.3)
    # 20 idle connections (nothing sent) do not lock the client out: the oldest makes room.
    idle = [connect(srv.port) for _ in range(20)]
    time.sleep(0.3)
    fresh = srv.client()
    assert isinstance(fresh.get_databases()["DatabaseList"], list)
    assert Reader(idle[0]).closed(5), "the oldest idle connection was not closed to make room"
    for s in idle:
        s.close()


def test_lying_content_length_is_cut_off_by_the_body_timeout(start_server):
    srv = start_server("--http-body-timeout-seconds", "2")
    s = connect(srv.port)
    data = request_bytes(srv, op("GetDatabases"), b"{}" + b" " * 998)
    s.sendall(data[:-900])  # 100 bytes of the promised 1,000 never come
    started = time.time()
    assert Reader(s).closed(6)
    assert time.time() - started < 5
    assert isinstance(srv.client().get_databases()["DatabaseList"], list)


def test_idle_keep_alive_connections_are_closed_after_the_timeout(start_server):
    srv = start_server("--http-keepalive-timeout-seconds", "1")
    s = connect(srv.port)
    s.sendall(request_bytes(srv, op("GetDatabases"), {}))
    reader = Reader(s)
    assert reader.response()[0] == 200
    started = time.time()
    assert reader.closed(5)
    assert time.time() - started < 3


def test_two_thousand_idle_connections_do_not_stop_service(server):
    assert raise_fd_limit() > 3000
    idle = []
    try:
        for _ in range(2000):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", server.port))
            idle.append(s)
        time.sleep(0.5)
        glue = server.client()
        for _ in range(5):
            started = time.time()
            assert isinstance(glue.get_databases()["DatabaseList"], list)
            assert time.time() - started < 2
        s = connect(server.port)
        s.sendall(request_bytes(server, op("GetDatabases"), {}))
        assert Reader(s).response()[0] == 200
        s.close()
    finally:
        for s in idle:
            s.close()


# ---- Defect 6: listen backlog -------------------------------------------------------------------

def test_listen_backlog_is_large(server):
    out = subprocess.run(["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True,
                         text=True, timeout=10).stdout.split()
    backlog = int(out[2])  # State Recv-Q Send-Q ...: Send-Q of a listener is its backlog
    assert backlog >= 511, out


def test_burst_of_a_thousand_connects_is_served_quickly(server):
    assert raise_fd_limit() > 2500
    started = time.time()
    socks = []
    for _ in range(1000):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", server.port))
        socks.append(s)
    request = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    pending = set(range(len(socks)))
    answered = set()
    deadline = time.time() + 8
    try:
        while pending and time.time() < deadline:
            _, writable, _ = select.select([], [socks[i] for i in list(pending)[:1000]], [], 0.2)
            for s in writable:
                i = socks.index(s)
                try:
                    s.send(request)
                    pending.discard(i)
                except (BlockingIOError, InterruptedError):
                    pass
        waiting = set(range(len(socks))) - pending
        while waiting and time.time() < deadline:
            readable, _, _ = select.select([socks[i] for i in list(waiting)[:1000]], [], [], 0.2)
            for s in readable:
                i = socks.index(s)
                try:
                    if b"200 OK" in s.recv(4096):
                        answered.add(i)
                except OSError:
                    pass
                waiting.discard(i)
    finally:
        for s in socks:
            s.close()
    elapsed = time.time() - started
    assert len(answered) == 1000, f"{len(answered)} answered in {elapsed:.1f} s"
    assert elapsed < 5, f"a burst of 1,000 connects took {elapsed:.1f} s"


# ---- Defect 8: bodies before authentication ------------------------------------------------------

def unknown_key_request(srv, size):
    body = b"{" + b" " * (size - 2) + b"}"
    headers = signed_headers(srv.endpoint, op("GetDatabases"), body, key="NOSUCHKEY", secret="x")
    return request_bytes(srv, op("GetDatabases"), body, headers=headers)


def test_unauthenticated_bodies_are_refused_before_they_are_read(server):
    size = 15 << 20
    data = unknown_key_request(server, size)
    head_end = data.index(b"\r\n\r\n") + 4
    before = rss_kib(server.proc.pid)
    socks = [connect(server.port) for _ in range(40)]
    statuses = []
    try:
        for s in socks:
            s.sendall(data[:head_end])
        for s in socks:
            # The answer comes without the body; what is still sent is discarded or reset.
            s.settimeout(5)
            try:
                s.sendall(data[head_end:head_end + (1 << 20)])
            except OSError:
                pass
            status, _, body = Reader(s).response()
            statuses.append((status, glue_error(body)[0]))
        grown = rss_kib(server.proc.pid) - before
    finally:
        for s in socks:
            s.close()
    assert set(statuses) == {(403, "UnrecognizedClientException")}, statuses[:3]
    assert grown < 100 * 1024, f"server RSS grew by {grown // 1024} MiB"


def test_body_over_the_cap_is_413_before_it_is_read(server):
    s = connect(server.port)
    headers = signed_headers(server.endpoint, op("GetDatabases"), b"{}")
    head = [f"POST / HTTP/1.1", f"Host: 127.0.0.1:{server.port}"]
    head += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "content-length"]
    head.append(f"Content-Length: {64 << 20}")
    s.sendall("\r\n".join(head).encode() + b"\r\n\r\n")
    status, headers, body = Reader(s).response()
    assert status == 413
    assert headers["content-type"] == CONTENT_TYPE
    assert glue_error(body)[0] == "RequestEntityTooLargeException"
    s.close()


def test_memory_stays_flat_over_thousands_of_malformed_requests(server):
    def burst(count):
        s = connect(server.port)
        reader = Reader(s)
        for i in range(count):
            body = b'{"DatabaseInput": {"Name": "x"' + b"[" * (i % 50)
            s.sendall(request_bytes(server, op("CreateDatabase"), body))
            status, _, _ = reader.response()
            assert status == 400
        s.close()
    burst(300)
    before = rss_kib(server.proc.pid)
    for _ in range(6):
        burst(500)
    grown = rss_kib(server.proc.pid) - before
    assert grown < 20 * 1024, f"RSS grew {grown} KiB over 3,000 malformed requests"


# ---- Defect 10: invalid UTF-8 never becomes a 500 -----------------------------------------------

def test_invalid_utf8_target_is_400_unknown_operation(start_server):
    srv = start_server("--auth", "none")
    s = connect(srv.port)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.1\r\n"
              b"X-Amz-Target: AWSGlue.\xff\xfe\r\nContent-Length: 2\r\n\r\n{}")
    status, headers, body = Reader(s).response()
    assert status == 400, body
    kind, message = glue_error(body)
    body.decode("utf-8")  # valid UTF-8
    assert kind == "UnknownOperationException"
    for name, value in headers.items():
        assert "exception" not in value.lower() and "what()" not in value, (name, value)
    s.close()


def test_name_cut_mid_character_in_a_message_is_400(server):
    name = "\u00e9" * 300
    response = post(server.endpoint, op("CreateDatabase"), {"DatabaseInput": {"Name": name}})
    assert response.status_code == 400, response.text
    assert response.json()["__type"] == "ValidationException"


# ---- Defect 11: JSON null means absent -----------------------------------------------------------

def test_null_members_are_absent(server, glue):
    name = "job_" + uuid.uuid4().hex[:10]
    response = post(server.endpoint, op("CreateJob"), {
        "Name": name, "Role": "local",
        "Command": {"Name": "pythonshell", "ScriptLocation": "s3://scripts/none.py"},
        "ExecutionProperty": {"MaxConcurrentRuns": None}, "Description": None})
    assert response.status_code == 200, response.text
    try:
        job = glue.get_job(JobName=name)["Job"]
        assert job["ExecutionProperty"] == {"MaxConcurrentRuns": 1}
        response = post(server.endpoint, op("StartJobRun"), {"JobName": name, "Timeout": None})
        assert response.status_code == 200, response.text
        run_id = response.json()["JobRunId"]
        run = glue.get_job_run(JobName=name, RunId=run_id)["JobRun"]
        assert run["Timeout"] == 2880
    finally:
        wait_until(lambda: all(r["JobRunState"] not in ("STARTING", "RUNNING", "STOPPING", "WAITING")
                               for r in glue.get_job_runs(JobName=name)["JobRuns"]), 20)
        glue.delete_job(JobName=name)


# ---- Defect 12: pipelining -----------------------------------------------------------------------

def test_pipelined_requests_are_each_answered_in_order(server, glue, db):
    s = connect(server.port)
    names = [f"t{i}" for i in range(3)]
    glue.create_table(DatabaseName=db, TableInput={"Name": names[1]})
    batch = b"".join(request_bytes(server, op("GetTable"), {"DatabaseName": db, "Name": n})
                     for n in names)
    batch += b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    s.sendall(batch)
    reader = Reader(s)
    answers = [reader.response() for _ in range(4)]
    assert [a[0] for a in answers] == [400, 200, 400, 200]
    assert json.loads(answers[1][2])["Table"]["Name"] == "t1"
    assert json.loads(answers[3][2]) == {"status": "ok"}
    request_ids = {a[1].get("x-amzn-requestid") for a in answers[:3]}
    assert len(request_ids) == 3 and None not in request_ids
    s.close()


# ---- Defect 13: framing --------------------------------------------------------------------------

def test_conflicting_content_lengths_are_400(server):
    data = request_bytes(server, op("GetDatabases"), {})
    data = data.replace(b"Content-Length: 2\r\n", b"Content-Length: 2\r\nContent-Length: 30\r\n")
    s = connect(server.port)
    s.sendall(data)
    reader = Reader(s)
    status, _, _ = reader.response()
    assert status == 400
    assert reader.closed(5)


def test_content_length_with_transfer_encoding_is_400(server):
    data = request_bytes(server, op("GetDatabases"), {})
    data = data.replace(b"Content-Length: 2\r\n\r\n{}",
                        b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
    s = connect(server.port)
    s.sendall(data)
    assert Reader(s).response()[0] == 400


def test_chunked_body_is_accepted(server):
    body = json.dumps({"MaxResults": 5}).encode()
    data = request_bytes(server, op("GetDatabases"), body)
    head, _ = data.split(b"\r\n\r\n", 1)
    head = head.replace(f"Content-Length: {len(body)}".encode(), b"Transfer-Encoding: chunked")
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 4]), body[i:i + 4])
                       for i in range(0, len(body), 4)) + b"0\r\n\r\n"
    s = connect(server.port)
    s.sendall(head + b"\r\n\r\n" + chunked)
    status, _, answer = Reader(s).response()
    assert status == 200, answer
    assert isinstance(json.loads(answer)["DatabaseList"], list)


def test_http10_request_is_answered_and_closed(server):
    s = connect(server.port)
    s.sendall(request_bytes(server, op("GetDatabases"), {}, version="HTTP/1.0"))
    reader = Reader(s)
    status, headers, body = reader.response()
    assert status == 200, body
    assert headers.get("connection", "").lower() == "close"
    assert reader.closed(5)


def test_truncated_request_then_close_leaves_server_serving(server):
    for cut in (5, 40, 200):
        s = connect(server.port)
        s.sendall(request_bytes(server, op("GetDatabases"), {})[:cut])
        s.close()
    assert isinstance(server.client().get_databases()["DatabaseList"], list)


# ---- Defect 14: the operation must be signed -----------------------------------------------------

def sign_without(srv, target, body, dropped):
    """Headers signed by botocore with `dropped` left out of the signature, then added back."""
    headers = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": target}
    late = {k: headers.pop(k) for k in list(headers) if k.lower() in dropped}
    request = botocore.awsrequest.AWSRequest(method="POST", url=srv.endpoint + "/", data=body,
                                             headers=headers)
    signer = botocore.auth.SigV4Auth(botocore.credentials.Credentials("test", "test"), "glue", REGION)
    signer.add_auth(request)
    return {**dict(request.headers.items()), **late}


@pytest.mark.parametrize("dropped", ["x-amz-target", "content-type"])
def test_target_and_content_type_must_be_signed(server, glue, dropped):
    name = "db_" + uuid.uuid4().hex[:10]
    glue.create_database(DatabaseInput={"Name": name})
    body = json.dumps({"Name": name}).encode()
    # A signed GetDatabase replayed as DeleteDatabase must not delete anything.
    headers = sign_without(server, op("DeleteDatabase"), body, {dropped})
    response = post(server.endpoint, op("DeleteDatabase"), body, headers=headers)
    assert response.status_code in (400, 403), response.text
    assert response.json()["__type"] == "IncompleteSignatureException"
    assert dropped in response.json()["message"]
    assert glue.get_database(Name=name)["Database"]["Name"] == name
    glue.delete_database(Name=name)
