"""The AWS CLI (`aws glue ... --endpoint-url URL`) against the real server."""
import json
import uuid

import pytest

from conftest import partition_input, table_input



@pytest.fixture()
def aws(aws_cli):
    """Runs `aws glue <args>` against the test server (see conftest.aws_cli)."""
    return lambda *args, **kwargs: aws_cli("glue", *args, **kwargs)


def name(prefix):
    return prefix + "_" + uuid.uuid4().hex[:10]


def test_create_database_and_get_databases(aws, glue):
    database = name("cli")
    try:
        assert aws("create-database", "--database-input",
                   json.dumps({"Name": database, "Description": "from the CLI"})) is None
        listed = aws("get-databases")["DatabaseList"]
        found = [d for d in listed if d["Name"] == database]
        assert len(found) == 1 and found[0]["Description"] == "from the CLI"
        # The shorthand syntax works too.
        shorthand = name("cli")
        aws("create-database", "--database-input", f"Name={shorthand}")
        assert aws("get-database", "--name", shorthand)["Database"]["Name"] == shorthand
        glue.delete_database(Name=shorthand)
    finally:
        glue.delete_database(Name=database)


def test_table_lifecycle(aws, glue, db):
    tin = table_input("events", partition_keys=(("dt", "string"),))
    aws("create-table", "--database-name", db, "--table-input", json.dumps(tin))
    table = aws("get-table", "--database-name", db, "--name", "events")["Table"]
    assert table["Name"] == "events" and table["DatabaseName"] == db
    assert table["StorageDescriptor"]["Columns"] == tin["StorageDescriptor"]["Columns"]
    assert table["PartitionKeys"] == [{"Name": "dt", "Type": "string"}]
    assert table["Parameters"] == {"classification": "json"}

    changed = table_input("events", partition_keys=(("dt", "string"),),
                          cols=(("id", "bigint"), ("v", "string"), ("w", "int")))
    changed["Description"] = "v2"
    aws("update-table", "--database-name", db, "--table-input", json.dumps(changed))
    table = aws("get-table", "--database-name", db, "--name", "events")["Table"]
    assert table["Description"] == "v2"
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["id", "v", "w"]

    versions = aws("get-table-versions", "--database-name", db, "--table-name", "events")["TableVersions"]
    assert len(versions) == 2
    by_id = {v["VersionId"]: v["Table"] for v in versions}
    assert len(by_id) == 2
    descriptions = sorted(str(t.get("Description")) for t in by_id.values())
    assert descriptions == ["None", "v2"]

    aws("delete-table", "--database-name", db, "--name", "events")
    assert aws("get-tables", "--database-name", db)["TableList"] == []


def test_missing_table_is_an_error(aws, db):
    result = aws("get-table", "--database-name", db, "--name", "nope", expect_error=True)
    assert result.returncode in (254, 255)
    assert "EntityNotFoundException" in result.stderr
    assert result.stdout.strip() == ""


def test_batch_create_partition_and_expression(aws, glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "t", partition_keys=(("year", "string"), ("month", "int"))))
    inputs = [partition_input([str(y), str(m)]) for y in (2022, 2023) for m in range(1, 7)]
    out = aws("batch-create-partition", "--database-name", db, "--table-name", "t",
              "--partition-input-list", json.dumps(inputs))
    assert out.get("Errors", []) == []
    found = aws("get-partitions", "--database-name", db, "--table-name", "t",
                "--expression", "year = '2023' AND month > 3")["Partitions"]
    assert sorted(p["Values"] for p in found) == [["2023", "4"], ["2023", "5"], ["2023", "6"]]
    # Re-creating one that exists is reported per partition, not as a failure of the call.
    out = aws("batch-create-partition", "--database-name", db, "--table-name", "t",
              "--partition-input-list", json.dumps([partition_input(["2022", "1"])]))
    assert [e["PartitionValues"] for e in out["Errors"]] == [["2022", "1"]]
    assert out["Errors"][0]["ErrorDetail"]["ErrorCode"] == "AlreadyExistsException"


def test_get_partitions_paging(aws, glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    values = [f"{i:03d}" for i in range(25)]
    glue.batch_create_partition(DatabaseName=db, TableName="t",
                                PartitionInputList=[partition_input([v]) for v in values])
    # The CLI follows NextToken itself: pages of 10 give all 25.
    everything = aws("get-partitions", "--database-name", db, "--table-name", "t",
                     "--page-size", "10")
    assert sorted(p["Values"][0] for p in everything["Partitions"]) == values
    assert "NextToken" not in everything

    first = aws("get-partitions", "--database-name", db, "--table-name", "t",
                "--max-items", "7", "--page-size", "5")
    assert len(first["Partitions"]) == 7
    assert first.get("NextToken")
    rest = aws("get-partitions", "--database-name", db, "--table-name", "t",
               "--max-items", "100", "--page-size", "5", "--starting-token", first["NextToken"])
    assert "NextToken" not in rest
    seen = [p["Values"][0] for p in first["Partitions"]] + [p["Values"][0] for p in rest["Partitions"]]
    assert sorted(seen) == values
    assert len(seen) == len(set(seen))

    # One page at a time, as the server gives them: 10, 10, 5, and no token after the last.
    pages, token = [], None
    while True:
        page = aws("get-partitions", "--database-name", db, "--table-name", "t", "--no-paginate",
                   "--max-results", "10", *(["--next-token", token] if token else []))
        pages.append([p["Values"][0] for p in page["Partitions"]])
        token = page.get("NextToken")
        if not token:
            break
    assert [len(p) for p in pages] == [10, 10, 5]
    assert sorted(sum(pages, [])) == values


def test_tags(aws, glue, db):
    arn = f"arn:aws:glue:us-east-1:000000000000:database/{db}"
    aws("tag-resource", "--resource-arn", arn, "--tags-to-add", "team=data,env=test")
    assert aws("get-tags", "--resource-arn", arn)["Tags"] == {"team": "data", "env": "test"}
    aws("untag-resource", "--resource-arn", arn, "--tags-to-remove", "env")
    assert aws("get-tags", "--resource-arn", arn)["Tags"] == {"team": "data"}
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "data"}
