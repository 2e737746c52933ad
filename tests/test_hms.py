"""The catalog as a Hive Metastore (docs/metastore.md), end to end.

One server with `--hms-port`, and one PySpark 3.5 session (its built-in Hive 2.3.9 client)
pointed at it for the whole module: tables made with boto3 are queried by Spark SQL, tables
and partitions made by Spark are seen by boto3, a partitioned query reads only the matching
partition folder. Raw-socket tests check the Thrift wire itself: Hive's exception ids, an
unknown method's TApplicationException, and garbage that must not hurt the server.
"""
import os
import shutil
import socket
import struct
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import Server, raises_glue, unique
from jobkit import JobKit

pyspark = pytest.importorskip("pyspark")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def hms_server():
    data_dir = tempfile.mkdtemp(prefix="openglue-hms-")
    port = free_port()
    config = os.path.join(data_dir, "openglue.conf")
    with open(config, "w") as f:  # a read-only Role for the Role test below
        f.write("role_policy = hive-reader: glue:Get*, glue:BatchGetPartition, logs:*\n")
    srv = Server(data_dir, extra_args=["--hms-port", str(port), "--s3-api", "off", "--config", config]).start()
    srv.hms_port = port
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def glue(hms_server):
    client = hms_server.client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def spark(hms_server):
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        # Another module's session (python/tests share one): the Hive catalog is a static
        # setting, taken only by a new SparkContext.
        active.stop()
    warehouse = tempfile.mkdtemp(prefix="openglue-hms-warehouse-")
    session = (SparkSession.builder.master("local[2]").appName("openglue-hms-test")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.warehouse.dir", warehouse)
               .config("spark.sql.catalogImplementation", "hive")
               .config("spark.hadoop.hive.metastore.uris", f"thrift://127.0.0.1:{hms_server.hms_port}")
               .enableHiveSupport()
               .getOrCreate())
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)


@pytest.fixture()
def folder():
    path = tempfile.mkdtemp(prefix="openglue-hms-data-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_server_logs_the_metastore_address(hms_server):
    assert f"Hive Metastore on thrift://127.0.0.1:{hms_server.hms_port}" in open(hms_server.log_path).read()


def test_job_runs_are_told_the_metastore_uri(hms_server, glue, tmp_path):
    kit = JobKit(hms_server, glue)
    try:
        out = tmp_path / "uri.txt"
        job = kit.job("""
            import os, sys
            from awsglue.utils import getResolvedOptions
            args = getResolvedOptions(sys.argv, ["out"])
            open(args["out"], "w").write(os.environ.get("OPENGLUE_HMS_URI", "unset"))
        """, command="pythonshell")
        run = kit.run(job, Arguments={"--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        assert out.read_text() == f"thrift://127.0.0.1:{hms_server.hms_port}"
    finally:
        kit.close()


# --- (a) a table made with boto3, queried by Spark SQL -------------------------------------------

def test_boto3_csv_table_is_listed_and_queried_by_spark(glue, spark, folder):
    db = unique("hms_a")
    glue.create_database(DatabaseInput={"Name": db})
    with open(os.path.join(folder, "part-0.csv"), "w") as f:
        f.write("1,apple\n2,banana\n3,cherry\n")
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "fruit",
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv"},
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "int"}, {"Name": "name", "Type": "string"}],
            "Location": "file://" + folder,
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}},
        },
    })
    assert db in [r[0] for r in spark.sql("SHOW DATABASES").collect()]
    assert "fruit" in [r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()]
    rows = spark.sql(f"SELECT id, name FROM {db}.fruit WHERE id >= 2 ORDER BY id").collect()
    assert [(r.id, r.name) for r in rows] == [(2, "banana"), (3, "cherry")]
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE {db}.fruit").collect()}
    assert described["id"] == "int" and described["name"] == "string"


# --- (b) a table made by Spark, seen by boto3 -----------------------------------------------------

