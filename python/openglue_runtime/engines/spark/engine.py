"""The engine of a job run, decided and prepared before the script computes anything.

The server starts a glueetl run with `OPENGLUE_ENGINE` = `embedded`, `spark` or `auto` and
OpenGlue's `pyspark` package (python/shims) on the path. The first `import pyspark` of the
script (or its GlueContext, whichever comes first) calls `prepare()`, which:

- decides `auto`: reads the script (`sys.argv[0]`) with `openglue_runtime.engine_select` and picks
  `spark` when it uses Spark's own API and Spark can run here (a real pyspark and a java), else
  `embedded`; the decision replaces OPENGLUE_ENGINE / OPENGLUE_ENGINE_REASON for the rest of
  the run;
- prints `[openglue] engine: <engine> (<why>)` once into the run's error stream (its driver log);
- on Spark, before the script's `SparkContext()` starts the JVM: writes the run's Spark
  settings (`openglue_runtime.engines.spark.conf.session_conf(args)`) into `$OPENGLUE_RUN_DIR/spark-conf/
  spark-defaults.conf` with a log4j2.properties that keeps Spark at WARN, and points
  SPARK_CONF_DIR there, so every way a script makes its context (`SparkContext()`,
  `SparkContext.getOrCreate()`, `SparkSession.builder.getOrCreate()`, `GlueContext(None)`) gets
  them; settings whose names say they are secrets are not written to disk but set as JVM system
  properties right after the JVM starts; Spark's local dirs and java.io.tmpdir go under the
  run's TMPDIR; a daemon thread prints Spark's UI address and, for stages running longer than a
  few seconds, their progress.

The pyspark package then is the stand-in (embedded) or hands over to the real pyspark (spark,
and outside job runs when one is installed). See docs/engines.md.
"""
import atexit
import importlib.machinery
import os
import re
import shutil
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

# Settings kept off disk: set in the JVM once it runs (see _set_secret_properties).
_SECRET = re.compile(r"secret|password|session\.token|credentials?\.key", re.IGNORECASE)
# How often the progress thread looks at Spark's running stages, and how long a stage runs
# before it is reported (short jobs stay quiet).
PROGRESS_INTERVAL_S = 5.0

_lock = threading.RLock()
_prepared: Optional[str] = None
_secret_settings: Dict[str, str] = {}
# Settings of files the launcher would resolve through Hadoop (see _defer_launcher_files).
_deferred_settings: Dict[str, str] = {}
# Whether this run's Spark runs in local mode (executors inside the driver's JVM).
_local_master = True
# The settings whose paths spark-submit's launcher resolves through Hadoop's FileSystem.
_LAUNCHER_FILE_KEYS = ("spark.jars", "spark.submit.pyFiles", "spark.files", "spark.archives")


class SparkEngineUnavailable(RuntimeError):
    """`--engine spark` on an installation that cannot start Spark (no pyspark or no java)."""


def is_openglue_pyspark_dir(entry: str) -> bool:
    """Whether the sys.path entry `entry` holds OpenGlue's own pyspark package (python/shims,
    or the installed openglue_standin)."""
    try:
        with open(os.path.join(entry or os.getcwd(), "pyspark", "__init__.py"),
                  encoding="utf-8") as f:
            return "__openglue_standin__" in f.read(8192)
    except (OSError, TypeError, ValueError):
        return False


def real_pyspark_spec():
    """The import spec of a real pyspark on sys.path (never OpenGlue's own package); None when
    there is none."""
    others = [entry for entry in sys.path if isinstance(entry, str)
              and not is_openglue_pyspark_dir(entry)]
    try:
        spec = importlib.machinery.PathFinder.find_spec("pyspark", others)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.loader is None:
        return None
    return spec


