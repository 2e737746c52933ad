"""The aws-samples/aws-glue-samples scripts that run locally with synthetic stand-ins for their
data: examples/join_and_relationalize.py, data_cleaning_and_lambda.py, resolve_choice.py,
GlueUnitTestingLocalSample/src/my_script.py and
transforms/CustomTransform_FillEmptyStringsInAColumn.py.

CI cannot fetch the repository, so each script is mirrored here by a function of ours that makes
the same calls in the same order (its docstring names the sample; database names and output
folders are parameters, s3:// paths are local folders). Their `from_catalog` reads go through
the server's Data Catalog (the session's `server`), over tables of synthetic rows
(sample_data.py) created with boto3 as a crawler would. Expected outputs are either the
samples' READMEs' own printed output (join_and_relationalize.md, data_cleaning_and_lambda.md),
quoted as they print it, or computed in the test with plain Python over the synthetic rows.
Records are compared with nulls left out (conformance_kit.plain), as DynamicRecords hold them.
The unchanged scripts themselves were run as job runs on a local server (docs/engines.md,
"Public scripts checked")."""
import glob
import json
import os
import uuid

import pyarrow.parquet as pq
import pytest

from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms import ApplyMapping, Join

import sample_data as sd
from conformance_kit import engines, expect, frame_records, glue_context, out_lines, plain
from conftest import ACCESS_KEY, REGION, SECRET_KEY
from dbkit import pg  # noqa: F401  (the session's PostgreSQL)

SAMPLES = "https://github.com/aws-samples/aws-glue-samples/blob/master/examples/"
TODF = "DynamicFrame.toDF() needs the Spark engine (SparkApiUnavailable)"
COLLIDE = ("Join keeps both frames' links and image, the persons' as .links/.image; Glue merges "
           "the records (the chambers have neither), so the README's schema has one of each")


# ---------------------------------------------------------------------------------------------
# The catalog

@pytest.fixture()
def catalog(server, glue, monkeypatch):
    """Creates databases and tables on the session's server for in-process from_catalog reads;
    removes them afterwards."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_GLUE", server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    made = []

    def table(prefix, name, folder, file_name, text, columns, fmt):
        if not made or made[-1][0] != prefix:
            db = prefix + "_" + uuid.uuid4().hex[:8]
            glue.create_database(DatabaseInput={"Name": db})
            made.append((prefix, db, []))
        _, db, tables = made[-1]
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, file_name), "w") as f:
            f.write(text)
        glue.create_table(DatabaseName=db, TableInput=sd.catalog_table(name, str(folder) + "/",
                                                                       columns, fmt))
        tables.append(name)
        return db
    yield table
    for _, db, tables in made:
        for name in tables:
            glue.delete_table(DatabaseName=db, Name=name)
        glue.delete_database(Name=db)


def legislators(catalog, tmp_path):
    """The legislators database: persons_json, memberships_json, organizations_json."""
    for name, records, columns in (("persons_json", sd.PERSONS, sd.PERSONS_COLUMNS),
                                   ("memberships_json", sd.MEMBERSHIPS, sd.MEMBERSHIPS_COLUMNS),
                                   ("organizations_json", sd.ORGANIZATIONS,
                                    sd.ORGANIZATIONS_COLUMNS)):
        db = catalog("legislators", name, tmp_path / "data" / name, "part-0.json",
                     sd.json_lines(records), columns, "json")
    return db


def payments(catalog, tmp_path):
    """The payments database: medicare (CSV with a header line)."""
    return catalog("payments", "medicare", tmp_path / "data" / "medicare",
                   "Medicare_Hospital_Provider.csv", sd.medicare_csv(), sd.MEDICARE_COLUMNS, "csv")


def parquet_records(folder):
    files = sorted(glob.glob(os.path.join(str(folder), "**", "*.parquet"), recursive=True))
    assert files, "no parquet file under {}".format(folder)
    return [plain(r) for f in files for r in pq.read_table(f).to_pylist()]


def json_records(folder):
    rows = []
    for f in sorted(glob.glob(os.path.join(str(folder), "**", "*.json"), recursive=True)):
        with open(f) as fh:
            rows += [plain(json.loads(line)) for line in fh if line.strip()]
    assert rows, "no JSON record under {}".format(folder)
    return rows


def schema_blocks(lines):
    """A printSchema's lines as {top-level field: its lines} (the README's field order is
    Glue's own, which the comparison leaves out)."""
    blocks, current = {}, None
    for line in lines:
        if line.startswith("|-- "):
            current = line[4:].split(":")[0]
            blocks[current] = []
        if current is not None:
            blocks[current].append(line)
    return blocks


