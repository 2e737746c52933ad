"""Crawlers and classifiers end to end: boto3 against a real server, data sets generated in the
embedded store (files under <data_dir>/s3/<bucket>/ are its objects). See docs/crawlers.md."""
import bz2
import datetime
import gzip
import io
import json
import os
import time
import uuid

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from conftest import raises_glue


def unique(prefix):
    return prefix + uuid.uuid4().hex[:8]


class Lake:
    """A bucket of the embedded store, filled by writing files into the data folder."""

    def __init__(self, server):
        self.bucket = unique("lake-")
        self.root = os.path.join(server.data_dir, "s3", self.bucket)
        os.makedirs(self.root)

    def put(self, key, data):
        path = os.path.join(self.root, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)

    def parquet(self, key, table):
        buf = io.BytesIO()
        pq.write_table(table, buf)
        self.put(key, buf.getvalue())

    def orc(self, key, table):
        buf = io.BytesIO()
        orc.write_table(table, buf)
        self.put(key, buf.getvalue())

    def remove(self, key):
        os.unlink(os.path.join(self.root, key))

    def uri(self, path=""):
        return f"s3://{self.bucket}/{path}"


def avro_file(records):
    """An Avro container file (hand-encoded: no Avro library in the venv) of records
    {id: long, name: [null, string], tags: array<string>}."""
    def long(n):
        n = (n << 1) ^ (n >> 63)
        out = b""
        while True:
            b = n & 0x7F
            n >>= 7
            if n:
                out += bytes([b | 0x80])
            else:
                return out + bytes([b])

    def text(s):
        s = s.encode() if isinstance(s, str) else s
        return long(len(s)) + s
    schema = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}}]})
    sync = b"0123456789abcdef"
    header = b"Obj\x01" + long(2) + text("avro.schema") + text(schema) + text("avro.codec") + text("null")
    header += long(0) + sync
    body = b""
    for rid, name, tags in records:
        body += long(rid) + (long(1) + text(name) if name else long(0))
        body += (long(len(tags)) + b"".join(text(t) for t in tags) if tags else b"") + long(0) + long(19000)
    return header + long(len(records)) + long(len(body)) + body + sync


@pytest.fixture()
def lake(server):
    return Lake(server)


def crawl(glue, name, timeout=60):
    glue.start_crawler(Name=name)
    return wait_crawl(glue, name, timeout)


