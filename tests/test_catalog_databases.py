"""End-to-end tests of the Data Catalog's database operations, through boto3 against the real
server: CreateDatabase, GetDatabase, GetDatabases, UpdateDatabase, DeleteDatabase."""
import datetime

from conftest import (ACCOUNT_ID, all_pages, database_arn, partition_input, raises_glue,
                      table_input, unique)


def test_create_and_get_database_returns_what_was_stored(glue):
    name = unique("db")
    before = datetime.datetime.now(datetime.timezone.utc)
    glue.create_database(DatabaseInput={
        "Name": name, "Description": "raw landing zone", "LocationUri": "s3://lake/raw/",
        "Parameters": {"owner": "data-eng", "tier": "bronze"}})
    try:
        db = glue.get_database(Name=name)["Database"]
        assert db["Name"] == name
        assert db["Description"] == "raw landing zone"
        assert db["LocationUri"] == "s3://lake/raw/"
        assert db["Parameters"] == {"owner": "data-eng", "tier": "bronze"}
        assert db["CatalogId"] == ACCOUNT_ID
        assert isinstance(db["CreateTime"], datetime.datetime)
        assert abs((db["CreateTime"] - before).total_seconds()) < 60
        # Glue's default for new tables: IAM principals keep full access.
        perms = db["CreateTableDefaultPermissions"]
        assert perms[0]["Principal"]["DataLakePrincipalIdentifier"] == "IAM_ALLOWED_PRINCIPALS"
        assert perms[0]["Permissions"] == ["ALL"]
    finally:
        glue.delete_database(Name=name)


def test_database_names_are_folded_to_lowercase(glue):
    suffix = unique("")
    glue.create_database(DatabaseInput={"Name": "MyDB" + suffix})
    try:
        lower = ("mydb" + suffix).lower()
        assert glue.get_database(Name=lower)["Database"]["Name"] == lower
        assert glue.get_database(Name="MYDB" + suffix.upper())["Database"]["Name"] == lower
        with raises_glue("AlreadyExistsException", "already exists"):
            glue.create_database(DatabaseInput={"Name": lower})
        names = [d["Name"] for d in all_pages(glue.get_databases, "DatabaseList")]
        assert lower in names and "MyDB" + suffix not in names
    finally:
        glue.delete_database(Name="MyDB" + suffix)
    with raises_glue("EntityNotFoundException"):
        glue.get_database(Name=lower)