def java_path() -> Optional[str]:
    """The java Spark would start: $JAVA_HOME/bin/java, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def spark_availability() -> Tuple[bool, str]:
    """(whether this installation can run Spark, why not)."""
    if real_pyspark_spec() is None:
        return False, "pyspark is not installed (pip install -r requirements.txt)"
    if java_path() is None:
        return False, "no java found (install a JDK 17, or set JAVA_HOME)"
    return True, ""


def script_arguments(argv: List[str]) -> Dict[str, str]:
    """The run's job arguments as {"--name": value} from the script's argv (Glue passes
    `--name value` pairs; a flag without a value maps to "")."""
    args: Dict[str, str] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token.startswith("--") and len(token) > 2:
            if "=" in token:
                key, value = token.split("=", 1)
                args[key] = value
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                args[token] = argv[i + 1]
                i += 1
            else:
                args[token] = ""
        i += 1
    return args


def _extra_py_dirs() -> List[str]:
    """The run's `--extra-py-files` folder (`<run folder>/py`), where the script's own modules
    are, when it exists."""
    run_dir = os.environ.get("OPENGLUE_RUN_DIR", "")
    folder = os.path.join(run_dir, "py") if run_dir else ""
    return [folder] if folder and os.path.isdir(folder) else []


def _decide_auto() -> Tuple[str, str]:
    """The `auto` decision for the running script: (engine, reason)."""
    from openglue_runtime.engine_select import local_module_sources, select_engine
    given = os.environ.get("OPENGLUE_ENGINE_REASON") or "--engine auto"
    path = sys.argv[0] if sys.argv else ""
    try:
        if os.path.getsize(path) > 4 << 20:
            return "embedded", given + ": the script is over 4 MB and is not scanned"
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except (OSError, TypeError, ValueError):
        return "embedded", given + ": the script cannot be read to scan it"
    available, why_not = spark_availability()
    engine, reason = select_engine(source, "auto", available,
                                   local_module_sources(source, _extra_py_dirs()))
    reason = given + reason[len("--engine auto"):] if reason.startswith("--engine auto") else reason
    if engine == "embedded" and why_not and "Spark's API" in reason:
        reason += " (" + why_not + ")"
    return engine, reason


def prepare() -> str:
    """Decides and prepares this process's engine once; returns "embedded", "spark" or ""
    (not in a job run, or a run without an engine). Raises SparkEngineUnavailable for
    `--engine spark` where Spark cannot run."""
    global _prepared
    with _lock:
        if _prepared is not None:
            return _prepared
        engine = os.environ.get("OPENGLUE_ENGINE", "")
        in_run = bool(os.environ.get("OPENGLUE_JOB_RUN_ID"))
        if engine == "auto":
            engine, reason = _decide_auto()
            os.environ["OPENGLUE_ENGINE"] = engine
            os.environ["OPENGLUE_ENGINE_REASON"] = reason
        if engine == "spark" and in_run and not os.environ.get("OPENGLUE_SPARK_PREPARED"):
            available, why_not = spark_availability()
            if not available:
                _prepared = ""
                raise SparkEngineUnavailable(
                    "{}: the Spark engine cannot run here: {}".format(
                        os.environ.get("OPENGLUE_ENGINE_REASON", "--engine spark"), why_not))
            from openglue_runtime.engines.embedded.spark_api import announce_engine
            announce_engine()
            _configure_spark()
        elif engine in ("embedded", "spark"):
            from openglue_runtime.engines.embedded.spark_api import announce_engine
            announce_engine()
        _prepared = engine if engine in ("embedded", "spark") else ""
        return _prepared


FRAMES_MODES = ("native", "driver")


def frames_mode() -> str:
    """Where a Spark run's DynamicFrames live: "native" (the default: in Spark DataFrames, each
    step in Spark tasks, openglue_runtime/engines/spark/frames.py) or "driver" (on the embedded engine in the
    driver, crossing to Spark at toDF/fromDF). From the run's `--spark-frames` argument, else
    the environment's OPENGLUE_SPARK_FRAMES."""
    value = script_arguments(sys.argv[1:]).get("--spark-frames") \
        or os.environ.get("OPENGLUE_SPARK_FRAMES") or "native"
    value = value.strip().lower()
    if value not in FRAMES_MODES:
        raise ValueError("--spark-frames must be native or driver, not {!r}".format(value))
    return value


_frames_announced = False


