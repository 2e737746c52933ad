"""End-to-end tests of the Data Catalog's user-defined functions, column statistics and tags,
through boto3 against the real server."""
import datetime

import pytest

from conftest import (ACCOUNT_ID, REGION, all_pages, database_arn, partition_input, raises_glue,
                      table_arn, table_input, unique)


# --- User-defined functions -----------------------------------------------------------------

def function_input(name, class_name="com.example.Udf", **extra):
    return {"FunctionName": name, "ClassName": class_name, "OwnerName": "analyst",
            "OwnerType": "USER", **extra}


def function_names(functions):
    return sorted(f["FunctionName"] for f in functions)


def test_create_and_get_function(glue, db):
    before = datetime.datetime.now(datetime.timezone.utc)
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input(
        "parse_ua", FunctionType="REGULAR_FUNCTION",
        ResourceUris=[{"ResourceType": "JAR", "Uri": "s3://jars/udf.jar"}]))
    f = glue.get_user_defined_function(DatabaseName=db, FunctionName="parse_ua")["UserDefinedFunction"]
    assert f["FunctionName"] == "parse_ua"
    assert f["DatabaseName"] == db
    assert f["ClassName"] == "com.example.Udf"
    assert f["OwnerName"] == "analyst" and f["OwnerType"] == "USER"
    assert f["FunctionType"] == "REGULAR_FUNCTION"
    assert f["ResourceUris"] == [{"ResourceType": "JAR", "Uri": "s3://jars/udf.jar"}]
    assert f["CatalogId"] == ACCOUNT_ID
    assert isinstance(f["CreateTime"], datetime.datetime)
    assert abs((f["CreateTime"] - before).total_seconds()) < 60


def test_function_names_are_folded_to_lowercase(glue, db):
    glue.create_user_defined_function(DatabaseName=db.upper(), FunctionInput=function_input("MyFunc"))
    f = glue.get_user_defined_function(DatabaseName=db, FunctionName="MYFUNC")["UserDefinedFunction"]
    assert f["FunctionName"] == "myfunc" and f["DatabaseName"] == db
    with raises_glue("AlreadyExistsException", "already exists"):
        glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("myfunc"))
    glue.delete_user_defined_function(DatabaseName=db, FunctionName="MyFunc")
    with raises_glue("EntityNotFoundException", "myfunc"):
        glue.get_user_defined_function(DatabaseName=db, FunctionName="myfunc")


def test_function_errors(glue, db):
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.create_user_defined_function(DatabaseName=missing_db, FunctionInput=function_input("f"))
    with raises_glue("EntityNotFoundException", missing_db):
        glue.get_user_defined_function(DatabaseName=missing_db, FunctionName="f")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.get_user_defined_functions(DatabaseName=missing_db, Pattern="*")
    with raises_glue("EntityNotFoundException", "nosuchfn"):
        glue.get_user_defined_function(DatabaseName=db, FunctionName="nosuchfn")
    with raises_glue("EntityNotFoundException", "nosuchfn"):
        glue.update_user_defined_function(DatabaseName=db, FunctionName="nosuchfn",
                                          FunctionInput=function_input("nosuchfn"))
    with raises_glue("EntityNotFoundException", "nosuchfn"):
        glue.delete_user_defined_function(DatabaseName=db, FunctionName="nosuchfn")
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    with raises_glue("AlreadyExistsException"):
        glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f", "other.Class"))
    assert glue.get_user_defined_function(DatabaseName=db, FunctionName="f")[
        "UserDefinedFunction"]["ClassName"] == "com.example.Udf"


@pytest.mark.parametrize("pattern, expected", [
    ("*", ["agg_max", "agg_min", "geo_distance", "parse_ua", "parse_url"]),
    ("parse_*", ["parse_ua", "parse_url"]),
    ("PARSE_*", ["parse_ua", "parse_url"]),
    ("agg_max|geo_*", ["agg_max", "geo_distance"]),
    ("agg_m[a-i][nx]", ["agg_max", "agg_min"]),
    ("parse", []),
    ("*url", ["parse_url"]),
])
def test_get_functions_pattern(glue, db, pattern, expected):
    for name in ("agg_max", "agg_min", "geo_distance", "parse_ua", "parse_url"):
        glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input(name))
    found = all_pages(glue.get_user_defined_functions, "UserDefinedFunctions", DatabaseName=db,
                      Pattern=pattern)
    assert function_names(found) == expected
    assert all(f["DatabaseName"] == db for f in found)


