"""Acknowledged writes survive the server being killed (SIGKILL) and restarted on its data dir."""
import signal
import threading
import time

import botocore.exceptions
import pytest

from conftest import partition_input, table_input


def snapshot(glue, database):
    """Everything the catalog holds for `database`, as boto3 returns it."""
    db = glue.get_database(Name=database)["Database"]
    tables = glue.get_paginator("get_tables").paginate(DatabaseName=database) \
        .build_full_result()["TableList"]
    out = {"database": db, "tables": {}, "partitions": {}, "versions": {}}
    for table in tables:
        name = table["Name"]
        out["tables"][name] = glue.get_table(DatabaseName=database, Name=name)["Table"]
        partitions = glue.get_paginator("get_partitions").paginate(
            DatabaseName=database, TableName=name).build_full_result()["Partitions"]
        out["partitions"][name] = sorted(partitions, key=lambda p: p["Values"])
        versions = glue.get_paginator("get_table_versions").paginate(
            DatabaseName=database, TableName=name).build_full_result()["TableVersions"]
        out["versions"][name] = sorted(versions, key=lambda v: int(v["VersionId"]))
    return out


def test_acknowledged_writes_survive_kill_9(fresh_server):
    glue = fresh_server.client()
    glue.create_database(DatabaseInput={"Name": "sales", "Description": "kept",
                                        "Parameters": {"owner": "etl"}})
    glue.create_database(DatabaseInput={"Name": "scratch"})
    glue.create_table(DatabaseName="sales", TableInput=table_input(
        "orders", partition_keys=(("year", "string"), ("month", "string"))))
    glue.create_table(DatabaseName="sales", TableInput=table_input("customers", partition_keys=()))
    glue.create_table(DatabaseName="scratch", TableInput=table_input("tmp"))
    glue.create_partition(DatabaseName="scratch", TableName="tmp",
                          PartitionInput=partition_input(["2020"]))

    # 1,000 partitions in batches of 100.
    values = [[str(2000 + y), f"{m:02d}-{k}"] for y in range(10) for m in range(1, 11) for k in range(10)]
    assert len(values) == 1000
    for start in range(0, 1000, 100):
        result = glue.batch_create_partition(
            DatabaseName="sales", TableName="orders",
            PartitionInputList=[partition_input(v) for v in values[start:start + 100]])
        assert result.get("Errors", []) == []

    updated = table_input("orders", partition_keys=(("year", "string"), ("month", "string")),
                          cols=(("id", "bigint"), ("v", "string"), ("added", "double")))
    updated["Description"] = "after update"
    updated["Parameters"] = {"classification": "json", "rev": "2"}
    glue.update_table(DatabaseName="sales", TableInput=updated)
    glue.update_partition(DatabaseName="scratch", TableName="tmp", PartitionValueList=["2020"],
                          PartitionInput=partition_input(["2020"], location="s3://moved/2020/"))
    glue.delete_table(DatabaseName="sales", Name="customers")

    before = {name: snapshot(glue, name) for name in ("sales", "scratch")}
    assert len(before["sales"]["partitions"]["orders"]) == 1000
    assert len(before["sales"]["versions"]["orders"]) == 2
    assert set(before["sales"]["tables"]) == {"orders"}

    fresh_server.kill9()
    fresh_server.start()
    glue = fresh_server.client()

    after = {name: snapshot(glue, name) for name in ("sales", "scratch")}
    assert after == before
    orders = after["sales"]["tables"]["orders"]
    assert orders["Description"] == "after update"
    assert [c["Name"] for c in orders["StorageDescriptor"]["Columns"]] == ["id", "v", "added"]
    assert sorted(p["Values"] for p in after["sales"]["partitions"]["orders"]) == sorted(values)
    assert after["scratch"]["partitions"]["tmp"][0]["StorageDescriptor"]["Location"] == "s3://moved/2020/"
    names = {d["Name"] for d in glue.get_databases()["DatabaseList"]}
    assert names == {"sales", "scratch"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName="sales", Name="customers")

    # The restarted server keeps working on the same data.
    glue.create_partition(DatabaseName="sales", TableName="orders",
                          PartitionInput=partition_input(["2099", "01"]))
    assert glue.get_partition(DatabaseName="sales", TableName="orders",
                              PartitionValues=["2099", "01"])["Partition"]["Values"] == ["2099", "01"]


