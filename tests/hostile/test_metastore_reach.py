"""Issue 18, defects 1 and 2: the Hive Metastore applies a job run's Role, and listens where told.

A job run reads OPENGLUE_HMS_URI from its environment and speaks raw Thrift to it, as a hostile
tenant would: with a read-only Role its drop_table, drop_database(cascade) and create_database
must be refused as its Glue API calls are, while get_table still works. An operator's own
connection (another uid: the test process) keeps full access. The metastore listens on
127.0.0.1 whatever `host` is, and a non-loopback `hms_host` needs hms_allow_remote.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, Server, table_input
from jobkit import JobKit, free_port, unique

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="run uids need the server to run as root")

# Sends raw Thrift calls to $OPENGLUE_HMS_URI and writes {label: reply text} to --out.
RAW_THRIFT = """
    import json, os, socket, struct, sys
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    host, port = os.environ["OPENGLUE_HMS_URI"][len("thrift://"):].rsplit(":", 1)

    def s(text):
        data = text.encode()
        return struct.pack(">i", len(data)) + data

    def string_field(fid, text):
        return bytes([11]) + struct.pack(">h", fid) + s(text)

    def bool_field(fid, value):
        return bytes([2]) + struct.pack(">h", fid) + bytes([1 if value else 0])

    def call(name, body):
        frame = struct.pack(">I", 0x80010001) + s(name) + struct.pack(">i", 1) + body + b"\\x00"
        with socket.create_connection((host, int(port)), timeout=20) as sock:
            sock.sendall(frame)
            sock.settimeout(3)
            data = b""
            try:
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                    if len(data) > 12 and data.endswith(b"\\x00"):
                        break
            except socket.timeout:
                pass
        return data.decode("utf-8", "replace")

    db, table = args["--db"], args["--table"]
    results = {
        "get_table": call("get_table", string_field(1, db) + string_field(2, table)),
        "drop_table": call("drop_table", string_field(1, db) + string_field(2, table) + bool_field(3, False)),
        "drop_database": call("drop_database", string_field(1, db) + bool_field(2, False) + bool_field(3, True)),
        "create_database": call("create_database",
                                bytes([12]) + struct.pack(">h", 1) + string_field(1, args["--new"]) + b"\\x00"),
    }
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""



@pytest.fixture()
def data_dir():
    path = tempfile.mkdtemp(prefix="openglue-hostile-hms-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def start(data_dir, config_text, *args):
    path = os.path.join(data_dir, "openglue.conf")
    with open(path, "w") as f:
        f.write(config_text)
    return Server(data_dir, extra_args=["--config", path, "--s3-api", "off", *args]).start()


@ROOT_ONLY
def test_a_read_only_run_cannot_change_the_catalog_through_the_metastore(data_dir, tmp_path):
    port = free_port()
    srv = start(data_dir, "role_policy = readonly: glue:GetTable*, glue:GetDatabase*, logs:*\n",
                "--hms-port", str(port))
    glue = srv.client()
    kit = JobKit(srv, glue)
    try:
        db, new_db = unique("hms_victim"), unique("hms_made")
        glue.create_database(DatabaseInput={"Name": db})
        glue.create_table(DatabaseName=db, TableInput=table_input("t"))
        job = unique("hms_probe")
        glue.create_job(Name=job, Role="readonly", Command={"Name": "pythonshell",
                                                            "ScriptLocation": kit.script(RAW_THRIFT)})
        kit.jobs.append(job)
        out = tmp_path / "replies.json"
        run = kit.run(job, timeout=60, Arguments={"--db": db, "--table": "t", "--new": new_db,
                                                 "--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        replies = json.loads(out.read_text())
        assert "not authorized" not in replies["get_table"] and db in replies["get_table"], replies
        for method, action in (("drop_table", "glue:DeleteTable"), ("drop_database", "glue:DeleteDatabase"),
                               ("create_database", "glue:CreateDatabase")):
            assert "AccessDeniedException" in replies[method], (method, replies)
            assert action in replies[method] and "role 'readonly'" in replies[method], (method, replies)
        # Nothing changed.
        assert glue.get_table(DatabaseName=db, Name="t")["Table"]["Name"] == "t"
        names = [d["Name"] for d in glue.get_databases()["DatabaseList"]]
        assert db in names and new_db not in names
        log = open(srv.log_path).read()
        assert "HMS: DeleteTable refused" in log
    finally:
        kit.close()
        srv.stop()


def test_an_operators_connection_keeps_full_access(data_dir):
    port = free_port()
    srv = start(data_dir, "", "--hms-port", str(port))
    glue = srv.client()
    try:
        glue.create_database(DatabaseInput={"Name": "ops"})
        glue.create_table(DatabaseName="ops", TableInput=table_input("t"))
        from test_hms import call, message, string_field  # tests/test_hms.py's wire helpers
        kind, _, _, reply = call(port, message("drop_table", string_field(1, "ops") + string_field(2, "t")
                                               + bytes([2]) + (3).to_bytes(2, "big") + b"\x00"))
        assert kind == 2 and reply == {}, reply  # REPLY, no exception field
        assert glue.get_tables(DatabaseName="ops")["TableList"] == []
    finally:
        srv.stop()


def test_the_metastore_listens_on_loopback_whatever_host_is(data_dir):
    port = free_port()
    srv = start(data_dir, "", "--host", "127.0.0.2", "--hms-port", str(port))
    try:
        assert f"Hive Metastore on thrift://127.0.0.1:{port}" in open(srv.log_path).read()
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", port), timeout=5).close()
    finally:
        srv.stop()


def test_a_non_loopback_metastore_needs_hms_allow_remote(data_dir):
    port = free_port()
    refused = subprocess.run([BIN, "serve", "--port", "0", "--data-dir", data_dir, "--s3-api", "off",
                              "--hms-port", str(port), "--hms-host", "0.0.0.0"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "hms_host 0.0.0.0 is not a loopback address" in refused.stderr + refused.stdout
    assert "hms_allow_remote" in refused.stderr + refused.stdout
    srv = start(data_dir, "", "--hms-port", str(port), "--hms-host", "0.0.0.0", "--hms-allow-remote", "yes")
    try:
        log = open(srv.log_path).read()
        assert "the Hive Metastore listens on 0.0.0.0 (hms_allow_remote)" in log
        assert "remote clients are not authenticated" in log
    finally:
        srv.stop()


def test_a_non_loopback_server_refuses_the_default_key(data_dir):
    """Issue 18, "too much": test/test lists and deletes everything; only loopback may keep it."""
    refused = subprocess.run([BIN, "serve", "--port", "0", "--data-dir", data_dir, "--host", "0.0.0.0",
                              "--s3-api", "off"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    out = refused.stderr + refused.stdout
    assert "the access key is still the default test/test" in out and "secret_access_key" in out, out
    srv = start(data_dir, "access_key_id = team\n", "--host", "0.0.0.0")
    srv.stop()
    assert srv.proc.returncode == 0
    srv = Server(data_dir, extra_args=["--host", "0.0.0.0", "--s3-api", "off"],
                 env={"OPENGLUE_SECRET_ACCESS_KEY": "a-real-secret-for-the-team"}).start()
    try:
        glue = srv.client(secret="a-real-secret-for-the-team")
        assert glue.get_databases()["DatabaseList"] is not None
    finally:
        srv.stop()
