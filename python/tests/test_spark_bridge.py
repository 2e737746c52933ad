"""The Spark engine's pieces in-process: the run's Spark settings and arguments
(openglue_runtime.engines.spark.engine), and the DynamicFrame <-> DataFrame bridge (openglue_runtime.engines.spark.bridge) on one
real local SparkSession for the module (one JVM)."""
import datetime
import decimal
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from openglue_runtime.engines.spark import bridge as spark_bridge, engine as spark_engine
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIMS = os.path.join(PYTHON_DIR, "shims")


def test_script_arguments_are_glues_name_value_pairs():
    assert spark_engine.script_arguments(
        ["--JOB_NAME", "j", "--enable-spark-ui", "true", "--flag", "--x=1", "stray"]) == {
        "--JOB_NAME": "j", "--enable-spark-ui": "true", "--flag": "", "--x": "1"}


def run_prepare(tmp_path, engine, script_body, extra_env=None):
    """A fresh interpreter as a job run with OPENGLUE_ENGINE=engine runs `script_body`."""
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(script_body))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENGLUE_", "SPARK_"))}
    env.update({"PYTHONPATH": os.pathsep.join([PYTHON_DIR, SHIMS]), "OPENGLUE_ENGINE": engine,
                "OPENGLUE_ENGINE_REASON": "--engine not set, auto" if engine == "auto"
                else f"--engine {engine}", "OPENGLUE_JOB_RUN_ID": "jr_1",
                "OPENGLUE_RUN_DIR": str(tmp_path), "TMPDIR": str(tmp_path),
                "OPENGLUE_SPARK_MASTER": "local[1]"})
    env.update(extra_env or {})
    return subprocess.run([sys.executable, str(script), "--JOB_NAME", "j"], capture_output=True,
                          text=True, env=env, timeout=60, cwd=str(tmp_path))


def test_spark_runs_get_their_settings_from_session_conf_before_any_jvm(tmp_path):
    # No SparkContext is made: the settings and environment are in place before the script's
    # first Spark call, and secrets never reach the file.
    result = run_prepare(tmp_path, "spark", """
        import os, sys
        import pyspark
        print(os.environ["SPARK_CONF_DIR"])
        print(os.environ["SPARK_LOCAL_DIRS"])
        print(getattr(pyspark, "__openglue_standin__", False), pyspark.__file__)
        print(any("shims" in p for p in os.environ["PYTHONPATH"].split(os.pathsep)))
    """)
    assert result.returncode == 0, result.stderr
    conf_dir, local_dirs, standin, on_path = result.stdout.splitlines()
    assert conf_dir == str(tmp_path / "spark-conf")
    assert local_dirs == str(tmp_path / "spark-local")
    assert standin.split()[0] == "False" and "site-packages" in standin
    assert on_path == "False"  # Spark's Python workers import the real pyspark directly
    settings = (tmp_path / "spark-conf" / "spark-defaults.conf").read_text()
    assert "spark.master local[1]\n" in settings
    assert f"spark.jars.ivy {tmp_path}/ivy2\n" in settings
    assert "spark.ui.showConsoleProgress false\n" in settings
    assert oct((tmp_path / "spark-conf" / "spark-defaults.conf").stat().st_mode & 0o777) == "0o600"
    assert "rootLogger.level = warn" in (tmp_path / "spark-conf" / "log4j2.properties").read_text()
    assert result.stderr.splitlines()[0] == "[openglue] engine: spark (--engine spark)"


def test_secret_settings_stay_off_disk(tmp_path, monkeypatch):
    import openglue_runtime.engines.spark.conf as spark_conf
    monkeypatch.setattr(spark_conf, "session_conf", lambda args, environ=None: {
        "spark.master": "local[1]", "spark.hadoop.fs.s3a.secret.key": "SeCrEt",
        "spark.hadoop.fs.s3a.access.key": "AKIA"})
    monkeypatch.setenv("OPENGLUE_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for key in ("SPARK_CONF_DIR", "SPARK_LOCAL_DIRS", "SPARK_USER", "PYSPARK_PYTHON",
                "PYTHONPATH", "OPENGLUE_SPARK_PREPARED"):
        monkeypatch.setenv(key, os.environ.get(key, ""))
    monkeypatch.setattr(spark_engine, "_watch_progress", lambda: None)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    spark_engine._secret_settings.clear()
    spark_engine._configure_spark()
    text = (tmp_path / "spark-conf" / "spark-defaults.conf").read_text()
    assert "SeCrEt" not in text and "s3a.secret.key" not in text
    assert "spark.hadoop.fs.s3a.access.key AKIA" in text
    assert spark_engine._secret_settings == {"spark.hadoop.fs.s3a.secret.key": "SeCrEt"}
    spark_engine._secret_settings.clear()


