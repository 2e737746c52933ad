"""The Data Catalog as a source and a sink, as AWS's Hive metastore migration utility uses it
(aws-glue-samples, utilities/Hive_metastore_migration: export_from_datacatalog.py reads a
database with connection_type "com.amazonaws.services.glue.connections.DataCatalogConnection",
import_into_datacatalog.py writes entities back with connection_type "catalog").

CI cannot fetch that repository, so the scripts here are our own and make the same calls: the
export writes a database's entities as JSON files, the import reads them and writes them into
another database (a name prefix), and the copy is compared with the original through boto3.
One script uses only the Glue API and runs on the embedded engine; one does what AWS's scripts
do with Spark (toDF, `where('type = "table"')`, explode, `read.json` with a schema, fromDF of
`array(item)` with the struct AWS's `--database-prefix` import builds, which repeats a field)
and runs on the Spark engine, where it also checks that GlueContext is a pyspark SQLContext.
Runs: 5 on the embedded engine (a few seconds), 1 on Spark (~30 s).
"""
import json
import os
import uuid

import pytest

from jobkit import ERROR, kit, log_messages, unique  # noqa: F401
from test_s3_api import s3_server

CATALOG = "com.amazonaws.services.glue.connections.DataCatalogConnection"
SPARK_TIMEOUT = 300
PARTITIONS = 120  # more than one record's (and one BatchCreatePartition's) 100


@pytest.fixture(scope="module")
def server():
    yield from s3_server("openglue-catconn-")


# ------------------------------------------------------------------------------- the catalog

def make_database(glue, db):
    """A database with what the migration carries: parameters, a partitioned table with every
    StorageDescriptor field (bucketing, sorting, skew, SerDe), many partitions, a view and a
    plain table."""
    glue.create_database(DatabaseInput={
        "Name": db, "Description": "sales data", "LocationUri": "s3://lake/sales/",
        "Parameters": {"owner": "ann", "tier": "gold"}})
    sd = {"Columns": [{"Name": "id", "Type": "bigint", "Comment": "order id"},
                      {"Name": "amount", "Type": "decimal(10,2)"},
                      {"Name": "tags", "Type": "array<string>"}],
          "Location": "s3://lake/sales/orders/",
          "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
          "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
          "Compressed": False, "NumberOfBuckets": 4, "BucketColumns": ["id"],
          "SortColumns": [{"Column": "id", "SortOrder": 1}], "StoredAsSubDirectories": False,
          "SerdeInfo": {"Name": "csv",
                        "SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                        "Parameters": {"field.delim": ",", "serialization.format": ","}},
          "Parameters": {"classification": "csv"},
          "SkewedInfo": {"SkewedColumnNames": ["id"], "SkewedColumnValues": ["1"],
                         "SkewedColumnValueLocationMaps": {"1": "s3://lake/sales/orders/skew1/"}}}
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "orders", "Owner": "hadoop", "Retention": 7, "TableType": "EXTERNAL_TABLE",
        "LastAccessTime": 1712345678, "Description": "all orders",
        "Parameters": {"EXTERNAL": "TRUE", "skip.header.line.count": "1"},
        "PartitionKeys": [{"Name": "day", "Type": "string"},
                          {"Name": "hour", "Type": "int", "Comment": "0-23"}],
        "StorageDescriptor": sd})
    inputs = []
    for i in range(PARTITIONS):
        day, hour = "2024-03-{:02d}".format(1 + i // 24), str(i % 24)
        inputs.append({"Values": [day, hour], "Parameters": {"rows": str(i)},
                       "StorageDescriptor": dict(sd, Location="s3://lake/sales/orders/day={}/hour={}/"
                                                 .format(day, hour))})
    inputs[0]["LastAccessTime"] = 1712345000
    for i in range(0, len(inputs), 100):
        assert not glue.batch_create_partition(DatabaseName=db, TableName="orders",
                                               PartitionInputList=inputs[i:i + 100])["Errors"]
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "big_orders", "TableType": "VIRTUAL_VIEW",
        "ViewOriginalText": "SELECT * FROM orders WHERE amount > 100",
        "ViewExpandedText": "SELECT * FROM `sales`.`orders` WHERE `amount` > 100",
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]}})
    glue.create_table(DatabaseName=db, TableInput={"Name": "plain", "StorageDescriptor": {
        "Columns": [{"Name": "a", "Type": "string"}], "Location": "s3://lake/plain/"}})


