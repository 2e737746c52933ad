"""The examples of the DynamicFrame class page (aws-glue-api-crawler-pyspark-extensions-dynamic-frame),
each with the output the page shows."""
import glob
import os

from awsglue.dynamicframe import DynamicFrameCollection
from awsglue.transforms import SelectFromCollection

import datasets as ds
from conformance_kit import (engines, expect, glue_context, json_frame, out_lines, page,
                             records_frame, spark_table, write_json_lines, write_text)

PAGE = page("aws-glue-api-crawler-pyspark-extensions-dynamic-frame")

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
|    |    |-- lang: string
|    |    |-- note: string
|    |    |-- name: string
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


def persons(ctx, tmp_path, name="persons_json"):
    return json_frame(ctx, tmp_path / name, ds.PERSONS)


@engines()
def test_apply_mapping_renames_fields_and_changes_types(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use apply_mapping to rename fields and change field types"."""
    glueContext = glue_context(engine)
    persons_df = persons(glueContext, tmp_path)
    print("Schema for the persons DynamicFrame:")
    persons_df.printSchema()
    print("Schema for the persons_mapped DynamicFrame, created with apply_mapping:")
    persons_mapped = persons_df.apply_mapping([
        ("family_name", "String", "last_name", "String"),
        ("name", "String", "first_name", "String"),
        ("birth_date", "String", "date_of_birth", "Date"),
    ])
    persons_mapped.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        ["Schema for the persons DynamicFrame:"] + expect(PERSONS_SCHEMA)
        + ["Schema for the persons_mapped DynamicFrame, created with apply_mapping:"]
        + expect("""
root
|-- last_name: string
|-- first_name: string
|-- date_of_birth: date
"""))


DROP_ARRAY = ("drop_fields(\"friends.age\") leaves age in the structs of the array friends: the "
              "after-schema still has |    |    |-- age: int")


@engines()
def test_drop_fields_removes_top_level_and_nested_fields(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use drop_fields to remove fields from a DynamicFrame" (includes
    `friends.age`, a field of the structs in the array `friends`)."""
    glueContext = glue_context(engine)
    friends = json_frame(glueContext, tmp_path / "friends", ds.FRIENDS_JSON)
    print("Schema for friends DynamicFrame before calling drop_fields:")
    friends.printSchema()
    friends = friends.drop_fields(paths=["age", "location.county", "friends.age"])
    print("Schema for friends DynamicFrame after removing age, county, and friend age:")
    friends.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
Schema for friends DynamicFrame before calling drop_fields:
root
|-- name: string
|-- age: int
|-- location: struct
|    |-- state: string
|    |-- county: string
|-- friends: array
|    |-- element: struct
|    |    |-- name: string
|    |    |-- age: int
Schema for friends DynamicFrame after removing age, county, and friend age:
root
|-- name: string
|-- location: struct
|    |-- state: string
|-- friends: array
|    |-- element: struct
|    |    |-- name: string
""")


MEDICARE_SCHEMA = """
root
|-- DRG Definition: string
|-- Provider Id: string
|-- Provider Name: string
|-- Provider Street Address: string
|-- Provider City: string
|-- Provider State: string
|-- Provider Zip Code: string
|-- Hospital Referral Region Description: string
|-- Total Discharges: string
|-- Average Covered Charges: string
|-- Average Total Payments: string
|-- Average Medicare Payments: string
"""


def medicare(glueContext, tmp_path):
    folder = write_text(tmp_path / "medicare", ds.medicare_csv(), "Medicare_Hospital_Provider.csv")
    return glueContext.create_dynamic_frame.from_options(
        "s3", {"paths": [folder]}, "csv", {"withHeader": True})


