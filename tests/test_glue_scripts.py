"""Public-style Glue scripts run unchanged through StartJobRun (issue 10, "public scripts").

Each script here is our own, written in the style of the public AWS Glue scripts that were run
against OpenGlue (aws-samples/aws-glue-samples, the developer guide's examples, Glue Studio's
generated jobs, blog scripts; docs/engines.md, "Public scripts checked") to cover a gap those
runs found: the FlatMap and MapToCollection transforms, `from awsglue import DynamicFrame`,
a Studio sink that creates its catalog table (getSink + setCatalogInfo + enableUpdateCatalog),
`--engine auto` seeing Spark code kept in an `--extra-py-files` module (custom transforms),
`glueContext.create_dynamic_frame.from_rdd`. Glue-only scripts run on the embedded engine
(cheap); the Spark checks share one job run (one JVM)."""
import gzip
import json
import os
import uuid

import pyarrow.dataset as ds
import pytest

from jobkit import ERROR, kit, log_messages, write_script  # noqa: F401
from test_s3_api import s3_server
from test_spark_engine import bucket as new_bucket, put

SPARK_TIMEOUT = 240


@pytest.fixture(scope="module")
def server():
    yield from s3_server("openglue-scripts-")


def rows_of(server, bucket_name, prefix, fmt="json"):
    """The rows a job wrote under s3://bucket/prefix: JSON lines as written (no type guessing
    by a reader), Parquet through pyarrow (with Hive partition folders)."""
    folder = os.path.join(server.data_dir, "s3", bucket_name, prefix)
    if fmt != "json":
        return ds.dataset(folder, format=fmt, partitioning="hive").to_table().to_pylist()
    rows = []
    for base, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.startswith(".") and name.endswith(".json"):
                with open(os.path.join(base, name)) as f:
                    rows += [json.loads(line) for line in f if line.strip()]
    return rows


def errors_of(server, run):
    return log_messages(server.client("logs"), ERROR, run["Id"])


def assert_succeeded(server, run):
    if run["JobRunState"] != "SUCCEEDED":
        print("\n".join(errors_of(server, run)))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")


# Members of a legislature, the shape of the us-legislators sample data (a few fields).
PEOPLE = [
    {"id": "p1", "name": "Ann Lee", "gender": "female", "birth_date": "1950-01-02",
     "contact_details": [{"type": "fax", "value": "202-1"}, {"type": "phone", "value": "202-2"}]},
    {"id": "p2", "name": "Bo Ray", "gender": "male", "birth_date": "1961-05-06",
     "contact_details": [{"type": "twitter", "value": "bo"}]},
    {"id": "p3", "name": "Cy Dee", "gender": "female", "birth_date": "1975-09-10", "seats": 2},
]


def json_lines(records):
    return "\n".join(json.dumps(r) for r in records) + "\n"


# SplitFields makes a collection; FlatMap runs a transform class with its keyword arguments on
# every frame of it; MapToCollection runs a function on every frame; SelectFromCollection picks.
COLLECTIONS_SCRIPT = """
    import sys
    from awsglue.transforms import *
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from awsglue.context import GlueContext
    from awsglue import DynamicFrame
    from awsglue.dynamicframe import DynamicFrameCollection

    args = getResolvedOptions(sys.argv, ["src", "out"])
    glueContext = GlueContext(SparkContext.getOrCreate())
    # Glue Studio spells the JSON option "multiline"; the codec of a text sink may be given in
    # connection_options.
    people = glueContext.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [args["src"]]}, format="json",
        format_options={"multiline": True})
    glueContext.write_dynamic_frame.from_options(
        frame=people, connection_type="s3",
        connection_options={"path": args["out"] + "gz", "compression": "gzip"}, format="json")
    split = SplitFields.apply(frame=people, paths=["id", "name", "seats"], name1="who",
                              name2="rest", transformation_ctx="split")
    typed = FlatMap.apply(dfc=split, BatchTransform=ResolveChoice, choice="make_cols",
                          transformation_ctx="typed")
    named = FlatMap.apply(dfc=typed, BatchTransform=RenameField, old_name="id",
                          new_name="person")
    upper = MapToCollection.apply(
        dfc=named, callable=lambda frame, ctx: Map.apply(
            frame=frame, f=lambda r: dict(r, tag=ctx.upper()), transformation_ctx=ctx),
        transformation_ctx="up")
    # FlatMap over a transform that returns a collection: the frames come back as <key>_<sub>.
    halves = FlatMap.apply(dfc=DynamicFrameCollection({"all": people}, glueContext),
                           BatchTransform=SplitRows, comparison_dict={"birth_date": {"<": "1960"}},
                           name1="old", name2="young")
    assert isinstance(people, DynamicFrame)
    for key in sorted(upper.keys()):
        glueContext.write_dynamic_frame.from_options(
            frame=SelectFromCollection.apply(dfc=upper, key=key), connection_type="s3",
            connection_options={"path": args["out"] + "up_" + key}, format="json")
    summary = [{"kind": kind, "keys": sorted(c.keys()),
                "counts": [c[k].count() for k in sorted(c.keys())]}
               for kind, c in [("typed", typed), ("halves", halves)]]
    glueContext.write_dynamic_frame.from_options(
        frame=DynamicFrame.from_records(summary, glueContext), connection_type="s3",
        connection_options={"path": args["out"] + "summary"}, format="json")
"""


