"""GlueContext is a pyspark.sql.SQLContext, as AWS's is (its class subclasses SQLContext):
on the Spark engine its SQLContext members work (on the shared local session of engine_kit);
on the embedded engine it is still an instance, and those members raise SparkApiUnavailable
naming them. The auto engine choice counts them as Spark's API."""
import pytest

from engine_kit import glue_context, spark_session
from openglue_runtime.engine_select import find_spark_api_uses
from openglue_runtime.engines.embedded.spark_api import SparkApiUnavailable


@pytest.fixture(scope="module")
def spark_glue():
    spark_session()
    return glue_context("spark")


def test_on_spark_glue_context_is_a_sql_context_with_working_members(spark_glue, tmp_path):
    from pyspark.sql import DataFrame, SQLContext
    glue = spark_glue
    assert isinstance(glue, SQLContext)
    assert isinstance(SQLContext._instantiatedContext, SQLContext)
    assert glue.sparkSession is glue.spark_session
    assert glue._sc is glue.spark_session.sparkContext
    glue.range(4).createOrReplaceTempView("four")
    assert glue.sql("SELECT sum(id) AS s FROM four").collect()[0].s == 6
    assert glue.table("four").count() == 4
    assert "four" in glue.tableNames()
    path = str(tmp_path / "rows.json")
    glue.createDataFrame([(1, "a"), (2, "b")], ["n", "s"]).write.json(path)
    assert sorted(r.s for r in glue.read.json(path).collect()) == ["a", "b"]
    glue.udf.register("twice", lambda x: 2 * x, "int")
    assert glue.sql("SELECT twice(21) AS v").collect()[0].v == 42
    glue.setConf("spark.sql.shuffle.partitions", "3")
    assert glue.getConf("spark.sql.shuffle.partitions") == "3"
    assert glue.getConf("openglue.test.unset", "fallback") == "fallback"
    # What AWS's own DynamicFrame.toDF does: a DataFrame made on the GlueContext as its
    # SQLContext.
    df = DataFrame(glue.sql("SELECT 7 AS v")._jdf, glue)
    assert df.collect()[0].v == 7
    other = glue.newSession()
    assert isinstance(other, SQLContext) and other.sparkSession is not glue.sparkSession


def test_on_the_embedded_engine_the_members_raise_naming_themselves():
    from pyspark.sql import SQLContext
    glue = glue_context("embedded")
    assert isinstance(glue, SQLContext)
    for use, name in [(lambda: glue.sql("SELECT 1"), "glueContext.sql()"),
                      (lambda: glue.table("t"), "glueContext.table()"),
                      (lambda: glue.read, "glueContext.read"),
                      (lambda: glue.createDataFrame([]), "glueContext.createDataFrame()"),
                      (lambda: glue.udf, "glueContext.udf")]:
        with pytest.raises(SparkApiUnavailable) as e:
            use()
        assert str(e.value).startswith(name + " is Spark's API (pyspark); this run uses the "
                                       "embedded engine")
    # Configuration is kept, as spark.conf's is; unknown attributes are AttributeErrors.
    glue.setConf("openglue.test.embedded", "5")
    assert glue.getConf("openglue.test.embedded") == "5"
    assert not hasattr(glue, "no_such_member")
    with pytest.raises(AttributeError):
        glue.no_such_member


def test_the_auto_choice_counts_sql_context_members_of_a_glue_context():
    source = ("from awsglue.context import GlueContext\n"
              "glue = GlueContext(sc)\n"
              "df = glue.read.json('s3://b/k')\n"
              "glue.table('t')\n"
              "glue.setConf('spark.sql.x', '1')\n"
              "other.read\n")
    assert find_spark_api_uses(source) == [(3, "glue.read (SQLContext)"),
                                           (4, "glue.table (SQLContext)")]


def test_every_sql_context_member_of_pyspark_is_known():
    """A pyspark upgrade that adds a member to SQLContext is noticed here."""
    pyspark_sql = pytest.importorskip("pyspark.sql")
    from openglue_runtime.engine_select import SQL_CONTEXT_MEMBERS
    public = {n for n in vars(pyspark_sql.SQLContext) if not n.startswith("_")} - {"getOrCreate"}
    assert public == set(SQL_CONTEXT_MEMBERS)
