"""openglue_runtime.catalog against a real server: tables made with boto3, resolved as the ETL runtime
resolves them (from_catalog reads and writes)."""
import pytest

from jobkit import unique
from openglue_runtime import catalog
from conftest import ACCESS_KEY, REGION, SECRET_KEY


@pytest.fixture()
def env(server, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_GLUE", server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return server


@pytest.fixture()
def db(glue, env):
    name = unique("etl")
    glue.create_database(DatabaseInput={"Name": name})
    yield name
    glue.delete_database(Name=name)


def csv_table(glue, db, name, location, partition_keys=(), serde=None, params=None):
    serde = serde or {"SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde",
                      "Parameters": {"separatorChar": "|", "quoteChar": "'",
                                     "escapeChar": "\\"}}
    glue.create_table(DatabaseName=db, TableInput={
        "Name": name,
        "PartitionKeys": [{"Name": n, "Type": t} for n, t in partition_keys],
        "Parameters": params if params is not None else {"classification": "csv",
                                                         "skip.header.line.count": "1"},
        "StorageDescriptor": {
            "Location": location,
            "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "name", "Type": "varchar(20)"},
                        {"Name": "price", "Type": "decimal(10,2)"},
                        {"Name": "tags", "Type": "array<bigint>"},
                        {"Name": "s", "Type": "struct<a:smallint,b:map<string,tinyint>>"}],
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": serde,
        },
    })


def add_partition(glue, db, table, values, location=None):
    sd = {"Location": location} if location else {}
    glue.create_partition(DatabaseName=db, TableName=table,
                          PartitionInput={"Values": values, "StorageDescriptor": sd})


def test_partitioned_csv_table_resolves_folders_format_and_types(glue, db):
    csv_table(glue, db, "sales", "s3://data/sales/", [("year", "int"), ("day", "string")])
    add_partition(glue, db, "sales", ["2024", "01"], "s3://data/sales/year=2024/day=01")
    add_partition(glue, db, "sales", ["2024", "02"])  # no location of its own
    add_partition(glue, db, "sales", ["2023", "12"], "s3://elsewhere/old/")

    source = catalog.resolve_source(db, "sales")
    assert source.format == "csv"
    assert source.format_options == {"separator": "|", "quoteChar": "'", "escaper": "\\",
                                     "withHeader": "true"}
    assert source.schema_columns == [("id", "long"), ("name", "string"),
                                     ("price", "decimal(10,2)"), ("tags", "array<long>"),
                                     ("s", "struct<a:short,b:map<string,byte>>")]
    assert source.partition_keys == [("year", "int"), ("day", "string")]
    assert source.paths == [
        ("s3://data/sales/year=2024/day=01", {"year": "2024", "day": "01"}),
        ("s3://data/sales/year=2024/day=02", {"year": "2024", "day": "02"}),
        ("s3://elsewhere/old/", {"year": "2023", "day": "12"}),
    ]

    pruned = catalog.resolve_source(db, "sales", push_down_predicate="year = 2024")
    assert [p[1] for p in pruned.paths] == [{"year": "2024", "day": "01"},
                                           {"year": "2024", "day": "02"}]
    both = catalog.resolve_source(db, "sales", push_down_predicate="year >= 2024",
                                  catalog_partition_predicate="day = '02'")
    assert [p[1] for p in both.paths] == [{"year": "2024", "day": "02"}]
    via_options = catalog.resolve_source(
        db, "sales", additional_options={"catalogPartitionPredicate": "year < 2024"})
    assert [p[1] for p in via_options.paths] == [{"year": "2023", "day": "12"}]
    none = catalog.resolve_source(db, "sales", push_down_predicate="year = 1999")
    assert none.paths == []


def test_push_down_predicate_is_spark_sql_over_the_partitions(glue, db):
    """AWS's knowledge-center examples of push_down_predicate ("(product_category == 'Video')",
    "(year == '2019' and month == '08' and day == '02')") and the rest of Spark SQL's operators
    that partition predicates use; the expected partitions are worked out by hand from Spark
    SQL's semantics (string partition columns compare as strings, `cast` and `to_date` as
    Spark's)."""
    csv_table(glue, db, "reviews", "s3://data/reviews/",
              [("product_category", "string"), ("year", "string"), ("month", "string"),
               ("day", "string")])
    for values in (["Video", "2019", "08", "02"], ["Video", "2019", "08", "03"],
                   ["Books", "2019", "08", "02"], ["Books", "2020", "01", "15"],
                   ["Toys", "2018", "12", "31"]):
        add_partition(glue, db, "reviews", values)

    def read(predicate, **kw):
        return [tuple(v.values()) for _, v in catalog.resolve_source(
            db, "reviews", push_down_predicate=predicate, **kw).paths]

    assert read("(product_category == 'Video')") == [("Video", "2019", "08", "02"),
                                                       ("Video", "2019", "08", "03")]
    assert read("(year == '2019' and month == '08' and day == '02')") == [
        ("Books", "2019", "08", "02"), ("Video", "2019", "08", "02")]
    assert read("product_category != 'Video' and year <> '2019'") == [
        ("Books", "2020", "01", "15"), ("Toys", "2018", "12", "31")]
    assert read("product_category in ('Toys', 'Books') and not year = '2019'") == [
        ("Books", "2020", "01", "15"), ("Toys", "2018", "12", "31")]
    assert read("product_category like 'V%' or day like '3_'") == [
        ("Toys", "2018", "12", "31"), ("Video", "2019", "08", "02"), ("Video", "2019", "08", "03")]
    assert read("cast(year as int) < 2019") == [("Toys", "2018", "12", "31")]
    assert read("to_date(concat(year, '-', month, '-', day)) >= to_date('2019-08-03')") == [
        ("Books", "2020", "01", "15"), ("Video", "2019", "08", "03")]
    assert read("year between '2019' and '2019' AND day = '03'") == [
        ("Video", "2019", "08", "03")]
    # Both together: the catalog's Expression first, then the Spark SQL predicate.
    assert read("day == '02'", catalog_partition_predicate="product_category = 'Books'") == [
        ("Books", "2019", "08", "02")]
    assert read("year is null") == []