# What the catalog sets itself, or that names the database.
VOLATILE = {"CreateTime", "UpdateTime", "CreationTime", "CatalogId", "VersionId", "DatabaseName",
            "IsRegisteredWithLakeFormation", "CreateTableDefaultPermissions"}


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def snapshot(glue, db):
    """The database, its tables and their partitions as the Glue API returns them, without
    what the catalog sets itself."""
    database = _clean(glue.get_database(Name=db)["Database"])
    database.pop("Name")
    tables = {t["Name"]: _clean(t) for t in glue.get_tables(DatabaseName=db)["TableList"]}
    partitions = {}
    for name in tables:
        pages = glue.get_paginator("get_partitions").paginate(DatabaseName=db, TableName=name)
        partitions[name] = sorted((_clean(p) for page in pages for p in page["Partitions"]),
                                  key=lambda p: p["Values"])
    return {"database": database, "tables": tables, "partitions": partitions}


def prefixed(glue, db, prefix):
    return snapshot(glue, prefix + db)


# ---------------------------------------------------------------------- Glue API only (embedded)

GLUE_ONLY = """
    import json, sys
    from awsglue.context import GlueContext
    from awsglue.transforms import Filter, Map
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from pyspark.sql import SQLContext

    CATALOG = "com.amazonaws.services.glue.connections.DataCatalogConnection"
    args = getResolvedOptions(sys.argv, ["phase", "database", "path", "prefix", "report"])
    glue = GlueContext(SparkContext.getOrCreate())
    options = {"catalog.name": "datacatalog", "catalog.region": "us-east-1"}
    kinds = ("database", "table", "partition")
    report = {}
    if args["phase"] == "export":
        # getSource(...).getFrame() is create_dynamic_frame.from_options (the Spark script
        # below calls that).
        frame = glue.getSource(CATALOG, **dict(options, **{"catalog.database": args["database"]})
                               ).getFrame()
        report["count"] = frame.count()
        report["schema"] = frame.schema().simpleString()
        for kind in kinds:
            part = Filter.apply(frame=frame, f=lambda r, k=kind: r["type"] == k)
            report[kind] = part.count()
            glue.write_dynamic_frame.from_options(
                frame=part, connection_type="s3",
                connection_options={"path": args["path"] + kind + "s/"}, format="json")
        try:
            glue.create_dynamic_frame.from_options(connection_type="dynamodb",
                                                   connection_options={})
        except ValueError as e:
            report["unsupported"] = str(e)
        report["is_sql_context"] = isinstance(glue, SQLContext)
        try:
            glue.sql("SELECT 1")
        except RuntimeError as e:
            report["sql"] = type(e).__name__
    else:
        prefix = args["prefix"]

        def rename(r):
            if r["type"] != "database":
                r["database"] = prefix + r["database"]
            for item in r["items"]:
                if r["type"] == "database":
                    item["name"] = prefix + item["name"]
                if r["type"] == "partition":
                    item["namespaceName"] = prefix + item["namespaceName"]
            return r

        for kind in kinds:
            frame = Map.apply(frame=glue.create_dynamic_frame.from_options(
                "s3", {"paths": [args["path"] + kind + "s/"]}, "json"), f=rename)
            if kind == "database":
                glue.getSink(connection_type="catalog", **options).writeFrame(frame)
            else:
                glue.write_dynamic_frame.from_options(frame=frame, connection_type="catalog",
                                                      connection_options=options)
    with open(args["report"], "w") as f:
        json.dump(report, f)
"""


def run_glue_only(kit, tmp_path, mode, database, path, prefix="", engine="embedded"):
    report = os.path.join(str(tmp_path), "{}-{}.json".format(mode, uuid.uuid4().hex[:6]))
    run = kit.run(kit.job(GLUE_ONLY), timeout=120, Arguments={
        "--phase": mode, "--database": database, "--path": path, "--prefix": prefix or "-",
        "--report": report, "--engine": engine})
    return run, report


