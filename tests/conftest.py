"""Fixtures for the end-to-end tests: a real `openglue serve` on a free port, and clients.

Every test talks to the server over HTTP with boto3 (or the AWS CLI), exactly as a user does.
The server binary comes from $OPENGLUE_BIN (set by `make test`), else build/openglue.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import boto3
import botocore.config
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every Spark JVM of the tests (sessions in this process, the standalone master and worker) runs
# on the loopback address; without this Spark needs the machine's host name to resolve
# (openglue_runtime.engines.spark.conf.spark_environment; job runs get it from the runtime).
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import job_access  # noqa: E402  (tools/job_access.py)
BIN = os.environ.get("OPENGLUE_BIN", os.path.join(ROOT, "build", "openglue"))
ACCESS_KEY = "test"
SECRET_KEY = "test"
REGION = "us-east-1"
# The AWS CLI (awscli from requirements.txt): its `aws` entry point, else the module itself.
AWS_CLI = [shutil.which("aws")] if shutil.which("aws") else [sys.executable, "-m", "awscli"]


class Server:
    """One openglue server process over a data directory that outlives restarts."""

    def __init__(self, data_dir, extra_args=(), env=None, cwd=None):
        self.data_dir = data_dir
        self.cwd = cwd  # the server's working directory (None: the test's own)
        self.extra_args = list(extra_args)
        # Extra environment variables for the server process (added to this process's own).
        self.env = dict(env or {})
        self.proc = None
        self.port = None
        self.log_path = os.path.join(data_dir, "server.log")

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        port_file = os.path.join(self.data_dir, "port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--port", "0", "--data-dir", self.data_dir, "--port-file", port_file,
             "--log-level", "info", *self.extra_args],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **self.env}, cwd=self.cwd)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"openglue exited with {self.proc.returncode}: {self.log()}")
            if os.path.exists(port_file):
                self.port = int(open(port_file).read().strip())
                return self
            time.sleep(0.02)
        raise RuntimeError("openglue did not start in 30 s: " + self.log())

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self):
        try:
            return open(self.log_path, errors="replace").read()[-4000:]
        except OSError:
            return ""

    def client(self, service="glue", parameter_validation=True, **kwargs):
        config = botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"},
                                        read_timeout=120,
                                        parameter_validation=parameter_validation)
        return boto3.client(service, endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=kwargs.pop("key", ACCESS_KEY),
                            aws_secret_access_key=kwargs.pop("secret", SECRET_KEY),
                            config=config, **kwargs)


# When the server runs as root, job processes run as unprivileged uids whose shared group is
# JOB_GROUP (the server's default job_uid_base). They must be able to execute this interpreter,
# which may live under a folder only root may enter (pyenv in /root, mode 0700): the suite grants
# that group search permission (x, not read) on such folders through an ACL entry, leaving every
# other permission as it is. Operators do the same, or point `python` at a reachable interpreter.
JOB_GROUP = job_access.DEFAULT_GROUP


def _let_job_users_run_python():
    if os.geteuid() == 0:
        job_access.grant_search({os.path.realpath(sys.executable),
                                 os.path.realpath(shutil.which("python3") or sys.executable)},
                                JOB_GROUP)


_let_job_users_run_python()


def open_to_job_users(path):
    """Lets job processes reach `path`: when the server runs as root, each run has an unprivileged
    uid of its own, and pytest's temporary folders are root's alone (0700)."""
    path = os.path.abspath(str(path))
    os.chmod(path, os.stat(path).st_mode | 0o777)
    if os.geteuid() == 0:
        # Files that runs (each its own uid) create here stay readable and writable by the
        # others, as tests pass one trace file to several runs.
        os.setxattr(path, "system.posix_acl_default", job_access.acl_xattr(0o770, 7, JOB_GROUP))
    parent = os.path.dirname(path)
    while parent not in ("/", ""):
        mode = os.stat(parent).st_mode
        if not mode & 0o001:
            os.chmod(parent, mode | 0o011)
        parent = os.path.dirname(parent)
    return path


@pytest.fixture()
def tmp_path(tmp_path):
    """pytest's tmp_path, open to job processes (tests pass it to job scripts as --out)."""
    open_to_job_users(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """The environment of an AWS CLI call: the server's local credentials and nothing of the
    machine's own AWS configuration."""
    home = tmp_path_factory.mktemp("aws-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_DEFAULT_OUTPUT": "json",
        "AWS_CONFIG_FILE": str(home / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "credentials"),
        "AWS_PAGER": "",
        "AWS_MAX_ATTEMPTS": "1",
    })
    return env


