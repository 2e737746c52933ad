"""Unit-testing a Glue script with pytest on real pyspark, as AWS's GlueUnitTestingLocalSample
(aws-samples/aws-glue-samples, examples/GlueUnitTestingLocalSample) does it: the script's sources,
sinks and purge are patched, its frames come from Spark DataFrames (DynamicFrame.fromDF) and the
test reads what it would have written (toDF().collect()).

A fresh virtual environment gets `pip install ./python` (tests/venvkit.py: offline, pyspark,
pandas and pytest from the project environment) and runs a pytest suite of ours, written below:
a script (`daily_orders.py`) and its tests. The environment is never activated: its python runs
pytest directly, with a `python3` first on PATH that fails, so Spark's Python workers work only
if they run the script's interpreter (awsglue sets PYSPARK_PYTHON to sys.executable, as Glue
runs one interpreter). The expected rows are computed in the suite with plain Python over its
synthetic input. docs/runtime.md ("Unit-testing a script with pytest") shows the same pattern."""
import os
import re
import subprocess
import textwrap

import pytest

from venvkit import bare_env, fresh_venv

SCRIPT = '''
"""Daily orders report: orders (catalog table shop.orders) priced from the current price list
(CSV under s3://shop-prices/current/); orders of 2 or more items go to the report with their
total, the others to rejected/."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping, DropFields, Filter, Join, Map
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "output_path"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc, minPartitions=2, targetPartitions=2)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

orders = glueContext.create_dynamic_frame.from_catalog(
    database="shop", table_name="orders", transformation_ctx="orders")
prices = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": ["s3://shop-prices/current/"]},
    format="csv", format_options={"withHeader": True}, transformation_ctx="prices")

orders = ApplyMapping.apply(frame=orders, mappings=[
    ("order_id", "string", "order_id", "int"),
    ("sku", "string", "sku", "string"),
    ("qty", "string", "qty", "int")], transformation_ctx="typed")
kept = Filter.apply(frame=orders, f=lambda r: r["qty"] >= 2)
rejected = Filter.apply(frame=orders, f=lambda r: r["qty"] < 2)


def add_total(rec):
    rec["total"] = rec["qty"] * rec["price"]
    return rec


priced = DropFields.apply(frame=Join.apply(kept, prices, "sku", "code"), paths=["code"])
report = Map.apply(frame=priced, f=add_total)

output = args["output_path"]
glueContext.purge_s3_path(output, {"retentionPeriod": 0})
glueContext.write_dynamic_frame.from_options(
    frame=report, connection_type="s3", connection_options={"path": output + "/report"},
    format="parquet")
glueContext.write_dynamic_frame.from_options(
    frame=rejected, connection_type="s3", connection_options={"path": output + "/rejected"},
    format="json")
job.commit()
'''

