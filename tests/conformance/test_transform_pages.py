"""The examples of the transform class pages (aws-glue-api-crawler-pyspark-transforms-*) that show
an output: the warehouse inventory chain (Unbox, UnnestFrame, DropNullFields, SplitFields), the
customer orders chain (Relationalize, SelectFromCollection, RenameField, Join) and DropFields.
These pages render code blocks with runs of spaces collapsed; printSchema indentation is Glue's
four-space step and show() tables are padded as Spark pads them (conformance_kit.spark_table)."""
from awsglue.transforms import (DropFields, DropNullFields, Join, RenameField, SelectFields,
                                SelectFromCollection, SplitFields, Unbox, UnnestFrame)

import datasets as ds
from conformance_kit import (engines, expect, frame_records, glue_context, json_frame, out_lines,
                             records_frame, spark_table)

TODF = "DynamicFrame.toDF() needs the Spark engine (SparkApiUnavailable)"
UNBOX_INT = ("unbox(format=\"json\") keeps the quoted numbers (\"220\") as string; the page's schema "
             "has strawberry, pineapple, mango: int, while the DynamicFrame page's unbox example "
             "keeps its quoted Zip.Code a string: the two pages disagree, OpenGlue follows JSON")
ROW_ORDER = ("root_customers rows come in input order (id 1, 1, 2, 3, 3); the page's table lists "
             "them 2, 3, 3, 1, 1")


def warehouse(ctx):
    """dyf_warehouse: the page builds it with spark.createDataFrame + DynamicFrame.fromDF; the same
    two string columns as records."""
    return records_frame(ctx, [{"warehouse_loc": w, "data": d} for w, d in ds.WAREHOUSE],
                         "dyf_warehouse")


UNBOXED_SCHEMA = """
root
|-- warehouse_loc: string
|-- data: struct
|    |-- strawberry: int
|    |-- pineapple: int
|    |-- mango: int
|    |-- pears: null
"""


