"""Catalog reads of a crawled CSV table: the Medicare walk-throughs of aws-samples/aws-glue-samples
(examples/data_cleaning_and_lambda.md and examples/resolve_choice.md, AWS's own documents of the
developer guide's Medicare example), each with the output those pages show.

The input is the pages' `medicare` table as the crawler made it (lower-case names, `provider id`,
`provider zip code` and `total discharges` typed bigint, the header skipped by
`skip.header.line.count`), over a CSV file with the sample file's header, three of its rows (the
values the developer guide's unbox example shows) and the two "erroneous records at the tail end
of the file" whose rows the data-cleaning page shows after `cast:long`. Their `provider id`
text is not on the pages (only that it is a string, here "ABC10005" as the issue quotes and
"ABC10006"): every output asserted is the pages' own.
"""
import csv
import io
import os

import pytest

import datasets as ds
from conformance_kit import engines, expect, glue_context, out_lines, page_nulls, spark_table

TODF = "DynamicFrame.toDF() needs the Spark engine (SparkApiUnavailable)"

SAMPLES = "https://github.com/aws-samples/aws-glue-samples/blob/master/examples/"
CLEANING = SAMPLES + "data_cleaning_and_lambda.md"
RESOLVE = SAMPLES + "resolve_choice.md"

# The two erroneous records (the data-cleaning page's `provider id is NULL` rows, untruncated
# where the page truncates: "948 - SIGNS & SYM..." is the DRG 948 definition).
ERRONEOUS = [
    ["948 - SIGNS & SYMPTOMS W/O MCC", "ABC10005", "INC", "1050 DIVISION ST", "MAUSTON", "WI",
     "53948", "WI - Madison", "12", "$11961.41", "$4619.00", "$3775.33"],
    ["948 - SIGNS & SYMPTOMS W/O MCC", "ABC10006", "INC- ST JOSEPH", "5000 W CHAMBERS ST",
     "MILWAUKEE", "WI", "53210", "WI - Milwaukee", "14", "$10514.28", "$5562.50", "$4522.78"],
]
COLUMNS = [("drg definition", "string"), ("provider id", "bigint"), ("provider name", "string"),
           ("provider street address", "string"), ("provider city", "string"),
           ("provider state", "string"), ("provider zip code", "bigint"),
           ("hospital referral region description", "string"), ("total discharges", "bigint"),
           ("average covered charges", "string"), ("average total payments", "string"),
           ("average medicare payments", "string")]

CHOICE_SCHEMA = """
root
|-- drg definition: string
|-- provider id: choice
|    |-- long
|    |-- string
|-- provider name: string
|-- provider street address: string
|-- provider city: string
|-- provider state: string
|-- provider zip code: long
|-- hospital referral region description: string
|-- total discharges: long
|-- average covered charges: string
|-- average total payments: string
|-- average medicare payments: string
"""
LONG_SCHEMA = CHOICE_SCHEMA.replace("""provider id: choice
|    |-- long
|    |-- string""", "provider id: long")


@pytest.fixture
def medicare(server, glue, tmp_path, monkeypatch):
    """The crawled `payments.medicare` table on the session's server, for in-process scripts
    (openglue_runtime.catalog reaches the server named by AWS_ENDPOINT_URL_GLUE)."""
    folder = tmp_path / "medicare"
    folder.mkdir()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(ds.MEDICARE_HEADER)
    writer.writerows(ds.MEDICARE_ROWS + ERRONEOUS)
    (folder / "Medicare_Hospital_Provider.csv").write_text(buf.getvalue())
    database = "payments_{}".format(os.getpid())
    try:
        glue.create_database(DatabaseInput={"Name": database})
    except glue.exceptions.AlreadyExistsException:
        pass
    table = "medicare_{}".format(abs(hash(str(tmp_path))) % 10 ** 8)
    glue.create_table(DatabaseName=database, TableInput={
        "Name": table, "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv", "skip.header.line.count": "1",
                       "areColumnsQuoted": "false", "columnsOrdered": "true", "delimiter": ","},
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t} for n, t in COLUMNS],
            "Location": str(folder) + "/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}}}})
    monkeypatch.setenv("AWS_ENDPOINT_URL_GLUE", server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    yield database, table
    glue.delete_table(DatabaseName=database, Name=table)


def _read(kind, medicare):
    database, table = medicare
    return glue_context(kind).create_dynamic_frame.from_catalog(database=database,
                                                                table_name=table)


@engines()
def test_catalog_read_types_each_value(engine, medicare, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/data_cleaning_and_lambda.md "4. Data-type variations": the catalog read's printSchema, `provider id` a
    choice of long and string (the crawler typed it bigint; two records hold strings)."""
    _read(engine, medicare).printSchema()
    assert out_lines(capsys.readouterr().out) == expect(CHOICE_SCHEMA)


@engines(embedded=TODF)
def test_resolve_choice_cast_long_and_the_rows_it_nulls(engine, medicare, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/data_cleaning_and_lambda.md "4. Data-type variations": resolveChoice cast:long's printSchema, then
    toDF().where("`provider id` is NULL").show() giving the two erroneous records."""
    res = _read(engine, medicare).resolveChoice(specs=[("provider id", "cast:long")])
    res.printSchema()
    res.toDF().where("`provider id` is NULL").show()
    header = [n for n, _ in COLUMNS]
    rows = [["948 - SIGNS & SYM...", "null", "INC", "1050 DIVISION ST", "MAUSTON", "WI", "53948",
             "WI - Madison", "12", "$11961.41", "$4619.00", "$3775.33"],
            ["948 - SIGNS & SYM...", "null", "INC- ST JOSEPH", "5000 W CHAMBERS ST", "MILWAUKEE",
             "WI", "53210", "WI - Milwaukee", "14", "$10514.28", "$5562.50", "$4522.78"]]
    assert page_nulls(out_lines(capsys.readouterr().out)) == (expect(LONG_SCHEMA)
                                                               + spark_table(header, rows))


@engines()
def test_resolve_choice_project_long(engine, medicare, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.md "The `project` option": project:long's printSchema, and the long values kept."""
    res = _read(engine, medicare).resolveChoice(specs=[("provider id", "project:long")])
    res.printSchema()
    assert out_lines(capsys.readouterr().out) == expect(LONG_SCHEMA)
    ids = [r["provider id"] for r in res.to_arrow().to_pylist()]
    assert ids == [10001, 10005, 10006, None, None]


@engines()
def test_resolve_choice_make_cols(engine, medicare, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.md "The `make_cols` option": `provider id_long` in the column's place and
    `provider id_string` last."""
    res = _read(engine, medicare).resolveChoice(specs=[("provider id", "make_cols")])
    res.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
root
|-- drg definition: string
|-- provider id_long: long
|-- provider name: string
|-- provider street address: string
|-- provider city: string
|-- provider state: string
|-- provider zip code: long
|-- hospital referral region description: string
|-- total discharges: long
|-- average covered charges: string
|-- average total payments: string
|-- average medicare payments: string
|-- provider id_string: string
""")


@engines()
def test_resolve_choice_make_struct(engine, medicare, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.md "The `make_struct` option": a struct with one field per member."""
    res = _read(engine, medicare).resolveChoice(specs=[("provider id", "make_struct")])
    res.printSchema()
    assert out_lines(capsys.readouterr().out) == expect(CHOICE_SCHEMA.replace("""provider id: choice
|    |-- long
|    |-- string""", """provider id: struct
|    |-- long: long
|    |-- string: string"""))
