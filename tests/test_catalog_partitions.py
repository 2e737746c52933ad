"""End-to-end tests of the Data Catalog's partition operations, through boto3 against the real
server: partition CRUD and batches, GetPartitions expressions (typed by the partition key's type),
segments, paging, and partition indexes (which must never change a result, only its cost)."""
import datetime
import decimal
import types

import pytest

from conftest import ACCOUNT_ID, all_pages, columns, partition_input, raises_glue, table_input

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def values_of(partitions):
    return sorted(tuple(p["Values"]) for p in partitions)


def get_values(glue, db, table, **kwargs):
    return values_of(all_pages(glue.get_partitions, "Partitions", DatabaseName=db, TableName=table,
                               **kwargs))


@pytest.fixture()
def ym(glue, db):
    """A table partitioned by (year string, month int)."""
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "ym", partition_keys=(("year", "string"), ("month", "int"))))
    return db, "ym"


# --- CreatePartition / GetPartition ---------------------------------------------------------

def test_create_and_get_partition(glue, ym):
    db, t = ym
    before = datetime.datetime.now(datetime.timezone.utc)
    pin = partition_input(["2024", "3"])
    pin["Parameters"] = {"rows": "10"}
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=pin)
    p = glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "3"])["Partition"]
    assert p["Values"] == ["2024", "3"]
    assert p["DatabaseName"] == db and p["TableName"] == t
    assert p["CatalogId"] == ACCOUNT_ID
    assert p["Parameters"] == {"rows": "10"}
    assert p["StorageDescriptor"]["Location"] == "s3://bucket/path/2024/3/"
    assert p["StorageDescriptor"]["Columns"] == columns(("id", "bigint"), ("v", "string"))
    assert isinstance(p["CreationTime"], datetime.datetime)
    assert abs((p["CreationTime"] - before).total_seconds()) < 60


def test_partition_table_and_database_names_fold_but_values_do_not(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("T", partition_keys=(("s", "string"),)))
    glue.create_partition(DatabaseName=db.upper(), TableName="T", PartitionInput=partition_input(["Ab"]))
    glue.create_partition(DatabaseName=db, TableName="t", PartitionInput=partition_input(["ab"]))
    assert get_values(glue, db.upper(), "T") == [("Ab",), ("ab",)]
    p = glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=["Ab"])["Partition"]
    assert p["TableName"] == "t" and p["DatabaseName"] == db
    with raises_glue("EntityNotFoundException"):
        glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=["AB"])


def test_catalog_id_of_the_account_is_accepted(glue, ym):
    db, t = ym
    glue.create_partition(CatalogId=ACCOUNT_ID, DatabaseName=db, TableName=t,
                          PartitionInput=partition_input(["2024", "1"]))
    p = glue.get_partition(CatalogId=ACCOUNT_ID, DatabaseName=db, TableName=t,
                           PartitionValues=["2024", "1"])["Partition"]
    assert p["CatalogId"] == ACCOUNT_ID
    assert get_values(glue, db, t, CatalogId=ACCOUNT_ID) == [("2024", "1")]


def test_create_partition_errors(glue, ym):
    db, t = ym
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024", "1"]))
    with raises_glue("AlreadyExistsException", "already exists"):
        glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024", "1"]))
    with raises_glue("InvalidInputException", "1", "2"):
        glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024"]))
    with raises_glue("InvalidInputException", "3", "2"):
        glue.create_partition(DatabaseName=db, TableName=t,
                              PartitionInput=partition_input(["2024", "1", "x"]))
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.create_partition(DatabaseName=db, TableName="nosuch",
                              PartitionInput=partition_input(["2024", "1"]))
    with raises_glue("EntityNotFoundException", "nodb_x"):
        glue.create_partition(DatabaseName="nodb_x", TableName=t,
                              PartitionInput=partition_input(["2024", "1"]))
    assert get_values(glue, db, t) == [("2024", "1")]


def test_get_partition_errors(glue, ym):
    db, t = ym
    with raises_glue("EntityNotFoundException", "partition"):
        glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])
    with raises_glue("InvalidInputException", "partition"):
        glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"])
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_partition(DatabaseName=db, TableName="nosuch", PartitionValues=["2024", "1"])


def test_get_partitions_of_missing_table(glue, db):
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_partitions(DatabaseName=db, TableName="nosuch")


# --- BatchCreatePartition / BatchGetPartition -----------------------------------------------

def test_batch_create_partition_reports_errors_per_item(glue, ym):
    db, t = ym
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2023", "1"]))
    out = glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", "1"]),
        partition_input(["2023", "1"]),         # exists already
        partition_input(["2024", "2"]),
        partition_input(["2024"]),              # too few values
        partition_input(["2024", "2"]),         # duplicate inside the batch
        partition_input(["2024", "3", "x"]),    # too many values
    ])
    errors = {tuple(e["PartitionValues"]): e["ErrorDetail"] for e in out["Errors"]}
    assert len(out["Errors"]) == 4
    assert errors[("2023", "1")]["ErrorCode"] == "AlreadyExistsException"
    assert errors[("2024",)]["ErrorCode"] == "InvalidInputException"
    assert errors[("2024", "3", "x")]["ErrorCode"] == "InvalidInputException"
    assert errors[("2024", "2")]["ErrorCode"] == "AlreadyExistsException"
    assert all(e["ErrorMessage"] for e in errors.values())
    assert get_values(glue, db, t) == [("2023", "1"), ("2024", "1"), ("2024", "2")]


def test_batch_create_partition_limit_is_100(glue, ym):
    db, t = ym
    with raises_glue("ValidationException", "100"):
        glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
            partition_input(["2024", str(i)]) for i in range(101)])
    assert get_values(glue, db, t) == []
    out = glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", str(i)]) for i in range(100)])
    assert out["Errors"] == []
    assert len(get_values(glue, db, t)) == 100


def test_batch_create_partition_on_missing_table(glue, db):
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.batch_create_partition(DatabaseName=db, TableName="nosuch",
                                    PartitionInputList=[partition_input(["1"])])


