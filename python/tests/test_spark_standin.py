"""The pyspark stand-in (python/shims) and openglue_runtime.engines.embedded.spark_api. Each case runs in a fresh
interpreter with the shims on its path, as a job run on the embedded engine has them."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIMS = os.path.join(PYTHON_DIR, "shims")


def run(body, extra_path=(), env=None, engine="embedded"):
    """`body` in a fresh interpreter as a run on `engine` ("" = outside a job run) sees it."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENGLUE_")}
    environ["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR, SHIMS, *extra_path])
    if engine:
        environ["OPENGLUE_ENGINE"] = engine
    environ.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True,
                          text=True, env=environ, timeout=60)


GLUE_PREAMBLE = """
    import sys
    from pyspark.context import SparkContext
    from pyspark import SparkConf
    from pyspark.sql import SparkSession, DataFrame, Row, Column
    from pyspark.sql import functions as F
    from pyspark.sql.functions import col, lit, udf, when
    from pyspark.sql.functions import *
    from pyspark.sql.types import *
    from pyspark.sql.window import Window
    from pyspark.sql.utils import AnalysisException
    from pyspark.ml.feature import VectorAssembler
    sc = SparkContext.getOrCreate()
    sc.setLogLevel("WARN")
    assert SparkContext() is not None and SparkContext.getOrCreate() is sc
    spark = SparkSession.builder.appName("x").config("k", "v").enableHiveSupport().getOrCreate()
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode") == "dynamic"
    assert spark.sparkContext is sc
    schema = StructType([StructField("a", StringType(), True), StructField("n", LongType())])
    assert schema.names == ["a", "n"] and DecimalType(10, 2).precision == 10
    try:
        raise AnalysisException("x")
    except AnalysisException:
        pass
"""


@pytest.mark.parametrize("use, what", [
    ("spark.sql('select 1')", "spark.sql()"),
    ("spark.read.csv('s3://b/k')", "spark.read"),
    ("spark.createDataFrame([])", "spark.createDataFrame()"),
    ("col('a')", "pyspark.sql.functions.col()"),
    ("F.upper(col)", "pyspark.sql.functions.upper()"),
    ("udf(lambda x: x)", "pyspark.sql.functions.udf()"),
    ("sc.parallelize([1])", "SparkContext.parallelize"),
    ("sc._jsc.hadoopConfiguration()", "SparkContext._jsc"),
    ("DataFrame()", "pyspark.sql.DataFrame()"),
    ("Window.partitionBy('a')", "pyspark.sql.Window.partitionBy"),
    ("VectorAssembler(inputCols=['a'])", "pyspark.ml.feature.VectorAssembler()"),
])
def test_glue_entry_points_work_and_spark_use_fails_clearly(use, what):
    result = run(GLUE_PREAMBLE + f"""
    from openglue_runtime.engines.embedded.spark_api import SparkApiUnavailable
    try:
        {use}
    except SparkApiUnavailable as e:
        assert isinstance(e, RuntimeError)
        print(str(e))
    else:
        print("no error")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(
        f"{what} is Spark's API (pyspark); this run uses the embedded engine, which runs only "
        "the Glue API. Run the job with --engine spark"), result.stdout


def test_uncaught_use_is_never_an_import_or_attribute_error():
    result = run(GLUE_PREAMBLE + "    spark.sql('select 1').show()\n")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("openglue_runtime.engines.embedded.spark_api.SparkApiUnavailable: spark.sql() is Spark's API")


def test_python_probes_get_attribute_errors():
    result = run(GLUE_PREAMBLE + """
    import copy
    assert not hasattr(spark, "__len__") and not hasattr(F.col, "__wrapped__")
    assert isinstance(VectorAssembler, object)
    import pyspark
    assert pyspark.__openglue_standin__
    print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_engine_is_announced_once_in_a_job_run():
    result = run("import pyspark\nimport pyspark.sql\nfrom openglue_runtime.engines.embedded.spark_api import "
                 "announce_engine\nannounce_engine()\n",
                 env={"OPENGLUE_JOB_RUN_ID": "jr_1", "OPENGLUE_ENGINE": "embedded",
                      "OPENGLUE_ENGINE_REASON": "--engine embedded"})
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["[openglue] engine: embedded (--engine embedded)"]
    quiet = run("import pyspark\n")  # not a job run (no OPENGLUE_JOB_RUN_ID): silent
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_real_pyspark_further_on_the_path_is_never_shadowed(tmp_path):
    real = tmp_path / "site" / "pyspark"
    (real / "sql").mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    (real / "sql" / "__init__.py").write_text("class SparkSession:\n    REAL = True\n")
    result = run("""
    import pyspark
    from pyspark.sql import SparkSession
    print(pyspark.REAL, SparkSession.REAL, pyspark.__file__)
    """, extra_path=[str(tmp_path / "site")], engine="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["True", "True"]
    assert result.stdout.split()[2] == str(real / "__init__.py")


def test_auto_announcement_names_the_scripts_spark_uses(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("import pyspark\nfrom pyspark.sql import SparkSession\n"
                      "spark = SparkSession.builder.getOrCreate()\nspark.sql('x')\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENGLUE_")}
    environ.update({"PYTHONPATH": os.pathsep.join([PYTHON_DIR, SHIMS]),
                    "OPENGLUE_JOB_RUN_ID": "jr_1", "OPENGLUE_ENGINE": "embedded",
                    "OPENGLUE_ENGINE_REASON": "--engine auto: the embedded engine runs it"})
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=environ, timeout=60)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == (
        "[openglue] engine: embedded (--engine auto: the embedded engine runs it; the script "
        "uses Spark's API (line 3: SparkSession.builder, line 4: spark.sql (SparkSession), "
        "line 4: sql()) and will stop at the first use)")
    assert "SparkApiUnavailable: spark.sql() is Spark's API" in result.stderr.splitlines()[-1]