def wait_crawl(glue, name, timeout=60):
    """The crawler once its crawl has ended (READY)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        crawler = glue.get_crawler(Name=name)["Crawler"]
        if crawler["State"] == "READY":
            return crawler
        time.sleep(0.05)
    raise AssertionError(f"crawler {name} still running after {timeout} s")


def make_crawler(glue, db, path, **kwargs):
    name = unique("crawler_")
    targets = kwargs.pop("Targets", {"S3Targets": [{"Path": path, **kwargs.pop("target", {})}]})
    glue.create_crawler(Name=name, Role="local", DatabaseName=db, Targets=targets, **kwargs)
    return name


def table(glue, db, name):
    return glue.get_table(DatabaseName=db, Name=name)["Table"]


def columns(t):
    return [(c["Name"], c["Type"]) for c in t["StorageDescriptor"]["Columns"]]


def partitions(glue, db, name):
    out = []
    for page in glue.get_paginator("get_partitions").paginate(DatabaseName=db, TableName=name):
        out += page["Partitions"]
    return sorted(p["Values"] for p in out)


def tables(glue, db):
    return sorted(t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"])


# ---- definitions ----------------------------------------------------------------------------------

def test_crawler_definitions_and_errors(glue, db, lake):
    name = make_crawler(glue, db, lake.uri("x/"), Description="d", TablePrefix="p_",
                        Schedule="cron(0 12 * * ? *)", Tags={"team": "data"})
    c = glue.get_crawler(Name=name)["Crawler"]
    assert c["State"] == "READY" and c["Version"] == 1 and c["DatabaseName"] == db
    assert c["SchemaChangePolicy"] == {"UpdateBehavior": "UPDATE_IN_DATABASE",
                                       "DeleteBehavior": "DEPRECATE_IN_DATABASE"}
    assert c["RecrawlPolicy"] == {"RecrawlBehavior": "CRAWL_EVERYTHING"}
    assert c["Schedule"] == {"ScheduleExpression": "cron(0 12 * * ? *)", "State": "SCHEDULED"}
    assert c["Targets"]["S3Targets"][0]["Path"] == lake.uri("x/")
    with raises_glue("AlreadyExistsException"):
        glue.create_crawler(Name=name, Role="r", Targets={"S3Targets": [{"Path": lake.uri()}]})
    assert name in glue.list_crawlers()["CrawlerNames"]
    assert glue.list_crawlers(Tags={"team": "data"})["CrawlerNames"] == [name]
    got = glue.batch_get_crawlers(CrawlerNames=[name, "missing-crawler"])
    assert [c["Name"] for c in got["Crawlers"]] == [name]
    assert got["CrawlersNotFound"] == ["missing-crawler"]
    assert any(c["Name"] == name for c in glue.get_crawlers()["Crawlers"])
    glue.update_crawler(Name=name, TablePrefix="q_")
    c = glue.get_crawler(Name=name)["Crawler"]
    assert c["TablePrefix"] == "q_" and c["Version"] == 2 and c["Description"] == "d"
    with raises_glue("CrawlerNotRunningException"):
        glue.stop_crawler(Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.start_crawler(Name="missing-crawler")
    with raises_glue("InvalidInputException", "LOG"):
        glue.update_crawler(Name=name, RecrawlPolicy={"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"})
    with raises_glue("InvalidInputException", "Crawler configuration"):
        glue.update_crawler(Name=name, Configuration='{"Grouping": {"Nope": 1}}')
    # Glue's model makes every target list optional: a crawler without targets is made, and
    # its crawl fails saying why (moto's suite creates crawlers this way).
    empty = unique("c")
    glue.create_crawler(Name=empty, Role="r", Targets={"S3Targets": [], "JdbcTargets": [],
                                                       "CatalogTargets": []})
    assert glue.get_crawler(Name=empty)["Crawler"]["Targets"]["S3Targets"] == []
    glue.start_crawler(Name=empty)
    last = wait_crawl(glue, empty)["LastCrawl"]
    assert last["Status"] == "FAILED"
    assert last["ErrorMessage"].startswith("The crawler has no targets to crawl")
    glue.delete_crawler(Name=empty)
    glue.delete_crawler(Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_crawler(Name=name)


def test_crawler_schedules_start_crawls_on_time_and_are_switched_on_and_off(glue, db, lake):
    lake.put("events/a.json", '{"id": 1}\n')
    plain = make_crawler(glue, db, lake.uri("events/"))
    with raises_glue("NoScheduleException"):
        glue.start_crawler_schedule(CrawlerName=plain)
    with raises_glue("SchedulerNotRunningException"):
        glue.stop_crawler_schedule(CrawlerName=plain)
    with raises_glue("InvalidInputException", "Hours"):
        glue.update_crawler_schedule(CrawlerName=plain, Schedule="cron(0 25 * * ? *)")
    with raises_glue("InvalidInputException", "Hours"):
        make_crawler(glue, db, lake.uri("events/"), Schedule="cron(0 25 * * ? *)")
    with raises_glue("EntityNotFoundException"):
        glue.start_crawler_schedule(CrawlerName="missing-crawler")
    # Every minute: the schedule starts a crawl within a minute (and a second or so).
    glue.update_crawler_schedule(CrawlerName=plain, Schedule="cron(* * * * ? *)")
    c = glue.get_crawler(Name=plain)["Crawler"]
    assert c["Schedule"] == {"ScheduleExpression": "cron(* * * * ? *)", "State": "SCHEDULED"}
    with raises_glue("SchedulerRunningException"):
        glue.start_crawler_schedule(CrawlerName=plain)
    deadline = time.time() + 75
    while time.time() < deadline and "LastCrawl" not in glue.get_crawler(Name=plain)["Crawler"]:
        time.sleep(0.2)
    crawled = wait_crawl(glue, plain)
    assert crawled["LastCrawl"]["Status"] == "SUCCEEDED"
    assert [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]] == ["events"]
    glue.stop_crawler_schedule(CrawlerName=plain)
    assert glue.get_crawler(Name=plain)["Crawler"]["Schedule"]["State"] == "NOT_SCHEDULED"
    glue.start_crawler_schedule(CrawlerName=plain)
    assert glue.get_crawler(Name=plain)["Crawler"]["Schedule"]["State"] == "SCHEDULED"
    glue.stop_crawler_schedule(CrawlerName=plain)


def test_xml_files_are_classified_by_the_built_in_classifier(glue, db, lake):
    lake.put("orders/a.xml", '<?xml version="1.0"?>\n<!-- export -->\n<orders>\n'
             '<order id="1"><item>pen</item><qty>2</qty></order>\n'
             '<order id="2"><item>ink</item><qty>5</qty></order>\n</orders>\n')
    lake.put("orders/b.xml", "<orders></orders>\n")  # no rows: skipped and reported
    name = make_crawler(glue, db, lake.uri("orders/"))
    glue.start_crawler(Name=name)
    crawled = wait_crawl(glue, name)
    assert crawled["LastCrawl"]["Status"] == "SUCCEEDED"
    assert "b.xml" in crawled["LastCrawl"].get("ErrorMessage", "")
    table = glue.get_table(DatabaseName=db, Name="orders")["Table"]
    assert table["Parameters"]["classification"] == "xml"
    assert table["Parameters"]["rowTag"] == "order"
    columns = [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]]
    assert columns == [("id", "bigint"), ("item", "string"), ("qty", "bigint")]


def test_classifier_definitions(glue):
    csv_name, grok_name = unique("csv_"), unique("grok_")
    glue.create_classifier(CsvClassifier={"Name": csv_name, "Delimiter": "|", "ContainsHeader": "PRESENT",
                                          "Header": ["a", "b"]})
    glue.create_classifier(GrokClassifier={"Name": grok_name, "Classification": "logs",
                                           "GrokPattern": "%{WORD:w}"})
    c = glue.get_classifier(Name=csv_name)["Classifier"]["CsvClassifier"]
    assert c["Delimiter"] == "|" and c["Version"] == 1 and c["Header"] == ["a", "b"]
    with raises_glue("AlreadyExistsException"):
        glue.create_classifier(CsvClassifier={"Name": csv_name})
    glue.update_classifier(CsvClassifier={"Name": csv_name, "Delimiter": ";"})
    c = glue.get_classifier(Name=csv_name)["Classifier"]["CsvClassifier"]
    assert c["Delimiter"] == ";" and c["Version"] == 2 and c["ContainsHeader"] == "PRESENT"
    with raises_glue("InvalidInputException"):
        glue.update_classifier(XMLClassifier={"Name": csv_name, "Classification": "x", "RowTag": "r"})
    names = [next(iter(c.values()))["Name"] for c in glue.get_classifiers()["Classifiers"]]
    assert {csv_name, grok_name} <= set(names)
    for n in (csv_name, grok_name):
        glue.delete_classifier(Name=n)
    with raises_glue("EntityNotFoundException"):
        glue.get_classifier(Name=csv_name)


# ---- crawling -------------------------------------------------------------------------------------

def test_a_data_lake_becomes_tables_and_partitions(glue, db, lake, server):
    # CSV with a header in Hive partitions, nested JSON in plain folders, Parquet whose schema
    # gains a column, headerless pipe-delimited CSV, gzip'd CSV, ORC, and a bad file.
    for day in ("2024-01-01", "2024-01-02"):
        lake.put(f"data/orders/dt={day}/part-0.csv", "order_id,amount,customer\n1,2.5,ann\n2,3,bob\n")
    lake.put("data/orders/dt=2024-01-03/part-0.csv", "order_id,amount,customer\n3,1e3,cy\n")
    lake.put("data/orders/dt=2024-01-03/garbage.csv", b"\x00\x01\x02 binary \xff\xfe")
    lake.put("data/orders/dt=2024-01-02/_SUCCESS", "")
    lake.put("data/events/2024/01/e.json",
             '{"id": 1, "user": {"name": "a", "tags": ["x"]}}\n{"id": 2, "user": {"name": "b"}}\n')
    lake.put("data/events/2024/02/e.json", '{"id": 3, "user": {"name": "c", "age": 7}, "ok": true}\n')
    lake.parquet("data/metrics/region=eu/m.parquet", pa.table({"k": ["a"], "v": pa.array([1], pa.int64())}))
    lake.parquet("data/metrics/region=us/m.parquet",
                 pa.table({"k": ["b"], "v": pa.array([2], pa.int64()), "w": [0.5]}))
    lake.put("data/plain/rows.txt", "1|x|2.0\n2|y|3.5\n")
    lake.put("data/zipped/rows.csv.gz", gzip.compress(b"a,b\n1,x\n2,y\n"))
    lake.put("data/bzipped/rows.csv.bz2", bz2.compress(b"p;q\nx;1\ny;2\n"))
    lake.orc("data/orcs/o.orc", pa.table({"id": pa.array([1, 2], pa.int32()), "s": ["a", "b"]}))
    lake.put("data/avros/a.avro", avro_file([(1, "x", ["t"]), (2, None, [])]))
    lake.put("data/metrics/region=xx/truncated.parquet", b"PAR1\x00\x01garbagePAR1")
    lake.put("data/avros/truncated.avro", b"Obj\x01\x04")
    name = make_crawler(glue, db, lake.uri("data/"))
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
    assert "3 file(s) or folder(s) skipped" in c["LastCrawl"]["ErrorMessage"], c["LastCrawl"]
    assert tables(glue, db) == ["avros", "bzipped", "events", "metrics", "orcs", "orders", "plain", "zipped"]

    orders = table(glue, db, "orders")
    assert columns(orders) == [("order_id", "bigint"), ("amount", "double"), ("customer", "string")]
    assert [k["Name"] for k in orders["PartitionKeys"]] == ["dt"]
    assert orders["StorageDescriptor"]["Location"] == lake.uri("data/orders/")
    params = orders["Parameters"]
    assert params["classification"] == "csv" and params["delimiter"] == ","
    assert params["skip.header.line.count"] == "1" and params["compressionType"] == "none"
    assert params["recordCount"] == "5" and params["objectCount"] == "3"
    assert int(params["sizeKey"]) > 0 and int(params["averageRecordSize"]) > 0
    assert orders["StorageDescriptor"]["SerdeInfo"]["Parameters"]["field.delim"] == ","
    assert partitions(glue, db, "orders") == [["2024-01-01"], ["2024-01-02"], ["2024-01-03"]]
    part = glue.get_partition(DatabaseName=db, TableName="orders", PartitionValues=["2024-01-02"])["Partition"]
    assert part["StorageDescriptor"]["Location"] == lake.uri("data/orders/dt=2024-01-02/")

    events = table(glue, db, "events")
    assert columns(events) == [("id", "int"), ("user", "struct<name:string,tags:array<string>,age:int>"),
                               ("ok", "boolean")]
    assert [k["Name"] for k in events["PartitionKeys"]] == ["partition_0", "partition_1"]
    assert partitions(glue, db, "events") == [["2024", "01"], ["2024", "02"]]
    assert events["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"] == "org.openx.data.jsonserde.JsonSerDe"

    metrics = table(glue, db, "metrics")
    assert metrics["Parameters"]["classification"] == "parquet"
    assert columns(metrics) == [("k", "string"), ("v", "bigint"), ("w", "double")]
    assert metrics["Parameters"]["recordCount"] == "2"
    assert "MapredParquetInputFormat" in metrics["StorageDescriptor"]["InputFormat"]

    plain = table(glue, db, "plain")
    assert columns(plain) == [("col0", "bigint"), ("col1", "string"), ("col2", "double")]
    assert plain["Parameters"]["delimiter"] == "|" and "skip.header.line.count" not in plain["Parameters"]
    assert table(glue, db, "zipped")["Parameters"]["compressionType"] == "gzip"
    bz = table(glue, db, "bzipped")
    assert bz["Parameters"]["compressionType"] == "bzip2" and columns(bz) == [("p", "string"), ("q", "bigint")]
    orcs = table(glue, db, "orcs")
    assert orcs["Parameters"]["classification"] == "orc" and columns(orcs) == [("id", "int"), ("s", "string")]
    avros = table(glue, db, "avros")
    assert avros["Parameters"]["classification"] == "avro" and avros["Parameters"]["recordCount"] == "2"
    assert columns(avros) == [("id", "bigint"), ("name", "string"), ("tags", "array<string>"), ("day", "date")]
    assert avros["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"].endswith("AvroSerDe")

    # The crawl's log, history and metrics.
    logs = server.client("logs")
    events_log = logs.get_log_events(logGroupName="/aws-glue/crawlers", logStreamName=name,
                                     startFromHead=True)["events"]
    text = "\n".join(e["message"] for e in events_log)
    assert "Created table orders in database " + db in text
    assert "Skipped " + lake.uri("data/orders/dt=2024-01-03/garbage.csv") in text
    assert "Skipped " + lake.uri("data/metrics/region=xx/truncated.parquet") + ": unreadable Parquet" in text
    assert "Skipped " + lake.uri("data/avros/truncated.avro") + ": unreadable Avro" in text
    assert text.startswith("[" + c["LastCrawl"]["MessagePrefix"] + "]")
    groups = [g["logGroupName"] for g in logs.describe_log_groups()["logGroups"]]
    assert "/aws-glue/crawlers" in groups and "/aws-glue/jobs/output" in groups
    crawls = glue.list_crawls(CrawlerName=name)["Crawls"]
    assert len(crawls) == 1 and crawls[0]["State"] == "COMPLETED"
    assert json.loads(crawls[0]["Summary"])["TABLE"]["ADD"]["Count"] == 8
    m = glue.get_crawler_metrics(CrawlerNameList=[name])["CrawlerMetricsList"][0]
    assert m["TablesCreated"] == 8 and m["LastRuntimeSeconds"] >= 0


def test_exclusions_sample_size_and_prefix(glue, db, lake):
    lake.put("in/a/1.csv", "x,y\n1,a\n")
    lake.put("in/a/2.csv", "x,y\n2,b\n")
    lake.put("in/a/skip.json", '{"q": 1}\n')
    lake.put("in/tmp/1.csv", "completely,different,columns\n1,2,3\n")
    name = make_crawler(glue, db, lake.uri("in"), TablePrefix="raw_",
                        target={"Exclusions": ["tmp/**", "**.json"], "SampleSize": 1})
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED" and "ErrorMessage" not in c["LastCrawl"]
    assert tables(glue, db) == ["raw_in"]
    t = table(glue, db, "raw_in")
    assert partitions(glue, db, "raw_in") == [["a"]]
    assert t["Parameters"]["objectCount"] == "2"


def test_recrawl_new_folders_only_adds_partitions_without_rereading(glue, db, lake):
    for day in range(3):
        lake.parquet(f"t/day={day}/p.parquet", pa.table({"a": [day]}))
    name = make_crawler(glue, db, lake.uri("t/"),
                        SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"},
                        RecrawlPolicy={"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"})
    assert crawl(glue, name)["LastCrawl"]["Status"] == "SUCCEEDED"
    assert partitions(glue, db, "t") == [["0"], ["1"], ["2"]]
    # An old folder's file turned to garbage would fail its read: it must not be read again.
    lake.put("t/day=0/p.parquet", b"PAR1 not a parquet file anymore")
    for day in (3, 4):
        lake.parquet(f"t/day={day}/p.parquet", pa.table({"a": [day], "b": ["new"]}))
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED" and "ErrorMessage" not in c["LastCrawl"], c["LastCrawl"]
    assert partitions(glue, db, "t") == [["0"], ["1"], ["2"], ["3"], ["4"]]
    assert columns(table(glue, db, "t")) == [("a", "bigint")]  # UpdateBehavior LOG


@pytest.mark.parametrize("behavior", ["DELETE_FROM_DATABASE", "DEPRECATE_IN_DATABASE", "LOG"])
def test_delete_behavior(glue, db, lake, behavior):
    lake.put("d/keep/a.csv", "a,b\n1,x\n")
    lake.put("d/gone/a.csv", "p;q;r\nx;1;2\n")
    lake.put("d/keep2/k=1/a.json", '{"z": 1}\n')
    lake.put("d/keep2/k=2/a.json", '{"z": 2}\n')
    name = make_crawler(glue, db, lake.uri("d/"), SchemaChangePolicy={"UpdateBehavior": "UPDATE_IN_DATABASE",
                                                                     "DeleteBehavior": behavior})
    crawl(glue, name)
    assert tables(glue, db) == ["gone", "keep", "keep2"]
    lake.remove("d/gone/a.csv")
    lake.remove("d/keep2/k=2/a.json")
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED"
    metrics = glue.get_crawler_metrics(CrawlerNameList=[name])["CrawlerMetricsList"][0]
    if behavior == "DELETE_FROM_DATABASE":
        assert tables(glue, db) == ["keep", "keep2"]
        assert partitions(glue, db, "keep2") == [["1"]]
        assert metrics["TablesDeleted"] == 1
    elif behavior == "DEPRECATE_IN_DATABASE":
        assert tables(glue, db) == ["gone", "keep", "keep2"]
        assert table(glue, db, "gone")["Parameters"]["DEPRECATED_BY_CRAWLER"] == "1"
        assert partitions(glue, db, "keep2") == [["1"], ["2"]]
    else:
        assert tables(glue, db) == ["gone", "keep", "keep2"]
        assert "DEPRECATED_BY_CRAWLER" not in table(glue, db, "gone")["Parameters"]
        assert metrics["TablesDeleted"] == 0


def test_update_behavior_and_merge_new_columns(glue, db, lake):
    lake.put("u/a.csv", "a,b\n1,x\n")
    name = make_crawler(glue, db, lake.uri("u/"))
    crawl(glue, name)
    assert columns(table(glue, db, "u")) == [("a", "bigint"), ("b", "string")]
    lake.put("u/a.csv", "a,c\nx,2\n")
    crawl(glue, name)
    assert columns(table(glue, db, "u")) == [("a", "string"), ("c", "bigint")]
    assert glue.get_crawler_metrics(CrawlerNameList=[name])["CrawlerMetricsList"][0]["TablesUpdated"] == 1
    glue.update_crawler(Name=name, Configuration=json.dumps(
        {"Version": 1.0, "CrawlerOutput": {"Tables": {"AddOrUpdateBehavior": "MergeNewColumns"}}}))
    lake.put("u/a.csv", "d,e\n1,2\n")
    crawl(glue, name)
    assert columns(table(glue, db, "u")) == [("a", "string"), ("c", "bigint"), ("d", "bigint"), ("e", "bigint")]
    glue.update_crawler(Name=name, SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"},
                        Configuration="")
    lake.put("u/a.csv", "only\n1\n")
    lake.put("u/b.csv", "f,g\n1,2\n")
    crawl(glue, name)
    assert [n for n, _ in columns(table(glue, db, "u"))] == ["a", "c", "d", "e"]


def test_grouping_and_table_threshold(glue, db, lake):
    lake.put("g/one/a.csv", "a,b\n1,x\n")
    lake.put("g/two/a.csv", "c,d\n1,x\n")
    name = make_crawler(glue, db, lake.uri("g/"), Configuration=json.dumps(
        {"Version": 1.0, "Grouping": {"TableGroupingPolicy": "CombineCompatibleSchemas"}}))
    crawl(glue, name)
    assert tables(glue, db) == ["g"]
    assert [n for n, _ in columns(table(glue, db, "g"))] == ["a", "b", "c", "d"]
    glue.delete_table(DatabaseName=db, Name="g")
    other = make_crawler(glue, db, lake.uri("g/"), TablePrefix="t_", Configuration=json.dumps(
        {"Version": 1.0, "CrawlerOutput": {"Tables": {"TableThreshold": 1}}}))
    c = crawl(glue, other)
    assert c["LastCrawl"]["Status"] == "FAILED"
    assert "table threshold" in c["LastCrawl"]["ErrorMessage"]
    assert tables(glue, db) == []
    level = make_crawler(glue, db, lake.uri("g/"), TablePrefix="l_", Configuration=json.dumps(
        {"Version": 1.0, "Grouping": {"TableLevelConfiguration": 2}}))
    crawl(glue, level)
    assert tables(glue, db) == ["l_g"]


def test_custom_csv_classifier_is_tried_first(glue, db, lake):
    lake.put("c/a.dat", "1#2\n3#4\n")
    classifier = unique("hash_")
    glue.create_classifier(CsvClassifier={"Name": classifier, "Delimiter": "#", "ContainsHeader": "ABSENT",
                                          "Header": ["left", "right"]})
    name = make_crawler(glue, db, lake.uri("c/"), Classifiers=[classifier])
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
    t = table(glue, db, "c")
    assert columns(t) == [("left", "bigint"), ("right", "bigint")]
    assert t["Parameters"]["delimiter"] == "#"
    glue.delete_classifier(Name=classifier)


def test_failures_are_reported_not_raised(glue, db, lake):
    name = make_crawler(glue, db, lake.uri("x/"))
    glue.update_crawler(Name=name, DatabaseName="no_such_db_" + uuid.uuid4().hex[:6])
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "FAILED" and "not found" in c["LastCrawl"]["ErrorMessage"]
    crawls = glue.list_crawls(CrawlerName=name, Filters=[{"FieldName": "STATE", "FilterOperator": "EQ",
                                                          "FieldValue": "FAILED"}])["Crawls"]
    assert len(crawls) == 1 and crawls[0]["ErrorMessage"] == c["LastCrawl"]["ErrorMessage"]
    assert glue.list_crawls(CrawlerName=name, Filters=[{"FieldName": "STATE", "FilterOperator": "EQ",
                                                        "FieldValue": "COMPLETED"}])["Crawls"] == []
    # Time filters take epoch seconds, milliseconds or an ISO 8601 date-time (as moto's suite and
    # datetime.isoformat() send them); anything else is refused naming the field.
    started = crawls[0]["StartTime"]
    for before in (started - datetime.timedelta(minutes=1)).astimezone(datetime.timezone.utc), \
            (started - datetime.timedelta(minutes=1)).astimezone(datetime.timezone.utc).replace(tzinfo=None):
        for op, want in (("GT", 1), ("LT", 0)):
            got = glue.list_crawls(CrawlerName=name, Filters=[{
                "FieldName": "START_TIME", "FilterOperator": op,
                "FieldValue": before.isoformat()}])["Crawls"]
            assert len(got) == want, (op, before.isoformat())
    with pytest.raises(glue.exceptions.InvalidInputException, match="ISO 8601"):
        glue.list_crawls(CrawlerName=name, Filters=[{"FieldName": "END_TIME", "FilterOperator": "GT",
                                                     "FieldValue": "yesterday"}])
    # A target in a bucket that does not exist fails the crawl, nothing is deleted.
    missing = make_crawler(glue, db, "s3://no-such-bucket-" + uuid.uuid4().hex[:6] + "/x/")
    c = crawl(glue, missing)
    assert c["LastCrawl"]["Status"] == "FAILED" and "Cannot list" in c["LastCrawl"]["ErrorMessage"]


def test_stop_crawler(glue, db, lake):
    for i in range(400):
        lake.put(f"s/f={i}/a.csv", "a,b\n1,x\n")
    name = make_crawler(glue, db, lake.uri("s/"))
    glue.start_crawler(Name=name)
    with raises_glue("CrawlerRunningException"):
        glue.start_crawler(Name=name)
    try:
        glue.stop_crawler(Name=name)
        stopped = True
    except glue.exceptions.CrawlerNotRunningException:
        stopped = False  # it had already finished
    deadline = time.time() + 60
    while glue.get_crawler(Name=name)["Crawler"]["State"] != "READY" and time.time() < deadline:
        time.sleep(0.05)
    last = glue.get_crawler(Name=name)["Crawler"]["LastCrawl"]
    if stopped:
        assert last["Status"] in ("CANCELLED", "SUCCEEDED")
        if last["Status"] == "CANCELLED":
            assert glue.list_crawls(CrawlerName=name)["Crawls"][0]["State"] == "STOPPED"
            assert tables(glue, db) == []
    else:
        assert last["Status"] == "SUCCEEDED"


def test_grok_json_path_and_xml_classifiers(glue, db, lake):
    lake.put("logs/app/2024-01-01.log", "2024-01-01T10:00:00Z INFO 200 api: started\n"
                                        "2024-01-01T10:00:01Z ERROR 500 db: timeout\n")
    lake.put("docs/batch/1.json", json.dumps({"meta": {"n": 2}, "records": [{"a": 1}, {"a": 2, "b": "x"}]}))
    lake.put("xml/o.xml", '<?xml version="1.0"?><orders><order id="1"><item>apple</item><qty>2</qty></order>'
                          '<order id="2"><item>pear</item><tags><t>x</t><t>y</t></tags></order></orders>')
    grok, jpath, xml = unique("grok_"), unique("jpath_"), unique("xml_")
    glue.create_classifier(XMLClassifier={"Name": xml, "Classification": "xml", "RowTag": "order"})
    glue.create_classifier(GrokClassifier={
        "Name": grok, "Classification": "applog",
        "GrokPattern": "%{TIMESTAMP_ISO8601:ts} %{LOGLEVEL:level} %{INT:status:int} %{SVC:service}: %{GREEDYDATA:message}",
        "CustomPatterns": "SVC [a-z]+"})
    glue.create_classifier(JsonClassifier={"Name": jpath, "JsonPath": "$.records[*]"})
    with raises_glue("InvalidInputException", "unknown pattern"):
        glue.create_classifier(GrokClassifier={"Name": unique("bad_"), "Classification": "x",
                                               "GrokPattern": "%{NO_SUCH_PATTERN:x}"})
    name = make_crawler(glue, db, lake.uri("logs/"), Classifiers=[grok, jpath, xml],
                        Targets={"S3Targets": [{"Path": lake.uri("logs/")}, {"Path": lake.uri("docs/")},
                                               {"Path": lake.uri("xml/")}]})
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
    logs_table = table(glue, db, "logs")
    assert logs_table["Parameters"]["classification"] == "applog"
    assert columns(logs_table) == [("ts", "string"), ("level", "string"), ("status", "int"),
                                   ("service", "string"), ("message", "string")]
    serde = logs_table["StorageDescriptor"]["SerdeInfo"]
    assert serde["SerializationLibrary"] == "com.amazonaws.glue.serde.GrokSerDe"
    assert serde["Parameters"]["input.format"].startswith("%{TIMESTAMP_ISO8601:ts}")
    docs = table(glue, db, "docs")
    assert docs["Parameters"]["classification"] == "json" and docs["Parameters"]["jsonPath"] == "$.records[*]"
    assert columns(docs) == [("a", "int"), ("b", "string")]
    orders = table(glue, db, "xml")
    assert orders["Parameters"]["classification"] == "xml" and orders["Parameters"]["rowTag"] == "order"
    assert columns(orders) == [("id", "bigint"), ("item", "string"), ("qty", "bigint"),
                               ("tags", "struct<t:array<string>>")]
    assert orders["Parameters"]["recordCount"] == "2"
    for n in (grok, jpath, xml):
        glue.delete_classifier(Name=n)


def test_catalog_target_crawls_into_the_existing_table(glue, db, lake):
    lake.put("ct/year=2023/a.csv", "a,b\n1,x\n")
    lake.put("ct/year=2024/b.csv", "a,b\n2,y\n")
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "events", "PartitionKeys": [{"Name": "year", "Type": "string"}],
        "StorageDescriptor": {"Location": lake.uri("ct/"), "Columns": [{"Name": "old", "Type": "string"}]}})
    name = unique("crawler_")
    glue.create_crawler(Name=name, Role="local", Targets={"CatalogTargets": [{"DatabaseName": db, "Tables": ["events"]}]},
                        SchemaChangePolicy={"UpdateBehavior": "UPDATE_IN_DATABASE", "DeleteBehavior": "LOG"})
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
    assert tables(glue, db) == ["events"]
    t = table(glue, db, "events")
    assert columns(t) == [("a", "bigint"), ("b", "string")]
    assert t["Parameters"]["classification"] == "csv"
    assert partitions(glue, db, "events") == [["2023"], ["2024"]]
    glue.update_crawler(Name=name, Targets={"CatalogTargets": [{"DatabaseName": db, "Tables": ["missing"]}]})
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "FAILED" and "missing" in c["LastCrawl"]["ErrorMessage"]


def test_large_json_array_and_csv_files_are_sampled(glue, db, lake):
    """Files larger than the 1 MB sample: a pretty-printed JSON array cut mid-record and a CSV
    cut mid-line still classify; recordCount is estimated from the sample."""
    records = [{"id": i, "name": f"n{i}", "nested": {"v": i * 0.5}} for i in range(30000)]
    lake.put("big/json/a.json", json.dumps(records, indent=2))
    lake.put("big/csv/a.csv", "id,name\n" + "".join(f"{i},name{i}\n" for i in range(150000)))
    name = make_crawler(glue, db, lake.uri("big/"))
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "SUCCEEDED" and "ErrorMessage" not in c["LastCrawl"], c["LastCrawl"]
    j = table(glue, db, "json")
    assert columns(j) == [("id", "int"), ("name", "string"), ("nested", "struct<v:double>")]
    assert 20000 < int(j["Parameters"]["recordCount"]) < 40000
    t = table(glue, db, "csv")
    assert columns(t) == [("id", "bigint"), ("name", "string")]
    assert 100000 < int(t["Parameters"]["recordCount"]) < 300000  # an estimate from the first records


def test_partitions_inherit_the_updated_table_schema(glue, db, lake):
    for k in (1, 2):
        lake.put(f"inh/k={k}/a.csv", "a,b\n1,x\n")
    name = make_crawler(glue, db, lake.uri("inh/"), Configuration=json.dumps(
        {"Version": 1.0, "CrawlerOutput": {"Partitions": {"AddOrUpdateBehavior": "InheritFromTable"}}}))
    crawl(glue, name)
    for k in (1, 2):
        lake.put(f"inh/k={k}/a.csv", "a,b,c\n1,x,2.5\n")
    lake.put("inh/k=3/a.csv", "a,b,c\n1,x,2.5\n")
    assert crawl(glue, name)["LastCrawl"]["Status"] == "SUCCEEDED"
    assert columns(table(glue, db, "inh")) == [("a", "bigint"), ("b", "string"), ("c", "double")]
    for k in ("1", "2", "3"):
        p = glue.get_partition(DatabaseName=db, TableName="inh", PartitionValues=[k])["Partition"]
        assert [c["Name"] for c in p["StorageDescriptor"]["Columns"]] == ["a", "b", "c"]
        assert p["StorageDescriptor"]["Location"] == lake.uri(f"inh/k={k}/")
    summary = json.loads(glue.list_crawls(CrawlerName=name)["Crawls"][0]["Summary"])
    assert summary["PARTITION"]["UPDATE"]["Count"] == 2 and summary["PARTITION"]["ADD"]["Count"] == 1
