"""End-to-end tests of the Data Catalog's table operations, through boto3 against the real server:
CreateTable, GetTable, GetTables, UpdateTable, DeleteTable, BatchDeleteTable, table versions and
SearchTables."""
import datetime

import pytest

from conftest import (ACCOUNT_ID, all_pages, partition_input, raises_glue, table_input,
                      table_arn, unique)


def names(tables):
    return sorted(t["Name"] for t in tables)


def test_create_and_get_table_round_trip(glue, db):
    before = datetime.datetime.now(datetime.timezone.utc)
    accessed = datetime.datetime(2024, 3, 1, 12, 30, tzinfo=datetime.timezone.utc)
    tin = table_input("orders", partition_keys=(("year", "string"), ("month", "int")))
    tin.update({"Description": "all orders", "Owner": "sales", "Retention": 7,
                "LastAccessTime": accessed})
    tin["StorageDescriptor"]["Columns"][0]["Comment"] = "order id"
    glue.create_table(DatabaseName=db, TableInput=tin)
    t = glue.get_table(DatabaseName=db, Name="orders")["Table"]
    assert t["Name"] == "orders"
    assert t["DatabaseName"] == db
    assert t["CatalogId"] == ACCOUNT_ID
    assert t["Description"] == "all orders"
    assert t["Owner"] == "sales"
    assert t["Retention"] == 7
    assert t["TableType"] == "EXTERNAL_TABLE"
    assert t["Parameters"] == {"classification": "json"}
    assert t["PartitionKeys"] == [{"Name": "year", "Type": "string"}, {"Name": "month", "Type": "int"}]
    sd = t["StorageDescriptor"]
    assert sd["Columns"] == [{"Name": "id", "Type": "bigint", "Comment": "order id"},
                             {"Name": "v", "Type": "string"}]
    assert sd["Location"] == "s3://bucket/path/"
    assert sd["SerdeInfo"]["SerializationLibrary"] == "org.openx.data.jsonserde.JsonSerDe"
    assert t["LastAccessTime"] == accessed
    for field in ("CreateTime", "UpdateTime"):
        assert isinstance(t[field], datetime.datetime)
        assert abs((t[field] - before).total_seconds()) < 60
    assert t["VersionId"] == "0"
    assert t["IsRegisteredWithLakeFormation"] is False


def test_table_and_database_names_are_folded_to_lowercase(glue, db):
    glue.create_table(DatabaseName=db.upper(), TableInput=table_input("MyTable"))
    t = glue.get_table(DatabaseName=db, Name="mytable")["Table"]
    assert t["Name"] == "mytable" and t["DatabaseName"] == db
    assert glue.get_table(DatabaseName=db.upper(), Name="MYTABLE")["Table"]["Name"] == "mytable"
    assert names(glue.get_tables(DatabaseName=db)["TableList"]) == ["mytable"]
    with raises_glue("AlreadyExistsException", "already exists"):
        glue.create_table(DatabaseName=db, TableInput=table_input("mytable"))
    glue.delete_table(DatabaseName=db, Name="MyTaBlE")
    assert glue.get_tables(DatabaseName=db)["TableList"] == []


def test_catalog_id_of_the_account_is_accepted(glue, db):
    glue.create_table(CatalogId=ACCOUNT_ID, DatabaseName=db, TableInput=table_input("t"))
    assert glue.get_table(CatalogId=ACCOUNT_ID, DatabaseName=db, Name="t")["Table"]["CatalogId"] == ACCOUNT_ID
    assert names(glue.get_tables(CatalogId=ACCOUNT_ID, DatabaseName=db)["TableList"]) == ["t"]
    glue.delete_table(CatalogId=ACCOUNT_ID, DatabaseName=db, Name="t")


def test_create_table_errors(glue, db):
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.create_table(DatabaseName=missing_db, TableInput=table_input("t"))
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    with raises_glue("AlreadyExistsException", "already exists"):
        glue.create_table(DatabaseName=db, TableInput=table_input("t", partition_keys=()))
    # The failed create left the first definition alone.
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["PartitionKeys"] == [
        {"Name": "year", "Type": "string"}]
    with raises_glue("InvalidInputException", "year"):
        glue.create_table(DatabaseName=db, TableInput=table_input(
            "dup", partition_keys=(("year", "string"), ("Year", "int"))))
    with raises_glue("EntityNotFoundException"):
        glue.get_table(DatabaseName=db, Name="dup")