def announce_frames(mode: str) -> None:
    """Says once in a Spark run's log where its DynamicFrames live."""
    global _frames_announced
    if _frames_announced or not os.environ.get("OPENGLUE_JOB_RUN_ID"):
        return
    _frames_announced = True
    text = ("DynamicFrames over Spark DataFrames, their steps in Spark tasks" if mode == "native"
            else "DynamicFrames on the embedded engine in the driver (--spark-frames driver)")
    print("[openglue] frames: " + text, file=sys.stderr, flush=True)


def current_engine() -> str:
    """The engine of this process once prepared ("embedded", "spark"), else ""."""
    return _prepared or ""


# ------------------------------------------------------------------------------------- Spark

def _properties_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


_LOG4J2 = """\
# Written by OpenGlue for this job run: Spark logs WARN and above into the run's error stream.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.snapshot.name = org.apache.spark.util.Utils
logger.snapshot.level = error
logger.metrics.name = org.apache.hadoop.metrics2
logger.metrics.level = error
"""


def run_settings(args: Dict[str, str]) -> Dict[str, str]:
    """The Spark settings of this run: `session_conf(args)` plus what keeps Spark's files under
    the run's folders and its console quiet (added only where session_conf sets nothing)."""
    from openglue_runtime.engines.spark.conf import session_conf
    settings = {str(k): str(v) for k, v in session_conf(args).items()}
    tmp = os.environ.get("TMPDIR") or os.path.join(os.environ.get("OPENGLUE_RUN_DIR", "."), "tmp")
    settings.setdefault("spark.ui.showConsoleProgress", "false")
    # Ivy's cache (spark-submit sets it up even with no packages) must not depend on the job
    # user's home, which an unprivileged job user may not have.
    settings.setdefault("spark.jars.ivy", os.path.join(tmp, "ivy2"))
    java_tmp = "-Djava.io.tmpdir=" + tmp
    if os_user_name() is None:  # no home either: Java's user.home would be "?"
        java_tmp += " -Duser.home=" + os.path.join(os.environ.get("OPENGLUE_RUN_DIR", tmp), "work")
        # ... nor a name: a cluster's master lists the application under Java's user.name.
        java_tmp += " -Duser.name=" + spark_user_name()
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        current = settings.get(key, "")
        if "java.io.tmpdir" not in current:
            settings[key] = (current + " " + java_tmp).strip()
    return settings


def _configure_spark() -> None:
    run_dir = os.environ.get("OPENGLUE_RUN_DIR") or os.environ.get("TMPDIR") or "."
    settings = run_settings(script_arguments(sys.argv[1:]))
    conf_dir = os.path.join(run_dir, "spark-conf")
    os.makedirs(conf_dir, exist_ok=True)
    # Spark's scratch space (shuffle, spills) under the run's TMPDIR: SPARK_LOCAL_DIRS, which
    # unlike spark.local.dir draws no warning in local mode.
    if "spark.local.dir" not in settings:
        tmp = os.environ.get("TMPDIR") or os.path.join(run_dir, "tmp")
        local_dirs = os.path.join(tmp, "spark-local")
        os.makedirs(local_dirs, exist_ok=True)
        os.environ.setdefault("SPARK_LOCAL_DIRS", local_dirs)
    if os_user_name() is None:
        _deferred_settings.update(defer_launcher_files(settings))
    from openglue_runtime.engines.spark.conf import is_local_master, spark_environment
    for name, value in spark_environment(settings).items():
        os.environ.setdefault(name, value)
    global _local_master
    _local_master = is_local_master(settings.get("spark.master", "local[*]"))
    lines = ["# Spark settings of this job run, written by OpenGlue (openglue_runtime.engines.spark.conf)."]
    for key, value in sorted(settings.items()):
        if _SECRET.search(key) or key in _deferred_settings:
            _secret_settings[key] = value
            continue
        lines.append("{} {}".format(key, _properties_value(value)))
    fd = os.open(os.path.join(conf_dir, "spark-defaults.conf"),
                 os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(conf_dir, "log4j2.properties"), "w", encoding="utf-8") as f:
        f.write(_LOG4J2)
    os.environ["SPARK_CONF_DIR"] = conf_dir
    # Python workers run the venv's interpreter, and import the real pyspark directly.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if p and not is_openglue_pyspark_dir(p))
    # The user Spark names (and Hadoop logs in as, see after_pyspark_import).
    os.environ["SPARK_USER"] = spark_user_name()
    os.environ["OPENGLUE_SPARK_PREPARED"] = "1"
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _excepthook
    atexit.register(_stop_spark)
    threading.Thread(target=_watch_progress, name="openglue-spark-progress",
                     daemon=True).start()