def test_get_functions_bad_pattern(glue, db):
    with raises_glue("InvalidInputException", "parse_("):
        glue.get_user_defined_functions(DatabaseName=db, Pattern="parse_(")


def test_get_functions_across_databases_and_pages(glue):
    prefix = unique("fx")
    dbs = [unique("fdb"), unique("fdb")]
    for d in dbs:
        glue.create_database(DatabaseInput={"Name": d})
    try:
        for k in range(5):
            glue.create_user_defined_function(DatabaseName=dbs[k % 2], FunctionInput=function_input(f"{prefix}_{k}"))
        everywhere = all_pages(glue.get_user_defined_functions, "UserDefinedFunctions",
                               Pattern=prefix + "_*")
        assert sorted((f["DatabaseName"], f["FunctionName"]) for f in everywhere) == sorted(
            (dbs[k % 2], f"{prefix}_{k}") for k in range(5))
        seen, token = [], None
        while True:
            page = glue.get_user_defined_functions(DatabaseName=dbs[0], Pattern="*", MaxResults=2,
                                                   **({"NextToken": token} if token else {}))
            assert len(page["UserDefinedFunctions"]) <= 2
            seen.extend(f["FunctionName"] for f in page["UserDefinedFunctions"])
            token = page.get("NextToken")
            if not token:
                break
        assert sorted(seen) == [f"{prefix}_0", f"{prefix}_2", f"{prefix}_4"]
    finally:
        for d in dbs:
            glue.delete_database(Name=d)


def test_update_function(glue, db):
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    created = glue.get_user_defined_function(DatabaseName=db, FunctionName="f")["UserDefinedFunction"]
    glue.update_user_defined_function(DatabaseName=db, FunctionName="f", FunctionInput=function_input(
        "f", "com.example.V2", ResourceUris=[{"ResourceType": "FILE", "Uri": "s3://x/y.py"}]))
    f = glue.get_user_defined_function(DatabaseName=db, FunctionName="f")["UserDefinedFunction"]
    assert f["ClassName"] == "com.example.V2"
    assert f["ResourceUris"] == [{"ResourceType": "FILE", "Uri": "s3://x/y.py"}]
    assert f["CreateTime"] == created["CreateTime"]


def test_update_function_renames(glue, db):
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("old"))
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("taken"))
    arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:userDefinedFunction/{db}/"
    glue.tag_resource(ResourceArn=arn + "old", TagsToAdd={"k": "v"})
    glue.update_user_defined_function(DatabaseName=db, FunctionName="old", FunctionInput=function_input("New"))
    names = function_names(glue.get_user_defined_functions(DatabaseName=db, Pattern="*")["UserDefinedFunctions"])
    assert names == ["new", "taken"]
    # The tags moved with the function.
    assert glue.get_tags(ResourceArn=arn + "new")["Tags"] == {"k": "v"}
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("old"))
    assert glue.get_tags(ResourceArn=arn + "old")["Tags"] == {}
    with raises_glue("AlreadyExistsException", "taken"):
        glue.update_user_defined_function(DatabaseName=db, FunctionName="new", FunctionInput=function_input("taken"))
    names = function_names(glue.get_user_defined_functions(DatabaseName=db, Pattern="*")["UserDefinedFunctions"])
    assert names == ["new", "old", "taken"]


def test_delete_function(glue, db):
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("g"))
    glue.delete_user_defined_function(DatabaseName=db, FunctionName="f")
    assert function_names(glue.get_user_defined_functions(DatabaseName=db, Pattern="*")["UserDefinedFunctions"]) == ["g"]
    with raises_glue("EntityNotFoundException", "f"):
        glue.delete_user_defined_function(DatabaseName=db, FunctionName="f")


# --- Column statistics ----------------------------------------------------------------------

ANALYZED = datetime.datetime(2024, 5, 1, 8, 0, tzinfo=datetime.timezone.utc)


def long_stats(column, low, high, nulls=0, distinct=10):
    return {"ColumnName": column, "ColumnType": "bigint", "AnalyzedTime": ANALYZED,
            "StatisticsData": {"Type": "LONG", "LongColumnStatisticsData": {
                "MinimumValue": low, "MaximumValue": high, "NumberOfNulls": nulls,
                "NumberOfDistinctValues": distinct}}}


def string_stats(column, max_len=12, avg=4.5):
    return {"ColumnName": column, "ColumnType": "string", "AnalyzedTime": ANALYZED,
            "StatisticsData": {"Type": "STRING", "StringColumnStatisticsData": {
                "MaximumLength": max_len, "AverageLength": avg, "NumberOfNulls": 1,
                "NumberOfDistinctValues": 3}}}