def test_batch_get_partition(glue, ym):
    db, t = ym
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", str(m)]) for m in range(1, 5)])
    out = glue.batch_get_partition(DatabaseName=db, TableName=t, PartitionsToGet=[
        {"Values": ["2024", "2"]}, {"Values": ["2024", "9"]}, {"Values": ["2024", "4"]}])
    assert values_of(out["Partitions"]) == [("2024", "2"), ("2024", "4")]
    assert out.get("UnprocessedKeys", []) == []
    assert all(isinstance(p["CreationTime"], datetime.datetime) for p in out["Partitions"])
    # The batch rule (resource/batch.h): an item that cannot name a partition fails on its own,
    # like a missing one, and the other items are still answered.
    out = glue.batch_get_partition(DatabaseName=db, TableName=t, PartitionsToGet=[
        {"Values": ["2024"]}, {"Values": ["2024", "3"]}, {"Values": ["2024", "1", "x"]}])
    assert values_of(out["Partitions"]) == [("2024", "3")]
    assert out.get("UnprocessedKeys", []) == []
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.batch_get_partition(DatabaseName=db, TableName="nosuch",
                                 PartitionsToGet=[{"Values": ["2024", "1"]}])


# --- UpdatePartition / BatchUpdatePartition -------------------------------------------------

def test_update_partition_in_place(glue, ym):
    db, t = ym
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024", "1"]))
    created = glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])["Partition"]
    pin = partition_input(["2024", "1"], location="s3://elsewhere/")
    pin["Parameters"] = {"compacted": "true"}
    glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "1"],
                          PartitionInput=pin)
    p = glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])["Partition"]
    assert p["StorageDescriptor"]["Location"] == "s3://elsewhere/"
    assert p["Parameters"] == {"compacted": "true"}
    assert p["CreationTime"] == created["CreationTime"]


def test_update_partition_changes_values(glue, ym):
    db, t = ym
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", "1"]), partition_input(["2024", "2"])])
    glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "1"],
                          PartitionInput=partition_input(["2025", "11"]))
    assert get_values(glue, db, t) == [("2024", "2"), ("2025", "11")]
    with raises_glue("EntityNotFoundException"):
        glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])
    assert get_values(glue, db, t, Expression="month = 11") == [("2025", "11")]
    # Onto an existing partition: refused, nothing changes.
    with raises_glue("AlreadyExistsException"):
        glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "2"],
                              PartitionInput=partition_input(["2025", "11"]))
    assert get_values(glue, db, t) == [("2024", "2"), ("2025", "11")]
    with raises_glue("InvalidInputException"):
        glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "2"],
                              PartitionInput=partition_input(["2026"]))
    assert get_values(glue, db, t) == [("2024", "2"), ("2025", "11")]


def test_update_missing_partition(glue, ym):
    db, t = ym
    with raises_glue("EntityNotFoundException", "partition"):
        glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "1"],
                              PartitionInput=partition_input(["2024", "1"]))
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.update_partition(DatabaseName=db, TableName="nosuch", PartitionValueList=["2024", "1"],
                              PartitionInput=partition_input(["2024", "1"]))


def test_batch_update_partition_reports_errors_per_item(glue, ym):
    db, t = ym
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", str(m)]) for m in (1, 2, 3)])
    out = glue.batch_update_partition(DatabaseName=db, TableName=t, Entries=[
        {"PartitionValueList": ["2024", "1"],
         "PartitionInput": {**partition_input(["2024", "1"]), "Parameters": {"a": "1"}}},
        {"PartitionValueList": ["2024", "9"], "PartitionInput": partition_input(["2024", "9"])},
        {"PartitionValueList": ["2024", "2"], "PartitionInput": partition_input(["2024", "20"])},
        {"PartitionValueList": ["2024", "3"], "PartitionInput": partition_input(["2024", "20"])},
    ])
    errors = {tuple(e["PartitionValueList"]): e["ErrorDetail"]["ErrorCode"] for e in out["Errors"]}
    assert errors == {("2024", "9"): "EntityNotFoundException",
                      ("2024", "3"): "AlreadyExistsException"}
    assert get_values(glue, db, t) == [("2024", "1"), ("2024", "20"), ("2024", "3")]
    p = glue.get_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])["Partition"]
    assert p["Parameters"] == {"a": "1"}


# --- DeletePartition / BatchDeletePartition -------------------------------------------------

def test_delete_partition(glue, ym):
    db, t = ym
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", "1"]), partition_input(["2024", "2"])])
    glue.delete_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])
    assert get_values(glue, db, t) == [("2024", "2")]
    with raises_glue("EntityNotFoundException", "partition"):
        glue.delete_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "1"])
    with raises_glue("InvalidInputException"):
        glue.delete_partition(DatabaseName=db, TableName=t, PartitionValues=["2024"])
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.delete_partition(DatabaseName=db, TableName="nosuch", PartitionValues=["2024", "1"])
    # Deleted partitions can be created again.
    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=partition_input(["2024", "1"]))
    assert get_values(glue, db, t) == [("2024", "1"), ("2024", "2")]


def test_batch_delete_partition_reports_errors_per_item(glue, ym):
    db, t = ym
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", str(m)]) for m in (1, 2, 3)])
    out = glue.batch_delete_partition(DatabaseName=db, TableName=t, PartitionsToDelete=[
        {"Values": ["2024", "1"]}, {"Values": ["2024", "7"]}, {"Values": ["2024"]},
        {"Values": ["2024", "3"]}])
    errors = {tuple(e["PartitionValues"]): e["ErrorDetail"]["ErrorCode"] for e in out["Errors"]}
    assert errors == {("2024", "7"): "EntityNotFoundException", ("2024",): "InvalidInputException"}
    assert get_values(glue, db, t) == [("2024", "2")]
    with raises_glue("ValidationException", "25"):
        glue.batch_delete_partition(DatabaseName=db, TableName=t, PartitionsToDelete=[
            {"Values": ["2024", str(m)]} for m in range(26)])
    assert get_values(glue, db, t) == [("2024", "2")]


# --- GetPartitions expressions, typed by partition key ---------------------------------------

TYPED_KEYS = (("s", "string"), ("i", "int"), ("b", "bigint"), ("sm", "smallint"),
              ("ti", "tinyint"), ("d", "decimal(10,2)"), ("dt", "date"), ("ts", "timestamp"))