@engines(embedded=UNBOX_INT, spark=UNBOX_INT)
def test_unbox_json_string_column(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-Unbox.html, "Example": Unbox.apply(path="data",
    format="json") printSchema. (The page's first printSchema names the column
    warehouse_location although its code names it warehouse_loc; that line is not compared.)"""
    glueContext = glue_context(engine)
    dyf_unbox = Unbox.apply(frame=warehouse(glueContext), path="data", format="json")
    dyf_unbox.printSchema()
    assert out_lines(capsys.readouterr().out) == expect(UNBOXED_SCHEMA)


@engines(embedded=TODF,
         spark="Spark 3 prints a struct cell as {220, 560, 350, null}; the page (Spark 2) shows "
               "[220, 560, 350,]")
def test_unbox_json_string_column_show(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-Unbox.html, "Example": dyf_unbox.toDF().show()."""
    glueContext = glue_context(engine)
    dyf_unbox = Unbox.apply(frame=warehouse(glueContext), path="data", format="json")
    dyf_unbox.toDF().show()
    assert out_lines(capsys.readouterr().out) == spark_table(
        ["warehouse_loc", "data"],
        [["TX_WAREHOUSE", "[220, 560, 350,]"], ["CA_WAREHOUSE", "[34, 123, 42,]"],
         ["CO_WAREHOUSE", "[340, 180, 2,]"]])


def unnested(ctx):
    dyf_unbox = Unbox.apply(frame=warehouse(ctx), path="data", format="json")
    return UnnestFrame.apply(frame=dyf_unbox)


@engines(embedded=UNBOX_INT, spark=UNBOX_INT)
def test_unnest_frame_flattens_struct(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-UnnestFrame.html, "Example" (the page's output
    starts at its first field line; the root line is compared as printSchema prints it)."""
    glueContext = glue_context(engine)
    unnested(glueContext).printSchema()
    assert out_lines(capsys.readouterr().out)[1:] == expect("""
|-- warehouse_loc: string
|-- data.strawberry: int
|-- data.pineapple: int
|-- data.mango: int
|-- data.pears: null
""")


def no_nulls(ctx):
    return DropNullFields.apply(frame=unnested(ctx))


@engines(embedded=TODF)
def test_drop_null_fields_then_split_fields(engine, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-SplitFields.html, "Example": the
    DropNullFields result (data.pears dropped) and the two frames SplitFields makes."""
    glueContext = glue_context(engine)
    dyf_dropNullfields = no_nulls(glueContext)
    dyf_dropNullfields.toDF().show()
    dyf_splitFields = SplitFields.apply(frame=dyf_dropNullfields,
                                        paths=["`data.strawberry`", "`data.pineapple`"],
                                        name1="a", name2="b")
    dyf_retrieve_a = SelectFromCollection.apply(dyf_splitFields, "a")
    dyf_retrieve_a.toDF().show()
    dyf_retrieve_b = SelectFromCollection.apply(dyf_splitFields, "b")
    dyf_retrieve_b.toDF().show()
    assert out_lines(capsys.readouterr().out) == (
        spark_table(["warehouse_loc", "data.strawberry", "data.pineapple", "data.mango"],
                    [["TX_WAREHOUSE", "220", "560", "350"], ["CA_WAREHOUSE", "34", "123", "42"],
                     ["CO_WAREHOUSE", "340", "180", "2"]])
        + spark_table(["data.strawberry", "data.pineapple"],
                      [["220", "560"], ["34", "123"], ["340", "180"]])
        + spark_table(["warehouse_loc", "data.mango"],
                      [["TX_WAREHOUSE", "350"], ["CA_WAREHOUSE", "42"], ["CO_WAREHOUSE", "2"]]))


def orders(ctx, tmp_path):
    return json_frame(ctx, tmp_path / "orders", ds.CUSTOMER_ORDERS)


@engines(embedded=TODF, spark=ROW_ORDER)
def test_relationalize_and_select_from_collection(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-SelectFromCollection.html, "Example" (with
    https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-Relationalize.html, "Example for Relationalize"):
    keys(), and the root and root_customers tables."""
    glueContext = glue_context(engine)
    dyf_relationize = orders(glueContext, tmp_path).relationalize("root", str(tmp_path / "out"))
    print(dyf_relationize.keys())
    SelectFromCollection.apply(dyf_relationize, "root").toDF().show()
    SelectFromCollection.apply(dyf_relationize, "root_customers").toDF().show()
    assert out_lines(capsys.readouterr().out) == (
        ["dict_keys(['root', 'root_customers'])"]
        + spark_table(["customers", "zip"], [["1", "75091"], ["2", "75023"], ["3", "90093"]])
        + spark_table(["id", "index", "customers.val.address", "customers.val.id"],
                      [["2", "0", "66 P Street, NY", "343"], ["3", "0", "708 Fed Ln, CA", "932"],
                       ["3", "1", "807 Deccan Dr, CA", "102"], ["1", "0", "108 Park Street, TX", "623"],
                       ["1", "1", "763 Marsh Ln, TX", "231"]]))


@engines(embedded=TODF, spark=ROW_ORDER)
def test_rename_field_on_relationalized_table(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-RenameField.html, "Example": renames the
    backticked dotted fields of root_customers and drops index and id."""
    glueContext = glue_context(engine)
    dyf_relationize = orders(glueContext, tmp_path).relationalize("root", str(tmp_path / "out"))
    dyf_flattened = SelectFromCollection.apply(dyf_relationize, "root_customers")
    dyf_renameField_1 = RenameField.apply(dyf_flattened, "`customers.val.address`", "address")
    dyf_renameField_2 = RenameField.apply(dyf_renameField_1, "`customers.val.id`", "cust_id")
    dyf_dropfields_rf = DropFields.apply(frame=dyf_renameField_2, paths=["index", "id"])
    dyf_dropfields_rf.toDF().show()
    assert out_lines(capsys.readouterr().out) == spark_table(
        ["address", "cust_id"],
        [["66 P Street, NY", "343"], ["708 Fed Ln, CA", "932"], ["807 Deccan Dr, CA", "102"],
         ["108 Park Street, TX", "623"], ["763 Marsh Ln, TX", "231"]])


@engines(embedded=TODF,
         spark="Spark 3 prints array<struct> cells as [{108 Park Street...; the page (Spark 2) "
               "shows [[108 Park Street...")
def test_join_names_the_duplicate_key_column_with_a_period(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-join.html, "Example": joining on zip keeps both
    zip columns, one of them renamed .zip. (dyf_selectFields, the page's SelectFields result,
    is rebuilt as the three zip values its output shows.)"""
    glueContext = glue_context(engine)
    dyf_json = orders(glueContext, tmp_path)
    dyf_selectFields = SelectFields.apply(
        frame=records_frame(glueContext, [{"zip": r["zip"], "other": 0} for r in ds.CUSTOMER_ORDERS]),
        paths=["zip"])
    dyf_join = Join.apply(dyf_json, dyf_selectFields, "zip", "zip")
    dyf_join.toDF().show()
    assert out_lines(capsys.readouterr().out) == spark_table(
        ["customers", ".zip", "zip"],
        [["[[108 Park Street...", "75091", "75091"], ["[[66 P Street, NY...", "75023", "75023"],
         ["[[708 Fed Ln, CA,...", "90093", "90093"]])


DROP_PAGE = "aws-glue-api-crawler-pyspark-transforms-DropFields"


def friends(ctx, tmp_path):
    return json_frame(ctx, tmp_path / "friends", ds.FRIENDS_JSON)


@engines()
def test_drop_fields_top_level(engine, tmp_path):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-DropFields.html, "Example": DropFields.apply(df, paths=['age'])."""
    glueContext = glue_context(engine)
    df_no_age = DropFields.apply(friends(glueContext, tmp_path), paths=["age"])
    assert frame_records(df_no_age) == [
        {"name": "Sally", "location": {"state": "WY", "county": "Fremont"}, "friends": []},
        {"name": "Varun", "location": {"state": "NE", "county": "Douglas"},
         "friends": [{"name": "Arjun", "age": 3}]},
        {"name": "George", "location": {"state": "NY"},
         "friends": [{"name": "Fred"}, {"name": "Amy", "age": 15}]},
        {"name": "Haruki", "location": {"state": "AK", "county": "Denali"}},
        {"name": "Sheila", "friends": [{"name": "Nancy", "age": 22}]},
    ]


@engines()
def test_drop_fields_nested_struct_field(engine, tmp_path):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-DropFields.html, "Example": DropFields.apply(df, paths=['location.county'])."""
    glueContext = glue_context(engine)
    df_no_county = DropFields.apply(friends(glueContext, tmp_path), paths=["location.county"])
    assert frame_records(df_no_county) == [
        {"name": "Sally", "age": 23, "location": {"state": "WY"}, "friends": []},
        {"name": "Varun", "age": 34, "location": {"state": "NE"}, "friends": [{"name": "Arjun", "age": 3}]},
        {"name": "George", "age": 52, "location": {"state": "NY"},
         "friends": [{"name": "Fred"}, {"name": "Amy", "age": 15}]},
        {"name": "Haruki", "age": 21, "location": {"state": "AK"}},
        {"name": "Sheila", "age": 63, "friends": [{"name": "Nancy", "age": 22}]},
    ]


DROP_IN_ARRAY = ("DropFields(paths=['friends.age']) leaves age in the array's structs "
                 "(Varun keeps {name: Arjun, age: 3}); the page drops it in every element")


@engines()
def test_drop_fields_through_array(engine, tmp_path, capsys):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-transforms-DropFields.html, "Example": DropFields.apply(df, paths=['friends.age']): the member age is
    removed from every element of the array friends. The page's records and schema."""
    glueContext = glue_context(engine)
    df_no_friend_age = DropFields.apply(friends(glueContext, tmp_path), paths=["friends.age"])
    df_no_friend_age.printSchema()
    assert out_lines(capsys.readouterr().out) == expect("""
root
|-- name: string
|-- age: int
|-- location: struct
|    |-- state: string
|    |-- county: string
|-- friends: array
|    |-- element: struct
|    |    |-- name: string
""")
    # The page shows Sally without her (empty) friends list here; an empty list is compared as
    # absent.
    got = [{k: v for k, v in r.items() if v != []} for r in frame_records(df_no_friend_age)]
    assert got == [
        {"name": "Sally", "age": 23, "location": {"state": "WY", "county": "Fremont"}},
        {"name": "Varun", "age": 34, "location": {"state": "NE", "county": "Douglas"},
         "friends": [{"name": "Arjun"}]},
        {"name": "George", "age": 52, "location": {"state": "NY"},
         "friends": [{"name": "Fred"}, {"name": "Amy"}]},
        {"name": "Haruki", "age": 21, "location": {"state": "AK", "county": "Denali"}},
        {"name": "Sheila", "age": 63, "friends": [{"name": "Nancy"}]},
    ]