@pytest.fixture()
def stats_table(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.batch_create_partition(DatabaseName=db, TableName="t", PartitionInputList=[
        partition_input(["2023"]), partition_input(["2024"])])
    return db, "t"


def test_table_column_statistics_round_trip(glue, stats_table):
    db, t = stats_table
    out = glue.update_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnStatisticsList=[
        long_stats("id", 1, 999), string_stats("v"), long_stats("nosuch", 0, 1)])
    assert len(out["Errors"]) == 1
    error = out["Errors"][0]
    assert error["ColumnStatistics"]["ColumnName"] == "nosuch"
    assert error["Error"]["ErrorCode"] == "EntityNotFoundException"
    assert "nosuch" in error["Error"]["ErrorMessage"]

    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t,
                                               ColumnNames=["id", "v", "nosuch"])
    by_name = {s["ColumnName"]: s for s in got["ColumnStatisticsList"]}
    assert set(by_name) == {"id", "v"}
    assert by_name["id"]["StatisticsData"]["LongColumnStatisticsData"] == {
        "MinimumValue": 1, "MaximumValue": 999, "NumberOfNulls": 0, "NumberOfDistinctValues": 10}
    assert by_name["v"]["StatisticsData"]["StringColumnStatisticsData"]["AverageLength"] == 4.5
    assert by_name["id"]["AnalyzedTime"] == ANALYZED
    assert by_name["id"]["ColumnType"] == "bigint"
    assert [e["ColumnName"] for e in got["Errors"]] == ["nosuch"]
    assert got["Errors"][0]["Error"]["ErrorCode"] == "EntityNotFoundException"

    # Updating again replaces the column's statistics.
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=t,
                                            ColumnStatisticsList=[long_stats("id", 5, 6)])
    again = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnNames=["id"])
    assert again["ColumnStatisticsList"][0]["StatisticsData"]["LongColumnStatisticsData"]["MaximumValue"] == 6
    assert again["Errors"] == []


def test_table_column_statistics_without_stats_is_a_per_column_error(glue, stats_table):
    db, t = stats_table
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnNames=["id"])
    assert got["ColumnStatisticsList"] == []
    assert got["Errors"][0]["ColumnName"] == "id"
    assert got["Errors"][0]["Error"]["ErrorCode"] == "EntityNotFoundException"


def test_delete_table_column_statistics(glue, stats_table):
    db, t = stats_table
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnStatisticsList=[
        long_stats("id", 1, 2), string_stats("v")])
    glue.delete_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnName="id")
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnNames=["id", "v"])
    assert [s["ColumnName"] for s in got["ColumnStatisticsList"]] == ["v"]
    assert [e["ColumnName"] for e in got["Errors"]] == ["id"]
    with raises_glue("EntityNotFoundException", "id"):
        glue.delete_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnName="id")
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.delete_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnName="nosuch")


def test_column_statistics_on_missing_table(glue, db):
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_column_statistics_for_table(DatabaseName=db, TableName="nosuch", ColumnNames=["id"])
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.update_column_statistics_for_table(DatabaseName=db, TableName="nosuch",
                                                ColumnStatisticsList=[long_stats("id", 1, 2)])
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.delete_column_statistics_for_table(DatabaseName=db, TableName="nosuch", ColumnName="id")
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_column_statistics_for_partition(DatabaseName=db, TableName="nosuch",
                                                 PartitionValues=["2024"], ColumnNames=["id"])


def test_column_statistics_list_limit_is_25(glue, stats_table):
    db, t = stats_table
    with raises_glue("ValidationException", "25"):
        glue.update_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnStatisticsList=[
            long_stats("id", 1, k) for k in range(26)])