# ---------------------------------------------------------------------------------------------
# join_and_relationalize.py

JR = SAMPLES + "join_and_relationalize.py"

PERSONS_SCHEMA = """
root
|-- family_name: string
|-- name: string
|-- links: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- url: string
|-- gender: string
|-- image: string
|-- identifiers: array
|    |-- element: struct
|    |    |-- scheme: string
|    |    |-- identifier: string
|-- other_names: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- name: string
|    |    |-- lang: string
|-- sort_name: string
|-- images: array
|    |-- element: struct
|    |    |-- url: string
|-- given_name: string
|-- birth_date: string
|-- id: string
|-- contact_details: array
|    |-- element: struct
|    |    |-- type: string
|    |    |-- value: string
|-- death_date: string
"""

MEMBERSHIPS_SCHEMA = """
root
|-- area_id: string
|-- on_behalf_of_id: string
|-- organization_id: string
|-- role: string
|-- person_id: string
|-- legislative_period_id: string
|-- start_date: string
|-- end_date: string
"""

ORGS_SCHEMA = """
root
|-- classification: string
|-- links: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- url: string
|-- image: string
|-- identifiers: array
|    |-- element: struct
|    |    |-- scheme: string
|    |    |-- identifier: string
|-- other_names: array
|    |-- element: struct
|    |    |-- lang: string
|    |    |-- note: string
|    |    |-- name: string
|-- id: string
|-- name: string
|-- seats: int
|-- type: string
"""

HISTORY_SCHEMA = """
root
|-- role: string
|-- seats: int
|-- org_name: string
|-- links: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- url: string
|-- type: string
|-- sort_name: string
|-- area_id: string
|-- images: array
|    |-- element: struct
|    |    |-- url: string
|-- on_behalf_of_id: string
|-- other_names: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- name: string
|    |    |-- lang: string
|-- contact_details: array
|    |-- element: struct
|    |    |-- type: string
|    |    |-- value: string
|-- name: string
|-- birth_date: string
|-- organization_id: string
|-- gender: string
|-- classification: string
|-- death_date: string
|-- legislative_period_id: string
|-- identifiers: array
|    |-- element: struct
|    |    |-- scheme: string
|    |    |-- identifier: string
|-- image: string
|-- given_name: string
|-- family_name: string
|-- id: string
|-- start_date: string
|-- end_date: string
"""

# dfc.keys() as the README prints it (a Python 2 list of unicode strings).
HISTORY_KEYS = ["hist_root", "hist_root_contact_details", "hist_root_links",
                "hist_root_other_names", "hist_root_images", "hist_root_identifiers"]


def join_and_relationalize_sources(glueContext, db_name):
    """join_and_relationalize.py, its reads: the three catalog tables."""
    persons = glueContext.create_dynamic_frame.from_catalog(database=db_name,
                                                            table_name="persons_json")
    memberships = glueContext.create_dynamic_frame.from_catalog(database=db_name,
                                                                table_name="memberships_json")
    orgs = glueContext.create_dynamic_frame.from_catalog(database=db_name,
                                                         table_name="organizations_json")
    return persons, memberships, orgs


def join_and_relationalize_history(glueContext, db_name, output_history_dir):
    """join_and_relationalize.py up to its first write: drop_fields/rename_field on orgs, the
    nested Join.apply, drop_fields, the parquet sink. Returns l_history."""
    persons, memberships, orgs = join_and_relationalize_sources(glueContext, db_name)
    orgs = orgs.drop_fields(["other_names", "identifiers"]).rename_field(
        "id", "org_id").rename_field("name", "org_name")
    l_history = Join.apply(orgs, Join.apply(persons, memberships, "id", "person_id"),
                           "org_id", "organization_id").drop_fields(["person_id", "org_id"])
    glueContext.write_dynamic_frame.from_options(
        frame=l_history, connection_type="s3", connection_options={"path": output_history_dir},
        format="parquet")
    return l_history


def merged(a, b):
    """Two records joined as Glue joins DynamicRecords: every field of both. (The synthetic
    rows are made so that no two joined records hold the same field.)"""
    clash = {k for k, v in a.items() if v is not None} & {k for k, v in b.items() if v is not None}
    assert not clash, clash
    return {**{k: v for k, v in a.items() if v is not None},
            **{k: v for k, v in b.items() if v is not None}}