def defer_launcher_files(settings: Dict[str, str]) -> Dict[str, str]:
    """For a run under a uid without a user name: the settings to give the JVM once it runs
    instead of to spark-submit's launcher. The launcher resolves every path of spark.jars,
    spark.submit.pyFiles, spark.files and spark.archives that is not a `local:` URI through
    Hadoop's FileSystem, whose first use logs in the OS user; Hadoop's OS login needs a user
    name (HADOOP_USER_NAME does not help: the OS login module runs first), so the launcher
    would fail before the run can name a user (after_pyspark_import does, then the
    SparkContext reads these as system properties and serves the files to the executors).
    What the launcher does with them in client mode is done here: the jars go on the driver's
    own classpath (`spark.driver.extraClassPath`, which the launcher takes as it is), and the
    py-files join spark.files so that executors fetch them. `settings` is changed in place;
    only a cluster's settings need it (local mode's jars are already `local:` URIs)."""
    deferred: Dict[str, str] = {}

    def entries(key: str) -> List[str]:
        return [e for e in settings.get(key, "").split(",") if e.strip()]

    if not any(not e.startswith("local:") for key in _LAUNCHER_FILE_KEYS for e in entries(key)):
        return deferred
    jars = [e for e in entries("spark.jars") if not e.startswith("local:") and "://" not in e]
    if jars:
        classpath = [settings["spark.driver.extraClassPath"]] \
            if settings.get("spark.driver.extraClassPath") else []
        settings["spark.driver.extraClassPath"] = os.pathsep.join(
            classpath + [e[len("file:"):] if e.startswith("file:") else e for e in jars])
    py_files = entries("spark.submit.pyFiles")
    if py_files:
        files = entries("spark.files")
        settings["spark.files"] = ",".join(files + [f for f in py_files if f not in files])
    for key in _LAUNCHER_FILE_KEYS:
        if entries(key):
            deferred[key] = settings[key]
    return deferred


def spark_user_name() -> str:
    """The user Spark and Hadoop name for this run: SPARK_USER when the run's environment sets
    it, else the OS user's name, else `openglue-<uid>` (a uid without a name)."""
    return os.environ.get("SPARK_USER") or os_user_name() or "openglue-{}".format(os.getuid())


def os_user_name() -> Optional[str]:
    """This process's user name from the system's user database; None for a uid without an
    entry (the per-run uids of `job_user = auto`)."""
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, ImportError):
        return None


_AWS_KEY_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def host_name_resolves() -> bool:
    """Whether this machine's own host name resolves (Java's InetAddress.getLocalHost works)."""
    import socket
    try:
        socket.getaddrinfo(socket.gethostname(), None)
        return True
    except OSError:
        return False


def after_pyspark_import() -> None:
    """Called once the real pyspark is imported on a Spark run: the JVM, when pyspark starts it
    and before any SparkContext exists, gets the secret settings as system properties and, for
    a uid without a user name, a Hadoop login user (Hadoop's OS login fails without a name)."""
    if not os.environ.get("OPENGLUE_SPARK_PREPARED"):
        return
    import pyspark.context as context
    launch = context.launch_gateway
    if getattr(launch, "_openglue", False):
        return
    nameless = os_user_name() is None
    # Spark's launcher copies AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from its environment into
    # Hadoop's settings and names the copy with InetAddress.getLocalHost(), which fails where
    # the machine's host name does not resolve (SPARK_LOCAL_IP does not help there). S3A has the
    # run's keys from session_conf anyway, so on such a machine the JVM starts without them in
    # its environment. In local mode its Python workers (UDFs using boto3) get them through
    # spark.executorEnv; a cluster's executors are JVMs of their own, which that would hand the
    # same lookup (and which never had the driver's environment).
    hidden = {} if host_name_resolves() else {
        name: os.environ[name] for name in _AWS_KEY_VARIABLES if name in os.environ}
    if _local_master:
        for name, value in hidden.items():
            _secret_settings["spark.executorEnv." + name] = value

    def launch_gateway(*a, **kw):
        for name in hidden:
            os.environ.pop(name, None)
        try:
            gateway = launch(*a, **kw)
        finally:
            os.environ.update(hidden)
        system = gateway.jvm.java.lang.System
        for key, value in list(_secret_settings.items()) + list(_deferred_settings.items()):
            system.setProperty(key, value)
        if nameless:
            ugi = gateway.jvm.org.apache.hadoop.security.UserGroupInformation
            ugi.setLoginUser(ugi.createRemoteUser(os.environ["SPARK_USER"]))
        return gateway

    launch_gateway._openglue = True  # type: ignore[attr-defined]
    context.launch_gateway = launch_gateway