@engines()
def test_csv_with_header_reads_every_column_as_string(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use map to apply a function to every record in a DynamicFrame", its first
    printSchema: from_options CSV with withHeader gives every column type string."""
    glueContext = glue_context(engine)
    medicare_df = medicare(glueContext, tmp_path)
    print("Schema for medicare DynamicFrame:")
    medicare_df.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        ["Schema for medicare DynamicFrame:"] + expect(MEDICARE_SCHEMA))


MAP_DIFF = ("map keeps the record's field order (Glue lists Average Total Payments first, "
            "Address.Zip.Code first)")


@engines(embedded=MAP_DIFF, spark=MAP_DIFF)
def test_map_merges_address_fields(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use map to apply a function to every record in a DynamicFrame"."""
    glueContext = glue_context(engine)
    medicare_df = medicare(glueContext, tmp_path)
    mapped_medicare = medicare_df.map(f=ds.merge_address)
    print("Schema for mapped_medicare DynamicFrame:")
    mapped_medicare.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
Schema for mapped_medicare DynamicFrame:
root
|-- Average Total Payments: string
|-- Average Covered Charges: string
|-- DRG Definition: string
|-- Average Medicare Payments: string
|-- Hospital Referral Region Description: string
|-- Address: struct
|    |-- Zip.Code: string
|    |-- City: string
|    |-- Array: array
|    |    |-- element: string
|    |-- State: string
|    |-- Street: string
|-- Provider Id: string
|-- Total Discharges: string
|-- Provider Name: string
""")


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
|-- classification: string
|-- name: string
|-- links: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- url: string
|-- image: string
|-- seats: int
|-- type: string
"""

COMBINED_SCHEMA = """
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
|-- legislative_period_id: string
|-- identifiers: array
|    |-- element: struct
|    |    |-- scheme: string
|    |    |-- identifier: string
|-- image: string
|-- given_name: string
|-- start_date: string
|-- family_name: string
|-- id: string
|-- death_date: string
|-- end_date: string
"""


@engines()
def test_join_input_schemas(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use join to combine DynamicFrames": the three input schemas it prints."""
    glueContext = glue_context(engine)
    persons_df = persons(glueContext, tmp_path)
    memberships = json_frame(glueContext, tmp_path / "memberships_json", ds.MEMBERSHIPS)
    orgs = json_frame(glueContext, tmp_path / "organizations_json", ds.ORGS)
    print("Schema for the persons DynamicFrame:")
    persons_df.printSchema()
    print("Schema for the memberships DynamicFrame:")
    memberships.printSchema()
    print("Schema for the orgs DynamicFrame:")
    orgs.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        ["Schema for the persons DynamicFrame:"] + expect(PERSONS_SCHEMA)
        + ["Schema for the memberships DynamicFrame:"] + expect(MEMBERSHIPS_SCHEMA)
        + ["Schema for the orgs DynamicFrame:"] + expect(ORGS_SCHEMA))


JOIN_ORDER = ("join keeps both copies of the duplicate fields links and image (as .links, .image) "
              "and lists this frame's fields first; Glue's schema has one of each, in its own order "
              "(role, seats, org_name, ...)")


@engines(embedded=JOIN_ORDER, spark=JOIN_ORDER)
def test_join_combines_three_frames(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use join to combine DynamicFrames": legislators_combined's schema."""
    glueContext = glue_context(engine)
    persons_df = persons(glueContext, tmp_path)
    memberships = json_frame(glueContext, tmp_path / "memberships_json", ds.MEMBERSHIPS)
    orgs = json_frame(glueContext, tmp_path / "organizations_json", ds.ORGS)
    persons_memberships = persons_df.join(paths1=["id"], paths2=["person_id"], frame2=memberships)
    orgs = (orgs.drop_fields(["other_names", "identifiers"])
            .rename_field("id", "org_id").rename_field("name", "org_name"))
    legislators_combined = orgs.join(
        paths1=["org_id"], paths2=["organization_id"], frame2=persons_memberships
    ).drop_fields(["person_id", "org_id"])
    print("Schema for the new legislators_combined DynamicFrame:")
    legislators_combined.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        ["Schema for the new legislators_combined DynamicFrame:"] + expect(COMBINED_SCHEMA))


def contact_frame(ctx, rows, name):
    return records_frame(ctx, ds.contact_records(rows), name, schema=ds.contact_schema())


def contact_table(rows, more=False):
    return spark_table(ds.CONTACT_COLUMNS, [[str(c) for c in r] for r in rows], more)


TODF = "DynamicFrame.toDF() needs the Spark engine (SparkApiUnavailable)"


@engines(embedded=TODF)
def test_merge_dynamic_frame_on_primary_key(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use mergeDynamicFrame to merge two DynamicFrames based on a primary key"."""
    glueContext = glue_context(engine)
    split_rows_collection = DynamicFrameCollection({
        "high": contact_frame(glueContext, ds.MERGE_HIGH, "high"),
        "low": contact_frame(glueContext, ds.MERGE_LOW, "low")}, glueContext)
    frame_low = SelectFromCollection.apply(dfc=split_rows_collection, key="low")
    print("Inspect the DynamicFrame that contains rows where ID < 10")
    frame_low.toDF().show()
    frame_high = SelectFromCollection.apply(dfc=split_rows_collection, key="high")
    print("Inspect the DynamicFrame that contains rows where ID > 10")
    frame_high.toDF().show()
    merged_high_low = frame_high.mergeDynamicFrame(stage_dynamic_frame=frame_low,
                                                   primary_keys=["id"])
    print("Inspect the merged DynamicFrame that contains the combined rows")
    merged_high_low.toDF().where("id = 1 or id= 20").orderBy("id").show()
    assert out_lines(capsys.readouterr().out) == (
        ["Inspect the DynamicFrame that contains rows where ID < 10"]
        + contact_table(ds.MERGE_LOW[:20], more=True)
        + ["Inspect the DynamicFrame that contains rows where ID > 10"]
        + contact_table(ds.MERGE_HIGH[:20], more=True)
        + ["Inspect the merged DynamicFrame that contains the combined rows"]
        + contact_table(ds.MERGE_LOW[:2] + ds.MERGE_HIGH[-3:]))


RELATIONALIZE_KEYS = ("relationalize's collection lists the array tables in field order; Glue's "
                      "keys() order is l_root, l_root_images, l_root_links, l_root_other_names, "
                      "l_root_contact_details, l_root_identifiers")


@engines(embedded=RELATIONALIZE_KEYS, spark=RELATIONALIZE_KEYS)
def test_relationalize_flattens_nested_schema(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use relationalize to flatten a nested schema in a DynamicFrame": keys()
    and the contact_details schema (the page's show() of ids 10 and 75 needs the full
    legislators data set, which the page does not show)."""
    glueContext = glue_context(engine)
    legislators_combined = records_frame(glueContext, ds.LEGISLATORS_COMBINED, "legislators_combined")
    legislators_relationalized = legislators_combined.relationalize("l_root", str(tmp_path / "tmpDir"))
    print(legislators_relationalized.keys())
    legislators_combined.select_fields("contact_details").printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
dict_keys(['l_root', 'l_root_images', 'l_root_links', 'l_root_other_names', 'l_root_contact_details', 'l_root_identifiers'])
root
|-- contact_details: array
|    |-- element: struct
|    |    |-- type: string
|    |    |-- value: string
""")


ORGS_RENAMED_SCHEMA = """
root
|-- identifiers: array
|    |-- element: struct
|    |    |-- scheme: string
|    |    |-- identifier: string
|-- other_names: array
|    |-- element: struct
|    |    |-- lang: string
|    |    |-- note: string
|    |    |-- name: string
|-- classification: string
|-- org_id: string
|-- org_name: string
|-- links: array
|    |-- element: struct
|    |    |-- note: string
|    |    |-- url: string
|-- image: string
|-- seats: int
|-- type: string
"""

RENAME_ORDER = ("rename_field keeps a renamed field in its place; Glue's printSchema moves "
                "org_id and org_name after classification")


@engines(embedded=RENAME_ORDER, spark=RENAME_ORDER)
def test_rename_field_renames_fields(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use rename_field to rename fields in a DynamicFrame"."""
    glueContext = glue_context(engine)
    orgs = json_frame(glueContext, tmp_path / "organizations_json", ds.ORGS)
    print("Original orgs schema: ")
    orgs.printSchema()
    orgs = orgs.rename_field("id", "org_id").rename_field("name", "org_name")
    print("New orgs schema with renamed fields: ")
    orgs.printSchema()
    assert out_lines(capsys.readouterr().out) == (
        ["Original orgs schema: "] + expect(ORGS_SCHEMA)
        + ["New orgs schema with renamed fields: "] + expect(ORGS_RENAMED_SCHEMA))


@engines(embedded=TODF)
def test_select_fields_creates_frame_with_chosen_fields(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use select_fields to create a new DynamicFrame with chosen fields"."""
    glueContext = glue_context(engine)
    persons_df = persons(glueContext, tmp_path)
    print("Schema for the persons DynamicFrame:")
    persons_df.printSchema()
    names = persons_df.select_fields(paths=["family_name", "given_name"])
    print("Schema for the names DynamicFrame, created with select_fields:")
    names.printSchema()
    names.toDF().show()
    assert out_lines(capsys.readouterr().out) == (
        ["Schema for the persons DynamicFrame:"] + expect(PERSONS_SCHEMA)
        + ["Schema for the names DynamicFrame, created with select_fields:"]
        + expect("""
root
|-- family_name: string
|-- given_name: string
""") + spark_table(["family_name", "given_name"], [r[:2] for r in ds.PERSON_NAMES[:20]], more=True))


@engines()
def test_spigot_writes_sample_records(engine, tmp_path):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use spigot to write sample fields from a DynamicFrame to Amazon S3": the
    first 10 records, as the JSON lines the page shows."""
    glueContext = glue_context(engine)
    persons_df = persons(glueContext, tmp_path)
    persons_df = persons_df.select_fields(paths=["family_name", "given_name", "birth_date"])
    out = tmp_path / "spigot"
    persons_df.spigot(path=str(out), options={"topk": 10})
    written = []
    for f in sorted(glob.glob(os.path.join(str(out), "**", "*"), recursive=True)):
        if os.path.isfile(f):
            written += [line for line in open(f).read().splitlines() if line.strip()]
    assert written == [
        '{"family_name":"%s","given_name":"%s","birth_date":"%s"}' % r
        for r in ds.PERSON_NAMES[:10]]


@engines()
def test_split_fields_splits_selected_fields(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use split_fields to split selected fields into a separate DynamicFrame"."""
    glueContext = glue_context(engine)
    legislators_relationalized = DynamicFrameCollection({
        "l_root_contact_details": contact_frame(glueContext, ds.SPLIT_ROWS_INPUT[:6],
                                                "l_root_contact_details")}, glueContext)
    frame_to_split = legislators_relationalized.select("l_root_contact_details")
    print("Inspect the input DynamicFrame schema:")
    frame_to_split.printSchema()
    split_fields_collection = frame_to_split.split_fields(["id", "index"], "left", "right")
    print("Inspect the schemas of the DynamicFrames created with split_fields:")
    split_fields_collection.select("left").printSchema()
    split_fields_collection.select("right").printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
Inspect the input DynamicFrame schema:
root
|-- id: long
|-- index: int
|-- contact_details.val.type: string
|-- contact_details.val.value: string
Inspect the schemas of the DynamicFrames created with split_fields:
root
|-- id: long
|-- index: int
root
|-- contact_details.val.type: string
|-- contact_details.val.value: string
""")


@engines(embedded=TODF)
def test_split_rows_splits_rows_by_value(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use split_rows to split rows in a DynamicFrame"."""
    glueContext = glue_context(engine)
    legislators_relationalized = DynamicFrameCollection({
        "l_root_contact_details": contact_frame(glueContext, ds.SPLIT_ROWS_INPUT,
                                                "l_root_contact_details")}, glueContext)
    frame_to_split = legislators_relationalized.select("l_root_contact_details")
    split_rows_collection = frame_to_split.split_rows({"id": {">": 10}}, "high", "low")
    print("Inspect the DynamicFrame that contains IDs < 10")
    split_rows_collection.select("low").toDF().show()
    print("Inspect the DynamicFrame that contains IDs > 10")
    split_rows_collection.select("high").toDF().show()
    high = [r for r in ds.SPLIT_ROWS_INPUT if r[0] > 10]
    assert out_lines(capsys.readouterr().out) == (
        ["Inspect the DynamicFrame that contains IDs < 10"]
        + contact_table(ds.SPLIT_ROWS_INPUT[:20], more=True)
        + ["Inspect the DynamicFrame that contains IDs > 10"]
        + contact_table(high[:20], more=True))


@engines()
def test_unbox_string_field_into_struct(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use unbox to unbox a string field into a struct": the printSchema (the
    page's show() truncates the Medicare values it would need)."""
    import json
    glueContext = glue_context(engine)
    recs = []
    for row in ds.MEDICARE_ROWS:
        rec = ds.mapped_medicare_record(row)
        a = rec["Address"]
        address_string = json.dumps({"Street": a["Street"], "City": a["City"], "State": a["State"],
                                     "Zip.Code": a["Zip.Code"], "Array": a["Array"]})
        recs.append(dict([("Average Total Payments", rec["Average Total Payments"]),
                          ("AddressString", address_string)]
                         + [(k, v) for k, v in rec.items() if k != "Average Total Payments"]))
    mapped_with_string = records_frame(glueContext, recs, "mapped_with_string")
    unboxed = mapped_with_string.unbox("AddressString", "json")
    unboxed.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
root
|-- Average Total Payments: string
|-- AddressString: struct
|    |-- Street: string
|    |-- City: string
|    |-- State: string
|    |-- Zip.Code: string
|    |-- Array: array
|    |    |-- element: string
|-- Average Covered Charges: string
|-- DRG Definition: string
|-- Average Medicare Payments: string
|-- Hospital Referral Region Description: string
|-- Address: struct
|    |-- Zip.Code: string
|    |-- City: string
|    |-- Array: array
|    |    |-- element: string
|    |-- State: string
|    |-- Street: string
|-- Provider Id: string
|-- Total Discharges: string
|-- Provider Name: string
""")


@engines()
def test_unnest_turns_nested_fields_into_top_level_fields(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use unnest to turn nested fields into top-level fields"."""
    glueContext = glue_context(engine)
    mapped_medicare = records_frame(glueContext, [ds.mapped_medicare_record(r) for r in ds.MEDICARE_ROWS],
                                    "mapped_medicare")
    unnested = mapped_medicare.unnest()
    unnested.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
root
|-- Average Total Payments: string
|-- Average Covered Charges: string
|-- DRG Definition: string
|-- Average Medicare Payments: string
|-- Hospital Referral Region Description: string
|-- Address.Zip.Code: string
|-- Address.City: string
|-- Address.Array: array
|    |-- element: string
|-- Address.State: string
|-- Address.Street: string
|-- Provider Id: string
|-- Total Discharges: string
|-- Provider Name: string
""")


@engines(embedded=TODF)
def test_errors_as_dynamic_frame_views_error_records(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use errorsAsDynamicFrame to view error records": a JSON file with one
    malformed record reads as a frame of the good records plus one error record. (The page's
    show() of the error frame and its callsite/stackTrace text name Glue's own files.)"""
    glueContext = glue_context(engine)
    folder = write_json_lines(tmp_path / "errors", ds.ERROR_DATA_JSON, "error_data.json")
    errors = glueContext.create_dynamic_frame.from_options("s3", {"paths": [folder]}, "json")
    print("Schema of errors DynamicFrame:")
    errors.printSchema()
    print("errors contains only valid records from the input dataset (2 of 4 records)")
    errors.toDF().show()
    print("Errors count:", str(errors.errorsCount()))
    error_record = errors.errorsAsDynamicFrame().toDF().head()
    error_fields = error_record["error"]
    print("Error fields: ")
    print(error_fields.asDict().keys())
    print("dynamicRecord : ", str(error_fields["dynamicRecord"]))
    assert out_lines(capsys.readouterr().out) == expect("""
Schema of errors DynamicFrame:
root
|-- id: int
|-- name: string
|-- surname: string
|-- height: int
errors contains only valid records from the input dataset (2 of 4 records)
+---+------+----------+------+
| id|  name|   surname|height|
+---+------+----------+------+
|  1|george|washington|   178|
|  4|  john|       jay|   190|
+---+------+----------+------+
Errors count: 1
Error fields: 
dict_keys(['callsite', 'msg', 'stackTrace', 'input', 'bytesread', 'source', 'dynamicRecord'])
dynamicRecord :  Row(id=2, name='benjamin', surname='franklin')
""")


@engines()
def test_errors_count_on_json_with_one_malformed_record(engine, tmp_path):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-dynamic-frame.html
    "Example: Use errorsAsDynamicFrame to view error records", without Spark
    DataFrames: the read does not fail, count() is the page's 2 valid records, errorsCount() is
    1 and errorsAsDynamicFrame() holds one error record."""
    glueContext = glue_context(engine)
    folder = write_json_lines(tmp_path / "errors", ds.ERROR_DATA_JSON, "error_data.json")
    errors = glueContext.create_dynamic_frame.from_options("s3", {"paths": [folder]}, "json")
    assert errors.count() == 2
    assert errors.errorsCount() == 1
    assert errors.errorsAsDynamicFrame().count() == 1
    # The page's error fields, and the record's members read before the break.
    (error,) = [r["error"] for r in errors.errorsAsDynamicFrame().to_arrow().to_pylist()]
    assert list(error) == ["callsite", "msg", "stackTrace", "input", "bytesread", "source",
                           "dynamicRecord"]
    assert error["dynamicRecord"] == {"id": 2, "name": "benjamin", "surname": "franklin"}
