"""Issue 18, defects 9 and 11: what a crawler writes can be trusted.

Defect 9: an object key with newlines forged crawler log events (the key
`x\\n[...] INFO : Deleted table everything in database prod\\n.json` became an event of its own),
and `LastCrawl.ErrorMessage` carried raw newlines. Every crawl log line and error message now
escapes control characters (common/strings.h EscapeControlCharacters): a name stays on its line.

Defect 11: kill -9 while a crawler wrote 20,000 partitions left a table with 12,100 of them while
its parameters claimed 20,000. A crawl's catalog changes are now one store transaction, committed
with the crawl's end (docs/crawlers.md, "All or nothing"): after a crash the table is either
absent or whole.
"""
import os
import re
import time
import uuid

import pytest

from jobkit import log_messages
from test_s3_api import s3_server

CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
FORGED = "[00000000-0000-0000-0000-000000000000] INFO : Deleted table everything in database prod"


def unique(prefix):
    return prefix + uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def s3srv():
    """This module's own server with the S3 API: the hostile key is put over it, as a job would."""
    yield from s3_server("openglue-crawler-integrity-")


def wait_crawl(glue, name, timeout=120):
    deadline = time.time() + timeout
    while True:
        crawler = glue.get_crawler(Name=name)["Crawler"]
        if crawler["State"] == "READY":
            return crawler
        assert time.time() < deadline, f"crawler {name} still running after {timeout} s"
        time.sleep(0.05)


def test_a_key_with_newlines_forges_no_crawler_log_event_and_no_raw_error_line(s3srv):
    glue, s3, logs = s3srv.client(), s3srv.s3(), s3srv.client("logs")
    bucket, db, crawler = unique("integrity-"), unique("integrity"), unique("integrity_")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="lake/t/a.csv", Body=b"id,name\n1,a\n2,b\n")
    # Binary content: the crawl skips the file, naming its key in a WARN line and in LastCrawl.
    hostile = f"lake/t/x\n{FORGED}\r\n.json"
    s3.put_object(Bucket=bucket, Key=hostile, Body=b"\x00\x01\x02\x03 not text")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="lake/t/x")["Contents"]] == [hostile]
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                        Targets={"S3Targets": [{"Path": f"s3://{bucket}/lake/"}]})
    glue.start_crawler(Name=crawler)
    last = wait_crawl(glue, crawler)["LastCrawl"]
    assert last["Status"] == "SUCCEEDED", last

    escaped = f"s3://{bucket}/lake/t/x\\x0A{FORGED}\\x0D\\x0A.json"
    events = log_messages(logs, "/aws-glue/crawlers", crawler)
    prefix = "[" + last["MessagePrefix"] + "] "
    assert not any(e.startswith(FORGED) or e.startswith(".json") for e in events), events
    assert all(e.startswith(prefix) for e in events), [e for e in events if not e.startswith(prefix)]
    assert any(e.startswith(prefix + "WARN : Skipped " + escaped) for e in events), events
    assert not any(CONTROL.search(e) for e in events), events
    assert escaped in last["ErrorMessage"], last
    assert not CONTROL.search(last["ErrorMessage"]), last
    # The file of the good key still made its table (the include path's, as its one folder is).
    assert [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]] == ["lake"]


def test_a_failed_crawls_message_keeps_a_client_chosen_name_on_one_line(s3srv):
    glue, logs = s3srv.client(), s3srv.client("logs")
    db, crawler = unique("integrity"), unique("integrity_")
    glue.create_database(DatabaseInput={"Name": db})
    # A catalog target whose Location (any text the client chose) is not s3://: the crawl fails
    # with a message that quotes it.
    location = f"file:///lake\n{FORGED}\n"
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "target", "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}],
                                                "Location": location}})
    glue.create_crawler(Name=crawler, Role="local",
                        Targets={"CatalogTargets": [{"DatabaseName": db, "Tables": ["target"]}]})
    glue.start_crawler(Name=crawler)
    last = wait_crawl(glue, crawler)["LastCrawl"]
    assert last["Status"] == "FAILED", last
    assert f"'file:///lake\\x0A{FORGED}\\x0A' is not an s3:// location" in last["ErrorMessage"], last
    assert not CONTROL.search(last["ErrorMessage"]), last
    crawl = glue.list_crawls(CrawlerName=crawler)["Crawls"][0]
    assert not CONTROL.search(crawl["ErrorMessage"]), crawl
    events = log_messages(logs, "/aws-glue/crawlers", crawler)
    prefix = "[" + last["MessagePrefix"] + "] "
    assert all(e.startswith(prefix) for e in events), events
    assert any(e.startswith(prefix + "ERROR : Crawl failed: ") and FORGED in e for e in events), events