def test_partition_column_statistics_are_per_partition(glue, stats_table):
    db, t = stats_table
    out = glue.update_column_statistics_for_partition(
        DatabaseName=db, TableName=t, PartitionValues=["2024"],
        ColumnStatisticsList=[long_stats("id", 100, 200), long_stats("nosuch", 0, 0)])
    assert [e["ColumnStatistics"]["ColumnName"] for e in out["Errors"]] == ["nosuch"]
    assert out["Errors"][0]["Error"]["ErrorCode"] == "EntityNotFoundException"
    glue.update_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["2023"],
                                                ColumnStatisticsList=[long_stats("id", 1, 2)])

    def max_id(year):
        got = glue.get_column_statistics_for_partition(DatabaseName=db, TableName=t,
                                                       PartitionValues=[year], ColumnNames=["id"])
        assert got["Errors"] == []
        return got["ColumnStatisticsList"][0]["StatisticsData"]["LongColumnStatisticsData"]["MaximumValue"]

    assert max_id("2024") == 200 and max_id("2023") == 2
    # Table-level statistics are separate from partition statistics.
    table_level = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnNames=["id"])
    assert table_level["ColumnStatisticsList"] == []

    got = glue.get_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"],
                                                   ColumnNames=["id", "v", "nosuch"])
    assert [s["ColumnName"] for s in got["ColumnStatisticsList"]] == ["id"]
    assert sorted(e["ColumnName"] for e in got["Errors"]) == ["nosuch", "v"]

    glue.delete_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"],
                                                ColumnName="id")
    with raises_glue("EntityNotFoundException", "id"):
        glue.delete_column_statistics_for_partition(DatabaseName=db, TableName=t,
                                                    PartitionValues=["2024"], ColumnName="id")
    assert max_id("2023") == 2


def test_partition_column_statistics_on_missing_partition(glue, stats_table):
    db, t = stats_table
    with raises_glue("EntityNotFoundException", "partition"):
        glue.update_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["1999"],
                                                    ColumnStatisticsList=[long_stats("id", 1, 2)])
    with raises_glue("EntityNotFoundException", "partition"):
        glue.get_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["1999"],
                                                 ColumnNames=["id"])
    with raises_glue("EntityNotFoundException", "partition"):
        glue.delete_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["1999"],
                                                    ColumnName="id")


def test_statistics_go_with_their_partition_and_table(glue, stats_table):
    db, t = stats_table
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=t,
                                            ColumnStatisticsList=[long_stats("id", 1, 2)])
    glue.update_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"],
                                                ColumnStatisticsList=[long_stats("id", 1, 2)])
    # A deleted and re-created partition starts without statistics.
    glue.delete_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"])
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024"]))
    got = glue.get_column_statistics_for_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"],
                                                   ColumnNames=["id"])
    assert got["ColumnStatisticsList"] == []
    # So does a deleted and re-created table.
    glue.delete_table(DatabaseName=db, Name=t)
    glue.create_table(DatabaseName=db, TableInput=table_input(t))
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=t, ColumnNames=["id"])
    assert got["ColumnStatisticsList"] == []


# --- Tags -----------------------------------------------------------------------------------

def test_tag_untag_get_on_a_database(glue, db):
    arn = database_arn(db)
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {}
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"env": "dev", "team": "data"})
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"env": "dev", "team": "data"}
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"env": "prod", "cost": "7"})
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"env": "prod", "team": "data", "cost": "7"}
    glue.untag_resource(ResourceArn=arn, TagsToRemove=["team", "not-there"])
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"env": "prod", "cost": "7"}


def test_table_tags_are_separate_from_database_tags(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.create_table(DatabaseName=db, TableInput=table_input("u"))
    glue.tag_resource(ResourceArn=database_arn(db), TagsToAdd={"level": "db"})
    glue.tag_resource(ResourceArn=table_arn(db, "t"), TagsToAdd={"level": "table"})
    assert glue.get_tags(ResourceArn=table_arn(db, "t"))["Tags"] == {"level": "table"}
    assert glue.get_tags(ResourceArn=table_arn(db, "u"))["Tags"] == {}
    assert glue.get_tags(ResourceArn=database_arn(db))["Tags"] == {"level": "db"}
    glue.untag_resource(ResourceArn=table_arn(db, "t"), TagsToRemove=["level"])
    assert glue.get_tags(ResourceArn=table_arn(db, "t"))["Tags"] == {}
    assert glue.get_tags(ResourceArn=database_arn(db))["Tags"] == {"level": "db"}


def test_tags_on_a_function(glue, db):
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:userDefinedFunction/{db}/f"
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"k": "v"})
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"k": "v"}


