"""Issue 18, defects 5 and 6: slow or lying metastore clients cannot hold slots or memory.

5. 32 idle connections, or connections trickling one byte at a time, locked every client out
   (the idle timer was per receive). Now a message has a deadline from its first byte, an idle
   connection gives its slot up to a new one, and one client (a local uid) holds at most 8.
6. A 42-byte add_partitions prefix declaring 200,000 Partition structs, then a stall, pinned
   ~128 MiB per connection. Now a declared container allocates only once the smallest encoding
   of its elements has arrived.
"""
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import textwrap
import time

import pytest

from conftest import Server
from jobkit import free_port
from test_hms import call, message

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="a second local uid needs root")
T_STRUCT, T_LIST = 12, 15



@pytest.fixture()
def hms():
    data_dir = tempfile.mkdtemp(prefix="openglue-hostile-hmslimits-")
    port = free_port()
    srv = Server(data_dir, extra_args=["--s3-api", "off", "--hms-port", str(port),
                                       "--hms-message-timeout-seconds", "3"]).start()
    srv.hms_port = port
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def served(port, timeout=10):
    """Whether get_all_databases is answered within `timeout` seconds on a new connection."""
    started = time.time()
    kind, name, _, reply = call(port, message("get_all_databases"))
    return kind == 2 and name == "get_all_databases" and time.time() - started < timeout


def test_idle_connections_give_their_slots_to_new_clients(hms):
    idle = [socket.create_connection(("127.0.0.1", hms.hms_port)) for _ in range(40)]
    try:
        time.sleep(0.5)
        assert served(hms.hms_port)
        assert served(hms.hms_port)
    finally:
        for sock in idle:
            sock.close()


def test_a_trickled_message_is_cut_off_at_its_deadline(hms):
    payload = message("get_all_databases")
    sock = socket.create_connection(("127.0.0.1", hms.hms_port))
    started = time.time()
    closed_after = None
    try:
        for byte in payload:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed_after = time.time() - started
                break
            time.sleep(0.5)
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":
                    closed_after = time.time() - started
                    break
            except BlockingIOError:
                pass
            except OSError:
                closed_after = time.time() - started
                break
            finally:
                sock.setblocking(True)
    finally:
        sock.close()
    # The deadline is 3 s here (hms_message_timeout_seconds): closed well before the 30+ bytes end.
    assert closed_after is not None and closed_after < 8, closed_after


@ROOT_ONLY
def test_one_local_user_holds_at_most_its_share_of_the_slots(hms):
    # Another uid (nobody) opens 40 connections, each mid-message (one byte sent), and holds them.
    holder = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
         textwrap.dedent(f"""
             import socket, sys, time
             held = []
             for _ in range(40):
                 s = socket.create_connection(("127.0.0.1", {hms.hms_port}))
                 s.sendall(b"\\x80")
                 held.append(s)
             print("holding", flush=True)
             time.sleep(60)
         """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        time.sleep(0.3)
        assert served(hms.hms_port, timeout=2)  # well inside the holder's message deadline
        log = open(hms.log_path).read()
        assert "(uid 65534) refused: every slot of its client or of the server is mid-message" in log
    finally:
        holder.kill()
        holder.wait()


def test_declared_partitions_allocate_nothing_before_their_bytes_arrive(hms):
    pid = hms.proc.pid
    before = rss_mib(pid)
    # add_partitions(new_parts: list<Partition>): field 1, a list of 200,000 structs, then a stall.
    prefix = (struct.pack(">I", 0x80010001) + struct.pack(">i", len("add_partitions")) + b"add_partitions"
              + struct.pack(">i", 1) + bytes([T_LIST]) + struct.pack(">h", 1) + bytes([T_STRUCT])
              + struct.pack(">i", 200000))
    assert len(prefix) <= 42
    stalled = []
    try:
        for _ in range(8):
            sock = socket.create_connection(("127.0.0.1", hms.hms_port))
            sock.sendall(prefix)
            stalled.append(sock)
        time.sleep(1.5)
        grown = rss_mib(pid) - before
        assert grown < 64, f"RSS grew {grown:.0f} MiB for 8 stalled 42-byte prefixes"
        # They are one client's 8 slots, mid-message until their deadline (3 s here) closes them.
        time.sleep(3)
        assert served(hms.hms_port)
    finally:
        for sock in stalled:
            sock.close()