def test_get_table_errors_name_what_is_missing(glue, db):
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", "database", missing_db):
        glue.get_table(DatabaseName=missing_db, Name="t")
    with raises_glue("EntityNotFoundException", "table", "nosuchtable"):
        glue.get_table(DatabaseName=db, Name="nosuchtable")


@pytest.fixture()
def many_tables(glue, db):
    tables = ["sales_2023", "sales_2024", "sales", "orders", "orders_archive", "tbl_a", "tbl_b",
              "tbl_c", "customer"]
    for t in tables:
        glue.create_table(DatabaseName=db, TableInput=table_input(t))
    return db, tables


@pytest.mark.parametrize("expression, expected", [
    ("*", ["customer", "orders", "orders_archive", "sales", "sales_2023", "sales_2024", "tbl_a",
           "tbl_b", "tbl_c"]),
    ("sales_*", ["sales_2023", "sales_2024"]),
    ("sales*", ["sales", "sales_2023", "sales_2024"]),
    ("SALES_*", ["sales_2023", "sales_2024"]),
    ("*archive", ["orders_archive"]),
    ("orders", ["orders"]),
    ("sales", ["sales"]),
    ("orders|customer", ["customer", "orders"]),
    ("sales_*|tbl_a", ["sales_2023", "sales_2024", "tbl_a"]),
    ("tbl_[ab]", ["tbl_a", "tbl_b"]),
    ("sales_20[0-9]3", ["sales_2023"]),
    ("tbl_.", ["tbl_a", "tbl_b", "tbl_c"]),
    ("nomatch*", []),
])
def test_get_tables_expression(glue, many_tables, expression, expected):
    db, _ = many_tables
    assert names(all_pages(glue.get_tables, "TableList", DatabaseName=db, Expression=expression)) == expected


def test_get_tables_bad_expression_is_invalid_input(glue, db):
    with raises_glue("InvalidInputException", "sales_("):
        glue.get_tables(DatabaseName=db, Expression="sales_(")


def test_get_tables_in_missing_database_is_entity_not_found(glue):
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.get_tables(DatabaseName=missing_db)


def test_get_tables_pages_with_and_without_expression(glue, many_tables):
    db, tables = many_tables
    for expression, expected in ((None, sorted(tables)),
                                 ("sales*|tbl_*", ["sales", "sales_2023", "sales_2024", "tbl_a",
                                                   "tbl_b", "tbl_c"])):
        kwargs = {"DatabaseName": db, "MaxResults": 2}
        if expression:
            kwargs["Expression"] = expression
        seen, token, pages = [], None, 0
        while True:
            page = glue.get_tables(**kwargs, **({"NextToken": token} if token else {}))
            assert 0 < len(page["TableList"]) <= 2
            seen.extend(t["Name"] for t in page["TableList"])
            pages += 1
            token = page.get("NextToken")
            if not token:
                break
        assert sorted(seen) == expected and len(seen) == len(set(seen))
        assert pages == (len(expected) + 1) // 2


def test_get_tables_bad_token_is_invalid_input(glue, db):
    with raises_glue("InvalidInputException", "NextToken"):
        glue.get_tables(DatabaseName=db, NextToken="garbage")


