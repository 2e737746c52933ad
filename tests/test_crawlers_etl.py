"""A crawled table read by a Glue job: data uploaded over the embedded store's S3 API, crawled,
then read with from_catalog (the runtime takes the format, separator, header and partitions from
what the crawler wrote). See docs/crawlers.md."""
import io
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobkit import kit, log_messages, unique  # noqa: F401
from test_crawlers import wait_crawl
from test_s3_api import s3_server


@pytest.fixture(scope="module")
def server():
    yield from s3_server("openglue-crawl-etl-")


READ = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["database"])
    glue_context = GlueContext(SparkContext.getOrCreate())
    for table in ("orders", "metrics"):
        frame = glue_context.create_dynamic_frame.from_catalog(database=args["database"], table_name=table)
        print("RESULT", table, frame.count())
    recent = glue_context.create_dynamic_frame.from_catalog(
        database=args["database"], table_name="orders", push_down_predicate="dt >= '2024-01-02'")
    print("RESULT recent", recent.count())
"""


def test_a_crawled_table_is_read_by_a_job_with_from_catalog(kit, glue, server):
    s3 = server.s3()
    bucket = "crawl-" + uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=bucket)
    for day, rows in (("2024-01-01", 2), ("2024-01-02", 3), ("2024-01-03", 1)):
        body = "order_id,amount,customer\n" + "".join(f"{i},{i}.5,c{i}\n" for i in range(rows))
        s3.put_object(Bucket=bucket, Key=f"lake/orders/dt={day}/part-0.csv", Body=body.encode())
    for region, n in (("eu", 4), ("us", 5)):
        buf = io.BytesIO()
        pq.write_table(pa.table({"k": [f"{region}{i}" for i in range(n)], "v": list(range(n))}), buf)
        s3.put_object(Bucket=bucket, Key=f"lake/metrics/region={region}/m.parquet", Body=buf.getvalue())
    db = unique("crawled")
    glue.create_database(DatabaseInput={"Name": db})
    crawler = unique("crawler")
    glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                        Targets={"S3Targets": [{"Path": f"s3://{bucket}/lake/"}]})
    glue.start_crawler(Name=crawler)
    c = wait_crawl(glue, crawler)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
    assert sorted(t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]) == ["metrics", "orders"]

    job = kit.job(READ)
    run = kit.run(job, timeout=120, Arguments={"--database": db})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    out = log_messages(server.client("logs"), "/aws-glue/jobs/output", run["Id"])
    results = {line.split()[1]: int(line.split()[2]) for line in out if line.startswith("RESULT")}
    assert results == {"orders": 6, "metrics": 9, "recent": 4}, out


def test_a_crawler_reads_an_external_s3_endpoint(server, tmp_path):
    """A second server whose s3:// locations live on an S3-compatible endpoint (the first
    server's S3 API, versitygw): its crawler lists and reads through S3 requests."""
    from conftest import ACCESS_KEY, SECRET_KEY, Server
    s3 = server.s3()
    bucket = "ext-" + uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=bucket)
    for part in ("a", "b"):
        s3.put_object(Bucket=bucket, Key=f"t/p={part}/x.json", Body=b'{"id": 1, "name": "n"}\n')
    buf = io.BytesIO()
    pq.write_table(pa.table({"k": ["x"]}), buf)
    s3.put_object(Bucket=bucket, Key="pq/x.parquet", Body=buf.getvalue())
    data_dir = tmp_path / "ext"
    data_dir.mkdir()
    other = Server(str(data_dir), ["--s3-api", "off", "--s3-endpoint", server.s3_endpoint,
                                   "--s3-access-key-id", ACCESS_KEY],
                   env={"OPENGLUE_S3_SECRET_ACCESS_KEY": SECRET_KEY}).start()
    try:
        glue = other.client()
        glue.create_database(DatabaseInput={"Name": "ext"})
        glue.create_crawler(Name="ext", Role="local", DatabaseName="ext",
                            Targets={"S3Targets": [{"Path": f"s3://{bucket}/t/"},
                                                   {"Path": f"s3://{bucket}/pq/"}]})
        glue.start_crawler(Name="ext")
        c = wait_crawl(glue, "ext")
        assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
        t = glue.get_table(DatabaseName="ext", Name="t")["Table"]
        assert [k["Name"] for k in t["PartitionKeys"]] == ["p"]
        assert [(c["Name"], c["Type"]) for c in t["StorageDescriptor"]["Columns"]] == [("id", "int"), ("name", "string")]
        assert len(glue.get_partitions(DatabaseName="ext", TableName="t")["Partitions"]) == 2
        assert glue.get_table(DatabaseName="ext", Name="pq")["Table"]["Parameters"]["classification"] == "parquet"
    finally:
        other.stop()