def typed_rows():
    """Partition values (as text) and the same values typed, for the Python oracle."""
    strings = ["us", "eu", "ap", "us-east", "EU", "u_s", "us%x"]
    rows = []
    for n in range(48):
        s = strings[n % len(strings)]
        i = (n * 5) % 23 - 3                       # -3 .. 19: "10" > "9" only as numbers
        i_text = f"{i:03d}" if n % 8 == 0 and i >= 0 else str(i)
        b = 10 ** 12 + n * 1000                    # beyond 32 bits
        sm = n % 5
        ti = n % 4 - 1
        d = decimal.Decimal(n % 9) / 4             # 0 .. 2, quarters
        d_text = f"{d:.2f}" if n % 2 == 0 else format(d.normalize(), "f")
        dt = datetime.date(2023, 11, 1) + datetime.timedelta(days=9 * n)
        ts = datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=13 * n, seconds=n)
        rows.append(([s, i_text, str(b), str(sm), str(ti), d_text, dt.isoformat(),
                      ts.strftime("%Y-%m-%d %H:%M:%S")],
                     types.SimpleNamespace(s=s, i=i, b=b, sm=sm, ti=ti, d=d, dt=dt, ts=ts)))
    # Hive null partitions: the key's value is null, so only IS [NOT] NULL decides about it.
    hive_s = list(rows[1][0])
    hive_s[0] = HIVE_NULL
    hive_s[2] = str(10 ** 12 + 999_999)
    rows.append((hive_s, types.SimpleNamespace(**{**vars(rows[1][1]), "s": None, "b": 10 ** 12 + 999_999})))
    hive_i = list(rows[2][0])
    hive_i[1] = HIVE_NULL
    hive_i[2] = str(10 ** 12 + 999_998)
    rows.append((hive_i, types.SimpleNamespace(**{**vars(rows[2][1]), "i": None, "b": 10 ** 12 + 999_998})))
    return rows


ROWS = typed_rows()
D = decimal.Decimal
DT = datetime.date.fromisoformat
TS = datetime.datetime.fromisoformat


def known(x):
    return x is not None


# (expression, oracle): the oracle says which partitions SQL's three-valued logic selects.
EXPRESSIONS = [
    ("s = 'us'", lambda p: p.s == "us"),
    ("s <> 'us'", lambda p: known(p.s) and p.s != "us"),
    ("s != 'us'", lambda p: known(p.s) and p.s != "us"),
    ("s < > 'us'", lambda p: known(p.s) and p.s != "us"),
    ("s < 'eu'", lambda p: known(p.s) and p.s < "eu"),
    ("s >= 'u'", lambda p: known(p.s) and p.s >= "u"),
    ("S = 'us'", lambda p: p.s == "us"),
    ("`s` = 'us'", lambda p: p.s == "us"),
    ("'us' = s", lambda p: p.s == "us"),
    ("s = 'nothing'", lambda p: False),
    ("s IN ('us', 'EU', 'nope')", lambda p: p.s in ("us", "EU")),
    ("s NOT IN ('us', 'eu')", lambda p: known(p.s) and p.s not in ("us", "eu")),
    ("s LIKE 'us%'", lambda p: known(p.s) and p.s.startswith("us")),
    ("s LIKE 'u_s'", lambda p: known(p.s) and len(p.s) == 3 and p.s[0] == "u" and p.s[2] == "s"),
    ("s LIKE '%s%'", lambda p: known(p.s) and "s" in p.s),
    ("s LIKE 'eu'", lambda p: p.s == "eu"),
    ("s NOT LIKE 'u%'", lambda p: known(p.s) and not p.s.startswith("u")),
    ("s LIKE 'us!%x' ESCAPE '!'", lambda p: p.s == "us%x"),
    ("s IS NULL", lambda p: p.s is None),
    ("s IS NOT NULL", lambda p: p.s is not None),
    ("NOT s = 'us'", lambda p: known(p.s) and p.s != "us"),
    ("i = 7", lambda p: p.i == 7),
    ("i = '7'", lambda p: p.i == 7),
    ("i = 007", lambda p: p.i == 7),
    ("i = 0", lambda p: p.i == 0),
    ("i > 9", lambda p: known(p.i) and p.i > 9),
    ("i >= -2 AND i <= 3", lambda p: known(p.i) and -2 <= p.i <= 3),
    ("i < -1", lambda p: known(p.i) and p.i < -1),
    ("5 < i", lambda p: known(p.i) and p.i > 5),
    ("i BETWEEN 2 AND 11", lambda p: known(p.i) and 2 <= p.i <= 11),
    ("i NOT BETWEEN 2 AND 11", lambda p: known(p.i) and not 2 <= p.i <= 11),
    ("i BETWEEN 11 AND 2", lambda p: False),
    ("i IN (1, 5, 10, 15)", lambda p: p.i in (1, 5, 10, 15)),
    ("i NOT IN (1, 5)", lambda p: known(p.i) and p.i not in (1, 5)),
    ("i IS NULL", lambda p: p.i is None),
    ("NOT i > 9", lambda p: known(p.i) and not p.i > 9),
    ("b > 1000000020000", lambda p: p.b > 1000000020000),
    ("b = 1000000005000", lambda p: p.b == 1000000005000),
    ("sm IN (0, 4)", lambda p: p.sm in (0, 4)),
    ("sm <> 2", lambda p: p.sm != 2),
    ("ti < 0", lambda p: p.ti < 0),
    ("ti = -1", lambda p: p.ti == -1),
    ("d = 0.5", lambda p: p.d == D("0.5")),
    ("d = '0.50'", lambda p: p.d == D("0.5")),
    ("d > 1.25", lambda p: p.d > D("1.25")),
    ("d BETWEEN 0.25 AND 1", lambda p: D("0.25") <= p.d <= 1),
    ("d IN (0, 2.00)", lambda p: p.d in (0, 2)),
    ("dt = '2024-01-04'", lambda p: p.dt == DT("2024-01-04")),
    ("dt >= '2024-01-01'", lambda p: p.dt >= DT("2024-01-01")),
    ("dt < DATE '2024-01-01'", lambda p: p.dt < DT("2024-01-01")),
    ("dt BETWEEN '2023-12-01' AND '2024-02-29'", lambda p: DT("2023-12-01") <= p.dt <= DT("2024-02-29")),
    ("dt IN ('2023-11-10', '2024-12-25')", lambda p: p.dt in (DT("2023-11-10"), DT("2024-12-25"))),
    ("ts > '2024-01-10 00:00:00'", lambda p: p.ts > TS("2024-01-10 00:00:00")),
    ("ts BETWEEN TIMESTAMP '2024-01-02 00:00:00' AND '2024-01-05 12:00:00'",
     lambda p: TS("2024-01-02") <= p.ts <= TS("2024-01-05 12:00:00")),
    ("ts = '2024-01-01 13:00:01'", lambda p: p.ts == TS("2024-01-01 13:00:01")),
    ("s = 'us' OR s = 'eu'", lambda p: p.s in ("us", "eu")),
    ("s = 'us' AND i > 5 OR s = 'eu' AND i < 0",
     lambda p: (p.s == "us" and known(p.i) and p.i > 5) or (p.s == "eu" and known(p.i) and p.i < 0)),
    ("s = 'us' AND (i > 5 OR i < 0)", lambda p: p.s == "us" and known(p.i) and (p.i > 5 or p.i < 0)),
    ("(s = 'us' OR s = 'ap') AND NOT (sm = 0)", lambda p: p.s in ("us", "ap") and p.sm != 0),
    ("s = 'us' and i > 5", lambda p: p.s == "us" and known(p.i) and p.i > 5),
    ("s IN ('us', 'eu') AND dt >= '2024-01-01' AND i BETWEEN 0 AND 10",
     lambda p: p.s in ("us", "eu") and p.dt >= DT("2024-01-01") and known(p.i) and 0 <= p.i <= 10),
    ("s = 'ap' AND i = 7", lambda p: p.s == "ap" and p.i == 7),
    # Stored as "008" and "014": an index must meet them under the int's canonical text.
    ("s = 'ap' AND i = 8", lambda p: p.s == "ap" and p.i == 8),
    ("s IN ('ap', 'eu') AND i IN (8, 14, 15)", lambda p: p.s in ("ap", "eu") and p.i in (8, 14, 15)),
    ("i = 7 AND sm = 2 AND s IN ('us', 'ap', 'eu')", lambda p: p.i == 7 and p.sm == 2 and p.s in ("us", "ap", "eu")),
    ("b IN (1000000001000, 1000000002000) AND ti = 0", lambda p: p.b in (1000000001000, 1000000002000) and p.ti == 0),
    ("dt = '2024-01-04' OR i = 7", lambda p: p.dt == DT("2024-01-04") or p.i == 7),
    ("s = 'us' AND s = 'eu'", lambda p: False),
    ("s IS NULL OR i IS NULL", lambda p: p.s is None or p.i is None),
    ("NOT (s = 'us' OR i IS NULL)", lambda p: known(p.s) and p.s != "us" and p.i is not None),
]