def test_flatmap_and_maptocollection_run_transforms_over_a_collection(kit, server):
    data = new_bucket(server, "people")
    put(server, data, "in/people.json", json.dumps(PEOPLE[:2], indent=2)[1:-1].replace(
        "},\n  {", "}\n  {") + "\n" + json.dumps(PEOPLE[2], indent=2) + "\n")
    run = kit.run(kit.job(COLLECTIONS_SCRIPT), timeout=60, Arguments={
        "--src": f"s3://{data}/in/", "--out": f"s3://{data}/out/"})
    assert_succeeded(server, run)
    assert errors_of(server, run)[0] == ("[openglue] engine: embedded (--engine not set, auto: "
                                         "the script uses only the Glue API)")
    who = sorted(rows_of(server, data, "out/up_who"), key=lambda r: r["person"])
    # (the JSON writer leaves null fields out, as Glue's does)
    assert who == [{"person": "p1", "name": "Ann Lee", "tag": "UP:WHO"},
                   {"person": "p2", "name": "Bo Ray", "tag": "UP:WHO"},
                   {"person": "p3", "name": "Cy Dee", "seats": 2, "tag": "UP:WHO"}]
    rest = sorted(rows_of(server, data, "out/up_rest"), key=lambda r: r["birth_date"])
    assert [(r["gender"], r["birth_date"], r["tag"]) for r in rest] == [
        ("female", "1950-01-02", "UP:REST"), ("male", "1961-05-06", "UP:REST"),
        ("female", "1975-09-10", "UP:REST")]
    gz_folder = os.path.join(server.data_dir, "s3", data, "out", "gz")
    (gz_name,) = os.listdir(gz_folder)
    assert gz_name.endswith(".gz"), gz_name
    with gzip.open(os.path.join(gz_folder, gz_name), "rt") as f:
        assert sorted(json.loads(line)["id"] for line in f) == ["p1", "p2", "p3"]
    summary = {r["kind"]: r for r in rows_of(server, data, "out/summary")}
    assert summary["typed"]["keys"] == ["rest", "who"]
    assert summary["typed"]["counts"] == [3, 3]
    assert summary["halves"]["keys"] == ["all_old", "all_young"]
    assert summary["halves"]["counts"] == [1, 2]


# Glue Studio's S3 target with "Create a table in the Data Catalog and on subsequent runs,
# update the schema and add new partitions".
STUDIO_SINK_SCRIPT = """
    import sys
    from awsglue.transforms import *
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from awsglue.context import GlueContext
    from awsglue.job import Job

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "out", "db", "table", "fmt"])
    sc = SparkContext()
    glueContext = GlueContext(sc)
    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    S3bucket_node1 = glueContext.create_dynamic_frame.from_options(
        format_options={"multiline": False}, connection_type="s3", format="json",
        connection_options={"paths": [args["src"]], "recurse": True},
        transformation_ctx="S3bucket_node1")
    ChangeSchema_node2 = ApplyMapping.apply(frame=S3bucket_node1, mappings=[
        ("id", "string", "id", "string"), ("name", "string", "name", "string"),
        ("gender", "string", "gender", "string"), ("birth_date", "string", "born", "date")],
        transformation_ctx="ChangeSchema_node2")
    AmazonS3_node3 = glueContext.getSink(
        path=args["out"], connection_type="s3", updateBehavior="UPDATE_IN_DATABASE",
        partitionKeys=["gender"], enableUpdateCatalog=True, transformation_ctx="AmazonS3_node3")
    AmazonS3_node3.setCatalogInfo(catalogDatabase=args["db"], catalogTableName=args["table"])
    if args["fmt"] == "glueparquet":
        AmazonS3_node3.setFormat("glueparquet", compression="snappy")
    else:
        AmazonS3_node3.setFormat(args["fmt"])
    AmazonS3_node3.writeFrame(ChangeSchema_node2)
    job.commit()
"""

READ_BACK_SCRIPT = """
    import sys
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from awsglue.context import GlueContext

    args = getResolvedOptions(sys.argv, ["db", "table", "out"])
    glueContext = GlueContext(SparkContext.getOrCreate())
    frame = glueContext.create_dynamic_frame.from_catalog(
        database=args["db"], table_name=args["table"], push_down_predicate="gender = 'female'")
    glueContext.write_dynamic_frame.from_options(
        frame=frame, connection_type="s3", connection_options={"path": args["out"]},
        format="json")
"""