BATCH = 20


def hammer(glue, acknowledged, stop, errors):
    """Creates batches of BATCH partitions until the server goes away."""
    batch = 0
    while not stop.is_set():
        inputs = [partition_input([f"b{batch:05d}", f"p{j:02d}"]) for j in range(BATCH)]
        try:
            result = glue.batch_create_partition(DatabaseName="d", TableName="t",
                                                 PartitionInputList=inputs)
        except (botocore.exceptions.HTTPClientError,  # the server went away
                botocore.exceptions.ConnectionError):
            return
        except Exception as e:  # noqa: BLE001 - anything else is a failure of the test
            errors.append(repr(e))
            return
        if result.get("Errors"):
            errors.append(result["Errors"])
            return
        acknowledged.append(batch)
        batch += 1


def check_batches(glue, acknowledged):
    partitions = glue.get_paginator("get_partitions").paginate(
        DatabaseName="d", TableName="t").build_full_result()["Partitions"]
    per_batch = {}
    for p in partitions:
        per_batch.setdefault(p["Values"][0], set()).add(p["Values"][1])
    # All-or-nothing: no batch is half applied.
    full = {f"p{j:02d}" for j in range(BATCH)}
    for batch, members in per_batch.items():
        assert members == full, f"batch {batch} is half applied: {len(members)} of {BATCH}"
    # Every acknowledged batch is there; at most the one in flight at the kill is extra.
    present = {int(b[1:]) for b in per_batch}
    assert set(acknowledged) <= present, sorted(set(acknowledged) - present)[:10]
    assert len(present - set(acknowledged)) <= 1, sorted(present - set(acknowledged))
    return present


def test_kill_9_during_batch_writes_loses_no_acknowledged_batch(fresh_server):
    glue = fresh_server.client()
    glue.create_database(DatabaseInput={"Name": "d"})
    glue.create_table(DatabaseName="d", TableInput=table_input(
        "t", partition_keys=(("batch", "string"), ("item", "string"))))

    acknowledged, errors = [], []
    stop = threading.Event()
    writer = threading.Thread(target=hammer, args=(fresh_server.client(), acknowledged, stop, errors))
    writer.start()
    deadline = time.time() + 10
    while len(acknowledged) < 30 and time.time() < deadline and writer.is_alive():
        time.sleep(0.01)
    fresh_server.kill9()
    writer.join(timeout=30)
    stop.set()
    assert not writer.is_alive()
    assert errors == []
    assert len(acknowledged) >= 30, "the writer made too little progress to test anything"

    fresh_server.start()
    present = check_batches(fresh_server.client(), acknowledged)
    assert len(present) >= len(acknowledged)


def test_sigterm_is_quick_and_keeps_acknowledged_writes(fresh_server):
    """A graceful stop while a writer is busy and clients hold idle keep-alive connections: the
    server exits promptly, and every acknowledged batch is kept whole."""
    glue = fresh_server.client()
    glue.create_database(DatabaseInput={"Name": "d"})
    glue.create_table(DatabaseName="d", TableInput=table_input(
        "t", partition_keys=(("batch", "string"), ("item", "string"))))
    idle = [fresh_server.client() for _ in range(4)]
    for client in idle:  # each now holds an idle keep-alive connection
        client.get_database(Name="d")

    acknowledged, errors = [], []
    stop = threading.Event()
    writer = threading.Thread(target=hammer, args=(fresh_server.client(), acknowledged, stop, errors))
    writer.start()
    deadline = time.time() + 10
    while len(acknowledged) < 10 and time.time() < deadline and writer.is_alive():
        time.sleep(0.01)
    started = time.time()
    fresh_server.proc.send_signal(signal.SIGTERM)
    fresh_server.proc.wait(timeout=30)
    stopped_in = time.time() - started
    writer.join(timeout=30)
    stop.set()
    assert fresh_server.proc.returncode == 0, fresh_server.log()
    assert stopped_in < 5, f"SIGTERM took {stopped_in:.1f} s"
    assert errors == []
    assert len(acknowledged) >= 10

    fresh_server.start()
    check_batches(fresh_server.client(), acknowledged)