def expected_history():
    """l_history's records, with Python over the synthetic rows."""
    persons = {p["id"]: p for p in sd.PERSONS}
    orgs = {o["id"]: o for o in sd.ORGANIZATIONS}
    rows = []
    for m in sd.MEMBERSHIPS:
        p, o = persons.get(m["person_id"]), orgs.get(m["organization_id"])
        if p is None or o is None:
            continue
        org = {k: v for k, v in o.items() if k not in ("other_names", "identifiers")}
        org["org_id"], org["org_name"] = org.pop("id"), org.pop("name")
        rec = merged(org, merged(p, m))
        del rec["person_id"], rec["org_id"]
        rows.append(rec)
    return sorted(rows, key=history_key)


def history_key(rec):
    return rec["id"], rec["start_date"]


@engines()
def test_join_and_relationalize_reads_the_three_tables(engine, catalog, tmp_path, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.md,
    "4. Checking the schemas that the crawler identified": printSchema() of persons_json,
    memberships_json and organizations_json read with from_catalog (the README's Count lines
    are of the full data set and are not compared)."""
    glueContext = glue_context(engine)
    for frame in join_and_relationalize_sources(glueContext, legislators(catalog, tmp_path)):
        frame.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        expect(PERSONS_SCHEMA) + expect(MEMBERSHIPS_SCHEMA) + expect(ORGS_SCHEMA))


@engines(embedded=COLLIDE, spark=COLLIDE)
def test_join_and_relationalize_history_schema(engine, catalog, tmp_path, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.md,
    "6. Putting it together": l_history.printSchema() (the fields compared with their lines,
    not their order, which is Glue's own)."""
    glueContext = glue_context(engine)
    l_history = join_and_relationalize_history(glueContext, legislators(catalog, tmp_path),
                                               str(tmp_path / "legislator_history"))
    l_history.printSchema()
    got = out_lines(capsys.readouterr().out)
    assert got[0] == "root"
    assert schema_blocks(got) == schema_blocks(expect(HISTORY_SCHEMA))


@engines(embedded=COLLIDE, spark=COLLIDE)
def test_join_and_relationalize_history_rows(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.py,
    "legislator_history": the rows of the parquet sink, every field."""
    glueContext = glue_context(engine)
    out = tmp_path / "legislator_history"
    join_and_relationalize_history(glueContext, legislators(catalog, tmp_path), str(out))
    assert sorted(parquet_records(out), key=history_key) == expected_history()


NOT_COLLIDING = ("links", "image", ".links", ".image")


@engines()
def test_join_and_relationalize_history_rows_but_links_and_image(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.py,
    "legislator_history, who sat where": the rows of the parquet sink without the two fields
    both frames have (see test_join_and_relationalize_history_rows)."""
    glueContext = glue_context(engine)
    out = tmp_path / "legislator_history"
    join_and_relationalize_history(glueContext, legislators(catalog, tmp_path), str(out))

    def cut(rows):
        return [{k: v for k, v in r.items() if k not in NOT_COLLIDING} for r in rows]
    assert sorted(cut(parquet_records(out)), key=history_key) == cut(expected_history())
    assert len(expected_history()) == 5  # two memberships are dropped by the inner joins


@engines(embedded=TODF)
def test_join_and_relationalize_spark_writers(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.py,
    "legislator_single and legislator_part": toDF().repartition(1).write.parquet() gives one
    file; toDF().write.parquet(partitionBy=['org_name']) one folder per chamber."""
    glueContext = glue_context(engine)
    l_history = join_and_relationalize_history(glueContext, legislators(catalog, tmp_path),
                                               str(tmp_path / "legislator_history"))
    single, part = str(tmp_path / "legislator_single"), str(tmp_path / "legislator_part")
    s_history = l_history.toDF().repartition(1)
    s_history.write.parquet(single)
    l_history.toDF().write.parquet(part, partitionBy=["org_name"])

    expected = expected_history()
    files = glob.glob(os.path.join(single, "*.parquet"))
    assert len(files) == 1
    assert sorted((r["id"], r["start_date"]) for r in pq.read_table(files[0]).to_pylist()) == \
        [history_key(r) for r in expected]
    by_chamber = {}
    for r in expected:
        by_chamber.setdefault("org_name=" + r["org_name"], []).append(history_key(r))
    got = {}
    for folder in sorted(os.listdir(part)):
        if folder.startswith("org_name="):
            rows = pq.read_table(os.path.join(part, folder)).to_pylist()
            got[folder] = sorted((r["id"], r["start_date"]) for r in rows)
    assert got == by_chamber


@engines(embedded=COLLIDE, spark=COLLIDE)
def test_join_and_relationalize_relationalize_keys(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.md,
    "7. Writing to Relational Databases": dfc.keys() of l_history.relationalize("hist_root",
    ...), the tables its Redshift loop writes (the loop itself needs Redshift)."""
    glueContext = glue_context(engine)
    l_history = join_and_relationalize_history(glueContext, legislators(catalog, tmp_path),
                                               str(tmp_path / "legislator_history"))
    dfc = l_history.relationalize("hist_root", str(tmp_path / "temp-dir"))
    assert sorted(dfc.keys()) == sorted(HISTORY_KEYS)


ARRAYS = ("contact_details", "identifiers", "other_names", "images")


@engines()
def test_join_and_relationalize_relationalize_tables(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/join_and_relationalize.py,
    "relationalize tables": hist_root has a row per history record with each array replaced by
    a key into its table (id, index, <array>.val.<field>); the arrays rebuilt from those tables
    are the records' own (links, which both frames have, is left to the keys case)."""
    glueContext = glue_context(engine)
    l_history = join_and_relationalize_history(glueContext, legislators(catalog, tmp_path),
                                               str(tmp_path / "legislator_history"))
    dfc = l_history.relationalize("hist_root", str(tmp_path / "temp-dir"))
    root = frame_records(dfc.select("hist_root"))
    rebuilt = []
    for array in ARRAYS:
        elements = {}
        for r in frame_records(dfc.select("hist_root_" + array)):
            fields = {k[len(array) + 5:]: v for k, v in r.items()
                      if k.startswith(array + ".val.")}
            elements.setdefault(r["id"], []).append((r["index"], fields))
        for rec in root:
            rec[array] = [f for _, f in sorted(elements.get(rec[array], []),
                                               key=lambda e: e[0])]
    for rec in sorted(root, key=history_key):
        rebuilt.append({k: v for k, v in rec.items() if k not in NOT_COLLIDING})
    expected = [{k: v for k, v in r.items() if k not in NOT_COLLIDING}
                for r in expected_history()]
    assert rebuilt == expected


# ---------------------------------------------------------------------------------------------
# data_cleaning_and_lambda.py (its README's from_catalog and cast:long schemas are
# test_catalog_reads.py's cases)

MEDICARE_NEST_SCHEMA = """
root
|-- drg: string
|-- provider: struct
|    |-- id: long
|    |-- name: string
|    |-- city: string
|    |-- state: string
|    |-- zip: long
|-- rr: string
|-- charges: struct
|    |-- covered: double
|    |-- total_pay: double
|    |-- medicare_pay: double
"""


def data_cleaning_and_lambda(glueContext, db_name, output_dir):
    """data_cleaning_and_lambda.py: from_catalog, resolveChoice cast:long, toDF().where, a
    Python UDF chopping the '$', withColumn x3, fromDF, apply_mapping into structs, parquet."""
    from pyspark.sql.functions import udf
    from pyspark.sql.types import StringType
    medicare_dyf = glueContext.create_dynamic_frame.from_catalog(database=db_name,
                                                                 table_name="medicare")
    medicare_res = medicare_dyf.resolveChoice(specs=[("provider id", "cast:long")])
    medicare_df = medicare_res.toDF()
    medicare_df = medicare_df.where("`provider id` is NOT NULL")
    chop_f = udf(lambda x: x[1:], StringType())
    medicare_df = medicare_df.withColumn(
        "ACC", chop_f(medicare_df["average covered charges"])).withColumn(
        "ATP", chop_f(medicare_df["average total payments"])).withColumn(
        "AMP", chop_f(medicare_df["average medicare payments"]))
    medicare_tmp = DynamicFrame.fromDF(medicare_df, glueContext, "nested")
    medicare_nest = medicare_tmp.apply_mapping([
        ("drg definition", "string", "drg", "string"),
        ("provider id", "long", "provider.id", "long"),
        ("provider name", "string", "provider.name", "string"),
        ("provider city", "string", "provider.city", "string"),
        ("provider state", "string", "provider.state", "string"),
        ("provider zip code", "long", "provider.zip", "long"),
        ("hospital referral region description", "string", "rr", "string"),
        ("ACC", "string", "charges.covered", "double"),
        ("ATP", "string", "charges.total_pay", "double"),
        ("AMP", "string", "charges.medicare_pay", "double")])
    glueContext.write_dynamic_frame.from_options(
        frame=medicare_nest, connection_type="s3", connection_options={"path": output_dir},
        format="parquet")
    return medicare_nest


def numeric_id(text):
    try:
        return int(text)
    except ValueError:
        return None


@engines(embedded=TODF)
def test_data_cleaning_and_lambda_nested_parquet(engine, catalog, tmp_path, capsys):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/data_cleaning_and_lambda.py,
    "medicare_parquet": medicare_nest's printSchema (the README's) and the parquet rows: the
    records with a numeric provider id, the charges without their '$' as doubles."""
    glueContext = glue_context(engine)
    out = tmp_path / "medicare_parquet"
    medicare_nest = data_cleaning_and_lambda(glueContext, payments(catalog, tmp_path), str(out))
    medicare_nest.printSchema()
    assert out_lines(capsys.readouterr().out) == expect(MEDICARE_NEST_SCHEMA)
    expected = [
        {"drg": r["drg definition"],
         "provider": {"id": numeric_id(r["provider id"]), "name": r["provider name"],
                      "city": r["provider city"], "state": r["provider state"],
                      "zip": int(r["provider zip code"])},
         "rr": r["hospital referral region description"],
         "charges": {"covered": float(r["average covered charges"][1:]),
                     "total_pay": float(r["average total payments"][1:]),
                     "medicare_pay": float(r["average medicare payments"][1:])}}
        for r in sd.medicare_records() if numeric_id(r["provider id"]) is not None]
    assert sorted(parquet_records(out), key=lambda r: r["provider"]["id"]) == expected
    assert len(expected) == 6


# ---------------------------------------------------------------------------------------------
# resolve_choice.py

def resolve_choice(glueContext, db_name, out):
    """resolve_choice.py: from_catalog, resolveChoice cast/project/make_cols/make_struct, toDF
    with a temporary view and spark.sql, fromDF, five JSON sinks (`out`: name -> folder). With
    `spark_sql=False` the Spark part is left out (the embedded engine has no Spark API)."""
    medicare_dyf = glueContext.create_dynamic_frame.from_catalog(database=db_name,
                                                                 table_name="medicare")
    medicare_res_cast = medicare_dyf.resolveChoice(specs=[("provider id", "cast:long")])
    medicare_res_project = medicare_dyf.resolveChoice(specs=[("provider id", "project:long")])
    medicare_res_make_cols = medicare_dyf.resolveChoice(specs=[("provider id", "make_cols")])
    medicare_res_make_struct = medicare_dyf.resolveChoice(specs=[("provider id", "make_struct")])
    frames = [("cast", medicare_res_cast), ("project", medicare_res_project),
              ("make_cols", medicare_res_make_cols), ("make_struct", medicare_res_make_struct)]
    if "sql" in out:
        spark = glueContext.spark_session
        medicare_df = medicare_dyf.toDF()
        medicare_df.createOrReplaceTempView("medicareTable")
        medicare_sql_df = spark.sql("SELECT * FROM medicareTable WHERE `total discharges` > 30")
        frames.append(("sql", DynamicFrame.fromDF(medicare_sql_df, glueContext,
                                                  "medicare_sql_dyf")))
    for name, frame in frames:
        glueContext.write_dynamic_frame.from_options(
            frame=frame, connection_type="s3", connection_options={"path": out[name]},
            format="json")


def typed_medicare(r, provider_id):
    """A medicare record with the catalog's types and `provider id` as given (None: absent)."""
    rec = {"drg definition": r["drg definition"], "provider id": provider_id}
    for name, hive_type in sd.MEDICARE_COLUMNS[2:]:
        rec[name] = int(r[name]) if hive_type == "bigint" else r[name]
    return plain(rec)


def choice_member(text):
    """The provider id choice as a struct with one field per type (make_struct, and toDF() of
    the unresolved choice)."""
    n = numeric_id(text)
    return {"long": n} if n is not None else {"string": text}


def make_cols(r):
    rec = typed_medicare(r, None)
    n = numeric_id(r["provider id"])
    rec["provider id_long" if n is not None else "provider id_string"] = \
        n if n is not None else r["provider id"]
    return rec


RESOLVED = {
    "cast": lambda r: typed_medicare(r, numeric_id(r["provider id"])),
    "project": lambda r: typed_medicare(r, numeric_id(r["provider id"])),
    "make_cols": make_cols,
    "make_struct": lambda r: typed_medicare(r, choice_member(r["provider id"])),
}


def by_name(rows):
    return sorted(rows, key=lambda r: r["provider name"])


def resolved_records(engine, action, catalog, tmp_path):
    """What resolve_choice.py's sink for `action` wrote, and what it should have."""
    glueContext = glue_context(engine)
    out = {name: str(tmp_path / name) for name in RESOLVED}
    resolve_choice(glueContext, payments(catalog, tmp_path), out)
    expected = [RESOLVED[action](r) for r in sd.medicare_records()]
    return by_name(json_records(out[action])), by_name(expected)


@engines()
def test_resolve_choice_cast_sink(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.py,
    "medicare_json_cast": cast:long keeps the numbers; the text ids become null."""
    got, expected = resolved_records(engine, "cast", catalog, tmp_path)
    assert got == expected


@engines()
def test_resolve_choice_project_sink(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.py,
    "medicare_json_project": project:long keeps the long values; the strings become null."""
    got, expected = resolved_records(engine, "project", catalog, tmp_path)
    assert got == expected


@engines()
def test_resolve_choice_make_cols_sink(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.py,
    "medicare_json_make_cols": the column split into provider id_long and provider id_string."""
    got, expected = resolved_records(engine, "make_cols", catalog, tmp_path)
    assert got == expected


@engines()
def test_resolve_choice_make_struct_sink(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.py,
    "medicare_json_make_struct": provider id a struct with a long or a string member."""
    got, expected = resolved_records(engine, "make_struct", catalog, tmp_path)
    assert got == expected


@engines(embedded=TODF)
def test_resolve_choice_spark_sql_sink(engine, catalog, tmp_path):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/resolve_choice.py,
    "medicare_json_sql": spark.sql over the toDF() of the unresolved frame (provider id a struct
    of long and string) keeps the records with more than 30 discharges."""
    glueContext = glue_context(engine)
    out = {name: str(tmp_path / name) for name in list(RESOLVED) + ["sql"]}
    resolve_choice(glueContext, payments(catalog, tmp_path), out)
    expected = [typed_medicare(r, choice_member(r["provider id"])) for r in sd.medicare_records()
                if int(r["total discharges"]) > 30]
    assert by_name(json_records(out["sql"])) == by_name(expected)
    assert len(expected) == 5


# ---------------------------------------------------------------------------------------------
# GlueUnitTestingLocalSample/src/my_script.py, unpatched

def unit_testing_sample_script(glueContext, db_name, input_path, output_path, jdbc):
    """GlueUnitTestingLocalSample/src/my_script.py: a CSV source (no format options), the output
    purged, a parquet sink with useGlueParquetWriter, a catalog source, ApplyMapping and a
    PostgreSQL sink (`jdbc`: url, user, password, dbtable)."""
    s3data_dynf = glueContext.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [input_path]}, format="csv")
    glueContext.purge_s3_path(output_path, {"retentionPeriod": 0})
    glueContext.write_dynamic_frame.from_options(
        frame=s3data_dynf, connection_type="s3", format="parquet",
        connection_options={"path": output_path}, format_options={"useGlueParquetWriter": True})
    customer_df = glueContext.create_dynamic_frame.from_catalog(
        database=db_name, table_name="cust-corey_customer",
        transformation_ctx="dynamoDbConnection_node1")
    customer_df = ApplyMapping.apply(frame=customer_df, mappings=[
        ("customerId", "string", "customerId", "int"),
        ("firstname", "string", "firstname", "string"),
        ("lastname", "string", "lastname", "string")], transformation_ctx="customerMapping")
    glueContext.write_dynamic_frame.from_options(
        frame=customer_df, connection_type="postgresql", connection_options=jdbc,
        transformation_ctx="customerSink")


CUSTOMERS = [("1", "John", "Smith"), ("2", "Mary", "Major"), ("x3", "Ann", "Bad")]
SOME_CSV = [("4545", "1234"), ("123213", "abcdef")]


@engines()
def test_unit_testing_sample_script_unpatched(engine, catalog, tmp_path, pg):  # noqa: F811
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/GlueUnitTestingLocalSample/src/my_script.py,
    "run for real": what its test mocks, done: the CSV read as Glue reads a file without
    withHeader (columns col0, col1, the header line a row), the stale output purged, the
    parquet rows, and the customers written into PostgreSQL with customerId an int."""
    glueContext = glue_context(engine)
    source = tmp_path / "somebucket" / "somepath"
    source.mkdir(parents=True)
    (source / "data.csv").write_text("id,value\n" + "".join(",".join(r) + "\n" for r in SOME_CSV))
    output = tmp_path / "outputbucket" / "datapath"
    output.mkdir(parents=True)
    (output / "part-old.parquet").write_text("stale")
    db = catalog("reporting", "cust-corey_customer", tmp_path / "customers", "c.csv",
                 "customerId,firstname,lastname\n" + "".join(",".join(c) + "\n" for c in CUSTOMERS),
                 [("customerid", "string"), ("firstname", "string"), ("lastname", "string")],
                 "csv")
    schema = "poc_" + uuid.uuid4().hex[:8]
    pg.execute("CREATE SCHEMA {}".format(schema))
    unit_testing_sample_script(glueContext, db, str(source), str(output),
                               pg.options(dbtable=schema + ".customer"))

    assert not (output / "part-old.parquet").exists()
    assert parquet_records(output) == [{"col0": a, "col1": b}
                                       for a, b in [("id", "value")] + SOME_CSV]
    rows = pg.execute('SELECT "customerId", firstname, lastname FROM {}.customer'.format(schema))
    assert sorted(rows, key=lambda r: r[1]) == sorted(
        [(numeric_id(i), f, last) for i, f, last in CUSTOMERS], key=lambda r: r[1])
    types = dict(pg.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name = 'customer'", (schema,)))
    assert types == {"customerId": "integer", "firstname": "text", "lastname": "text"}


# ---------------------------------------------------------------------------------------------
# transforms/CustomTransform_FillEmptyStringsInAColumn.py

def fill_empty_null_values(self, columnName, newValue):
    """The custom transform CustomTransform_FillEmptyStringsInAColumn.py adds to DynamicFrame:
    through toDF(), empty strings of the column replaced by newValue if there are any, else
    nulls (fillna), else the frame itself."""
    from pyspark.sql.functions import col, when
    df = self.toDF()
    if df.filter(col(columnName) == "").count() > 0:
        df = df.withColumn(columnName, when(col(columnName) == "", newValue)
                           .otherwise(col(columnName)))
        return DynamicFrame.fromDF(df, self.glue_ctx, self.name)
    if df.filter(col(columnName).isNull()).count() > 0:
        df = df.fillna(value=newValue, subset=[columnName])
        return DynamicFrame.fromDF(df, self.glue_ctx, self.name)
    return self


@engines(embedded=TODF)
def test_custom_transform_fill_empty_or_null_column(engine, tmp_path, monkeypatch):
    """https://github.com/aws-samples/aws-glue-samples/blob/master/examples/transforms/CustomTransform_FillEmptyStringsInAColumn.py,
    "fill_empty_null_values_txn": set on DynamicFrame as the module does, it fills a column's
    empty strings, else its nulls, else returns the frame unchanged."""
    monkeypatch.setattr(DynamicFrame, "fill_empty_null_values_txn", fill_empty_null_values,
                        raising=False)
    glueContext = glue_context(engine)
    cases = {"empty": [{"k": 1, "c": ""}, {"k": 2, "c": "x"}, {"k": 3, "c": ""}],
             "null": [{"k": 1, "c": None}, {"k": 2, "c": "x"}],
             "neither": [{"k": 1, "c": "a"}, {"k": 2, "c": "b"}]}
    got = {}
    for name, records in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "part-0.json").write_text(sd.json_lines(records))
        dyf = glueContext.create_dynamic_frame.from_options(
            "s3", {"paths": [str(folder)]}, format="json")
        out = dyf.fill_empty_null_values_txn("c", "filled")
        got[name] = (out is dyf, sorted(frame_records(out), key=lambda r: r["k"]))

    def filled(records):
        return [plain({"k": r["k"], "c": r["c"] if r["c"] else "filled"}) for r in records]
    assert got == {"empty": (False, filled(cases["empty"])),
                   "null": (False, filled(cases["null"])),
                   "neither": (True, cases["neither"])}