def expected_values(oracle):
    return sorted(tuple(values) for values, typed in ROWS if oracle(typed))


def create_typed_table(glue, db, name, indexes=()):
    glue.create_table(DatabaseName=db, TableInput=table_input(name, partition_keys=TYPED_KEYS),
                      **({"PartitionIndexes": list(indexes)} if indexes else {}))
    for start in range(0, len(ROWS), 100):
        out = glue.batch_create_partition(DatabaseName=db, TableName=name, PartitionInputList=[
            partition_input(values) for values, _ in ROWS[start:start + 100]])
        assert out["Errors"] == []


INDEXES = [{"IndexName": "by_s_i", "Keys": ["s", "i"]},
           {"IndexName": "by_dt", "Keys": ["dt"]},
           {"IndexName": "by_b_sm_ti", "Keys": ["b", "sm", "ti"]}]


@pytest.fixture(scope="module")
def typed_tables(server):
    """One database with three copies of the typed table: without an index, with indexes
    created before the partitions, and with indexes created after them."""
    glue = server.client()
    db = "typed_" + __import__("uuid").uuid4().hex[:8]
    glue.create_database(DatabaseInput={"Name": db})
    create_typed_table(glue, db, "plain")
    create_typed_table(glue, db, "indexed_first", INDEXES)
    create_typed_table(glue, db, "indexed_after")
    for index in INDEXES:
        glue.create_partition_index(DatabaseName=db, TableName="indexed_after", PartitionIndex=index)
    yield db
    glue.delete_database(Name=db)
    glue.close()


def test_typed_table_has_every_partition(glue, typed_tables):
    for table in ("plain", "indexed_first", "indexed_after"):
        assert get_values(glue, typed_tables, table) == sorted(tuple(v) for v, _ in ROWS)


@pytest.mark.parametrize("expression, oracle", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_get_partitions_expression(glue, typed_tables, expression, oracle):
    expected = expected_values(oracle)
    for table in ("plain", "indexed_first", "indexed_after"):
        got = get_values(glue, typed_tables, table, Expression=expression)
        assert got == expected, f"{table}: {expression}"


@pytest.mark.parametrize("expression", [e for e, _ in EXPRESSIONS if " OR " not in e][:30])
def test_expression_results_page_the_same_with_and_without_index(glue, typed_tables, expression):
    pages = {}
    for table in ("plain", "indexed_after"):
        got = []
        token = None
        while True:
            page = glue.get_partitions(DatabaseName=typed_tables, TableName=table,
                                       Expression=expression, MaxResults=4,
                                       **({"NextToken": token} if token else {}))
            got.extend(tuple(p["Values"]) for p in page["Partitions"])
            token = page.get("NextToken")
            if not token:
                break
        assert len(got) == len(set(got)), f"{table}: a partition came twice"
        pages[table] = sorted(got)
    assert pages["plain"] == pages["indexed_after"] == expected_values(dict(EXPRESSIONS)[expression])


@pytest.mark.parametrize("expression, fragments", [
    ("nokey = 1", ["nokey", "s, i, b"]),
    ("i = 'abc'", ["abc", "int"]),
    ("i = 1.5", ["1.5"]),
    ("b > 99999999999999999999", ["99999999999999999999"]),
    ("dt = '2024-13-01'", ["2024-13-01", "date"]),
    ("ts > 'yesterday'", ["yesterday", "timestamp"]),
    ("d = 'x1'", ["x1", "decimal"]),
    ("i LIKE '1%'", ["LIKE"]),
    ("s = 'unterminated", ["unterminated"]),
    ("s = ", ["position"]),
    ("(s = 'us'", ["position", "')'"]),
    ("s = 'us')", ["position", "')'"]),
    ("s = 'us' AND", ["position"]),
    ("s == 'us'", ["position"]),
    ("s = NULL", ["IS NULL"]),
    ("s = i", ["compare"]),
    ("s IN ()", ["position"]),
    ("s BETWEEN 'a'", ["AND"]),
    ("s IS 'x'", ["NULL"]),
    ("s 'us'", ["position"]),
    ("s = 'a' # comment", ["#"]),
])
def test_bad_expression_is_invalid_input_naming_the_problem(glue, typed_tables, expression, fragments):
    with raises_glue("InvalidInputException", *fragments):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain", Expression=expression)


def test_expression_on_a_key_type_expressions_cannot_filter(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "bt", partition_keys=(("flag", "boolean"),)))
    glue.create_partition(DatabaseName=db, TableName="bt", PartitionInput=partition_input(["true"]))
    with raises_glue("InvalidInputException", "flag", "boolean"):
        glue.get_partitions(DatabaseName=db, TableName="bt", Expression="flag = 'true'")