PARTITIONS = 20000


def write_partitioned_lake(root, bucket, partitions):
    """`partitions` folders dt=NNNNN of one small CSV file each, straight into the embedded store."""
    for i in range(partitions):
        folder = os.path.join(root, "s3", bucket, "big", f"dt={i:05d}")
        os.makedirs(folder)
        with open(os.path.join(folder, "part-0.csv"), "wb") as f:
            f.write(b"id,name\n%d,n%d\n" % (i, i))


def partition_count(glue, db, table):
    count, kwargs = 0, {}
    while True:
        page = glue.get_partitions(DatabaseName=db, TableName=table, ExcludeColumnSchema=True, **kwargs)
        count += len(page["Partitions"])
        if not page.get("NextToken"):
            return count
        kwargs["NextToken"] = page["NextToken"]


def wait_for_events(logs, stream, text, count, timeout):
    """Polls the crawler's log until `count` events contain `text`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            events = logs.get_log_events(logGroupName="/aws-glue/crawlers", logStreamName=stream,
                                         startFromHead=True)["events"]
        except Exception:  # noqa: BLE001 - the stream appears with the first flushed lines
            events = []
        if sum(text in e["message"] for e in events) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"no crawler log event with {text!r} in {timeout} s")


def test_kill9_during_a_crawls_catalog_write_leaves_no_half_written_table(fresh_server):
    srv, bucket = fresh_server, "big-lake"
    write_partitioned_lake(srv.data_dir, bucket, PARTITIONS)
    # Each round kills the server at another moment of the write phase (a crawl of its own into a
    # database of its own, over the same data).
    for n, delay in enumerate([0.05, 0.4]):
        glue, logs = srv.client(), srv.client("logs")
        db, crawler = f"integrity{n}", f"big_crawler{n}"
        glue.create_database(DatabaseInput={"Name": db})
        glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                            Targets={"S3Targets": [{"Path": f"s3://{bucket}/big/"}]})
        glue.start_crawler(Name=crawler)
        # The write phase begins with this line (flushed before the first catalog write); the
        # kill lands while the crawl writes its table and 20,000 partitions (about a second).
        wait_for_events(logs, crawler, "writing results to database", 1, timeout=120)
        time.sleep(delay)
        srv.kill9()
        srv.start()
        glue = srv.client()

        last = glue.get_crawler(Name=crawler)["Crawler"]["LastCrawl"]
        try:
            table = glue.get_table(DatabaseName=db, Name="big")["Table"]
        except glue.exceptions.EntityNotFoundException:
            table = None
        if table is None:
            # Nothing of the interrupted crawl is in the catalog, and its end says why.
            assert last["Status"] == "FAILED", last
            assert glue.get_tables(DatabaseName=db)["TableList"] == []
        else:
            # The crawl had committed: the table is whole, its parameters agree, its end with it.
            assert table["Parameters"]["objectCount"] == str(PARTITIONS), table["Parameters"]
            assert partition_count(glue, db, "big") == PARTITIONS, f"killed {delay} s into the write"
            assert last["Status"] == "SUCCEEDED", last

        # Crawled again, the table is whole.
        glue.start_crawler(Name=crawler)
        assert wait_crawl(glue, crawler)["LastCrawl"]["Status"] == "SUCCEEDED"
        table = glue.get_table(DatabaseName=db, Name="big")["Table"]
        assert table["Parameters"]["objectCount"] == str(PARTITIONS)
        assert partition_count(glue, db, "big") == PARTITIONS