def test_get_tables_attributes_to_get(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    only_name = glue.get_tables(DatabaseName=db, AttributesToGet=["NAME"])["TableList"]
    assert only_name == [{"Name": "t"}]
    with_type = glue.get_tables(DatabaseName=db, AttributesToGet=["NAME", "TABLE_TYPE"])["TableList"]
    assert with_type == [{"Name": "t", "TableType": "EXTERNAL_TABLE"}]


def test_update_table_archives_the_previous_version(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    v0 = glue.get_table(DatabaseName=db, Name="t")["Table"]
    new = table_input("t", cols=(("id", "bigint"), ("v", "string"), ("w", "double")))
    new["Description"] = "added w"
    glue.update_table(DatabaseName=db, TableInput=new)
    v1 = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert v1["VersionId"] == "1"
    assert v1["Description"] == "added w"
    assert [c["Name"] for c in v1["StorageDescriptor"]["Columns"]] == ["id", "v", "w"]
    assert v1["CreateTime"] == v0["CreateTime"]
    assert v1["UpdateTime"] >= v0["UpdateTime"]

    versions = glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]
    by_id = {v["VersionId"]: v["Table"] for v in versions}
    assert set(by_id) == {"0", "1"}
    assert "Description" not in by_id["0"]
    assert [c["Name"] for c in by_id["0"]["StorageDescriptor"]["Columns"]] == ["id", "v"]
    assert by_id["1"]["Description"] == "added w"
    assert isinstance(by_id["0"]["UpdateTime"], datetime.datetime)

    old = glue.get_table_version(DatabaseName=db, TableName="t", VersionId="0")["TableVersion"]
    assert old["VersionId"] == "0" and "Description" not in old["Table"]
    current = glue.get_table_version(DatabaseName=db, TableName="t")["TableVersion"]
    assert current["VersionId"] == "1" and current["Table"]["Description"] == "added w"


def test_update_table_skip_archive_keeps_no_old_version(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "one"},
                      SkipArchive=True)
    t = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert t["Description"] == "one"
    versions = glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]
    assert [v["VersionId"] for v in versions] == [t["VersionId"]]
    with raises_glue("EntityNotFoundException"):
        glue.get_table_version(DatabaseName=db, TableName="t", VersionId="0")
    # Without SkipArchive the version just replaced is kept again.
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "two"})
    versions = glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]
    descriptions = sorted(v["Table"]["Description"] for v in versions)
    assert descriptions == ["one", "two"]


def test_update_table_version_id_is_an_optimistic_lock(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    current = glue.get_table(DatabaseName=db, Name="t")["Table"]["VersionId"]
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "first"},
                      VersionId=current)
    # A second writer that read the same version loses.
    with raises_glue("ConcurrentModificationException", current):
        glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "second"},
                          VersionId=current)
    t = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert t["Description"] == "first"
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "third"},
                      VersionId=t["VersionId"])
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["Description"] == "third"


def test_update_missing_table_is_entity_not_found(glue, db):
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.update_table(DatabaseName=db, TableInput=table_input("nosuch"))
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.update_table(DatabaseName=missing_db, TableInput=table_input("t"))


def test_update_table_mixed_case_names(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_table(DatabaseName=db.upper(), TableInput={**table_input("T"), "Description": "x"})
    t = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert t["Name"] == "t" and t["Description"] == "x"


def test_delete_table_removes_versions_partitions_and_tags(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "v1"})
    glue.create_partition(DatabaseName=db, TableName="t", PartitionInput=partition_input(["2024"]))
    glue.tag_resource(ResourceArn=table_arn(db, "t"), TagsToAdd={"k": "v"})
    glue.delete_table(DatabaseName=db, Name="t")
    with raises_glue("EntityNotFoundException", "t"):
        glue.get_table(DatabaseName=db, Name="t")
    with raises_glue("EntityNotFoundException"):
        glue.get_table_versions(DatabaseName=db, TableName="t")
    with raises_glue("EntityNotFoundException"):
        glue.get_partitions(DatabaseName=db, TableName="t")
    with raises_glue("EntityNotFoundException"):
        glue.delete_table(DatabaseName=db, Name="t")
    # A new table of the same name has nothing of the old one.
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    assert glue.get_partitions(DatabaseName=db, TableName="t")["Partitions"] == []
    assert [v["VersionId"] for v in glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]] == ["0"]
    assert glue.get_tags(ResourceArn=table_arn(db, "t"))["Tags"] == {}


def test_delete_table_leaves_similarly_named_tables(glue, db):
    # "t" is a prefix of "t2" and "t_x": deleting it must not touch them or their partitions.
    for name in ("t", "t2", "t_x"):
        glue.create_table(DatabaseName=db, TableInput=table_input(name))
        glue.create_partition(DatabaseName=db, TableName=name, PartitionInput=partition_input(["2024"]))
    glue.delete_table(DatabaseName=db, Name="t")
    assert names(glue.get_tables(DatabaseName=db)["TableList"]) == ["t2", "t_x"]
    for name in ("t2", "t_x"):
        assert len(glue.get_partitions(DatabaseName=db, TableName=name)["Partitions"]) == 1