def test_nested_string_prefix_values_are_returned_once(glue, db):
    # A value that is a prefix of another ("20" of "2024") must not make a partition come twice.
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.batch_create_partition(DatabaseName=db, TableName="t", PartitionInputList=[
        partition_input([y]) for y in ("2", "20", "2024", "205", "21")])
    for expression, expected in [("year IN ('20', '2024')", [("20",), ("2024",)]),
                                 ("year IN ('2', '20', '2024', '21')", [("2",), ("20",), ("2024",), ("21",)]),
                                 ("year = '20'", [("20",)])]:
        got = [tuple(p["Values"]) for p in
               all_pages(glue.get_partitions, "Partitions", DatabaseName=db, TableName="t",
                         Expression=expression)]
        assert sorted(got) == expected, expression
        paged = [tuple(p["Values"]) for p in
                 all_pages(glue.get_partitions, "Partitions", DatabaseName=db, TableName="t",
                           Expression=expression, MaxResults=1)]
        assert sorted(paged) == expected, expression


def test_nested_prefix_values_of_the_second_key_are_returned_once(glue, ym):
    db, t = ym
    glue.update_table(DatabaseName=db, TableInput=table_input(
        t, partition_keys=(("year", "string"), ("tag", "string"))))
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        partition_input(["2024", tag]) for tag in ("a", "ab", "abc", "b")])
    got = [tuple(p["Values"]) for p in glue.get_partitions(
        DatabaseName=db, TableName=t, Expression="year = '2024' AND tag IN ('a', 'ab')")["Partitions"]]
    assert sorted(got) == [("2024", "a"), ("2024", "ab")]


# --- Segments, ExcludeColumnSchema ----------------------------------------------------------

@pytest.mark.parametrize("total", [1, 2, 3, 7, 10])
def test_segments_partition_the_result(glue, typed_tables, total):
    for expression in (None, "i > 2", "s = 'us'", "s IN ('us', 'eu', 'ap') AND i IN (" +
                       ", ".join(str(i) for i in range(-3, 20)) + ")"):
        kwargs = {"Expression": expression} if expression else {}
        full = get_values(glue, typed_tables, "indexed_after", **kwargs)
        union = []
        for n in range(total):
            seg = get_values(glue, typed_tables, "indexed_after", MaxResults=3,
                             Segment={"SegmentNumber": n, "TotalSegments": total}, **kwargs)
            union.extend(seg)
        assert len(union) == len(set(union)), "segments overlap"
        assert sorted(union) == full
    if total >= 3:
        # Segments actually split the work.
        sizes = [len(get_values(glue, typed_tables, "plain",
                                Segment={"SegmentNumber": n, "TotalSegments": total}))
                 for n in range(total)]
        assert max(sizes) < len(ROWS)


def test_segment_number_out_of_range(glue, typed_tables):
    with raises_glue("InvalidInputException", "3"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain",
                            Segment={"SegmentNumber": 3, "TotalSegments": 3})
    with raises_glue("ValidationException", "10"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain",
                            Segment={"SegmentNumber": 0, "TotalSegments": 11})


def test_exclude_column_schema(glue, typed_tables):
    with_cols = glue.get_partitions(DatabaseName=typed_tables, TableName="plain", MaxResults=5)["Partitions"]
    without = glue.get_partitions(DatabaseName=typed_tables, TableName="plain", MaxResults=5,
                                  ExcludeColumnSchema=True)["Partitions"]
    assert values_of(with_cols) == values_of(without)
    for p in with_cols:
        assert p["StorageDescriptor"]["Columns"] == columns(("id", "bigint"), ("v", "string"))
    for p in without:
        assert "Columns" not in p["StorageDescriptor"]
        assert p["StorageDescriptor"]["Location"].startswith("s3://bucket/path/")


