"""kill -9 rounds: the server is killed at a random moment under load from several client
processes, restarted on the same data directory, and checked, round after round.

Each round: two processes create partitions in batches (BatchCreatePartition) and two update
their own table (UpdateTable); after a random delay the server gets SIGKILL mid-load; the clients
end on the connection error; the server restarts; then
  - every acknowledged write is present;
  - every write in flight at the kill is all-or-nothing (a batch is wholly there or wholly
    absent; a table is exactly one of its versions, never a mix);
  - table versions are 0..N without gaps, the last one equal to the table.

Repeatable: the schedule comes from a seed (printed; set OPENGLUE_KILL9_SEED to replay it).
OPENGLUE_KILL9_ROUNDS sets the number of rounds (default 20). Bounded: each round waits at most
a few seconds for progress, and the whole test stops with a failure after OPENGLUE_KILL9_BUDGET
seconds (default 150).
"""
import multiprocessing
import os
import random
import time

import botocore.exceptions

from conftest import partition_input, table_input

ROUNDS = int(os.environ.get("OPENGLUE_KILL9_ROUNDS", "20"))
BUDGET_SECONDS = float(os.environ.get("OPENGLUE_KILL9_BUDGET", "150"))
BATCH = 10
PARTITION_WRITERS = 2
TABLE_WRITERS = 2
GONE = (botocore.exceptions.HTTPClientError, botocore.exceptions.ConnectionError)


def client(endpoint):
    import boto3
    import botocore.config
    config = botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"},
                                    connect_timeout=5, read_timeout=30)
    return boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test", config=config)


def updated_table(name, seq):
    """Version `seq` of a writer's table: description, parameter and a column all say `seq`."""
    t = table_input(name, partition_keys=(), cols=(("id", "bigint"), (f"c{seq}", "string")))
    t["Description"] = f"seq {seq}"
    t["Parameters"] = {"seq": str(seq)}
    return t


def partition_writer(endpoint, table, writer, log_path):
    """Creates batches b<writer>-<n> of BATCH partitions until the server goes away. Appends
    `ack <n>` to log_path after each acknowledged batch."""
    glue = client(endpoint)
    with open(log_path, "a", buffering=1) as log:
        n = 0
        while True:
            inputs = [partition_input([f"w{writer}b{n:05d}", f"p{j:02d}"]) for j in range(BATCH)]
            try:
                result = glue.batch_create_partition(DatabaseName="d", TableName=table,
                                                     PartitionInputList=inputs)
            except GONE:
                return
            except Exception as e:  # noqa: BLE001 - reported by the checker
                log.write(f"error {e!r}\n")
                return
            if result.get("Errors"):
                log.write(f"error {result['Errors']!r}\n")
                return
            log.write(f"ack {n}\n")
            n += 1


def table_writer(endpoint, table, start_seq, log_path):
    """Updates `table` to seq start_seq, start_seq+1, ... until the server goes away."""
    glue = client(endpoint)
    with open(log_path, "a", buffering=1) as log:
        seq = start_seq
        while True:
            try:
                glue.update_table(DatabaseName="d", TableInput=updated_table(table, seq))
            except GONE:
                return
            except Exception as e:  # noqa: BLE001
                log.write(f"error {e!r}\n")
                return
            log.write(f"ack {seq}\n")
            seq += 1


def read_log(path):
    acks, errors = [], []
    if os.path.exists(path):
        for line in open(path):
            kind, _, rest = line.strip().partition(" ")
            (acks if kind == "ack" else errors).append(int(rest) if kind == "ack" else rest)
    return acks, errors


def table_seq(table):
    seq = int(table["Parameters"]["seq"])
    # All-or-nothing inside one update: every field written by it says the same seq.
    assert table["Description"] == f"seq {seq}", table
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["id", f"c{seq}"], table
    return seq