def test_delete_table_in_missing_database(glue):
    missing_db = unique("nodb")
    with raises_glue("EntityNotFoundException", missing_db):
        glue.delete_table(DatabaseName=missing_db, Name="t")


def test_batch_delete_table_reports_missing_tables_per_item(glue, db):
    for t in ("a", "b", "c"):
        glue.create_table(DatabaseName=db, TableInput=table_input(t))
    out = glue.batch_delete_table(DatabaseName=db, TablesToDelete=["a", "missing", "C"])
    assert len(out["Errors"]) == 1
    error = out["Errors"][0]
    assert error["TableName"] == "missing"
    assert error["ErrorDetail"]["ErrorCode"] == "EntityNotFoundException"
    assert "missing" in error["ErrorDetail"]["ErrorMessage"]
    assert names(glue.get_tables(DatabaseName=db)["TableList"]) == ["b"]
    assert glue.batch_delete_table(DatabaseName=db, TablesToDelete=["b"])["Errors"] == []
    assert glue.get_tables(DatabaseName=db)["TableList"] == []


def test_batch_delete_table_over_the_limit_is_a_validation_error(glue, db):
    with raises_glue("ValidationException", "100"):
        glue.batch_delete_table(DatabaseName=db, TablesToDelete=[f"t{i}" for i in range(101)])


def make_versions(glue, db, name, count):
    """A table with versions "0" .. str(count - 1); the last is current."""
    glue.create_table(DatabaseName=db, TableInput={**table_input(name), "Description": "v0"})
    for i in range(1, count):
        glue.update_table(DatabaseName=db, TableInput={**table_input(name), "Description": f"v{i}"})


def version_ids(glue, db, name):
    return sorted(int(v["VersionId"]) for v in
                  all_pages(glue.get_table_versions, "TableVersions", DatabaseName=db, TableName=name))


def test_get_table_versions_pages(glue, db):
    make_versions(glue, db, "t", 5)
    seen, token = [], None
    while True:
        page = glue.get_table_versions(DatabaseName=db, TableName="t", MaxResults=2,
                                       **({"NextToken": token} if token else {}))
        assert len(page["TableVersions"]) <= 2
        seen.extend(v["VersionId"] for v in page["TableVersions"])
        token = page.get("NextToken")
        if not token:
            break
    assert sorted(seen, key=int) == ["0", "1", "2", "3", "4"]
    for v in glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]:
        assert v["Table"]["Description"] == "v" + v["VersionId"]
        assert v["Table"]["VersionId"] == v["VersionId"]


def test_get_table_version_errors(glue, db):
    make_versions(glue, db, "t", 2)
    with raises_glue("EntityNotFoundException", "7"):
        glue.get_table_version(DatabaseName=db, TableName="t", VersionId="7")
    with raises_glue("InvalidInputException", "abc"):
        glue.get_table_version(DatabaseName=db, TableName="t", VersionId="abc")
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_table_version(DatabaseName=db, TableName="nosuch", VersionId="0")
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_table_versions(DatabaseName=db, TableName="nosuch")


def test_delete_table_version(glue, db):
    make_versions(glue, db, "t", 3)
    glue.delete_table_version(DatabaseName=db, TableName="t", VersionId="0")
    assert version_ids(glue, db, "t") == [1, 2]
    with raises_glue("EntityNotFoundException"):
        glue.get_table_version(DatabaseName=db, TableName="t", VersionId="0")
    with raises_glue("EntityNotFoundException", "0"):
        glue.delete_table_version(DatabaseName=db, TableName="t", VersionId="0")
    # The current version cannot be deleted.
    with raises_glue("InvalidInputException", "current"):
        glue.delete_table_version(DatabaseName=db, TableName="t", VersionId="2")
    assert version_ids(glue, db, "t") == [1, 2]
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["Description"] == "v2"
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.delete_table_version(DatabaseName=db, TableName="nosuch", VersionId="0")