def test_get_partitions_bad_token(glue, typed_tables):
    with raises_glue("InvalidInputException", "NextToken"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain", NextToken="garbage")
    # A token of another table is not a token of this one.
    token = glue.get_partitions(DatabaseName=typed_tables, TableName="plain", MaxResults=1)["NextToken"]
    with raises_glue("InvalidInputException", "NextToken"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="indexed_first", NextToken=token)


def test_get_partitions_max_results_limits(glue, typed_tables):
    with raises_glue("ValidationException", "1000"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain", MaxResults=1001)
    page = glue.get_partitions(DatabaseName=typed_tables, TableName="plain", MaxResults=len(ROWS))
    assert len(page["Partitions"]) == len(ROWS) and "NextToken" not in page


# --- Paging while another client writes -----------------------------------------------------

def test_paging_returns_every_partition_once_while_another_client_inserts(glue, server, db):
    """2,000 partitions read in pages of 150 while another client adds partitions between the
    pages, some sorting before the cursor and some after: every partition that was there from
    the start comes exactly once, and nothing comes twice. Over a full scan, the table's own key
    order, and a partition index."""
    writer = server.client()
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "big", partition_keys=(("year", "string"), ("n", "int"))),
        PartitionIndexes=[{"IndexName": "by_n", "Keys": ["n"]}])
    original = set()
    for batch in range(20):
        inputs = []
        for k in range(100):
            i = batch * 100 + k
            values = (("2023", "2024", "2025", "2026")[i % 4], str(i))
            original.add(values)
            inputs.append(partition_input(list(values)))
        assert glue.batch_create_partition(DatabaseName=db, TableName="big",
                                           PartitionInputList=inputs)["Errors"] == []
    assert len(original) == 2000
    sevens = list(range(0, 2000, 7))
    serial = iter(range(1, 100000))

    def scan(expression):
        seen = []
        token = None
        while True:
            kwargs = {"Expression": expression} if expression else {}
            page = glue.get_partitions(DatabaseName=db, TableName="big", MaxResults=150,
                                       **kwargs, **({"NextToken": token} if token else {}))
            assert len(page["Partitions"]) <= 150
            seen.extend(tuple(p["Values"]) for p in page["Partitions"])
            token = page.get("NextToken")
            if not token:
                return seen
            # Between pages, another client adds partitions before, inside and after the range
            # read so far; some of them match the filters below.
            k = next(serial)
            extra = [partition_input(["2022", str(7 * k)]), partition_input(["2027", str(7 * k)]),
                     partition_input(["2024", str(100000 + k)]), partition_input(["2025", str(7 * k + 100000)])]
            assert writer.batch_create_partition(DatabaseName=db, TableName="big",
                                                 PartitionInputList=extra)["Errors"] == []

    for expression, keep in (
            (None, lambda v: True),
            ("year IN ('2024', '2026')", lambda v: v[0] in ("2024", "2026")),
            ("year = '2025'", lambda v: v[0] == "2025"),
            ("n >= 500 AND n < 1700", lambda v: 500 <= int(v[1]) < 1700),
            ("n IN (" + ", ".join(map(str, sevens)) + ")", lambda v: int(v[1]) in sevens)):
        seen = scan(expression)
        assert len(seen) == len(set(seen)), f"{expression}: a partition came twice"
        wanted = {v for v in original if keep(v)}
        assert len(wanted) > 150, "the scan must take several pages"
        assert wanted <= set(seen), f"{expression}: {len(wanted - set(seen))} partitions missing"
        assert all(keep(v) for v in seen), f"{expression}: a partition outside the filter"
    writer.close()


# --- Partition indexes ----------------------------------------------------------------------

@pytest.fixture()
def indexed(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", partition_keys=(
        ("year", "string"), ("month", "int"), ("day", "date"), ("amount", "decimal(10,2)"))))
    return db, "t"


def index_names(glue, db, t):
    descriptors = glue.get_partition_indexes(DatabaseName=db, TableName=t)["PartitionIndexDescriptorList"]
    return sorted(d["IndexName"] for d in descriptors)


def test_create_get_delete_partition_index(glue, indexed):
    db, t = indexed
    assert index_names(glue, db, t) == []
    glue.create_partition_index(DatabaseName=db, TableName=t,
                                PartitionIndex={"IndexName": "by_year_month", "Keys": ["year", "month"]})
    descriptors = glue.get_partition_indexes(DatabaseName=db, TableName=t)["PartitionIndexDescriptorList"]
    assert len(descriptors) == 1
    d = descriptors[0]
    assert d["IndexName"] == "by_year_month"
    assert d["Keys"] == [{"Name": "year", "Type": "string"}, {"Name": "month", "Type": "int"}]
    assert d["IndexStatus"] == "ACTIVE"
    glue.delete_partition_index(DatabaseName=db, TableName=t, IndexName="by_year_month")
    assert index_names(glue, db, t) == []
    with raises_glue("EntityNotFoundException", "by_year_month"):
        glue.delete_partition_index(DatabaseName=db, TableName=t, IndexName="by_year_month")


def test_partition_index_errors(glue, indexed):
    db, t = indexed
    with raises_glue("InvalidInputException", "nokey"):
        glue.create_partition_index(DatabaseName=db, TableName=t,
                                    PartitionIndex={"IndexName": "i0", "Keys": ["year", "nokey"]})
    with raises_glue("InvalidInputException", "id"):
        # A data column is not a partition key.
        glue.create_partition_index(DatabaseName=db, TableName=t,
                                    PartitionIndex={"IndexName": "i0", "Keys": ["id"]})
    with raises_glue("InvalidInputException", "amount"):
        glue.create_partition_index(DatabaseName=db, TableName=t,
                                    PartitionIndex={"IndexName": "i0", "Keys": ["amount"]})
    with raises_glue("InvalidInputException", "year"):
        glue.create_partition_index(DatabaseName=db, TableName=t,
                                    PartitionIndex={"IndexName": "i0", "Keys": ["year", "year"]})
    assert index_names(glue, db, t) == []
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i1", "Keys": ["year"]})
    with raises_glue("AlreadyExistsException", "i1"):
        glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i1", "Keys": ["month"]})
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i2", "Keys": ["month"]})
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i3", "Keys": ["day", "year"]})
    with raises_glue("ResourceNumberLimitExceededException", "3"):
        glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i4", "Keys": ["day"]})
    assert index_names(glue, db, t) == ["i1", "i2", "i3"]
    # Deleting one makes room again.
    glue.delete_partition_index(DatabaseName=db, TableName=t, IndexName="i2")
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i4", "Keys": ["day"]})
    assert index_names(glue, db, t) == ["i1", "i3", "i4"]
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.create_partition_index(DatabaseName=db, TableName="nosuch",
                                    PartitionIndex={"IndexName": "i", "Keys": ["year"]})
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.get_partition_indexes(DatabaseName=db, TableName="nosuch")
    with raises_glue("EntityNotFoundException", "nosuch"):
        glue.delete_partition_index(DatabaseName=db, TableName="nosuch", IndexName="i1")


def test_create_table_with_partition_indexes(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"),
                      PartitionIndexes=[{"IndexName": "by_year", "Keys": ["year"]}])
    assert index_names(glue, db, "t") == ["by_year"]
    with raises_glue("InvalidInputException", "nokey"):
        glue.create_table(DatabaseName=db, TableInput=table_input("u"),
                          PartitionIndexes=[{"IndexName": "bad", "Keys": ["nokey"]}])
    # The failed create left no table behind.
    with raises_glue("EntityNotFoundException"):
        glue.get_table(DatabaseName=db, Name="u")
    with raises_glue("ResourceNumberLimitExceededException"):
        glue.create_table(DatabaseName=db, TableInput=table_input("v"), PartitionIndexes=[
            {"IndexName": f"i{k}", "Keys": ["year"]} for k in range(4)])
    with raises_glue("EntityNotFoundException"):
        glue.get_table(DatabaseName=db, Name="v")