def test_catalog_id_of_the_account_is_accepted(glue):
    name = unique("db")
    glue.create_database(CatalogId=ACCOUNT_ID, DatabaseInput={"Name": name})
    assert glue.get_database(CatalogId=ACCOUNT_ID, Name=name)["Database"]["CatalogId"] == ACCOUNT_ID
    # The default catalog is the account's: the same database without CatalogId.
    assert glue.get_database(Name=name)["Database"]["Name"] == name
    glue.update_database(CatalogId=ACCOUNT_ID, Name=name,
                         DatabaseInput={"Name": name, "Description": "d"})
    assert glue.get_database(Name=name)["Database"]["Description"] == "d"
    glue.delete_database(CatalogId=ACCOUNT_ID, Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_database(Name=name)


def test_create_existing_database_is_already_exists(glue, db):
    with raises_glue("AlreadyExistsException", "already exists"):
        glue.create_database(DatabaseInput={"Name": db, "Description": "again"})
    # The failed create did not touch the existing database.
    assert "Description" not in glue.get_database(Name=db)["Database"]


def test_get_missing_database_is_entity_not_found(glue):
    name = unique("nodb")
    with raises_glue("EntityNotFoundException", name):
        glue.get_database(Name=name)


def test_get_databases_pages_return_every_database_once(glue):
    prefix = unique("pg")
    names = [f"{prefix}_{i:02d}" for i in range(7)]
    for n in names:
        glue.create_database(DatabaseInput={"Name": n})
    try:
        seen = []
        token = None
        pages = 0
        while True:
            kwargs = {"MaxResults": 3}
            if token:
                kwargs["NextToken"] = token
            page = glue.get_databases(**kwargs)
            assert len(page["DatabaseList"]) <= 3
            for d in page["DatabaseList"]:
                assert isinstance(d["CreateTime"], datetime.datetime)
            seen.extend(d["Name"] for d in page["DatabaseList"])
            pages += 1
            token = page.get("NextToken")
            if not token:
                break
        assert len(seen) == len(set(seen)), "a database was returned twice"
        assert set(names) <= set(seen)
        assert pages >= 3
        # Without MaxResults, the same set.
        assert set(d["Name"] for d in all_pages(glue.get_databases, "DatabaseList")) == set(seen)
    finally:
        for n in names:
            glue.delete_database(Name=n)


def test_get_databases_pages_are_full_until_the_last(glue, db):
    sizes, token = [], None
    while True:
        page = glue.get_databases(MaxResults=2, **({"NextToken": token} if token else {}))
        sizes.append(len(page["DatabaseList"]))
        token = page.get("NextToken")
        if not token:
            break
    # A token is handed out only when more databases follow: no empty last page.
    assert all(n == 2 for n in sizes[:-1]) and 1 <= sizes[-1] <= 2


def test_get_databases_bad_token_is_invalid_input(glue):
    with raises_glue("InvalidInputException", "NextToken"):
        glue.get_databases(NextToken="bm90LWEtdG9rZW4=")


def test_get_databases_attributes_to_get_name(glue, db):
    dbs = all_pages(glue.get_databases, "DatabaseList", AttributesToGet=["NAME"])
    mine = [d for d in dbs if d["Name"] == db]
    assert mine == [{"Name": db}]


def test_update_database_replaces_the_definition(glue, db):
    created = glue.get_database(Name=db)["Database"]
    glue.update_database(Name=db, DatabaseInput={
        "Name": db, "Description": "curated", "Parameters": {"k": "v2"}, "LocationUri": "s3://x/"})
    updated = glue.get_database(Name=db)["Database"]
    assert updated["Description"] == "curated"
    assert updated["Parameters"] == {"k": "v2"}
    assert updated["LocationUri"] == "s3://x/"
    assert updated["CreateTime"] == created["CreateTime"]
    # Update replaces: members left out are gone.
    glue.update_database(Name=db, DatabaseInput={"Name": db})
    again = glue.get_database(Name=db)["Database"]
    assert "Description" not in again and "LocationUri" not in again
    assert again["Parameters"] == {}


def test_update_database_with_mixed_case_name(glue, db):
    glue.update_database(Name=db.upper(), DatabaseInput={"Name": db.upper(), "Description": "x"})
    assert glue.get_database(Name=db)["Database"]["Description"] == "x"


def test_update_missing_database_is_entity_not_found(glue):
    name = unique("nodb")
    with raises_glue("EntityNotFoundException", name):
        glue.update_database(Name=name, DatabaseInput={"Name": name})


def test_update_database_cannot_rename(glue, db):
    other = unique("other")
    with raises_glue("InvalidInputException", other):
        glue.update_database(Name=db, DatabaseInput={"Name": other})
    glue.get_database(Name=db)
    with raises_glue("EntityNotFoundException"):
        glue.get_database(Name=other)


def test_delete_missing_database_is_entity_not_found(glue):
    name = unique("nodb")
    with raises_glue("EntityNotFoundException", name):
        glue.delete_database(Name=name)


def test_delete_database_removes_tables_versions_partitions_functions_and_tags(glue):
    name = unique("db")
    glue.create_database(DatabaseInput={"Name": name}, Tags={"team": "a"})
    glue.create_table(DatabaseName=name, TableInput=table_input("t1"))
    glue.create_table(DatabaseName=name, TableInput=table_input("t2"))
    glue.update_table(DatabaseName=name, TableInput={**table_input("t1"), "Description": "v2"})
    glue.batch_create_partition(DatabaseName=name, TableName="t1",
                                PartitionInputList=[partition_input([y]) for y in ("2023", "2024")])
    glue.create_user_defined_function(DatabaseName=name, FunctionInput={
        "FunctionName": "f", "ClassName": "com.example.F", "OwnerName": "me", "OwnerType": "USER"})

    glue.delete_database(Name=name)

    with raises_glue("EntityNotFoundException", name):
        glue.get_database(Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_tables(DatabaseName=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_table(DatabaseName=name, Name="t1")

    # A database of the same name starts empty: nothing of the old one survived.
    glue.create_database(DatabaseInput={"Name": name})
    try:
        assert glue.get_tables(DatabaseName=name)["TableList"] == []
        assert glue.get_tags(ResourceArn=database_arn(name))["Tags"] == {}
        assert glue.get_user_defined_functions(DatabaseName=name, Pattern="*")["UserDefinedFunctions"] == []
        glue.create_table(DatabaseName=name, TableInput=table_input("t1"))
        assert glue.get_partitions(DatabaseName=name, TableName="t1")["Partitions"] == []
        versions = glue.get_table_versions(DatabaseName=name, TableName="t1")["TableVersions"]
        assert [v["VersionId"] for v in versions] == ["0"]
        assert "Description" not in glue.get_table(DatabaseName=name, Name="t1")["Table"]
    finally:
        glue.delete_database(Name=name)


def test_delete_database_leaves_other_databases_alone(glue):
    a, b = unique("dba"), unique("dbb")
    for n in (a, b):
        glue.create_database(DatabaseInput={"Name": n})
        glue.create_table(DatabaseName=n, TableInput=table_input("t"))
        glue.create_partition(DatabaseName=n, TableName="t", PartitionInput=partition_input(["2024"]))
    glue.delete_database(Name=a)
    try:
        assert glue.get_table(DatabaseName=b, Name="t")["Table"]["Name"] == "t"
        assert len(glue.get_partitions(DatabaseName=b, TableName="t")["Partitions"]) == 1
    finally:
        glue.delete_database(Name=b)


def test_create_database_with_tags(glue):
    name = unique("db")
    glue.create_database(DatabaseInput={"Name": name}, Tags={"env": "dev", "cost": "42"})
    try:
        assert glue.get_tags(ResourceArn=database_arn(name))["Tags"] == {"env": "dev", "cost": "42"}
    finally:
        glue.delete_database(Name=name)


def test_database_input_is_checked_against_the_service_model(raw_glue):
    with raises_glue("ValidationException", "databaseInput.name"):
        raw_glue.create_database(DatabaseInput={"Description": "no name"})
    with raises_glue("ValidationException", "length less than or equal to 255"):
        raw_glue.create_database(DatabaseInput={"Name": "x" * 256})