@pytest.mark.parametrize("fmt", ["glueparquet", "csv"])
def test_a_studio_sink_with_update_catalog_creates_its_table(kit, server, fmt):
    glue = server.client("glue")
    data = new_bucket(server, "studio")
    db = "studio_" + uuid.uuid4().hex[:8]
    glue.create_database(DatabaseInput={"Name": db})
    put(server, data, "in/people.json", json_lines(PEOPLE))
    run = kit.run(kit.job(STUDIO_SINK_SCRIPT), timeout=60, Arguments={
        "--src": f"s3://{data}/in/", "--out": f"s3://{data}/table", "--db": db,
        "--table": "people", "--fmt": fmt})
    assert_succeeded(server, run)
    table = glue.get_table(DatabaseName=db, Name="people")["Table"]
    sd = table["StorageDescriptor"]
    declared = "parquet" if fmt == "glueparquet" else "csv"
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["Parameters"]["classification"] == declared
    assert sd["Location"] == f"s3://{data}/table/"
    assert [(c["Name"], c["Type"]) for c in sd["Columns"]] == [
        ("id", "string"), ("name", "string"), ("born", "date")]
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == [("gender", "string")]
    parts = glue.get_partitions(DatabaseName=db, TableName="people")["Partitions"]
    assert sorted(p["Values"][0] for p in parts) == ["female", "male"]
    assert all(p["StorageDescriptor"]["Location"].startswith(f"s3://{data}/table/gender=")
               for p in parts)

    # The table reads back through from_catalog with partition pruning.
    run = kit.run(kit.job(READ_BACK_SCRIPT), timeout=60, Arguments={
        "--db": db, "--table": "people", "--out": f"s3://{data}/back/"})
    assert_succeeded(server, run)
    back = sorted(rows_of(server, data, "back"), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["born"], r["gender"]) for r in back] == [
        ("p1", "Ann Lee", "1950-01-02", "female"), ("p3", "Cy Dee", "1975-09-10", "female")]


# A custom transform kept in an --extra-py-files module, as public samples ship them: it patches
# DynamicFrame with a method that works through toDF()/fromDF(), and holds the Studio
# `sparkSqlQuery` helper and an RDD source. The job script itself uses only the Glue API, so
# `auto` must find the Spark code in the module.
HELPERS_MODULE = """
    from awsglue import DynamicFrame
    from pyspark.sql.functions import col, when, upper


    def fill_empty(self, column, value):
        df = self.toDF()
        filled = df.withColumn(column, when(col(column) == "", value).otherwise(col(column)))
        return DynamicFrame.fromDF(filled, self.glue_ctx, self.name)


    DynamicFrame.fill_empty = fill_empty


    def sparkSqlQuery(glueContext, query, mapping, transformation_ctx) -> DynamicFrame:
        for alias, frame in mapping.items():
            frame.toDF().createOrReplaceTempView(alias)
        result = glueContext.spark_session.sql(query)
        return DynamicFrame.fromDF(result, glueContext, transformation_ctx)


    def seats_frame(glueContext):
        rdd = glueContext.spark_session.sparkContext.parallelize(
            [{"gender": "female", "seats": 3}, {"gender": "male", "seats": 1}])
        return glueContext.create_dynamic_frame.from_rdd(rdd, "seats")
"""

MODULE_SCRIPT = """
    import sys
    from awsglue.transforms import *
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from awsglue.context import GlueContext
    from awsglue.job import Job
    import og_helpers

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "out"])
    glueContext = GlueContext(SparkContext.getOrCreate())
    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    people = glueContext.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
    people = people.select_fields(["id", "name", "gender"]).fill_empty("name", "(none)")
    seats = og_helpers.seats_frame(glueContext)
    joined = og_helpers.sparkSqlQuery(
        glueContext,
        "SELECT p.id, upper(p.name) AS name, p.gender, s.seats FROM people p "
        "JOIN seats s ON p.gender = s.gender",
        {"people": people, "seats": seats}, "joined")
    glueContext.write_dynamic_frame.from_options(
        frame=joined, connection_type="s3",
        connection_options={"path": args["out"], "partitionKeys": ["gender"]}, format="parquet")
    job.commit()
"""


def test_auto_finds_spark_code_in_an_extra_py_files_module(kit, server):
    data = new_bucket(server, "module")
    people = PEOPLE + [{"id": "p4", "name": "", "gender": "male"}]
    put(server, data, "in/people.json", json_lines(people))
    module = write_script(server, HELPERS_MODULE, bucket=data, name="og_helpers")
    job = kit.job(MODULE_SCRIPT, DefaultArguments={"--extra-py-files": module})
    run = kit.run(job, timeout=SPARK_TIMEOUT, Arguments={
        "--src": f"s3://{data}/in/", "--out": f"s3://{data}/out/"})
    assert_succeeded(server, run)
    first = errors_of(server, run)[0]
    assert first.startswith("[openglue] engine: spark (--engine not set, auto: the script uses "
                            "Spark's API (og_helpers.py line 6: toDF(), og_helpers.py line 7: "
                            "col (pyspark.sql.functions)"), first
    rows = sorted(rows_of(server, data, "out", "parquet"), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["gender"], r["seats"]) for r in rows] == [
        ("p1", "ANN LEE", "female", 3), ("p2", "BO RAY", "male", 1),
        ("p3", "CY DEE", "female", 3), ("p4", "(NONE)", "male", 1)]

