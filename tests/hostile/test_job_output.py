"""Hostile job output (issue 6, defect 1): a job's stderr that is not valid UTF-8, or whose
exception line is cut in the middle of a character, used to abort the server (the ticker
thread's SaveRun threw) and crash-loop it on every restart. The run must end FAILED with a
valid UTF-8 ErrorMessage, the server must stay up, and restarts must come up.

Talks to a server of its own on 127.0.0.1; every wait is bounded."""
import time

import pytest

from jobkit import JobKit, srv, wait_for, wait_run  # noqa: F401  (srv is a fixture)

# The exception line is 2 + 1500 * 2 bytes + the type: longer than the 2,048 bytes kept, and
# the cut falls inside a two-byte character unless it is made on a character boundary.
LONG_UTF8_ERROR = r'''
raise ValueError("x" + "\u00e9" * 1500)
'''
INVALID_BYTES = r'''
import sys
sys.stderr.buffer.write(b"\xff\n")
sys.stderr.flush()
sys.exit(3)
'''
# The same, ending while the server is down: the restarted server finishes it (this is the
# run that was re-adopted on every restart and threw again).
INVALID_BYTES_LATER = r'''
import sys, time
print("started", flush=True)
time.sleep(float(sys.argv[sys.argv.index("--sleep") + 1]))
sys.stderr.buffer.write(b"Error: caf\xc3 \xed\xa0\x80 \xf8\x88\x80\x80\x80 \xe9\n")
sys.stderr.flush()
sys.exit(4)
'''


def valid_utf8(text):
    # boto3 has decoded the JSON already: a lone surrogate means the server sent \udXXX
    # escapes of invalid bytes, U+FFFD is what replaced them.
    text.encode("utf-8")  # raises on lone surrogates
    return True


def assert_alive(srv):
    assert srv.proc.poll() is None, "the server died: " + srv.log()
    srv.client().get_jobs()


def test_invalid_or_cut_utf8_on_stderr_fails_the_run_and_the_server_stays_up(srv):
    kit = JobKit(srv, srv.client())
    try:
        long_job = kit.job(LONG_UTF8_ERROR, command="pythonshell")
        bytes_job = kit.job(INVALID_BYTES, command="pythonshell")
        long_run = kit.run(long_job, timeout=60)
        bytes_run = kit.run(bytes_job, timeout=60)
        assert_alive(srv)

        assert long_run["JobRunState"] == "FAILED"
        message = long_run["ErrorMessage"]
        assert valid_utf8(message)
        assert message.startswith("ValueError: x\u00e9\u00e9")
        # Cut at 2,048 bytes, between two characters.
        assert 2040 <= len(message.encode("utf-8")) <= 2048
        assert "\ufffd" not in message
        assert message == ("ValueError: x" + "\u00e9" * 1500)[:len(message)]

        assert bytes_run["JobRunState"] == "FAILED"
        assert valid_utf8(bytes_run["ErrorMessage"]) and bytes_run["ErrorMessage"]

        # A restart comes up and still serves both runs as they ended.
        srv.kill9()
        srv.start()
        glue = srv.client()
        for job, run in ((long_job, long_run), (bytes_job, bytes_run)):
            again = glue.get_job_run(JobName=job, RunId=run["Id"])["JobRun"]
            assert again["JobRunState"] == "FAILED"
            assert again["ErrorMessage"] == run["ErrorMessage"]
        assert_alive(srv)
    finally:
        kit.glue = srv.client()
        kit.close()


def test_a_run_ending_with_invalid_utf8_while_the_server_is_down_does_not_crash_restarts(srv):
    kit = JobKit(srv, srv.client())
    try:
        job = kit.job(INVALID_BYTES_LATER, command="pythonshell")
        run_id = kit.start(job, Arguments={"--sleep": "2"})
        wait_for(lambda: kit.glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"]
                 == "RUNNING", 30, "the run to be RUNNING")
        srv.kill9()
        # Down for longer than the run lasts: the restarted server finishes it, three times in a
        # row (the crash-loop was one abort per restart).

        time.sleep(3)
        for _ in range(3):
            srv.start()
            glue = srv.client()
            run = wait_run(glue, job, run_id, timeout=30)
            assert run["JobRunState"] == "FAILED"
            assert valid_utf8(run["ErrorMessage"])
            assert run["ErrorMessage"].startswith("Error: caf")
            assert_alive(srv)
            srv.kill9()
        srv.start()
        kit.glue = srv.client()
        assert_alive(srv)
    finally:
        kit.glue = srv.client()
        kit.close()