def test_spark_table_and_partitions_are_seen_by_boto3(glue, spark):
    db = unique("hms_b")
    spark.sql(f"CREATE DATABASE {db}")
    assert glue.get_database(Name=db)["Database"]["Name"] == db
    spark.sql(f"CREATE TABLE {db}.events (id INT, v STRING, part STRING) USING parquet PARTITIONED BY (part)")
    spark.sql(f"INSERT INTO {db}.events VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'y')")

    table = glue.get_table(DatabaseName=db, Name="events")["Table"]
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [("id", "int"), ("v", "string")]
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == [("part", "string")]
    assert table["StorageDescriptor"]["Location"].rstrip("/").endswith("/events")
    assert table["TableType"] == "MANAGED_TABLE"
    assert table["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"].endswith("ParquetHiveSerDe")
    partitions = glue.get_partitions(DatabaseName=db, TableName="events")["Partitions"]
    assert sorted(p["Values"][0] for p in partitions) == ["x", "y"]
    for p in partitions:
        assert p["StorageDescriptor"]["Location"].rstrip("/").endswith("/events/part=" + p["Values"][0])
    # And Spark reads back what it wrote, through the metastore's partitions.
    assert spark.sql(f"SELECT count(*) AS n FROM {db}.events WHERE part = 'y'").collect()[0].n == 2

    # saveAsTable: a DataFrame written as a catalog table.
    df = spark.createDataFrame([(1, "p"), (2, "q")], "k INT, day STRING")
    df.write.partitionBy("day").saveAsTable(f"{db}.saved")
    saved = glue.get_table(DatabaseName=db, Name="saved")["Table"]
    assert [k["Name"] for k in saved["PartitionKeys"]] == ["day"]
    assert len(glue.get_partitions(DatabaseName=db, TableName="saved")["Partitions"]) == 2

    spark.sql(f"DROP TABLE {db}.saved")
    with raises_glue("EntityNotFoundException"):
        glue.get_table(DatabaseName=db, Name="saved")


# --- (c) partition pruning and (d) ALTER TABLE ADD/DROP PARTITION ----------------------------------

def make_partitioned_parquet_table(glue, db, root):
    glue.create_database(DatabaseInput={"Name": db})
    sd = {
        "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "v", "Type": "string"}],
        "Location": "file://" + root,
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
    }
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "t", "TableType": "EXTERNAL_TABLE", "StorageDescriptor": sd,
        "PartitionKeys": [{"Name": "part", "Type": "string"}],
    })
    for value, rows in (("x", [1, 2]), ("y", [3])):
        path = os.path.join(root, "part=" + value)
        os.makedirs(path)
        pq.write_table(pa.table({"id": pa.array(rows, pa.int64()), "v": [f"{value}{r}" for r in rows]}),
                       os.path.join(path, "data.parquet"))
        glue.create_partition(DatabaseName=db, TableName="t", PartitionInput={
            "Values": [value], "StorageDescriptor": {**sd, "Location": "file://" + path}})


def test_partitioned_query_reads_only_the_matching_folder(glue, spark, hms_server, folder):
    db = unique("hms_c")
    make_partitioned_parquet_table(glue, db, folder)
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {db}.t").collect()) == [1, 2, 3]
    # Corrupt the other partition's only file: a scan that touched it would fail.
    with open(os.path.join(folder, "part=y", "data.parquet"), "wb") as f:
        f.write(b"this is not parquet" * 10)
    spark.catalog.clearCache()
    spark.sql(f"REFRESH TABLE {db}.t")
    rows = spark.sql(f"SELECT id, v FROM {db}.t WHERE part = 'x' ORDER BY id").collect()
    assert [(r.id, r.v) for r in rows] == [(1, "x1"), (2, "x2")]
    with pytest.raises(Exception):
        spark.sql(f"SELECT id FROM {db}.t WHERE part = 'y'").collect()
    # The metastore chose the partition: Spark sent its filter, the catalog's engine answered.
    log = open(hms_server.log_path).read()
    assert f'HMS get_partitions_by_filter {db}.t filter [part = "x"]: 1 partition(s)' in log


def test_alter_table_add_and_drop_partition_from_spark(glue, spark, folder):
    db = unique("hms_d")
    make_partitioned_parquet_table(glue, db, folder)
    new_path = os.path.join(folder, "part=z")
    os.makedirs(new_path)
    pq.write_table(pa.table({"id": pa.array([9], pa.int64()), "v": ["z9"]}), os.path.join(new_path, "d.parquet"))
    spark.sql(f"ALTER TABLE {db}.t ADD PARTITION (part='z') LOCATION 'file://{new_path}'")
    got = glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=["z"])["Partition"]
    # Hadoop writes a local path as file:/path.
    assert got["StorageDescriptor"]["Location"].rstrip("/") in ("file:" + new_path, "file://" + new_path)
    assert [r.id for r in spark.sql(f"SELECT id FROM {db}.t WHERE part = 'z'").collect()] == [9]
    shown = [r.partition for r in spark.sql(f"SHOW PARTITIONS {db}.t").collect()]
    assert shown == ["part=x", "part=y", "part=z"]

    spark.sql(f"ALTER TABLE {db}.t DROP PARTITION (part='z')")
    with raises_glue("EntityNotFoundException"):
        glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=["z"])
    assert os.path.exists(new_path)  # an external table's data stays