def test_tags_on_unknown_resources(glue, db):
    for arn in (database_arn(unique("nodb")), table_arn(db, "nosuch"),
                table_arn(unique("nodb"), "t"),
                f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:userDefinedFunction/{db}/nosuch"):
        with raises_glue("EntityNotFoundException"):
            glue.tag_resource(ResourceArn=arn, TagsToAdd={"k": "v"})
        with raises_glue("EntityNotFoundException"):
            glue.untag_resource(ResourceArn=arn, TagsToRemove=["k"])
        with raises_glue("EntityNotFoundException"):
            glue.get_tags(ResourceArn=arn)


def test_malformed_arn_is_invalid_input(glue):
    with raises_glue("InvalidInputException", "arn"):
        glue.get_tags(ResourceArn="arn:aws:glue:us-east-1")


def test_tag_limits(glue, db):
    arn = database_arn(db)
    with raises_glue("ValidationException", "50"):
        glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": "v" for i in range(51)})
    glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": "v" for i in range(30)})
    with raises_glue("InvalidInputException", "50"):
        glue.tag_resource(ResourceArn=arn, TagsToAdd={f"x{i}": "v" for i in range(21)})
    assert len(glue.get_tags(ResourceArn=arn)["Tags"]) == 30
    # Overwriting existing keys does not count twice.
    glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": "w" for i in range(30)})
    glue.tag_resource(ResourceArn=arn, TagsToAdd={f"x{i}": "v" for i in range(20)})
    assert len(glue.get_tags(ResourceArn=arn)["Tags"]) == 50


def test_a_function_deleted_and_created_again_has_no_tags(glue, db):
    arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:userDefinedFunction/{db}/f"
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"owner": "old"})
    glue.delete_user_defined_function(DatabaseName=db, FunctionName="f")
    glue.create_user_defined_function(DatabaseName=db, FunctionInput=function_input("f"))
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {}


def test_functions_of_a_deleted_database_leave_no_tags(glue):
    name = unique("db")
    arn = f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:userDefinedFunction/{name}/f"
    glue.create_database(DatabaseInput={"Name": name})
    glue.create_user_defined_function(DatabaseName=name, FunctionInput=function_input("f"))
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"owner": "old"})
    glue.delete_database(Name=name)
    glue.create_database(DatabaseInput={"Name": name})
    try:
        glue.create_user_defined_function(DatabaseName=name, FunctionInput=function_input("f"))
        assert glue.get_tags(ResourceArn=arn)["Tags"] == {}
    finally:
        glue.delete_database(Name=name)


def test_statistics_of_every_type_round_trip(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", cols=(
        ("b", "boolean"), ("dt", "date"), ("amount", "decimal(10,2)"), ("x", "double"),
        ("raw", "binary"))))
    day = datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)
    stats = [
        {"ColumnName": "b", "ColumnType": "boolean", "AnalyzedTime": ANALYZED, "StatisticsData": {
            "Type": "BOOLEAN", "BooleanColumnStatisticsData": {
                "NumberOfTrues": 3, "NumberOfFalses": 4, "NumberOfNulls": 0}}},
        {"ColumnName": "dt", "ColumnType": "date", "AnalyzedTime": ANALYZED, "StatisticsData": {
            "Type": "DATE", "DateColumnStatisticsData": {
                "MinimumValue": day, "MaximumValue": ANALYZED, "NumberOfNulls": 0,
                "NumberOfDistinctValues": 9}}},
        {"ColumnName": "amount", "ColumnType": "decimal(10,2)", "AnalyzedTime": ANALYZED,
         "StatisticsData": {"Type": "DECIMAL", "DecimalColumnStatisticsData": {
             "MinimumValue": {"UnscaledValue": b"\x01\x00", "Scale": 2},
             "MaximumValue": {"UnscaledValue": b"\x7f\xff", "Scale": 2},
             "NumberOfNulls": 2, "NumberOfDistinctValues": 5}}},
        {"ColumnName": "x", "ColumnType": "double", "AnalyzedTime": ANALYZED, "StatisticsData": {
            "Type": "DOUBLE", "DoubleColumnStatisticsData": {
                "MinimumValue": -1.5, "MaximumValue": 2.25, "NumberOfNulls": 0,
                "NumberOfDistinctValues": 4}}},
        {"ColumnName": "raw", "ColumnType": "binary", "AnalyzedTime": ANALYZED, "StatisticsData": {
            "Type": "BINARY", "BinaryColumnStatisticsData": {
                "MaximumLength": 100, "AverageLength": 12.5, "NumberOfNulls": 1}}},
    ]
    assert glue.update_column_statistics_for_table(DatabaseName=db, TableName="t",
                                                   ColumnStatisticsList=stats)["Errors"] == []
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName="t",
                                               ColumnNames=["b", "dt", "amount", "x", "raw"])
    assert got["Errors"] == []
    by_name = {s["ColumnName"]: s for s in got["ColumnStatisticsList"]}
    for s in stats:
        assert by_name[s["ColumnName"]] == s, s["ColumnName"]