def test_a_database_round_trips_through_json_files_on_the_embedded_engine(kit, glue, server,
                                                                          tmp_path):
    db, prefix = unique("sales"), "copy_"
    make_database(glue, db)
    path = "s3://exports/{}/".format(uuid.uuid4().hex[:8])
    run, report = run_glue_only(kit, tmp_path, "export", db, path)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    with open(report) as f:
        exported = json.load(f)
    # One database record, one record of 3 tables, the partitions 100 to a record.
    assert exported["count"] == 1 + 1 + 2
    assert exported["schema"].startswith("struct<type:string,database:string,table:string,"
                                         "items:array<struct<name:string,description:string,")
    assert "storageDescriptor:struct<inputFormat:string,compressed:boolean," in \
        exported["schema"]
    assert exported["unsupported"] == (
        "connection_type 'dynamodb' is not supported as a source by OpenGlue's embedded engine "
        "(supported: s3, file, postgresql, mysql, mariadb, " + CATALOG + ")")
    # GlueContext is an instance of the pyspark stand-in's SQLContext; using it raises.
    assert exported["is_sql_context"] is True and exported["sql"] == "SparkApiUnavailable"

    lines = []
    folder = os.path.join(server.data_dir, "s3", "exports", path.split("/")[3], "tables")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as f:
            lines += [json.loads(line) for line in f if line.strip()]
    (tables,) = lines
    assert tables["type"] == "table" and tables["database"] == db
    orders = next(t for t in tables["items"] if t["name"] == "orders")
    assert orders["storageDescriptor"]["serdeInfo"]["serializationLibrary"] == \
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    assert orders["lastAccessTime"] == "1712345678000"
    assert orders["partitionKeys"][1] == {"name": "hour", "type": "int", "comment": "0-23"}

    run, _ = run_glue_only(kit, tmp_path, "import", db, path, prefix)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    before = snapshot(glue, db)
    assert len(before["partitions"]["orders"]) == PARTITIONS
    assert prefixed(glue, db, prefix) == before

    # A second import overwrites what the target has changed and re-creates what it lost.
    target = prefix + db
    glue.update_database(Name=target, DatabaseInput={"Name": target, "Description": "changed"})
    table = glue.get_table(DatabaseName=target, Name="orders")["Table"]
    glue.update_table(DatabaseName=target, TableInput={
        "Name": "orders", "Owner": "someone-else", "StorageDescriptor": table["StorageDescriptor"],
        "PartitionKeys": table["PartitionKeys"]})
    glue.update_partition(DatabaseName=target, TableName="orders",
                          PartitionValueList=["2024-03-01", "1"],
                          PartitionInput={"Values": ["2024-03-01", "1"], "Parameters": {"x": "y"}})
    glue.delete_partition(DatabaseName=target, TableName="orders",
                          PartitionValues=["2024-03-01", "2"])
    glue.delete_table(DatabaseName=target, Name="plain")
    assert prefixed(glue, db, prefix) != before
    run, _ = run_glue_only(kit, tmp_path, "import", db, path, prefix)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert prefixed(glue, db, prefix) == before


def test_bad_sources_and_sinks_fail_the_run_with_the_reason(kit, glue, tmp_path):
    run, _ = run_glue_only(kit, tmp_path, "export", "no_such_db_" + uuid.uuid4().hex[:6],
                           "s3://exports/none/")
    assert run["JobRunState"] == "FAILED"
    assert "CatalogError: database no_such_db_" in run["ErrorMessage"]
    assert "not found in the Data Catalog" in run["ErrorMessage"]

    bad = kit.job("""
        from awsglue.context import GlueContext
        from awsglue.dynamicframe import DynamicFrame
        glue = GlueContext(None)
        frame = DynamicFrame.from_records(
            [{"type": "table", "database": "missing_db_x", "items": [{"name": "t"}]}], glue)
        glue.write_dynamic_frame.from_options(frame=frame, connection_type="catalog",
                                              connection_options={"catalog.name": "datacatalog"})
    """)
    run = kit.run(bad, timeout=60)
    assert run["JobRunState"] == "FAILED"
    assert "CatalogError: creating table missing_db_x.t: EntityNotFoundException" in \
        run["ErrorMessage"]

    no_db = kit.job("""
        from awsglue.context import GlueContext
        GlueContext(None).create_dynamic_frame.from_options(
            connection_type="com.amazonaws.services.glue.connections.DataCatalogConnection",
            connection_options={"catalog.name": "datacatalog"})
    """)
    run = kit.run(no_db, timeout=60)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == (
        "ValueError: connection_type 'com.amazonaws.services.glue.connections."
        "DataCatalogConnection' needs connection_options[\"catalog.database\"] (the database "
        "to read)")


# ----------------------------------------------------------------- what AWS's scripts do (Spark)