# --- (f) a Glue job on Spark with --enable-glue-datacatalog, through StartJobRun ------------------

CATALOG_JOB = """
import sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["src_db", "out_db"])
sc = SparkContext.getOrCreate()
spark = GlueContext(sc).spark_session
picked = spark.sql("SELECT id, upper(v) AS v, part FROM %s.t WHERE part = 'x'" % args["src_db"])
picked.write.mode("overwrite").partitionBy("part").saveAsTable("%s.picked" % args["out_db"])
spark.sql("CREATE TABLE %s.summary USING parquet AS SELECT count(*) AS n, max(id) AS top FROM %s.picked"
          % (args["out_db"], args["out_db"]))
"""


def test_a_spark_job_with_enable_glue_datacatalog_queries_and_writes_the_catalog(hms_server, glue, folder):
    from conftest import open_to_job_users
    src_db, out_db = unique("hms_job_in"), unique("hms_job_out")
    open_to_job_users(folder)  # the run has a uid of its own when the tests run as root
    make_partitioned_parquet_table(glue, src_db, folder)
    # Only partition x may be read: the other's file is not Parquet.
    with open(os.path.join(folder, "part=y", "data.parquet"), "wb") as f:
        f.write(b"this is not parquet" * 10)
    out_root = open_to_job_users(tempfile.mkdtemp(prefix="openglue-hms-out-"))
    glue.create_database(DatabaseInput={"Name": out_db, "LocationUri": "file://" + out_root})
    kit = JobKit(hms_server, glue)
    try:
        job = kit.job(CATALOG_JOB, DefaultArguments={"--engine": "spark",
                                                     "--enable-glue-datacatalog": "true"})
        run = kit.run(job, timeout=300, Arguments={"--src_db": src_db, "--out_db": out_db})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    finally:
        kit.close()
    # Spark's filter reached the catalog's partition engine, which chose one partition.
    log = open(hms_server.log_path).read()
    assert f'HMS get_partitions_by_filter {src_db}.t filter [part = "x"]: 1 partition(s)' in log

    picked = glue.get_table(DatabaseName=out_db, Name="picked")["Table"]
    assert [k["Name"] for k in picked["PartitionKeys"]] == ["part"]
    assert [c["Name"] for c in picked["StorageDescriptor"]["Columns"]] == ["id", "v"]
    location = picked["StorageDescriptor"]["Location"]
    assert location.rstrip("/").endswith(out_root + "/picked"), location
    (partition,) = glue.get_partitions(DatabaseName=out_db, TableName="picked")["Partitions"]
    assert partition["Values"] == ["x"]
    path = partition["StorageDescriptor"]["Location"].split(":", 1)[1]
    assert path.rstrip("/").endswith(out_root + "/picked/part=x"), path
    rows = pq.ParquetDataset(path).read().to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "X1"), (2, "X2")]

    summary = glue.get_table(DatabaseName=out_db, Name="summary")["Table"]
    summary_path = summary["StorageDescriptor"]["Location"].split(":", 1)[1]
    assert [(r["n"], r["top"]) for r in pq.ParquetDataset(summary_path).read().to_pylist()] == [(2, 2)]
    shutil.rmtree(out_root, ignore_errors=True)


