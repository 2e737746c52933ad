"""A real Spark standalone cluster for the tests: one master and one worker, started from pyspark's
own distribution (the pinned pyspark wheel in the venv is a complete SPARK_HOME: bin/spark-class
and jars/), on 127.0.0.1, with Debian's Java 17 (`make deps`).

    from sparkkit import spark_cluster  # noqa: F401   (import the fixture into a test module)

    def test_x(spark_cluster):
        spark_cluster.url        # spark://127.0.0.1:PORT, the master to give a run
        spark_cluster.state()    # the master's JSON (workers, activeapps, completedapps)

    with own_jvm_session(conf) as spark:   # a SparkSession in this process on a JVM of its own
        ...

`spark_cluster` is module-scoped: the master and the worker start once per test module that
uses it and are stopped at its end, each with its whole process group (the worker's executor
JVMs included), so nothing outlives the module. The worker offers 1 core and 1 GB (an
application's default executor size), works in a temporary folder (never inside the venv),
and is registered with the master before the fixture yields. A missing Java is a test failure
naming the Debian package, never a skip: CI must have it.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import pytest

from dbkit import free_port

START_TIMEOUT = 90  # seconds for the master to answer and the worker to register


def spark_home():
    import pyspark
    home = os.path.dirname(os.path.abspath(pyspark.__file__))
    if not os.path.isfile(os.path.join(home, "bin", "spark-class")):
        pytest.fail(f"{home}/bin/spark-class is missing: pyspark (requirements.txt) is not complete")
    return home


def daemon_env(work):
    """The environment of the master and the worker: no PYTHONPATH (executors must get awsglue
    from the application's py-files archive, as on a remote cluster), logs and scratch under
    `work`, 127.0.0.1 only."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.fail("java not found: install the Debian package openjdk-17-jre-headless "
                    "(`make deps` installs APT_PACKAGES)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "SPARK_CONF_DIR")}
    env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=work,
               SPARK_LOCAL_DIRS=os.path.join(work, "local"), SPARK_NO_DAEMONIZE="1",
               SPARK_DAEMON_MEMORY="512m", TMPDIR=work)
    return env


class SparkCluster:
    """A standalone master and one worker (see the module's doc)."""

    def __init__(self, root, cores=1, memory="1g"):
        self.root = root
        self.cores = cores
        self.memory = memory
        self.port = free_port()
        self.webui_port = free_port()
        self.worker_webui_port = free_port()
        self.master = None
        self.worker = None

    @property
    def url(self):
        return f"spark://127.0.0.1:{self.port}"

    @property
    def webui(self):
        return f"http://127.0.0.1:{self.webui_port}"

    def state(self):
        with urllib.request.urlopen(self.webui + "/json", timeout=5) as r:
            return json.loads(r.read())

    def _spawn(self, name, args):
        log = open(os.path.join(self.root, name + ".log"), "ab")
        try:
            return subprocess.Popen(
                [os.path.join(spark_home(), "bin", "spark-class"), *args],
                env=daemon_env(self.root), cwd=self.root, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()

    def log(self, name):
        try:
            with open(os.path.join(self.root, name + ".log"), errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def start(self):
        os.makedirs(os.path.join(self.root, "local"), exist_ok=True)
        self.master = self._spawn("master", [
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
            "--port", str(self.port), "--webui-port", str(self.webui_port)])
        self._wait(lambda s: True, "the master's web UI")
        self.worker = self._spawn("worker", [
            "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
            "--cores", str(self.cores), "--memory", self.memory,
            "--webui-port", str(self.worker_webui_port),
            "--work-dir", os.path.join(self.root, "work")])
        self._wait(lambda s: any(w.get("state") == "ALIVE" for w in s.get("workers", [])),
                   "the worker to register")
        return self

    def _wait(self, done, what):
        deadline = time.time() + START_TIMEOUT
        last = None
        while time.time() < deadline:
            for name, proc in (("master", self.master), ("worker", self.worker)):
                if proc is not None and proc.poll() is not None:
                    self.stop()
                    pytest.fail(f"the Spark {name} exited ({proc.returncode}) while waiting for "
                                f"{what}:\n{self.log(name)}")
            try:
                if done(self.state()):
                    return
            except OSError as e:
                last = e
            time.sleep(0.25)
        self.stop()
        pytest.fail(f"Spark: timed out after {START_TIMEOUT} s waiting for {what} ({last}):\n"
                    f"{self.log('master')}\n{self.log('worker')}")

    def stop(self):
        # The worker first (it takes its executors with it), then the master; each process
        # group as a whole, SIGTERM then SIGKILL.
        for proc in (self.worker, self.master):
            if proc is None:
                continue
            for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    continue
                # The leader is gone; make sure nothing else of its group is left.
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                break
        self.worker = self.master = None


def stop_jvm():
    """Stops this process's SparkContext and its JVM (pyspark keeps the JVM of the first
    context for every later one, so settings read when the JVM starts, such as spark.jars and
    spark.driver.extraJavaOptions, would be those of whoever started it)."""
    from pyspark import SparkContext
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    SparkContext._gateway = None
    SparkContext._jvm = None
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    except Exception:  # noqa: BLE001 - a JVM already gone
        pass
    if proc is not None:
        # The gateway JVM exits when its standard input closes.
        try:
            proc.stdin.close()
        except (OSError, AttributeError):
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def own_jvm_session(conf):
    """A SparkSession built from `conf` (e.g. session_conf()) on a JVM started for it, stopped
    with its JVM afterwards."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    stop_jvm()
    session = SparkSession.builder.config(conf=SparkConf().setAll(list(conf.items()))).getOrCreate()
    try:
        session.sparkContext.setLogLevel("WARN")
        yield session
    finally:
        stop_jvm()


@pytest.fixture(scope="module")
def spark_cluster():
    root = tempfile.mkdtemp(prefix="og-spark-")
    os.chmod(root, 0o755)
    cluster = SparkCluster(root)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
