"""Issue 18, defect 4: the JDBC crawler's helper runs isolated from the server's working folder.

The server's helper for JDBC targets is a Python process. Started as `python -m` from the
server's working directory, it would import an `awsglue` package planted there (a world-writable
folder such as /tmp) before its own, as root when the server is root. Here the server runs in
such a folder with a planted package that leaves a marker when imported; a JDBC crawl makes the
server start its helper; the marker must not appear, and the crawl must fail for the reason the
helper itself reports (the database is unreachable), which shows the helper did run.
"""
import os
import shutil
import socket
import tempfile
import time

import pytest

from conftest import Server
from jobkit import free_port, unique

PLANTED = """
import os
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "imported-by"), "w") as f:
    f.write(str(os.getuid()))
"""



@pytest.fixture()
def planted_cwd():
    path = tempfile.mkdtemp(prefix="openglue-shared-cwd-")
    os.chmod(path, 0o1777)
    os.makedirs(os.path.join(path, "awsglue"))
    for name in ("__init__.py", "crawl_jdbc.py"):
        with open(os.path.join(path, "awsglue", name), "w") as f:
            f.write(PLANTED)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_package_planted_in_the_servers_cwd_is_not_imported_by_the_jdbc_helper(planted_cwd):
    data_dir = tempfile.mkdtemp(prefix="openglue-hostile-helper-")
    srv = Server(data_dir, extra_args=["--s3-api", "off"], cwd=planted_cwd,
                 env={"PYTHONPATH": planted_cwd}).start()
    glue = srv.client()
    try:
        conn, crawler, db = unique("conn_"), unique("crawler_"), unique("helperdb")
        glue.create_database(DatabaseInput={"Name": db})
        glue.create_connection(ConnectionInput={
            "Name": conn, "ConnectionType": "JDBC",
            "ConnectionProperties": {"JDBC_CONNECTION_URL": f"jdbc:postgresql://127.0.0.1:{free_port()}/x",
                                     "USERNAME": "u", "PASSWORD": "p"}})
        glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                            Targets={"JdbcTargets": [{"ConnectionName": conn, "Path": "x/%"}]})
        glue.start_crawler(Name=crawler)
        deadline = time.time() + 120
        while True:
            c = glue.get_crawler(Name=crawler)["Crawler"]
            if c["State"] == "READY" and "LastCrawl" in c:
                break
            assert time.time() < deadline, c
            time.sleep(0.2)
        assert not os.path.exists(os.path.join(planted_cwd, "imported-by")), \
            "the helper imported the planted package as uid " + open(os.path.join(planted_cwd, "imported-by")).read()
        assert c["LastCrawl"]["Status"] == "FAILED", c["LastCrawl"]
        message = c["LastCrawl"]["ErrorMessage"]
        assert "exit status" not in message and "did not answer" not in message, message
        assert "127.0.0.1" in message or "connect" in message.lower(), message
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
