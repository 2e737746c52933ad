"""awswrangler (PyPI) against OpenGlue: a Python shell job writes a partitioned Parquet dataset
with awswrangler, which registers it in the Glue catalog and reads it back, using nothing but the
run's environment (Glue and S3 endpoints, run credentials). Issue 8, "Python shell jobs"."""
import json
import os
import uuid

import pytest

from jobkit import JobKit, unique
from test_s3_api import s3_server

SCRIPT = """
    import json, sys
    import awswrangler as wr
    import pandas as pd
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    db, bucket = args["--database"], args["--bucket"]
    df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["ann", "bob", "cy", "dee"],
                       "amount": [1.5, 2.25, 3.0, 4.75],
                       "day": ["2024-03-01", "2024-03-01", "2024-03-02", "2024-03-03"]})
    written = wr.s3.to_parquet(df=df, path=f"s3://{bucket}/orders/", dataset=True, database=db,
                               table="orders", partition_cols=["day"], mode="overwrite")
    back = wr.s3.read_parquet_table(database=db, table="orders")
    back = back.sort_values("id")
    some = wr.s3.read_parquet_table(database=db, table="orders",
                                    partition_filter=lambda p: p["day"] == "2024-03-01")
    out = {"paths": written["paths"], "ids": [int(i) for i in back["id"]],
           "names": list(back["name"]), "days": sorted(set(str(d) for d in back["day"])),
           "filtered": sorted(int(i) for i in some["id"]),
           "tables": list(wr.catalog.tables(database=db)["Table"])}
    wr.s3.upload(local_file=__import__("io").BytesIO(json.dumps(out).encode()),
                 path=f"s3://{bucket}/result.json")
"""


@pytest.fixture(scope="module")
def s3srv():
    yield from s3_server("openglue-awswrangler-")


def test_awswrangler_writes_and_reads_a_catalog_table_in_a_python_shell_job(s3srv):
    glue = s3srv.client()
    kit = JobKit(s3srv, glue)
    database = unique("wrangler")
    glue.create_database(DatabaseInput={"Name": database})
    bucket = "wrangler-" + uuid.uuid4().hex[:8]
    s3srv.s3().create_bucket(Bucket=bucket)
    try:
        job = kit.job(SCRIPT, command="pythonshell")
        run = kit.run(job, timeout=120, Arguments={"--database": database, "--bucket": bucket})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        with open(os.path.join(s3srv.data_dir, "s3", bucket, "result.json")) as f:
            result = json.load(f)
        assert result["ids"] == [1, 2, 3, 4]
        assert result["names"] == ["ann", "bob", "cy", "dee"]
        assert result["days"] == ["2024-03-01", "2024-03-02", "2024-03-03"]
        assert result["filtered"] == [1, 2]
        assert result["tables"] == ["orders"]
        # The catalog holds what awswrangler registered: a Parquet table and its partitions,
        # whose files are in the embedded store.
        table = glue.get_table(DatabaseName=database, Name="orders")["Table"]
        assert table["StorageDescriptor"]["Location"] == f"s3://{bucket}/orders/"
        assert [k["Name"] for k in table["PartitionKeys"]] == ["day"]
        parts = glue.get_partitions(DatabaseName=database, TableName="orders")["Partitions"]
        assert sorted(p["Values"][0] for p in parts) == ["2024-03-01", "2024-03-02", "2024-03-03"]
        for path in result["paths"]:
            assert path.startswith(f"s3://{bucket}/orders/day=")
            local = os.path.join(s3srv.data_dir, "s3", path[len("s3://"):])
            assert os.path.getsize(local) > 0
    finally:
        kit.close()