def test_batch_delete_table_version_reports_errors_per_item(glue, db):
    make_versions(glue, db, "t", 4)
    out = glue.batch_delete_table_version(DatabaseName=db, TableName="t",
                                          VersionIds=["0", "99", "3", "1"])
    errors = {e["VersionId"]: e for e in out["Errors"]}
    assert set(errors) == {"99", "3"}
    assert errors["99"]["ErrorDetail"]["ErrorCode"] == "EntityNotFoundException"
    assert errors["3"]["ErrorDetail"]["ErrorCode"] == "InvalidInputException"
    assert all(e["TableName"] == "t" for e in out["Errors"])
    assert version_ids(glue, db, "t") == [2, 3]


def test_new_versions_after_deleting_old_ones_continue_numbering(glue, db):
    make_versions(glue, db, "t", 3)
    glue.batch_delete_table_version(DatabaseName=db, TableName="t", VersionIds=["0", "1"])
    glue.update_table(DatabaseName=db, TableInput={**table_input("t"), "Description": "v3"})
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["VersionId"] == "3"
    assert version_ids(glue, db, "t") == [2, 3]


# --- SearchTables ---------------------------------------------------------------------------

@pytest.fixture()
def search_setup(glue):
    """Two databases with tables carrying a unique token, so the search sees only these."""
    token = unique("tok")
    dbs = [unique("sdb"), unique("sdb")]
    specs = {
        dbs[0]: [("alpha", f"{token} first", {"rows": "100"}),
                 ("beta", f"{token} second", {"rows": "25"}),
                 ("customer-link", f"{token} link", {}),
                 ("xx-link-yy", f"{token} link", {}),
                 ("xxlinkyy", f"{token} link", {})],
        dbs[1]: [("gamma", f"{token} third", {"rows": "7"}),
                 ("other", "no token here", {})],
    }
    for d, tables in specs.items():
        glue.create_database(DatabaseInput={"Name": d})
        for name, description, params in tables:
            tin = table_input(name)
            tin["Description"] = description
            tin["Parameters"] = {**tin["Parameters"], **params}
            glue.create_table(DatabaseName=d, TableInput=tin)
    yield token, dbs
    for d in dbs:
        glue.delete_database(Name=d)


def search(glue, **kwargs):
    return all_pages(glue.search_tables, "TableList", **kwargs)


def test_search_tables_by_text(glue, search_setup):
    token, dbs = search_setup
    found = search(glue, SearchText=token)
    assert sorted((t["DatabaseName"], t["Name"]) for t in found) == sorted(
        [(dbs[0], n) for n in ("alpha", "beta", "customer-link", "xx-link-yy", "xxlinkyy")] +
        [(dbs[1], "gamma")])
    for t in found:
        assert isinstance(t["CreateTime"], datetime.datetime)
        assert t["StorageDescriptor"]["Columns"]


def test_search_tables_filters(glue, search_setup):
    token, dbs = search_setup
    in_db0 = search(glue, SearchText=token,
                    Filters=[{"Key": "DatabaseName", "Value": dbs[0], "Comparator": "EQUALS"}])
    assert names(in_db0) == ["alpha", "beta", "customer-link", "xx-link-yy", "xxlinkyy"]
    by_param = search(glue, SearchText=token, Filters=[{"Key": "rows", "Value": "25"}])
    assert names(by_param) == ["beta"]
    both = search(glue, SearchText=token, Filters=[
        {"Key": "DatabaseName", "Value": dbs[1]}, {"Key": "rows", "Value": "7"}])
    assert names(both) == ["gamma"]
    none = search(glue, SearchText=token, Filters=[
        {"Key": "DatabaseName", "Value": dbs[0]}, {"Key": "rows", "Value": "7"}])
    assert none == []


def test_search_tables_name_filter_matches_tokens(glue, search_setup):
    # Glue splits the Name on punctuation and compares each token with the Value: "link"
    # finds customer-link and xx-link-yy, but not xxlinkyy.
    token, dbs = search_setup
    found = search(glue, SearchText=token, Filters=[{"Key": "Name", "Value": "link"}])
    assert names(found) == ["customer-link", "xx-link-yy"]