def test_index_follows_partition_writes(glue, indexed):
    """Creates, updates (with new values) and deletes, through every write operation, with an
    index in place: filtered reads through the index see exactly what a full scan sees."""
    db, t = indexed
    glue.create_partition_index(DatabaseName=db, TableName=t,
                                PartitionIndex={"IndexName": "ym", "Keys": ["year", "month"]})
    glue.create_partition_index(DatabaseName=db, TableName=t,
                                PartitionIndex={"IndexName": "d", "Keys": ["day"]})

    def pin(y, m, d, a="1.00"):
        return partition_input([y, m, d, a])

    glue.create_partition(DatabaseName=db, TableName=t, PartitionInput=pin("2024", "1", "2024-01-01"))
    glue.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
        pin("2024", "2", "2024-02-01"), pin("2024", "02", "2024-02-02"), pin("2023", "12", "2023-12-31")])
    glue.update_partition(DatabaseName=db, TableName=t, PartitionValueList=["2024", "1", "2024-01-01", "1.00"],
                          PartitionInput=pin("2025", "1", "2025-01-01"))
    glue.batch_update_partition(DatabaseName=db, TableName=t, Entries=[
        {"PartitionValueList": ["2023", "12", "2023-12-31", "1.00"],
         "PartitionInput": pin("2023", "11", "2023-11-30")}])
    glue.delete_partition(DatabaseName=db, TableName=t, PartitionValues=["2024", "2", "2024-02-01", "1.00"])
    glue.batch_delete_partition(DatabaseName=db, TableName=t, PartitionsToDelete=[
        {"Values": ["2099", "1", "2099-01-01", "1.00"]}])

    expected = {
        "year = '2024'": [("2024", "02", "2024-02-02", "1.00")],
        "year = '2024' AND month = 2": [("2024", "02", "2024-02-02", "1.00")],
        "year = '2025' AND month = 1": [("2025", "1", "2025-01-01", "1.00")],
        "year = '2024' AND month = 1": [],
        "year = '2023' AND month IN (11, 12)": [("2023", "11", "2023-11-30", "1.00")],
        "day = '2023-12-31'": [],
        "day = '2023-11-30'": [("2023", "11", "2023-11-30", "1.00")],
        "day IN ('2024-02-01', '2024-02-02')": [("2024", "02", "2024-02-02", "1.00")],
        "month = 1": [("2025", "1", "2025-01-01", "1.00")],
    }
    for expression, values in expected.items():
        assert get_values(glue, db, t, Expression=expression) == values, expression
    # The same answers after the indexes are gone.
    for name in ("ym", "d"):
        glue.delete_partition_index(DatabaseName=db, TableName=t, IndexName=name)
    for expression, values in expected.items():
        assert get_values(glue, db, t, Expression=expression) == values, expression


def test_deleting_a_table_removes_its_indexes(glue, indexed):
    db, t = indexed
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i", "Keys": ["year"]})
    glue.create_partition(DatabaseName=db, TableName=t,
                          PartitionInput=partition_input(["2024", "1", "2024-01-01", "1"]))
    glue.delete_table(DatabaseName=db, Name=t)
    glue.create_table(DatabaseName=db, TableInput=table_input(t, partition_keys=(
        ("year", "string"), ("month", "int"), ("day", "date"), ("amount", "decimal(10,2)"))))
    assert index_names(glue, db, t) == []
    assert get_values(glue, db, t, Expression="year = '2024'") == []
    glue.create_partition_index(DatabaseName=db, TableName=t, PartitionIndex={"IndexName": "i", "Keys": ["year"]})
    assert get_values(glue, db, t, Expression="year = '2024'") == []


def test_concurrent_batch_creates_all_land(glue, server, ym):
    """Clients writing partitions of one table at the same time: every partition lands once
    and no request fails."""
    import threading
    db, t = ym
    glue.create_partition_index(DatabaseName=db, TableName=t,
                                PartitionIndex={"IndexName": "by_month", "Keys": ["month"]})
    failures = []

    def writer(k):
        client = server.client()
        try:
            for batch in range(5):
                out = client.batch_create_partition(DatabaseName=db, TableName=t, PartitionInputList=[
                    partition_input([f"y{k}", str(batch * 20 + i)]) for i in range(20)])
                if out["Errors"]:
                    failures.append(out["Errors"])
                client.get_partitions(DatabaseName=db, TableName=t, Expression="month = 3")
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(repr(e))
        finally:
            client.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
    assert get_values(glue, db, t) == sorted((f"y{k}", str(m)) for k in range(4) for m in range(100))
    assert get_values(glue, db, t, Expression="month = 42") == sorted((f"y{k}", "42") for k in range(4))


def test_changing_an_indexed_partition_key_type_keeps_results_right(glue, db):
    # Index entries hold each value in its key type's canonical text ("007" is 7 for an int);
    # when UpdateTable changes the key's type, filters must follow the new type, index or not.
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "t", partition_keys=(("year", "string"), ("month", "int"))),
        PartitionIndexes=[{"IndexName": "by_month", "Keys": ["month"]}])
    glue.batch_create_partition(DatabaseName=db, TableName="t", PartitionInputList=[
        partition_input(["2024", m]) for m in ("007", "7", "12")])
    assert get_values(glue, db, "t", Expression="month = 7") == [("2024", "007"), ("2024", "7")]
    glue.update_table(DatabaseName=db, TableInput=table_input(
        "t", partition_keys=(("year", "string"), ("month", "string"))))
    assert get_values(glue, db, "t", Expression="month = '007'") == [("2024", "007")]
    assert get_values(glue, db, "t", Expression="month = '7'") == [("2024", "7")]
    glue.create_partition(DatabaseName=db, TableName="t", PartitionInput=partition_input(["2025", "07"]))
    assert get_values(glue, db, "t", Expression="month = '07'") == [("2025", "07")]
    # And back to int: "07", "007" and "7" are all 7 again.
    glue.update_table(DatabaseName=db, TableInput=table_input(
        "t", partition_keys=(("year", "string"), ("month", "int"))))
    assert get_values(glue, db, "t", Expression="month = 7") == [
        ("2024", "007"), ("2024", "7"), ("2025", "07")]
    descriptors = glue.get_partition_indexes(DatabaseName=db, TableName="t")["PartitionIndexDescriptorList"]
    assert [(d["IndexName"], d["Keys"]) for d in descriptors] == [
        ("by_month", [{"Name": "month", "Type": "int"}])]


