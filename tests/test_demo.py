"""`make demo`'s bookmark story (examples/bookmark_demo.py) against a server of its own.

The script checks its own results (it exits non-zero unless the crawler made the table and the
bookmarked runs read 10, then 3, then 2 while paused, then 15 rows after the reset, as AWS's
bookmark semantics give for these files); this test runs it as `make demo` does.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from conftest import BIN, Server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_bookmark_demo_reads_incrementally_pauses_and_resets():
    data_dir = tempfile.mkdtemp(prefix="openglue-demo-test-")
    srv = Server(data_dir).start()
    try:
        out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "bookmark_demo.py"),
                              srv.endpoint, data_dir, BIN], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "crawl SUCCEEDED" in out.stdout
        assert "s3://demo-raw/events/events-3.csv" in out.stdout  # bookmarks plan names the new file
        assert "run 2 (only the new file): SUCCEEDED" in out.stdout and "this run read 3 rows" in out.stdout
        assert "make demo-workflow" in out.stdout
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