SUITE = '''
import os
import runpy
import sys
from unittest.mock import patch

import pytest
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from pyspark import SparkConf, SparkContext
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import IntegerType, StringType

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "daily_orders.py")
ORDERS = [{"order_id": "1", "sku": "A", "qty": "3"}, {"order_id": "2", "sku": "B", "qty": "1"},
          {"order_id": "3", "sku": "C", "qty": "2"}, {"order_id": "4", "sku": "A", "qty": "5"},
          {"order_id": "5", "sku": "D", "qty": "4"}, {"order_id": "6", "sku": "C", "qty": "0"}]
PRICES = [{"code": "A", "price": 2.5}, {"code": "B", "price": 10.0},
          {"code": "C", "price": 0.75}]  # no price for D: its order is not in the report


@pytest.fixture(scope="module")
def spark():
    conf = SparkConf().setMaster("local[2]").setAppName("daily-orders-tests")
    conf.set("spark.ui.enabled", "false").set("spark.sql.shuffle.partitions", "2")
    return SparkSession(SparkContext.getOrCreate(conf))


@pytest.fixture(scope="module")
def run(spark):
    """Runs the script with its sources answered from DataFrames and its sinks and purge
    recorded."""
    reads = []

    def from_catalog(self, database, table_name, *args, **kwargs):
        reads.append(("catalog", database, table_name))
        return DynamicFrame.fromDF(spark.createDataFrame(ORDERS), self._glue_context, table_name)

    def from_options(self, connection_type, connection_options, format=None, *args, **kwargs):
        reads.append((connection_type, connection_options["paths"], format))
        return DynamicFrame.fromDF(spark.createDataFrame(PRICES), self._glue_context, "prices")

    with patch("awsglue.context.DynamicFrameReader.from_catalog", autospec=True,
               side_effect=from_catalog), \\
         patch("awsglue.context.DynamicFrameReader.from_options", autospec=True,
               side_effect=from_options), \\
         patch("awsglue.context.DynamicFrameWriter.from_options") as write, \\
         patch("awsglue.context.GlueContext.purge_s3_path") as purge, \\
         patch("sys.argv", ["daily_orders.py", "--JOB_NAME", "daily", "--output_path",
                            "s3://reports/daily"]):
        runpy.run_path(SCRIPT, run_name="__main__")
    return reads, write, purge


def written(write, path):
    calls = [c.kwargs for c in write.call_args_list
             if c.kwargs["connection_options"]["path"] == path]
    assert len(calls) == 1, write.call_args_list
    return calls[0]


def test_the_script_reads_its_two_sources(run):
    reads, _, _ = run
    assert reads == [("catalog", "shop", "orders"),
                     ("s3", ["s3://shop-prices/current/"], "csv")]


def test_the_report_rows_are_the_priced_orders_of_two_or_more(run):
    _, write, _ = run
    call = written(write, "s3://reports/daily/report")
    assert (call["connection_type"], call["format"]) == ("s3", "parquet")
    price = {p["code"]: p["price"] for p in PRICES}
    expected = sorted(
        (int(o["order_id"]), o["sku"], int(o["qty"]), price[o["sku"]],
         int(o["qty"]) * price[o["sku"]])
        for o in ORDERS if int(o["qty"]) >= 2 and o["sku"] in price)
    rows = call["frame"].toDF().collect()
    got = sorted((r["order_id"], r["sku"], r["qty"], r["price"], r["total"]) for r in rows)
    assert got == expected
    assert sorted(rows[0].asDict()) == ["order_id", "price", "qty", "sku", "total"]


def test_the_rejected_rows_keep_the_mapped_types(run):
    _, write, _ = run
    call = written(write, "s3://reports/daily/rejected")
    df = call["frame"].toDF()
    assert sorted(df.collect()) == sorted(
        Row(order_id=int(o["order_id"]), sku=o["sku"], qty=int(o["qty"]))
        for o in ORDERS if int(o["qty"]) < 2)
    types = {f.name: f.dataType for f in df.schema.fields}
    assert types == {"order_id": IntegerType(), "sku": StringType(), "qty": IntegerType()}
    assert write.call_count == 2


def test_the_output_is_purged_before_it_is_written(run):
    _, _, purge = run
    purge.assert_called_once_with("s3://reports/daily", {"retentionPeriod": 0})


def test_spark_workers_run_this_interpreter(spark):
    rdd = spark.sparkContext.parallelize(range(2), 2)
    assert set(rdd.map(lambda _: sys.executable).collect()) == {sys.executable}
'''


def test_a_pytest_suite_of_a_glue_script_passes_on_real_pyspark(tmp_path_factory):
    python, _ = fresh_venv(tmp_path_factory.mktemp("unit-testing"))
    work = tmp_path_factory.mktemp("suite")
    (work / "pytest.ini").write_text("[pytest]\n")
    (work / "daily_orders.py").write_text(textwrap.dedent(SCRIPT))
    (work / "test_daily_orders.py").write_text(textwrap.dedent(SUITE))
    # The interpreter Spark starts for its Python workers when nothing names one is `python3`
    # from PATH: here one that fails, as a python3 without the script's packages would.
    fake = work / "path"
    fake.mkdir()
    for name in ("python3", "python"):
        exe = fake / name
        exe.write_text("#!/bin/sh\necho 'python3 from PATH ran' >&2\nexit 97\n")
        exe.chmod(0o755)
    env = bare_env(PATH=str(fake) + os.pathsep + os.environ.get("PATH", ""),
                   SPARK_LOCAL_IP="127.0.0.1")
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-p", "no:xdist", "test_daily_orders.py"],
                            cwd=str(work), env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert re.search(r"\b5 passed\b", out), out[-3000:]