def test_update_table_cannot_drop_an_indexed_partition_key(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "t", partition_keys=(("year", "string"), ("month", "int"))),
        PartitionIndexes=[{"IndexName": "by_month", "Keys": ["month"]}])
    glue.create_partition(DatabaseName=db, TableName="t", PartitionInput=partition_input(["2024", "7"]))
    with raises_glue("InvalidInputException", "by_month"):
        glue.update_table(DatabaseName=db, TableInput=table_input(
            "t", partition_keys=(("year", "string"), ("day", "int"))))
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["PartitionKeys"][1]["Name"] == "month"
    assert get_values(glue, db, "t", Expression="month = 7") == [("2024", "7")]


def test_partition_values_with_unicode_and_punctuation(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", partition_keys=(("s", "string"),)))
    values = ["café", "a b", "x=y/z", "it's", "日本", "%_"]
    assert glue.batch_create_partition(DatabaseName=db, TableName="t", PartitionInputList=[
        partition_input([v]) for v in values])["Errors"] == []
    assert get_values(glue, db, "t") == sorted((v,) for v in values)
    for v in values:
        p = glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=[v])["Partition"]
        assert p["Values"] == [v]
    cases = {
        "s = 'it''s'": [("it's",)],
        "s = 'café'": [("café",)],
        "s LIKE 'caf_'": [("café",)],
        "s LIKE '__'": [("%_",), ("日本",)],
        "s = 'x=y/z' OR s = 'a b'": [("a b",), ("x=y/z",)],
        "s LIKE '\\%\\_' ESCAPE '\\'": [("%_",)],
        "s IN ('日本', 'nope')": [("日本",)],
    }
    for expression, expected in cases.items():
        assert get_values(glue, db, "t", Expression=expression) == expected, expression


def test_expression_nesting_is_bounded(glue, typed_tables):
    deep = "(" * 150 + "s = 'us'" + ")" * 150
    with raises_glue("InvalidInputException", "nested"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain", Expression=deep)
    fine = "(" * 50 + "s = 'us'" + ")" * 50
    assert get_values(glue, typed_tables, "plain", Expression=fine) == \
        get_values(glue, typed_tables, "plain", Expression="s = 'us'")
    with raises_glue("ValidationException", "2048"):
        glue.get_partitions(DatabaseName=typed_tables, TableName="plain",
                            Expression="s IN (" + ", ".join(["'us'"] * 600) + ")")


# --- Expressions from moto's published suite (issue 7) ------------------------------------------

def test_moto_suite_parenthesised_operands_and_exponents(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "m", partition_keys=(("int_col", "int"), ("decimal_col", "decimal"))))
    glue.batch_create_partition(DatabaseName=db, TableName="m", PartitionInputList=[
        partition_input(v) for v in (["1", "1.2"], ["2", "2.6"], ["3", "3e14"])])
    for expression in ("(int_col) = ((2)) OR (((int_col))) = (2)", "((int_col) = 2)",
                       "(2) = int_col", "decimal_col between 2 AND 3e10",
                       "decimal_col >= 2 and decimal_col <> '3e14'", "decimal_col = 26e-1",
                       "int_col = 2e0"):
        assert get_values(glue, db, "m", Expression=expression) == [("2", "2.6")], expression
    assert get_values(glue, db, "m", Expression="decimal_col = 300000000000000") == [("3", "3e14")]


def test_moto_suite_timestamp_literals_must_be_timestamps(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "ts", partition_keys=(("timestamp_col", "timestamp"),)))
    glue.batch_create_partition(DatabaseName=db, TableName="ts", PartitionInputList=[
        partition_input([v]) for v in ("2022-01-01 12:34:56.789", "2022-02-01 00:00:00.000000",
                                       "2022-03-01 21:00:12.3456789")])
    for expression in ("timestamp_col = '2022-02-01 00:00:00'",
                       "timestamp_col = '2022-02-01 00:00:00.000000000'",
                       "timestamp_col between '2022-01-15 00:00:00' AND '2022-02-15 00:00:00'",
                       "timestamp_col > '2022-01-31 23:59:59.999999999' AND"
                       " timestamp_col < '2022-02-01 00:00:00.000000001'"):
        assert get_values(glue, db, "ts", Expression=expression) == [("2022-02-01 00:00:00.000000",)]
    for expression in ("timestamp_col = '2022-02-01'", "timestamp_col = '2022-02-15 00:00:00.'",
                       "timestamp_col = '2022-02-32 00:00:00'"):
        with raises_glue("InvalidInputException", "timestamp"):
            glue.get_partitions(DatabaseName=db, TableName="ts", Expression=expression)


def test_index_pages_merge_pinned_ranges_in_key_order(glue, db):
    # Index (s) pinned by IN: three index ranges merged lazily page by page (issue 7: a page
    # reads about what it returns plus one). Keys (i, s): the table's own order cannot serve s.
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "mi", partition_keys=(("i", "string"), ("s", "string"))),
        PartitionIndexes=[{"IndexName": "by_s", "Keys": ["s"]}])
    values = [[f"{n:03d}", s] for n in range(40) for s in ("a", "b", "c", "d")]
    for start in range(0, len(values), 100):
        glue.batch_create_partition(DatabaseName=db, TableName="mi", PartitionInputList=[
            partition_input(v) for v in values[start:start + 100]])
    got, token, pages = [], None, 0
    while True:
        out = glue.get_partitions(DatabaseName=db, TableName="mi", MaxResults=7,
                                  Expression="s IN ('c', 'a', 'd') AND i <> '005'",
                                  **({"NextToken": token} if token else {}))
        got.extend(tuple(p["Values"]) for p in out["Partitions"])
        pages += 1
        token = out.get("NextToken")
        if not token:
            break
    expected = [(f"{n:03d}", s) for n in range(40) for s in ("a", "c", "d") if n != 5]
    assert got == expected  # every partition once, in key order across the merged ranges
    assert pages == -(-len(expected) // 7)