def test_formats_from_serde_input_format_and_parameters(glue, db):
    csv_table(glue, db, "tsv", "file:///data/tsv",
              serde={"SerializationLibrary":
                     "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                     "Parameters": {"field.delim": "\t", "serialization.format": "\t"}},
              params={})
    tsv = catalog.resolve_source(db, "tsv")
    assert (tsv.format, tsv.format_options) == ("csv", {"separator": "\t", "withHeader": "false"})
    assert tsv.paths == [("file:///data/tsv", {})]

    csv_table(glue, db, "js", "s3://data/js/",
              serde={"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"}, params={})
    assert catalog.resolve_source(db, "js").format == "json"

    glue.create_table(DatabaseName=db, TableInput={
        "Name": "pq", "StorageDescriptor": {
            "Location": "s3://data/pq/", "Columns": [{"Name": "x", "Type": "int"}],
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}})
    pq = catalog.resolve_source(db, "pq")
    assert (pq.format, pq.format_options, pq.schema_columns) == ("parquet", {}, [("x", "int")])

    glue.create_table(DatabaseName=db, TableInput={
        "Name": "gz", "Parameters": {"classification": "json", "compressionType": "gzip"},
        "StorageDescriptor": {"Location": "s3://data/gz/"}})
    gz = catalog.resolve_source(db, "gz")
    assert (gz.format, gz.format_options) == ("json", {"compressionType": "gzip"})

    glue.create_table(DatabaseName=db, TableInput={
        "Name": "unknown", "StorageDescriptor": {"Location": "s3://data/u/"}})
    with pytest.raises(catalog.CatalogError, match="format is unknown"):
        catalog.resolve_source(db, "unknown")


def test_errors_name_the_table_and_the_predicate(glue, db):
    with pytest.raises(catalog.CatalogError, match=rf"table {db}\.missing: not found"):
        catalog.resolve_source(db, "missing")
    csv_table(glue, db, "p", "s3://data/p/", [("year", "int")])
    add_partition(glue, db, "p", ["2024"])
    # catalogPartitionPredicate is the catalog's Expression: the server refuses it.
    with pytest.raises(catalog.CatalogError, match=r"matching \[year = = 1\].*InvalidInput"):
        catalog.resolve_source(db, "p", catalog_partition_predicate="year = = 1")
    # push_down_predicate is Spark SQL, refused before any partition is listed.
    with pytest.raises(catalog.CatalogError,
                       match=rf"table {db}\.p: push_down_predicate: expected a value.*position 8"):
        catalog.resolve_source(db, "p", push_down_predicate="year = = 1")
    with pytest.raises(catalog.CatalogError, match="'month', which is not a partition column"):
        catalog.resolve_source(db, "p", push_down_predicate="month = '08'")
    csv_table(glue, db, "flat", "s3://data/flat/")
    with pytest.raises(catalog.CatalogError, match="not partitioned"):
        catalog.resolve_source(db, "flat", push_down_predicate="year = 1")
    glue.create_table(DatabaseName=db, TableInput={"Name": "noloc", "Parameters": {
        "classification": "csv"}, "StorageDescriptor": {}})
    with pytest.raises(catalog.CatalogError, match="no StorageDescriptor.Location"):
        catalog.resolve_sink(db, "noloc")


def test_sink_resolves_location_format_and_write_options(glue, db):
    csv_table(glue, db, "out", "s3://data/out/", [("dt", "date")])
    sink = catalog.resolve_sink(db, "out")
    assert (sink.path, sink.format) == ("s3://data/out/", "csv")
    assert sink.format_options == {"separator": "|", "quoteChar": "'", "escaper": "\\",
                                   "writeHeader": "true"}
    assert sink.partition_keys == [("dt", "date")]
    assert [c for c, _ in sink.columns] == ["id", "name", "price", "tags", "s"]


def partitions(glue, db, table):
    got = glue.get_partitions(DatabaseName=db, TableName=table)["Partitions"]
    return sorted((tuple(p["Values"]), p["StorageDescriptor"]["Location"]) for p in got)


def test_update_after_write_adds_new_partitions_and_columns(glue, db):
    csv_table(glue, db, "w", "s3://data/w", [("dt", "string")])
    add_partition(glue, db, "w", ["2024-01-01"], "s3://data/w/dt=2024-01-01/")
    written = ["s3://data/w/dt=2024-01-01/part-00000-a.csv",
               "s3://data/w/dt=2024-01-02/part-00000-a.csv",
               "s3://data/w/dt=2024-01-02/part-00001-a.csv",
               "s3://data/w/dt=a%3Ab/part-00000-a.csv",
               "s3://data/w/part-00000-stray.csv",
               "s3://other/w/dt=2024-09-09/part-00000-a.csv"]
    columns = [("id", "long"), ("name", "string"), ("extra", "long"), ("when", "timestamp"),
               ("dt", "string")]

    # Without enableUpdateCatalog nothing changes.
    assert catalog.update_after_write(db, "w", written, ["dt"], columns) == {
        "created_partitions": [], "added_columns": [], "table_updated": False,
        "table_created": False}
    assert len(partitions(glue, db, "w")) == 1

    # LOG keeps the schema but still adds the partitions.
    result = catalog.update_after_write(db, "w", written, ["dt"], columns, "LOG", True)
    assert sorted(result["created_partitions"]) == [["2024-01-02"], ["a:b"]]
    assert not result["table_updated"]
    cols = glue.get_table(DatabaseName=db, Name="w")["Table"]["StorageDescriptor"]["Columns"]
    assert [c["Name"] for c in cols] == ["id", "name", "price", "tags", "s"]
    assert partitions(glue, db, "w") == [
        (("2024-01-01",), "s3://data/w/dt=2024-01-01/"),
        (("2024-01-02",), "s3://data/w/dt=2024-01-02"),
        (("a:b",), "s3://data/w/dt=a%3Ab"),
    ]

    # UPDATE_IN_DATABASE adds the new columns (Hive types) and keeps the old ones' types.
    result = catalog.update_after_write(db, "w", written, ["dt"], columns,
                                        "UPDATE_IN_DATABASE", True)
    assert result == {"created_partitions": [], "added_columns": ["extra", "when"],
                      "table_updated": True, "table_created": False}
    table = glue.get_table(DatabaseName=db, Name="w")["Table"]
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [
        ("id", "bigint"), ("name", "varchar(20)"), ("price", "decimal(10,2)"),
        ("tags", "array<bigint>"), ("s", "struct<a:smallint,b:map<string,tinyint>>"),
        ("extra", "bigint"), ("when", "timestamp")]
    assert table["StorageDescriptor"]["SerdeInfo"]["Parameters"]["separatorChar"] == "|"
    # A partition created now carries the table's (new) descriptor with its own location.
    catalog.update_after_write(db, "w", ["s3://data/w/dt=2024-01-03/x.csv"], ["dt"], columns,
                               "UPDATE_IN_DATABASE", True)
    new = glue.get_partition(DatabaseName=db, TableName="w", PartitionValues=["2024-01-03"])
    sd = new["Partition"]["StorageDescriptor"]
    assert sd["Location"] == "s3://data/w/dt=2024-01-03"
    assert [c["Name"] for c in sd["Columns"]][-2:] == ["extra", "when"]
    with pytest.raises(catalog.CatalogError, match="updateBehavior"):
        catalog.update_after_write(db, "w", written, ["dt"], columns, "MERGE", True)


def test_update_after_write_makes_an_unpartitioned_table_partitioned(glue, db):
    csv_table(glue, db, "u", "file:///data/u/")
    result = catalog.update_after_write(
        db, "u", ["/data/u/region=eu/day=1/part-0.csv", "file:///data/u/region=us/day=2/p.csv"],
        [("region", "string"), ("day", "int")], [("id", "long")], "UPDATE_IN_DATABASE", True)
    assert sorted(result["created_partitions"]) == [["eu", "1"], ["us", "2"]]
    table = glue.get_table(DatabaseName=db, Name="u")["Table"]
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == [("region", "string"),
                                                                        ("day", "int")]


def test_type_names_convert_both_ways():
    assert catalog.hive_to_glue("BIGINT") == "long"
    assert catalog.hive_to_glue("char(3)") == "string"
    assert catalog.hive_to_glue("decimal(38, 6)") == "decimal(38,6)"
    assert catalog.hive_to_glue("map<string,array<struct<x:bigint,y:decimal(5,1)>>>") == \
        "map<string,array<struct<x:long,y:decimal(5,1)>>>"
    assert catalog.glue_to_hive("long") == "bigint"
    assert catalog.glue_to_hive("decimal") == "decimal(10,2)"
    assert catalog.glue_to_hive("array<struct<a:byte,b:short>>") == \
        "array<struct<a:tinyint,b:smallint>>"
