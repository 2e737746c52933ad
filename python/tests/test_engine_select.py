import json
import os
import subprocess
import sys
import textwrap

import pytest

from openglue_runtime.engine_select import EngineChoiceError, find_spark_api_uses, select_engine

HEADER = """
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql.types import StringType
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
sc = SparkContext.getOrCreate()
sc.setLogLevel("WARN")
glueContext = GlueContext(sc)
spark = glueContext.spark_session
spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
"""

GLUE_ONLY = HEADER + """
src = glueContext.create_dynamic_frame.from_catalog(database="db", table_name="t",
                                                    transformation_ctx="src")
mapped = ApplyMapping.apply(frame=src, mappings=[("a", "string", "a", "long")])
mapped = mapped.filter(lambda r: r["a"] > 1).map(lambda r: r)
glueContext.write_dynamic_frame.from_options(frame=mapped, connection_type="s3",
                                             connection_options={"path": "s3://b/out"},
                                             format="parquet")
job.commit()
"""


def uses(body):
    return [what for _, what in find_spark_api_uses(textwrap.dedent(body))]


def test_a_glue_only_script_has_no_spark_use():
    assert find_spark_api_uses(GLUE_ONLY) == []
    assert select_engine(GLUE_ONLY) == ("embedded",
                                        "--engine auto: the script uses only the Glue API")


@pytest.mark.parametrize("body, expected", [
    ("df = src.toDF()\n", "toDF()"),
    ("from awsglue.dynamicframe import DynamicFrame\nd = DynamicFrame.fromDF(df, glueContext, 'x')\n",
     "DynamicFrame.fromDF()"),
    ("spark.sql('select 1')\n", "spark.sql (SparkSession)"),
    ("df = spark.read.parquet('s3://b/')\n", "spark.read (SparkSession)"),
    ("glueContext.spark_session.sql('select 1')\n", "spark_session.sql"),
    ("s = SparkSession.builder.getOrCreate()\n", "SparkSession.builder"),
    ("r = src.toDF().rdd\n", ".rdd"),
    ("sc.parallelize([1, 2])\n", "sc.parallelize (SparkContext)"),
    ("df = glueContext.create_data_frame.from_catalog(database='d', table_name='t')\n",
     "glueContext.create_data_frame"),
    ("from pyspark.sql.functions import col\nx = col('a')\n", "col (pyspark.sql.functions)"),
    ("import pyspark.sql.functions as F\nx = F.upper('a')\n", "F.upper (pyspark.sql.functions)"),
    ("from pyspark.sql import functions as F\nx = F.lit(1)\n", "F.lit (pyspark.sql.functions)"),
    ("from pyspark.sql.functions import udf\n@udf(StringType())\ndef f(x):\n    return x\n",
     "udf (pyspark.sql.functions)"),
    ("from pyspark.sql.functions import *\ny = when(1, 2)\n", "when() (pyspark.sql.functions)"),
    ("from pyspark.ml.feature import VectorAssembler\n", "from pyspark.ml.feature import ..."),
    ("sqlContext = SQLContext(sc)\nsqlContext.sql('x')\n", "sql()"),
    ("s2 = spark\ns2.table('t')\n", "s2.table (SparkSession)"),
])
def test_spark_uses_are_found_with_their_lines(body, expected):
    source = HEADER + body
    found = find_spark_api_uses(source)
    assert expected in [what for _, what in found], found
    line = next(l for l, w in found if w == expected)
    assert HEADER.count("\n") < line <= source.count("\n")


def test_housekeeping_on_session_and_context_is_not_spark_use():
    assert uses("""
        from pyspark.context import SparkContext
        from pyspark.sql import SparkSession
        sc = SparkContext()
        sc.setLogLevel("INFO")
        glueContext = GlueContext(sc)
        spark = glueContext.spark_session
        spark.conf.set("a", "b")
        sc2 = spark.sparkContext
        sc2.stop()
    """) == []


def test_rebinding_a_name_forgets_it_was_a_session():
    assert uses("""
        spark = glueContext.spark_session
        spark = {"read": 1}
        spark.get("read")
    """) == []


def test_engine_choices():
    spark_script = HEADER + "df = src.toDF()\ndf.show()\n"
    engine, reason = select_engine(spark_script, "auto")
    assert engine == "embedded"
    assert "uses Spark's API (line 18: toDF())" in reason and "not available on this installation" in reason
    assert select_engine(spark_script, "auto", spark_available=True) == (
        "spark", "--engine auto: the script uses Spark's API (line 18: toDF())")
    assert select_engine(spark_script, "embedded") == ("embedded", "--engine embedded")
    assert select_engine(GLUE_ONLY, "spark") == ("spark", "--engine spark")
    assert select_engine(GLUE_ONLY, None)[0] == "embedded"
    assert select_engine(GLUE_ONLY, " AUTO ")[0] == "embedded"
    with pytest.raises(EngineChoiceError, match="'fast' is not an engine"):
        select_engine(GLUE_ONLY, "fast")
    engine, reason = select_engine("def f(:\n", "auto")
    assert engine == "embedded" and "does not parse" in reason


PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {**os.environ, "PYTHONPATH": PYTHON_DIR}


def test_command_line_prints_the_decision(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(HEADER + "spark.sql('x')\n")
    out = subprocess.run([sys.executable, "-m", "openglue_runtime.engine_select", str(script),
                          "--spark-available"], capture_output=True, text=True, timeout=60, env=ENV)
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert decision["engine"] == "spark"
    assert decision["uses"] == [{"line": 18, "what": "spark.sql (SparkSession)"},
                                {"line": 18, "what": "sql()"}]
    bad = subprocess.run([sys.executable, "-m", "openglue_runtime.engine_select", str(script),
                          "--engine", "fast"], capture_output=True, text=True, timeout=60, env=ENV)
    assert bad.returncode == 2 and "not an engine" in bad.stderr


def test_local_module_sources_follows_imports_inside_the_folder(tmp_path):
    from openglue_runtime.engine_select import local_module_sources, select_engine
    (tmp_path / "a.py").write_text("import b\nimport json\n")
    (tmp_path / "b.py").write_text("from c import x\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "__init__.py").write_text("x = lambda f: f.toDF()\n")
    found = local_module_sources("import a\nfrom awsglue.context import GlueContext\n",
                                 [str(tmp_path)])
    assert [name for name, _ in found] == ["a.py", "b.py", os.path.join("c", "__init__.py")]
    engine, reason = select_engine("import a\n", "auto", True, found)
    assert engine == "spark"
    assert reason == ("--engine auto: the script uses Spark's API (c/__init__.py line 1: "
                      "toDF())")
    assert select_engine("import a\n", "auto", True, found[:2])[0] == "embedded"


# At the end: test_engine_choices checks line numbers of this file.
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)