def _stop_spark() -> None:
    """At the script's end: stops the SparkContext it left running (Glue scripts rarely stop
    it), so Spark finishes its event log and removes its scratch files before the JVM goes."""
    context = getattr(sys.modules.get("pyspark.context"), "SparkContext", None)
    active = context._active_spark_context if context is not None else None
    if active is None or getattr(active, "_jsc", None) is None:
        return
    try:
        active.stop()
    except Exception:  # the JVM is already gone
        pass


def _excepthook(etype, value, tb) -> None:
    """Python's traceback, then, when Spark's message runs over several lines (an
    AnalysisException's plan, a Java stack trace), one `Type: first line` summary, so the
    run's ErrorMessage (the last unindented line of its error stream) names the error."""
    sys.__excepthook__(etype, value, tb)
    try:
        text = str(value)
        java = getattr(value, "java_exception", None)
        if java is not None:
            text = java.toString()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if java is not None or len(lines) > 1:
            name = etype.__name__ if etype.__module__ == "builtins" else \
                "{}.{}".format(etype.__module__, etype.__qualname__)
            print("{}: {}".format(name, lines[0] if lines else ""), file=sys.stderr, flush=True)
    except Exception:  # the JVM may be gone: the traceback above stands
        pass


def _say(text: str) -> None:
    print("[openglue] spark: " + text, file=sys.stderr, flush=True)


def _watch_progress() -> None:
    """Prints Spark's UI address when the script's SparkContext is up, then every
    PROGRESS_INTERVAL_S the stages that run longer than that (tasks done / total)."""
    try:
        # pyspark is being imported when this thread starts: wait for its SparkContext class,
        # then for the script's context.
        while True:
            context = getattr(sys.modules.get("pyspark.context"), "SparkContext", None)
            active = context._active_spark_context if context is not None else None
            if active is not None and getattr(active, "_jsc", None) is not None:
                break
            time.sleep(0.5)
        SparkContext = context
        sc = SparkContext._active_spark_context
        _say("master {}, application {}, UI {}".format(sc.master, sc.applicationId,
                                                      sc.uiWebUrl or "off"))
        tracker = sc.statusTracker()
        first_seen: Dict[int, float] = {}
        last: Dict[int, Tuple[int, int]] = {}
        while SparkContext._active_spark_context is sc:
            time.sleep(PROGRESS_INTERVAL_S)
            now = time.monotonic()
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is None:
                    continue
                started = first_seen.setdefault(stage_id, now)
                state = (info.numCompletedTasks, info.numActiveTasks)
                if now - started < PROGRESS_INTERVAL_S or last.get(stage_id) == state:
                    continue
                last[stage_id] = state
                _say("stage {} ({}): {}/{} tasks done, {} running{}".format(
                    stage_id, info.name, info.numCompletedTasks, info.numTasks,
                    info.numActiveTasks,
                    ", {} failed".format(info.numFailedTasks) if info.numFailedTasks else ""))
    except Exception as e:  # the JVM went away (the script ended): nothing more to report
        if os.environ.get("OPENGLUE_DEBUG_PROGRESS"):
            _say("progress reports end: {!r}".format(e))
        return