def test_search_tables_sort_and_paging(glue, search_setup):
    token, dbs = search_setup
    scope = [{"Key": "DatabaseName", "Value": dbs[0]}]
    desc = search(glue, SearchText=token, Filters=scope,
                  SortCriteria=[{"FieldName": "Name", "Sort": "DESC"}])
    assert [t["Name"] for t in desc] == ["xxlinkyy", "xx-link-yy", "customer-link", "beta", "alpha"]
    asc = search(glue, SearchText=token, Filters=scope,
                 SortCriteria=[{"FieldName": "Name", "Sort": "ASC"}])
    assert [t["Name"] for t in asc] == ["alpha", "beta", "customer-link", "xx-link-yy", "xxlinkyy"]
    seen, next_token, pages = [], None, 0
    while True:
        page = glue.search_tables(SearchText=token, Filters=scope, MaxResults=2,
                                  SortCriteria=[{"FieldName": "Name", "Sort": "ASC"}],
                                  **({"NextToken": next_token} if next_token else {}))
        assert len(page["TableList"]) <= 2
        seen.extend(t["Name"] for t in page["TableList"])
        pages += 1
        next_token = page.get("NextToken")
        if not next_token:
            break
    assert seen == [t["Name"] for t in asc] and pages == 3


def test_search_tables_bad_token_is_invalid_input(glue):
    with raises_glue("InvalidInputException", "NextToken"):
        glue.search_tables(SearchText="x", NextToken="garbage")


def test_search_tables_finds_updates_and_forgets_deletes(glue, search_setup):
    token, dbs = search_setup
    new_token = unique("moved")
    tin = table_input("alpha")
    tin["Description"] = new_token
    glue.update_table(DatabaseName=dbs[0], TableInput=tin)
    assert names(search(glue, SearchText=new_token)) == ["alpha"]
    assert "alpha" not in names(search(glue, SearchText=token))
    glue.delete_table(DatabaseName=dbs[0], Name="alpha")
    assert search(glue, SearchText=new_token) == []


def test_search_tables_quoted_text_is_an_exact_match(glue, db):
    # SearchText in quotes "filters based on an exact match to the value".
    token = unique("exact")
    glue.create_table(DatabaseName=db, TableInput=table_input(token))
    glue.create_table(DatabaseName=db, TableInput=table_input(token + "_more"))
    assert names(search(glue, SearchText=token)) == [token, token + "_more"]
    assert names(search(glue, SearchText=f'"{token}"')) == [token]


def test_concurrent_updates_with_version_id_never_lose_a_write(glue, server, db):
    """Several clients update the same table, each from the version it read. Every successful
    update must be a distinct version; the others must fail with ConcurrentModification."""
    import threading
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    wins, conflicts, failures = [], [], []
    lock = threading.Lock()

    def writer(k):
        client = server.client()
        try:
            for attempt in range(8):
                version = client.get_table(DatabaseName=db, Name="t")["Table"]["VersionId"]
                try:
                    client.update_table(DatabaseName=db, VersionId=version, TableInput={
                        **table_input("t"), "Description": f"w{k}-{attempt}"})
                    with lock:
                        wins.append((version, f"w{k}-{attempt}"))
                except client.exceptions.ConcurrentModificationException:
                    with lock:
                        conflicts.append(k)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(repr(e))
        finally:
            client.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(wins) + len(conflicts) == 32
    # Each version was the base of exactly one successful update.
    assert len({v for v, _ in wins}) == len(wins)
    final = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert final["VersionId"] == str(len(wins))
    versions = all_pages(glue.get_table_versions, "TableVersions", DatabaseName=db, TableName="t")
    assert sorted(v["Table"].get("Description", "") for v in versions if v["VersionId"] != "0") == \
        sorted(d for _, d in wins)


def test_get_tables_does_not_see_a_similarly_named_database(glue):
    a = unique("dbx")
    for name in (a, a + "2", a + "_b"):
        glue.create_database(DatabaseInput={"Name": name})
        glue.create_table(DatabaseName=name, TableInput=table_input("in_" + name[-2:]))
    try:
        assert names(glue.get_tables(DatabaseName=a)["TableList"]) == ["in_" + a[-2:]]
    finally:
        for name in (a, a + "2", a + "_b"):
            glue.delete_database(Name=name)