READER_JOB = """
import json, sys
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["src_db", "new_db", "out"])
spark = GlueContext(SparkContext.getOrCreate()).spark_session
seen = {"rows": spark.sql("SELECT count(*) AS n FROM %s.t WHERE part = 'x'" % args["src_db"]).collect()[0]["n"]}
try:
    spark.sql("CREATE DATABASE %s" % args["new_db"])
    seen["create"] = "ok"
except Exception as e:
    seen["create"] = str(e)
with open(args["out"], "w") as f:
    json.dump(seen, f)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a run's metastore identity is its own uid (root only)")
def test_sparks_hive_client_in_a_run_works_under_the_runs_role(hms_server, glue, folder, tmp_path):
    """Issue 18, defect 1: Spark's own Hive client in a job run gets its Role, not the operator's."""
    from conftest import open_to_job_users
    src_db, new_db = unique("hms_role_in"), unique("hms_role_new")
    open_to_job_users(folder)
    make_partitioned_parquet_table(glue, src_db, folder)
    # Spark's Hive catalog creates `default` when it is missing, which this Role may not do (AWS
    # answers the same: create it once as an operator).
    try:
        glue.create_database(DatabaseInput={"Name": "default"})
    except glue.exceptions.AlreadyExistsException:
        pass
    kit = JobKit(hms_server, glue)
    try:
        job = unique("hms_reader")
        glue.create_job(Name=job, Role="hive-reader", Command={"Name": "glueetl", "ScriptLocation": kit.script(READER_JOB)},
                        DefaultArguments={"--engine": "spark", "--enable-glue-datacatalog": "true"})
        kit.jobs.append(job)
        out = tmp_path / "seen.json"
        run = kit.run(job, timeout=300, Arguments={"--src_db": src_db, "--new_db": new_db, "--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    finally:
        kit.close()
    import json
    seen = json.loads(out.read_text())
    assert seen["rows"] == 2, seen
    assert "glue:CreateDatabase" in seen["create"] and "role 'hive-reader'" in seen["create"], seen
    assert new_db not in [d["Name"] for d in glue.get_databases()["DatabaseList"]]


# --- (e) the Thrift wire, byte by byte --------------------------------------------------------------

T_STOP, T_BOOL, T_I32, T_STRING, T_STRUCT, T_MAP, T_LIST = 0, 2, 8, 11, 12, 13, 15
CALL, REPLY, EXCEPTION = 1, 2, 3
VERSION_1 = 0x80010000


def tstring(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack(">i", len(data)) + data


def message(name, args=b"", seqid=7):
    """A strict binary-protocol CALL of `name` whose argument struct body is `args`."""
    return struct.pack(">I", VERSION_1 | CALL) + tstring(name) + struct.pack(">i", seqid) + args + bytes([T_STOP])


def string_field(field_id, text):
    return bytes([T_STRING]) + struct.pack(">h", field_id) + tstring(text)


class Reader:
    def __init__(self, sock):
        self.sock = sock

    def take(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError("connection closed")
            data += chunk
        return data

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def string(self):
        return self.take(self.i32())

    def header(self):
        word = struct.unpack(">I", self.take(4))[0]
        assert word & 0xFFFF0000 == VERSION_1
        return word & 0xFF, self.string().decode(), self.i32()

    def skip(self, ftype):
        if ftype == T_BOOL:
            self.take(1)
        elif ftype == T_I32:
            self.take(4)
        elif ftype == T_STRING:
            self.string()
        elif ftype == T_STRUCT:
            self.struct()
        elif ftype == T_LIST:
            etype = self.take(1)[0]
            for _ in range(self.i32()):
                self.skip(etype)
        elif ftype == T_MAP:
            ktype, vtype = self.take(2)
            for _ in range(self.i32()):
                self.skip(ktype)
                self.skip(vtype)
        else:
            raise AssertionError(f"type {ftype} not expected here")

    def struct(self):
        """{field id: value} for strings, i32 and nested structs; lists as lists."""
        fields = {}
        while True:
            ftype = self.take(1)[0]
            if ftype == T_STOP:
                return fields
            fid = struct.unpack(">h", self.take(2))[0]
            if ftype == T_STRING:
                fields[fid] = self.string()
            elif ftype == T_I32:
                fields[fid] = self.i32()
            elif ftype == T_STRUCT:
                fields[fid] = self.struct()
            elif ftype == T_LIST:
                etype = self.take(1)[0]
                items = []
                for _ in range(self.i32()):
                    if etype == T_STRING:
                        items.append(self.string())
                    else:
                        self.skip(etype)
                fields[fid] = items
            else:
                self.skip(ftype)


def call(port, payload):
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(payload)
        reader = Reader(sock)
        kind, name, seqid = reader.header()
        return kind, name, seqid, reader.struct()


def closed_without_reply(port, payload):
    """Sends `payload`, half-closes, and returns what came back before the server closed."""
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return data
                data += chunk
        except OSError:
            # Closed with our bytes unread: a reset instead of a FIN (ECONNRESET, EPIPE, or
            # ENOTCONN on the half-close).
            return data


def test_raw_wire_replies_use_hives_field_ids(glue, hms_server):
    db = unique("hms_w")
    glue.create_database(DatabaseInput={"Name": db, "Description": "wire"})
    port = hms_server.hms_port
    kind, name, seqid, result = call(port, message("get_database", string_field(1, db)))
    assert (kind, name, seqid) == (REPLY, "get_database", 7)
    database = result[0]  # field 0: success
    assert database[1] == db.encode() and database[2] == b"wire"
    assert database[3].endswith(f"/warehouse/{db}.db".encode())
    # A missing table: get_table's NoSuchObjectException is its result's field 2 (o2).
    kind, _, _, result = call(port, message("get_table", string_field(1, db) + string_field(2, "nope")))
    assert kind == REPLY and 2 in result and b"not found" in result[2][1].lower()
    kind, _, _, result = call(port, message("get_all_databases"))
    assert kind == REPLY and db.encode() in result[0]


def test_long_filters_beyond_glues_expression_cap_are_served(glue, hms_server, folder):
    """Spark sends an IN list of up to 1000 values as ORs: far past the 2048 characters Glue's
    API allows in an Expression. The metastore serves them through the same filter engine."""
    db = unique("hms_f")
    make_partitioned_parquet_table(glue, db, folder)
    hive_filter = " or ".join(f'part = "v{i}"' for i in range(300)) + ' or part = "y"'
    assert len(hive_filter) > 4000
    args = string_field(1, db) + string_field(2, "t") + string_field(3, hive_filter)
    kind, name, _, result = call(hms_server.hms_port, message("get_num_partitions_by_filter", args))
    assert (kind, name) == (REPLY, "get_num_partitions_by_filter")
    assert result[0] == 1
    # A filter naming a key the table does not have: MetaException (field 1) with Glue's message.
    args = string_field(1, db) + string_field(2, "t") + string_field(3, 'nokey = "y"')
    kind, _, _, result = call(hms_server.hms_port, message("get_num_partitions_by_filter", args))
    assert kind == REPLY and b"nokey" in result[1][1]


def test_unknown_method_answers_tapplicationexception(hms_server):
    kind, name, seqid, result = call(hms_server.hms_port, message("no_such_method", string_field(1, "x")))
    assert (kind, name, seqid) == (EXCEPTION, "no_such_method", 7)
    assert result[2] == 1  # TApplicationException.UNKNOWN_METHOD
    assert b"no_such_method" in result[1]


@pytest.mark.parametrize("payload", [
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    bytes(range(256)) * 4,
    # A declared 2 GB method name.
    struct.pack(">I", VERSION_1 | CALL) + struct.pack(">i", 0x7FFFFFFF) + b"abc",
    # get_database whose name string claims 1 MB and stops after 5 bytes.
    struct.pack(">I", VERSION_1 | CALL) + tstring("get_database") + struct.pack(">i", 1)
    + bytes([T_STRING]) + struct.pack(">h", 1) + struct.pack(">i", 1 << 20) + b"short",
    # get_table_objects_by_name with a list that claims 2^31-1 strings.
    struct.pack(">I", VERSION_1 | CALL) + tstring("get_table_objects_by_name") + struct.pack(">i", 1)
    + bytes([T_LIST]) + struct.pack(">h", 2) + bytes([T_STRING]) + struct.pack(">i", 0x7FFFFFFF),
    # A valid header and nothing else.
    struct.pack(">I", VERSION_1 | CALL) + tstring("get_all_databases"),
    # add_partitions whose partitions each declare 100,000 columns, sent as empty structs (one
    # byte each, hundreds in memory): the per-message decode budget stops it at the sixth.
    struct.pack(">I", VERSION_1 | CALL) + tstring("add_partitions") + struct.pack(">i", 1)
    + bytes([T_LIST]) + struct.pack(">h", 1) + bytes([T_STRUCT]) + struct.pack(">i", 6)
    + (bytes([T_STRUCT]) + struct.pack(">h", 6) + bytes([T_LIST]) + struct.pack(">h", 1)
       + bytes([T_STRUCT]) + struct.pack(">i", 100000) + bytes(100000) + bytes(2)) * 6
    + bytes([T_STOP]),  # the whole call: without the budget it would be answered
], ids=["http", "noise", "huge-name", "truncated-string", "huge-list", "no-args", "decode-budget"])
def test_garbage_closes_the_connection_and_the_server_keeps_serving(hms_server, payload):
    reply = closed_without_reply(hms_server.hms_port, payload)
    assert len(reply) < 4096
    kind, _, _, result = call(hms_server.hms_port, message("get_all_databases"))
    assert kind == REPLY and isinstance(result[0], list)
    assert hms_server.proc.poll() is None


def test_spark_needed_no_method_outside_the_served_subset(hms_server, spark):
    """Runs last in the module: every call Spark's Hive client made above was served (the server
    logs each method it answered UNKNOWN_METHOD; only this module's raw probe may be there)."""
    unserved = [line for line in open(hms_server.log_path).read().splitlines()
                if "is not served" in line and "no_such_method" not in line]
    assert unserved == []
