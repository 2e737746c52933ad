"""The Spark configuration of a job run on the Spark engine (issue 10).

`session_conf(args)` gives the Spark settings (key -> value) a run's SparkContext/SparkSession is
built with, from the run's resolved job arguments (a dict keyed `--name`, as sys.argv pairs:
`--enable-spark-ui`, `--spark-event-logs-path`, `--enable-glue-datacatalog`, `--spark-master`,
`--conf`, `--JOB_NAME`) and the environment the server gives the run:

    OPENGLUE_SPARK_MASTER       where Spark runs (default local[*])
    OPENGLUE_RUN_DIR            the run's folder (event logs go to $OPENGLUE_RUN_DIR/spark-events)
    OPENGLUE_HMS_URI            thrift://host:port of the server's Hive Metastore front end, if on
    OPENGLUE_WORKER_TYPE, OPENGLUE_NUMBER_OF_WORKERS   the job's WorkerType / NumberOfWorkers
    OPENGLUE_SPARK_JARS_DIR     where `make deps` put the extra jars (default
                                <sys.prefix>/share/openglue/jars)
    OPENGLUE_SPARK_PYTHON       the Python executors run (default: this interpreter)
    OPENGLUE_EXTRA_JARS         the run's `--extra-jars` as local paths, comma-separated (the
                                server copies `s3://` ones into the run's folder)
    AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION
                                S3A's endpoint and credentials (the run's own)
    TMPDIR                      Spark's and S3A's scratch space

Every setting is documented in docs/engines.md ("Where Spark runs, storage and
settings"). The job's own `--conf k=v --conf k2=v2` argument is applied last and wins.
`py_files_archive()` zips the awsglue package for executors on a cluster.
"""
import hashlib
import os
import re
import sys
import tempfile
import zipfile
from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple

S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"

# Glue's worker types: (vCPUs, memory in GB, executors per worker). Standard runs two executors
# on a 4 vCPU / 16 GB worker; every other type runs one executor per worker.
WORKER_TYPES: Dict[str, Tuple[int, int, int]] = {
    "Standard": (4, 16, 2),
    "G.025X": (2, 4, 1),
    "G.1X": (4, 16, 1),
    "G.2X": (8, 32, 1),
    "G.4X": (16, 64, 1),
    "G.8X": (32, 128, 1),
    "G.12X": (48, 192, 1),
    "G.16X": (64, 256, 1),
    "R.1X": (4, 32, 1),
    "R.2X": (8, 64, 1),
    "R.4X": (16, 128, 1),
    "R.8X": (32, 256, 1),
}
# The share of a worker's memory its executor heap gets (the rest: OS, overhead, Python
# workers), as Glue gives G.1X executors 10 GB of 16.
EXECUTOR_MEMORY_SHARE = 0.625
# Local mode: the driver JVM takes at most this share of the machine's memory, and each task
# slot (the N of local[N]) gets at least MIN_MB_PER_CORE of it.
LOCAL_MEMORY_SHARE = 0.5
MIN_MB_PER_CORE = 512
MIN_DRIVER_MB = 1024

_TRUE = ("", "true", "1", "yes", "on")


class Machine(NamedTuple):
    """What local mode may use: CPUs this process may run on, physical memory in MB."""
    cpus: int
    memory_mb: int


def this_machine() -> Machine:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        memory_mb = 4096
    return Machine(max(1, cpus), max(256, int(memory_mb)))


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def _master_host(master: str) -> str:
    """The host of a spark://host:port master URL (the first of a list), else ""."""
    if not master.startswith("spark://"):
        return ""
    return master[len("spark://"):].split(",")[0].rsplit(":", 1)[0]


def jars_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    return env.get("OPENGLUE_SPARK_JARS_DIR") or os.path.join(sys.prefix, "share", "openglue", "jars")