@pytest.mark.parametrize("body,engine,reason", [
    ("from pyspark.context import SparkContext\nsc = SparkContext.getOrCreate()\n",
     "embedded", "--engine not set, auto: the script uses only the Glue API"),
    ("import pyspark\nfrom awsglue.context import GlueContext\ng = GlueContext(None)\n"
     "g.create_dynamic_frame.from_catalog(database='d', table_name='t').toDF()\n",
     "spark", "--engine not set, auto: the script uses Spark's API (line 4: toDF())"),
])
def test_auto_decides_in_the_run_and_says_so(tmp_path, body, engine, reason):
    script = body + "import os, pyspark\nprint(os.environ['OPENGLUE_ENGINE'], " \
                    "getattr(pyspark, '__openglue_standin__', False))\nraise SystemExit(0)\n"
    result = run_prepare(tmp_path, "auto", script.replace("g.create", "0 and g.create"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == f"[openglue] engine: {engine} ({reason})"
    assert result.stdout.split() == [engine, str(engine == "embedded")]


def test_spark_where_it_cannot_run_fails_clearly(tmp_path):
    result = run_prepare(tmp_path, "spark", "import pyspark\n",
                         {"JAVA_HOME": "", "PATH": "/nonexistent"})
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].endswith(
        "SparkEngineUnavailable: --engine spark: the Spark engine cannot run here: no java "
        "found (install a JDK 17, or set JAVA_HOME)")


def test_spark_ready_types():
    table = pa.table({
        "n": pa.nulls(2), "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5), None]),
        "u": pa.array([1, 2], pa.uint16()),
        "s": pa.array([{"t": datetime.datetime(2024, 1, 1)}, None]),
    })
    ready = spark_bridge.spark_ready(table)
    assert ready.schema == pa.schema([
        ("n", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("u", pa.int32()),
        ("s", pa.struct([("t", pa.timestamp("us", tz="UTC"))]))])
    # The same instants: the wall-clock value is read as UTC.
    assert ready.column("ts")[0].value == table.column("ts")[0].value
    with pytest.raises(spark_bridge.BridgeError, match="column t has type time64"):
        spark_bridge.spark_ready(pa.table({"t": pa.array([1], pa.time64("us"))}))
    with pytest.raises(spark_bridge.BridgeError, match="column c is a choice"):
        spark_bridge.spark_ready(pa.table({"c": pa.UnionArray.from_dense(
            pa.array([0], pa.int8()), pa.array([0], pa.int32()), [pa.array([1])])}))


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """One local Spark session for the module (the real pyspark, in this process)."""
    pyspark = pytest.importorskip("pyspark")
    if getattr(pyspark, "__openglue_standin__", False) or spark_engine.java_path() is None:
        pytest.skip("no real pyspark or no java")
    from pyspark.sql import SparkSession
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # see spark_conf.spark_environment
    tmp = str(tmp_path_factory.mktemp("spark"))
    session = (SparkSession.builder.master("local[1]").appName("bridge-test")
               .config("spark.ui.enabled", "false").config("spark.local.dir", tmp)
               .config("spark.sql.session.timeZone", "America/New_York").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_to_df_and_from_df_keep_every_type(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for key in ("OPENGLUE_ENGINE", "OPENGLUE_JOB_RUN_ID"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(spark_engine, "_prepared", None)
    glue = GlueContext(spark.sparkContext)
    assert glue.spark_session is spark
    table = pa.table({
        "b": pa.array([1, None], pa.int8()), "sh": pa.array([2, 3], pa.int16()),
        "i": pa.array([3, 4], pa.int32()), "l": pa.array([2 ** 40, 5], pa.int64()),
        "f": pa.array([1.5, None], pa.float32()), "d": pa.array([2.5, 1e300]),
        "dec": pa.array([decimal.Decimal("12.34"), None], pa.decimal128(10, 2)),
        "s": pa.array(["x", None]), "ok": pa.array([True, False]),
        "day": pa.array([datetime.date(2024, 2, 29), None]),
        "ts": pa.array([datetime.datetime(2024, 3, 10, 2, 30, 0, 123456), None]),
        "bin": pa.array([b"\x00\xff", None]),
        "arr": pa.array([[1, 2], []], pa.list_(pa.int64())),
        "st": pa.array([{"a": 1, "z": {"q": "w"}}, None]),
        "m": pa.array([[("k", 1.0)], None], pa.map_(pa.string(), pa.float64())),
    })
    frame = DynamicFrame.from_arrow(table, glue, "all")
    df = frame.toDF()
    assert df.schema.simpleString() == (
        "struct<b:tinyint,sh:smallint,i:int,l:bigint,f:float,d:double,dec:decimal(10,2),"
        "s:string,ok:boolean,day:date,ts:timestamp,bin:binary,arr:array<bigint>,"
        "st:struct<a:bigint,z:struct<q:string>>,m:map<string,double>>")
    back = DynamicFrame.fromDF(df, glue, "back")
    assert back.to_arrow().to_pylist() == table.to_pylist()

    # Spark-side work comes back with Spark's types.
    df.createOrReplaceTempView("all_types")
    summed = DynamicFrame.fromDF(spark.sql("SELECT sum(i) AS total, max(ts) AS last "
                                           "FROM all_types"), glue, "summed")
    assert summed.to_arrow().to_pylist() == [
        {"total": 7, "last": datetime.datetime(2024, 3, 10, 2, 30, 0, 123456)}]
    empty = DynamicFrame.fromDF(df.filter("i > 100"), glue, "empty")
    assert empty.count() == 0 and [f.name for f in empty.schema().fields][:2] == ["b", "sh"]


def test_a_choice_becomes_a_struct_per_type_as_in_glue(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(spark_engine, "_prepared", None)
    glue = GlueContext(spark.sparkContext)
    frame = DynamicFrame.from_records([{"k": 1, "v": 7}, {"k": 2, "v": "seven"}], glue)
    df = frame.toDF()
    assert df.schema.simpleString() == "struct<k:int,v:struct<int:int,string:string>>"
    assert [r.asDict(recursive=True) for r in df.orderBy("k").collect()] == [
        {"k": 1, "v": {"int": 7, "string": None}}, {"k": 2, "v": {"int": None, "string": "seven"}}]


def test_to_df_options_resolve_choices_first(spark, tmp_path, monkeypatch):
    from awsglue.dynamicframe import ResolveOption
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(spark_engine, "_prepared", None)
    glue = GlueContext(spark.sparkContext)
    frame = DynamicFrame.from_records([{"k": 1, "v": 7}, {"k": 2, "v": "seven"}], glue)
    df = frame.toDF([ResolveOption("v", "make_cols")])
    assert df.schema.simpleString() == "struct<k:int,v_int:int,v_string:string>"
    df = frame.toDF(options=[ResolveOption("v", "cast:long")])
    assert [r.asDict() for r in df.orderBy("k").collect()] == [{"k": 1, "v": 7},
                                                               {"k": 2, "v": None}]
    with pytest.raises(TypeError, match="ResolveOption"):
        frame.toDF([("v", "make_cols")])


def test_data_frame_sources_and_sinks_go_through_the_glue_ones(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(spark_engine, "_prepared", None)
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text('{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n')
    glue = GlueContext(spark.sparkContext)
    df = glue.create_data_frame.from_options("s3", {"paths": [str(src)]}, "json")
    assert sorted(r["name"] for r in df.collect()) == ["a", "b"]
    out = tmp_path / "out"
    glue.write_data_frame.from_options(df.filter("id > 1"), "s3", {"path": str(out)}, "json")
    written = DynamicFrame.from_arrow(
        glue.create_dynamic_frame.from_options("s3", {"paths": [str(out)]}, "json").to_arrow(),
        glue)
    assert written.to_arrow().to_pylist() == [{"id": 2, "name": "b"}]
    rdd_frame = glue.create_dynamic_frame_from_rdd(spark.sparkContext.parallelize([(1, "x")]),
                                                   "r", schema="a int, b string")
    assert rdd_frame.to_arrow().to_pylist() == [{"a": 1, "b": "x"}]
