"""JDBC crawler targets against real PostgreSQL and MariaDB (tests/dbkit.py): tables discovered
through a Glue connection, written as the JDBC catalog tables from_catalog reads. See
docs/crawlers.md."""
import json

from dbkit import anydb, maria, pg  # noqa: F401
from jobkit import kit, log_messages, unique  # noqa: F401
from test_crawlers import crawl

READ = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    args = getResolvedOptions(sys.argv, ["database", "table"])
    frame = GlueContext().create_dynamic_frame.from_catalog(database=args["database"], table_name=args["table"])
    print("ROWS", frame.count())
"""


def test_a_jdbc_target_becomes_catalog_tables_a_job_reads(kit, glue, server, anydb):
    orders, skipped = unique("orders_"), unique("tmp_")
    anydb.execute(f"CREATE TABLE {orders} (id INTEGER PRIMARY KEY, amount DECIMAL(10,2), note VARCHAR(20), "
                  f"big BIGINT, created DATE)")
    anydb.execute(f"INSERT INTO {orders} VALUES (1, 2.50, 'a', 10, '2024-01-01'), (2, 3.00, 'b', 20, '2024-01-02')")
    anydb.execute(f"CREATE TABLE {skipped} (x INTEGER)")
    conn = unique("conn_")
    glue.create_connection(ConnectionInput={
        "Name": conn, "ConnectionType": "JDBC",
        "ConnectionProperties": {"JDBC_CONNECTION_URL": anydb.url, "USERNAME": anydb.user,
                                 "PASSWORD": anydb.password}})
    db = unique("jdbccrawl")
    glue.create_database(DatabaseInput={"Name": db})
    path = f"{anydb.database}/public/%" if anydb.kind == "postgresql" else f"{anydb.database}/%"
    exclusion = (f"{anydb.database}/public/tmp_*" if anydb.kind == "postgresql" else f"{anydb.database}/tmp_*")
    name = unique("crawler_")
    glue.create_crawler(Name=name, Role="local", DatabaseName=db, Targets={"JdbcTargets": [
        {"ConnectionName": conn, "Path": path, "Exclusions": [exclusion]}]})
    try:
        c = crawl(glue, name)
        assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
        schema = "public_" if anydb.kind == "postgresql" else ""
        table_name = f"{anydb.database}_{schema}{orders}"
        names = [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]]
        assert table_name in names and not any(skipped in n for n in names), names
        t = glue.get_table(DatabaseName=db, Name=table_name)["Table"]
        assert t["Parameters"]["classification"] == anydb.kind
        assert t["Parameters"]["connectionName"] == conn
        location = f"{anydb.database}.public.{orders}" if anydb.kind == "postgresql" else f"{anydb.database}.{orders}"
        assert t["StorageDescriptor"]["Location"] == location
        assert [(x["Name"], x["Type"]) for x in t["StorageDescriptor"]["Columns"]] == [
            ("id", "int"), ("amount", "decimal(10,2)"), ("note", "string"), ("big", "bigint"), ("created", "date")]

        # As in Glue, the job is attached to the connection its catalog table uses.
        job = kit.job(READ, Connections={"Connections": [conn]})
        run = kit.run(job, timeout=120, Arguments={"--database": db, "--table": table_name})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        out = log_messages(server.client("logs"), "/aws-glue/jobs/output", run["Id"])
        assert "ROWS 2" in out, out

        # A dropped table is retired by the next crawl (DeleteBehavior DELETE_FROM_DATABASE).
        glue.update_crawler(Name=name, SchemaChangePolicy={"UpdateBehavior": "UPDATE_IN_DATABASE",
                                                           "DeleteBehavior": "DELETE_FROM_DATABASE"})
        anydb.execute(f"DROP TABLE {orders}")
        c = crawl(glue, name)
        assert c["LastCrawl"]["Status"] == "SUCCEEDED", c["LastCrawl"]
        assert table_name not in [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]]
    finally:
        anydb.execute(f"DROP TABLE IF EXISTS {orders}")
        anydb.execute(f"DROP TABLE IF EXISTS {skipped}")
        glue.delete_crawler(Name=name)
        glue.delete_connection(ConnectionName=conn)


def test_a_jdbc_target_with_a_missing_connection_fails_the_crawl(glue, db):
    name = unique("crawler_")
    glue.create_crawler(Name=name, Role="local", DatabaseName=db, Targets={"JdbcTargets": [
        {"ConnectionName": "no_such_connection_og", "Path": "x/%"}]})
    c = crawl(glue, name)
    assert c["LastCrawl"]["Status"] == "FAILED"
    assert "no_such_connection_og" in c["LastCrawl"]["ErrorMessage"]
    assert json.loads(glue.list_crawls(CrawlerName=name)["Crawls"][0].get("Summary", "{}")) == {}