@pytest.fixture()
def aws_cli(server, cli_env):
    """Runs `aws <service> <args> --endpoint-url <server>`; returns the parsed JSON output (None
    when there is none). With expect_error=True returns the CompletedProcess of a command that
    must fail."""
    def run(service, *args, expect_error=False):
        result = subprocess.run([*AWS_CLI, service, *args, "--endpoint-url", server.endpoint,
                                 "--output", "json"],
                                capture_output=True, text=True, env=cli_env, timeout=60)
        if expect_error:
            assert result.returncode != 0, result.stdout
            return result
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else None
    return run


@pytest.fixture(scope="session")
def server():
    data_dir = tempfile.mkdtemp(prefix="openglue-e2e-")
    srv = Server(data_dir).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def fresh_server():
    """A server of the test's own, for tests that restart or kill it."""
    data_dir = tempfile.mkdtemp(prefix="openglue-e2e-")
    srv = Server(data_dir).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def glue(server):
    client = server.client()
    yield client
    client.close()


@pytest.fixture()
def raw_glue(server):
    """A client that sends requests botocore would refuse, so the server's own checks show."""
    client = server.client(parameter_validation=False)
    yield client
    client.close()


@pytest.fixture()
def db(glue):
    """A fresh database, removed after the test."""
    name = "db_" + uuid.uuid4().hex[:10]
    glue.create_database(DatabaseInput={"Name": name})
    yield name
    try:
        glue.delete_database(Name=name)
    except glue.exceptions.EntityNotFoundException:
        pass


def columns(*names_types):
    return [{"Name": n, "Type": t} for n, t in names_types]


def table_input(name, partition_keys=(("year", "string"),), cols=(("id", "bigint"), ("v", "string")),
                location="s3://bucket/path/"):
    return {
        "Name": name,
        "StorageDescriptor": {
            "Columns": columns(*cols),
            "Location": location,
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"},
        },
        "PartitionKeys": columns(*partition_keys),
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "json"},
    }


def partition_input(values, location=None):
    return {
        "Values": list(values),
        "StorageDescriptor": {
            "Columns": columns(("id", "bigint"), ("v", "string")),
            "Location": location or ("s3://bucket/path/" + "/".join(values) + "/"),
        },
        "Parameters": {},
    }


# --- Helpers for the Data Catalog tests -------------------------------------------------------

import contextlib  # noqa: E402

import botocore.exceptions  # noqa: E402

ACCOUNT_ID = "000000000000"


@contextlib.contextmanager
def raises_glue(code, *fragments):
    """Expects the block to fail with the Glue error `code` whose message contains every one of
    `fragments` (case-insensitive). Yields pytest's ExceptionInfo."""
    with pytest.raises(botocore.exceptions.ClientError) as info:
        yield info
    error = info.value.response["Error"]
    assert error["Code"] == code, f"expected {code}, got {error['Code']}: {error.get('Message')}"
    message = error.get("Message", "")
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{fragment!r} not in message {message!r}"


def unique(prefix):
    return prefix + "_" + uuid.uuid4().hex[:10]


def database_arn(database):
    return f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:database/{database}"


def table_arn(database, table):
    return f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:table/{database}/{table}"


def all_pages(call, key, **kwargs):
    """Every item of a paged Glue list operation, following NextToken by hand."""
    items = []
    token = None
    while True:
        page = call(**kwargs, **({"NextToken": token} if token else {}))
        items.extend(page[key])
        token = page.get("NextToken")
        if not token:
            return items