def check_round(glue, rnd, part_logs, table_logs, expected_seq):
    """Checks one round's writes; returns each table writer's current seq."""
    table = f"t{rnd}"
    partitions = glue.get_paginator("get_partitions").paginate(
        DatabaseName="d", TableName=table).build_full_result()["Partitions"]
    batches = {}
    for p in partitions:
        batches.setdefault(p["Values"][0], set()).add(p["Values"][1])
    whole = {f"p{j:02d}" for j in range(BATCH)}
    for batch, items in batches.items():
        assert items == whole, f"round {rnd}: batch {batch} half applied ({len(items)}/{BATCH})"
    for w, path in enumerate(part_logs):
        acks, errors = read_log(path)
        assert errors == [], f"round {rnd} partition writer {w}: {errors}"
        present = {int(b.split("b")[1]) for b in batches if b.startswith(f"w{w}b")}
        missing = set(acks) - present
        assert not missing, f"round {rnd} writer {w}: acknowledged batches lost: {sorted(missing)}"
        extra = present - set(acks)
        # Only the batch in flight at the kill may be there unacknowledged.
        assert extra <= {len(acks)}, f"round {rnd} writer {w}: unexpected batches {sorted(extra)}"
    seqs = []
    for w, path in enumerate(table_logs):
        acks, errors = read_log(path)
        assert errors == [], f"round {rnd} table writer {w}: {errors}"
        name = f"u{w}"
        current = table_seq(glue.get_table(DatabaseName="d", Name=name)["Table"])
        last_acked = acks[-1] if acks else expected_seq[w]
        # The acknowledged update is there; the one in flight is all-or-nothing.
        assert current in (last_acked, last_acked + 1), \
            f"round {rnd} table {name}: seq {current}, last acknowledged {last_acked}"
        versions = glue.get_paginator("get_table_versions").paginate(
            DatabaseName="d", TableName=name).build_full_result()["TableVersions"]
        ids = sorted(int(v["VersionId"]) for v in versions)
        assert ids == list(range(len(ids))), f"round {rnd} table {name}: version gaps {ids[:5]}..."
        # Version 0 is the create (seq 0); version k is update seq k.
        assert len(ids) == current + 1, f"round {rnd} table {name}: {len(ids)} versions for seq {current}"
        latest = max(versions, key=lambda v: int(v["VersionId"]))["Table"]
        assert table_seq(latest) == current
        seqs.append(current)
    return seqs


def test_kill9_rounds_under_load(fresh_server, tmp_path):
    seed = int(os.environ.get("OPENGLUE_KILL9_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    print(f"kill -9 rounds: seed {seed} (OPENGLUE_KILL9_SEED={seed} replays this schedule)")
    glue = fresh_server.client()
    glue.create_database(DatabaseInput={"Name": "d"})
    for w in range(TABLE_WRITERS):
        glue.create_table(DatabaseName="d", TableInput=updated_table(f"u{w}", 0))
    seqs = [0] * TABLE_WRITERS
    fork = multiprocessing.get_context("fork")
    started = time.time()
    acknowledged_total = 0
    for rnd in range(ROUNDS):
        assert time.time() - started < BUDGET_SECONDS, \
            f"only {rnd} of {ROUNDS} rounds in {BUDGET_SECONDS:.0f} s (seed {seed})"
        glue = fresh_server.client()
        glue.create_table(DatabaseName="d", TableInput=table_input(
            f"t{rnd}", partition_keys=(("batch", "string"), ("item", "string"))))
        part_logs = [str(tmp_path / f"r{rnd}-p{w}.log") for w in range(PARTITION_WRITERS)]
        table_logs = [str(tmp_path / f"r{rnd}-u{w}.log") for w in range(TABLE_WRITERS)]
        procs = [fork.Process(target=partition_writer,
                              args=(fresh_server.endpoint, f"t{rnd}", w, part_logs[w]))
                 for w in range(PARTITION_WRITERS)]
        procs += [fork.Process(target=table_writer,
                               args=(fresh_server.endpoint, f"u{w}", seqs[w] + 1, table_logs[w]))
                  for w in range(TABLE_WRITERS)]
        for p in procs:
            p.start()
        # Wait until every client has been acknowledged at least once (bounded), then kill at a
        # random moment of the load.
        deadline = time.time() + 10
        while time.time() < deadline and not all(read_log(path)[0] for path in part_logs + table_logs):
            if not all(p.is_alive() for p in procs):
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.4))
        fresh_server.kill9()
        for p in procs:
            p.join(timeout=30)
            assert not p.is_alive(), f"round {rnd}: a client did not notice the kill"
        for path in part_logs + table_logs:
            acks, errors = read_log(path)
            assert errors == [], f"round {rnd}: {path}: {errors}"
            assert acks, f"round {rnd}: {path}: no write acknowledged before the kill (seed {seed})"
            acknowledged_total += len(acks)
        fresh_server.start()
        seqs = check_round(fresh_server.client(), rnd, part_logs, table_logs, seqs)
    # Earlier rounds' tables are untouched by later kills.
    glue = fresh_server.client()
    for rnd in range(ROUNDS):
        part_logs = [str(tmp_path / f"r{rnd}-p{w}.log") for w in range(PARTITION_WRITERS)]
        table_logs = []
        check_round(glue, rnd, part_logs, table_logs, seqs)
    print(f"kill -9 rounds: {ROUNDS} rounds, {acknowledged_total} acknowledged writes checked, "
          f"{time.time() - started:.1f} s")