def spark_jars(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The extra jars `make deps` fetched (spark-jars.txt), sorted; [] when there are none."""
    folder = jars_dir(environ)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jar"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]


def extra_jars(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The run's `--extra-jars` as the server handed them over (OPENGLUE_EXTRA_JARS), in order."""
    env = os.environ if environ is None else environ
    return [j.strip() for j in (env.get("OPENGLUE_EXTRA_JARS") or "").split(",") if j.strip()]


def _flag(args: Mapping[str, str], name: str) -> Optional[str]:
    """The value of job argument --name (also accepted without the dashes), None when absent."""
    for key in ("--" + name, name):
        if key in args and args[key] is not None:
            return str(args[key])
    return None


def _enabled(args: Mapping[str, str], name: str) -> bool:
    value = _flag(args, name)
    return value is not None and value.strip().lower() in _TRUE


def parse_conf_argument(value: str) -> List[Tuple[str, str]]:
    """Glue's `--conf` job argument: `k=v`, or several chained as `k=v --conf k2=v2` (Glue takes
    one value per argument name, so users chain them this way). Pieces without `=` are ignored."""
    pairs = []
    for piece in re.split(r"(?:^|\s+)--conf\s+", value.strip()):
        piece = piece.strip()
        if "=" not in piece:
            continue
        key, _, val = piece.partition("=")
        if key.strip():
            pairs.append((key.strip(), val.strip()))
    return pairs


def _s3a_path(uri: str) -> str:
    for scheme in ("s3://", "s3n://"):
        if uri.startswith(scheme):
            return "s3a://" + uri[len(scheme):]
    return uri


def _s3a(env: Mapping[str, str], conf: Dict[str, str]) -> None:
    h = "spark.hadoop."
    conf[h + "fs.s3.impl"] = S3A_FILESYSTEM
    conf[h + "fs.s3n.impl"] = S3A_FILESYSTEM
    conf[h + "fs.s3a.impl"] = S3A_FILESYSTEM
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        conf[h + "fs.s3a.endpoint"] = endpoint
        conf[h + "fs.s3a.path.style.access"] = "true"
        conf[h + "fs.s3a.connection.ssl.enabled"] = "false" if endpoint.startswith("http://") else "true"
        # S3A deletes a folder's marker object ("out/") when it writes a file below it; the
        # embedded store keeps folders as real directories and refuses to delete a non-empty one
        # (ErrDirectoryNotEmpty), which S3A retries for minutes. Keeping the markers (Hadoop
        # >= 3.3.1) is what such stores need; S3A ignores markers when it lists.
        conf[h + "fs.s3a.directory.marker.retention"] = "keep"
        # A store on this machine: fail in seconds, not after S3A's 20 attempts x 7 retries.
        conf[h + "fs.s3a.attempts.maximum"] = "3"
        conf[h + "fs.s3a.retry.limit"] = "3"
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        conf[h + "fs.s3a.endpoint.region"] = region
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        conf[h + "fs.s3a.access.key"] = key
        conf[h + "fs.s3a.secret.key"] = secret
        token = env.get("AWS_SESSION_TOKEN")
        if token:
            conf[h + "fs.s3a.session.token"] = token
            conf[h + "fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        else:
            conf[h + "fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"


def _workers(env: Mapping[str, str]) -> Optional[Tuple[int, int, int, int]]:
    """(vCPUs, memory GB, executors per worker, executors) from the worker type, or None."""
    size = WORKER_TYPES.get((env.get("OPENGLUE_WORKER_TYPE") or "").strip())
    if size is None:
        return None
    try:
        workers = int(env.get("OPENGLUE_NUMBER_OF_WORKERS") or "2")
    except ValueError:
        workers = 2
    # One worker runs the driver (as on Glue); the others run executors.
    executors = max(1, workers - 1) * size[2]
    return size[0], size[1], size[2], executors


def _sizes(master: str, env: Mapping[str, str], machine: Machine, conf: Dict[str, str]) -> str:
    """Executor (cluster) or driver (local mode) sizes from the worker type; returns the master,
    local[*] narrowed to local[N] in local mode."""
    sized = _workers(env)
    if sized is None:
        return master
    vcpus, memory_gb, per_worker, executors = sized
    cores = max(1, vcpus // per_worker)
    executor_mb = int(memory_gb * 1024 * EXECUTOR_MEMORY_SHARE / per_worker)
    if not is_local_master(master):
        conf["spark.executor.cores"] = str(cores)
        conf["spark.executor.memory"] = f"{executor_mb}m"
        conf["spark.executor.instances"] = str(executors)  # YARN, Kubernetes
        conf["spark.cores.max"] = str(cores * executors)   # standalone
        conf["spark.driver.memory"] = f"{executor_mb}m"
        return master
    # Local mode: the driver JVM is every executor at once. Its heap is what the executors
    # together would have, capped by the machine's memory; its task slots what they would have,
    # capped by the machine's CPUs and by the heap.
    driver_mb = min(executor_mb * executors, int(machine.memory_mb * LOCAL_MEMORY_SHARE))
    driver_mb = max(MIN_DRIVER_MB, driver_mb)
    conf["spark.driver.memory"] = f"{driver_mb}m"
    slots = max(1, min(cores * executors, machine.cpus, driver_mb // MIN_MB_PER_CORE))
    if master in ("local", "local[*]"):
        return f"local[{slots}]"
    return master


def session_conf(args: Mapping[str, str], environ: Optional[Mapping[str, str]] = None, *,
                 machine: Optional[Machine] = None) -> Dict[str, str]:
    """Spark settings for this run's session (see the module's doc and docs/engines.md)."""
    env = os.environ if environ is None else environ
    machine = machine or this_machine()
    conf: Dict[str, str] = {}
    master = _flag(args, "spark-master") or env.get("OPENGLUE_SPARK_MASTER") or "local[*]"
    master = master.strip() or "local[*]"
    conf["spark.app.name"] = _flag(args, "JOB_NAME") or env.get("OPENGLUE_JOB_NAME") or "openglue"
    python = env.get("OPENGLUE_SPARK_PYTHON") or sys.executable
    if python:
        conf["spark.pyspark.python"] = python
    _s3a(env, conf)
    tmp = env.get("TMPDIR") or tempfile.gettempdir()
    # Spark's own scratch space (SPARK_LOCAL_DIRS, java.io.tmpdir, with user.home for job users
    # without a home) is set by the run's engine set-up (openglue_runtime.engines.spark.engine.run_settings), in
    # the environment and the JVM options together; spark.local.dir is left unset (Spark warns
    # about it on every start, and cluster managers override it on executors).
    conf["spark.hadoop.fs.s3a.buffer.dir"] = os.path.join(tmp, "s3a")
    conf["spark.hadoop.hadoop.tmp.dir"] = os.path.join(tmp, "hadoop")
    if _enabled(args, "enable-spark-ui"):
        logs = _flag(args, "spark-event-logs-path")
        if logs and logs.strip():
            conf["spark.eventLog.dir"] = _s3a_path(logs.strip())
        else:
            folder = os.path.join(env.get("OPENGLUE_RUN_DIR") or tmp, "spark-events")
            os.makedirs(folder, exist_ok=True)  # Spark refuses to start on a missing log folder
            conf["spark.eventLog.dir"] = "file://" + os.path.abspath(folder)
        conf["spark.eventLog.enabled"] = "true"
    hms = env.get("OPENGLUE_HMS_URI")
    if _enabled(args, "enable-glue-datacatalog") and hms:
        conf["spark.sql.catalogImplementation"] = "hive"
        conf["spark.hadoop.hive.metastore.uris"] = hms
        # Where Spark places what has no location of its own: the `default` database (Spark
        # creates it in the catalog when missing) and databases made by CREATE DATABASE
        # without a LOCATION. The metastore front end reports a Glue database without
        # LocationUri at <data_dir>/warehouse/<name>.db; the same folder here, so that Spark
        # and the front end agree (never the run's own folder, which goes with the run).
        root = env.get("OPENGLUE_S3_ROOT")
        if root:
            conf["spark.sql.warehouse.dir"] = "file:" + os.path.join(
                os.path.dirname(os.path.abspath(root)), "warehouse")
    master = _sizes(master, env, machine, conf)
    conf["spark.master"] = master
    jars = spark_jars(env)
    user_jars = extra_jars(env)
    if jars or user_jars:
        # In local mode as local: URIs: the launcher then adds them to the classpath without
        # resolving them through Hadoop's FileSystem, whose first use logs in the OS user, which
        # fails for a job run's uid that has no user name (before the run can name one). A
        # cluster gets plain paths: the driver serves them to the executors.
        local = is_local_master(master)
        conf["spark.jars"] = ",".join(("local:" + j) if local else j for j in jars + user_jars)
    if user_jars and _enabled(args, "user-jars-first"):
        # Glue's --user-jars-first: the job's jars before Spark's own. Executors load their
        # application jars child-first; the driver (here, in client mode, where
        # spark.driver.userClassPathFirst does not apply) gets them at the head of its JVM's
        # classpath, before Spark's jars.
        conf["spark.driver.userClassPathFirst"] = "true"
        conf["spark.executor.userClassPathFirst"] = "true"
        conf["spark.driver.extraClassPath"] = os.pathsep.join(user_jars)
    if _enabled(args, "enable-auto-scaling") and not is_local_master(master):
        # Glue's auto scaling: executors come and go with the work, up to the worker count.
        conf["spark.dynamicAllocation.enabled"] = "true"
        conf["spark.dynamicAllocation.shuffleTracking.enabled"] = "true"
        if "spark.executor.instances" in conf:
            conf["spark.dynamicAllocation.maxExecutors"] = conf.pop("spark.executor.instances")
    if is_local_master(master) or _master_host(master) in ("127.0.0.1", "localhost"):
        # Everything on this machine: the driver (its block manager, its UI) listens on the
        # loopback address only, never on the machine's network interfaces.
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if not is_local_master(master):
        conf["spark.submit.pyFiles"] = ",".join([py_files_archive(tmp)] + extra_py_files(env))
    for key, value in parse_conf_argument(_flag(args, "conf") or ""):
        conf[key] = value
    return conf


def spark_environment(conf: Mapping[str, str]) -> Dict[str, str]:
    """Environment variables Spark's JVMs need beside `conf` (set before the JVM starts):
    `SPARK_LOCAL_IP` when the driver is on the loopback address. Spark resolves the machine's
    own host name when its configuration classes load, before any setting is read, and fails
    ("UnknownHostException") where that name is not in /etc/hosts or DNS (a minimal Debian, a
    chroot); with SPARK_LOCAL_IP it uses that address instead."""
    if conf.get("spark.driver.bindAddress") == "127.0.0.1":
        return {"SPARK_LOCAL_IP": "127.0.0.1"}
    return {}


def extra_py_files(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The run's `--extra-py-files` as the driver has them, for executors on a cluster: the
    archives (.zip, .egg, .whl) on PYTHONPATH, and the single modules the server put in the
    run's py/ folder ($OPENGLUE_RUN_DIR/py, on PYTHONPATH)."""
    env = os.environ if environ is None else environ
    found: List[str] = []
    run_py = os.path.join(env["OPENGLUE_RUN_DIR"], "py") if env.get("OPENGLUE_RUN_DIR") else None
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if not entry:
            continue
        if entry.endswith((".zip", ".egg", ".whl")) and os.path.isfile(entry):
            found.append(os.path.abspath(entry))
        elif run_py and os.path.abspath(entry) == os.path.abspath(run_py) and os.path.isdir(entry):
            found += [os.path.join(os.path.abspath(entry), n) for n in sorted(os.listdir(entry))
                      if n.endswith(".py")]
    return found


def _package_files(package_dir: str) -> List[str]:
    files = []
    for root, dirs, names in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            # Extension modules cannot be imported from a zip; executors use Python sources only.
            if name.endswith((".pyc", ".so", ".pyd")):
                continue
            files.append(os.path.join(root, name))
    return files


def py_files_archive(tmpdir: Optional[str] = None) -> str:
    """A zip of the runtime's two packages, `awsglue` (the façade) and `openglue_runtime`
    (sources only), for executors on a cluster (`spark.submit.pyFiles`). Both are installed side
    by side (the checkout's python/ or site-packages). Cached under TMPDIR by the packages'
    content: built once per version, rebuilt when a file changes."""
    runtime_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    base = os.path.dirname(runtime_dir)
    files = []
    for package in ("awsglue", "openglue_runtime"):
        files += _package_files(os.path.join(base, package))
    digest = hashlib.sha256()
    for path in files:
        st = os.stat(path)
        digest.update(f"{os.path.relpath(path, base)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    folder = os.path.join(tmpdir or os.environ.get("TMPDIR") or tempfile.gettempdir(), "openglue-pyfiles")
    target = os.path.join(folder, f"awsglue-{digest.hexdigest()[:16]}.zip")
    if os.path.isfile(target):
        return target
    os.makedirs(folder, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=".awsglue-", suffix=".zip", dir=folder)
    os.close(fd)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, os.path.relpath(path, base))
        os.replace(partial, target)  # atomic: concurrent runs never see half an archive
    except BaseException:
        os.unlink(partial)
        raise
    return target


# Spark's JDBC source with the drivers of spark-jars.txt. Glue connection URLs name the database
# kind (jdbc:postgresql:, jdbc:mysql:). Spark picks its SQL dialect (identifier quoting, types) by
# the URL's prefix and knows MySQL's only as jdbc:mysql:, while MariaDB Connector/J 3 (which serves
# MySQL servers too) takes jdbc:mysql: URLs only with `permitMysqlScheme`: MySQL and MariaDB URLs
# become jdbc:mysql: URLs with that option.
JDBC_DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "mysql": "org.mariadb.jdbc.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
}


def spark_jdbc(url: str) -> Tuple[str, str]:
    """(url, driver class) for Spark's JDBC source (`.option("url", ...).option("driver", ...)`)
    from a Glue connection URL; ValueError for a database kind without a driver here."""
    kind = url.split(":", 2)[1] if url.startswith("jdbc:") and url.count(":") >= 2 else ""
    if kind not in JDBC_DRIVERS:
        raise ValueError(f"no JDBC driver for {url!r} on the Spark engine "
                         f"(supported: {', '.join('jdbc:' + k for k in JDBC_DRIVERS)})")
    if kind in ("mysql", "mariadb"):
        url = "jdbc:mysql:" + url[len("jdbc:" + kind + ":"):]
        if "permitmysqlscheme" not in url.lower():
            url += ("&" if "?" in url else "?") + "permitMysqlScheme=true"
    return url, JDBC_DRIVERS[kind]