SPARK_SCRIPT = """
    import json, sys
    from awsglue.context import GlueContext
    from awsglue.dynamicframe import DynamicFrame
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext
    from pyspark.sql import SQLContext
    from pyspark.sql.functions import array, col, collect_list, concat, explode, lit, struct

    CATALOG = "com.amazonaws.services.glue.connections.DataCatalogConnection"
    args = getResolvedOptions(sys.argv, ["database", "path", "prefix", "report"])
    sc = SparkContext.getOrCreate()
    sql_context = SQLContext(sc)  # made before the GlueContext, as AWS's scripts do
    glue = GlueContext(sc)
    options = {"catalog.name": "datacatalog", "catalog.region": "us-east-1"}
    report = {}

    # Export: the catalog's frame as a DataFrame, split by type, through JSON text and a
    # schema, one item per row, into files.
    frame = glue.create_dynamic_frame.from_options(
        connection_type=CATALOG,
        connection_options=dict(options, **{"catalog.database": args["database"]}))
    df = frame.toDF()
    schemas = {}
    for kind in ("database", "table", "partition"):
        rows = df.where('type = "{}"'.format(kind))
        rows = sql_context.read.json(rows.toJSON(), schema=rows.schema)
        items = rows.select("*", explode("items").alias("item")).drop("items")
        report[kind] = items.count()
        schemas[kind] = items.schema
        items.write.format("json").mode("overwrite").save(args["path"] + kind + "s")
    report["table_names"] = sorted(r.name for r in df.where('type = "table"').select(
        explode("items").alias("t")).select("t.name").collect())

    # Import: the files read with their schema, renamed, back into frames of `items`.
    prefix = args["prefix"]
    dbs = sql_context.read.json(args["path"] + "databases", schema=schemas["database"])
    dbs = dbs.withColumn("item", struct(concat(lit(prefix), col("item.name")).alias("name"),
                                        col("item.description"), col("item.locationUri"),
                                        col("item.parameters")))
    tables = sql_context.read.json(args["path"] + "tables", schema=schemas["table"])
    tables = tables.withColumn("database", concat(lit(prefix), col("database")))
    parts = sql_context.read.json(args["path"] + "partitions", schema=schemas["partition"])
    # AWS's `--database-prefix` import rebuilds a partition item with `creationTime` twice.
    parts = parts.withColumn("database", concat(lit(prefix), col("database"))).withColumn(
        "item", struct(col("item.creationTime"), col("item.creationTime"),
                       col("item.lastAccessTime"),
                       concat(lit(prefix), col("item.namespaceName")).alias("namespaceName"),
                       col("item.parameters"), col("item.storageDescriptor"),
                       col("item.values")))
    frames = [
        DynamicFrame.fromDF(dbs.select("type", array("item").alias("items")), glue, "dbs"),
        DynamicFrame.fromDF(tables.select("type", "database", array("item").alias("items")),
                            glue, "tables"),
        DynamicFrame.fromDF(parts.groupBy("database", "table", "type").agg(
            collect_list("item").alias("items")), glue, "partitions")]
    for f in frames:
        glue.write_dynamic_frame.from_options(frame=f, connection_type="catalog",
                                              connection_options=options)

    # GlueContext is a SQLContext on Spark, with its members.
    glue.range(3).createOrReplaceTempView("three")
    report["is_sql_context"] = isinstance(glue, SQLContext)
    report["instantiated_is_first"] = SQLContext._instantiatedContext is sql_context
    report["sql"] = glue.sql("SELECT count(*) AS n FROM three").collect()[0].n
    report["table"] = glue.table("three").count()
    report["read"] = glue.read.json(args["path"] + "tables").count()
    report["session"] = glue.sparkSession is glue.spark_session
    try:
        glue.write_dynamic_frame.from_options(frame=frames[0], connection_type="dynamodb",
                                              connection_options={})
    except ValueError as e:
        report["unsupported"] = str(e)
    with open(args["report"], "w") as f:
        json.dump(report, f)
"""


def test_what_awss_migration_scripts_do_runs_on_the_spark_engine(kit, glue, server, tmp_path):
    db, prefix = unique("sales"), "spark_copy_"
    make_database(glue, db)
    bucket = "exp-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    report_path = os.path.join(str(tmp_path), "spark.json")
    run = kit.run(kit.job(SPARK_SCRIPT), timeout=SPARK_TIMEOUT, Arguments={
        "--database": db, "--path": "s3://{}/export/".format(bucket), "--prefix": prefix,
        "--report": report_path, "--engine": "spark"})
    if run["JobRunState"] != "SUCCEEDED":
        print("\n".join(log_messages(server.client("logs"), ERROR, run["Id"])[-40:]))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    with open(report_path) as f:
        report = json.load(f)
    assert (report["database"], report["table"], report["partition"]) == (1, 3, PARTITIONS)
    assert report["table_names"] == ["big_orders", "orders", "plain"]
    assert prefixed(glue, db, prefix) == snapshot(glue, db)
    assert report["is_sql_context"] is True and report["instantiated_is_first"] is True
    assert (report["sql"], report["table"], report["read"], report["session"]) == (3, 3, 3, True)
    assert report["unsupported"] == (
        "connection_type 'dynamodb' is not supported as a sink by OpenGlue's Spark engine "
        "(supported: s3, file, postgresql, mysql, mariadb, catalog)")
