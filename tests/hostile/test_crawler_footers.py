"""Issue 18, defect 3: Parquet and ORC footers must not allocate what they declare.

A 1 GiB sparse file starting with PAR1 and ending in a metadata length of size-12 took the server
from 42 to 1,069 MiB when a crawler read it; an ORC file whose postscript declares a footer near
the file's size to 2,096 MiB. Any job can write such files into the store. The footer's declared
sizes are now checked before Arrow reads them (storage/columnar_footer.h): the crawl skips that
file naming it, the server's memory stays flat, the other files of the folder still make their
table, and a job run reading such a file fails with a message naming it.
"""
import io
import os
import struct
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobkit import kit, log_messages, unique  # noqa: F401
from test_s3_api import s3_server

GIB = 1 << 30


@pytest.fixture(scope="module")
def server():
    """This module's own server, with the S3 API (objects are put over it, then grown sparsely
    on disk, so they keep the store's ownership and modes)."""
    yield from s3_server("openglue-footers-")


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def put_sparse(server, bucket, key, head, tail, size=GIB):
    """An object of `size` bytes: `head`, a hole of zeros, `tail` at the end."""
    server.s3().put_object(Bucket=bucket, Key=key, Body=head)
    path = os.path.join(server.data_dir, "s3", bucket, key)
    with open(path, "r+b") as f:
        f.truncate(size)
        f.seek(size - len(tail))
        f.write(tail)


def hostile_parquet(server, bucket, key):
    # The metadata length is size-12: all of the file between the two magics.
    put_sparse(server, bucket, key, b"PAR1", struct.pack("<I", GIB - 12) + b"PAR1")


def hostile_orc(server, bucket, key):
    # A postscript (footerLength, compression NONE, metadataLength 0, magic) declaring a footer of
    # all the file but its header and tail.
    footer = GIB - 3 - 64
    ps = b"\x08" + varint(footer) + b"\x10\x00" + b"\x28\x00" + b"\xc2\xf4\x03\x03ORC"
    put_sparse(server, bucket, key, b"ORC", ps + bytes([len(ps)]))


def good_parquet():
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]}), buf)
    return buf.getvalue()


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no " + field)


def reset_peak(pid):
    """Resets the process's VmHWM to its current RSS (Linux: clear_refs 5); False if refused."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def crawl(glue, name, timeout=120):
    glue.start_crawler(Name=name)
    deadline = time.time() + timeout
    while glue.get_crawler(Name=name)["Crawler"]["State"] != "READY":
        assert time.time() < deadline, f"the crawl did not end in {timeout} s"
        time.sleep(0.05)


def test_a_crawl_skips_hostile_footers_naming_them_and_the_server_stays_small(server, glue):
    bucket = "footers-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    hostile_parquet(server, bucket, "lake/a-bad.parquet")
    hostile_parquet(server, bucket, "lake/b-bad.parquet")
    hostile_orc(server, bucket, "lake/c-bad.orc")
    server.s3().put_object(Bucket=bucket, Key="lake/d-good.parquet", Body=good_parquet())
    server.s3().put_object(Bucket=bucket, Key="lake/e-good.parquet", Body=good_parquet())
    db, crawler = unique("footers"), unique("footers_")
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                        Targets={"S3Targets": [{"Path": f"s3://{bucket}/lake/"}]})

    pid = server.proc.pid
    before = status_kib(pid, "VmRSS")
    peak_reset = reset_peak(pid)
    crawl(glue, crawler)
    peak = status_kib(pid, "VmHWM") if peak_reset else status_kib(pid, "VmRSS")
    assert server.proc.poll() is None, server.log()
    # Three files that each declared about 1 GiB: the server grew by far less than one of them.
    assert peak - before < 200 * 1024, f"RSS {before} KiB -> peak {peak} KiB"

    last = glue.get_crawler(Name=crawler)["Crawler"]["LastCrawl"]
    assert last["Status"] == "SUCCEEDED", last
    assert "3 file(s) or folder(s) skipped" in last["ErrorMessage"], last
    assert f"s3://{bucket}/lake/a-bad.parquet" in last["ErrorMessage"], last
    text = "\n".join(log_messages(server.client("logs"), "/aws-glue/crawlers", crawler))
    for key in ("a-bad.parquet", "b-bad.parquet"):
        assert (f"Skipped s3://{bucket}/lake/{key}: unreadable Parquet file: the Parquet footer declares "
                f"{GIB - 12} bytes of metadata, more than the 16777216 allowed") in text, text
    assert f"Skipped s3://{bucket}/lake/c-bad.orc: " in text, text

    # The good files of the folder still made their table.
    tables = glue.get_tables(DatabaseName=db)["TableList"]
    assert len(tables) == 1, tables
    assert tables[0]["Parameters"]["classification"] == "parquet"
    assert [c["Name"] for c in tables[0]["StorageDescriptor"]["Columns"]] == ["id", "name"]
    assert tables[0]["Parameters"]["recordCount"] == "6"


def test_an_orc_footer_near_the_file_size_is_refused_by_the_crawler(server, glue):
    bucket = "footers-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    hostile_orc(server, bucket, "orcs/bad.orc")
    db, crawler = unique("footers"), unique("footers_")
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                        Targets={"S3Targets": [{"Path": f"s3://{bucket}/orcs/"}]})
    pid = server.proc.pid
    before = status_kib(pid, "VmRSS")
    peak_reset = reset_peak(pid)
    crawl(glue, crawler)
    peak = status_kib(pid, "VmHWM") if peak_reset else status_kib(pid, "VmRSS")
    assert peak - before < 200 * 1024, f"RSS {before} KiB -> peak {peak} KiB"
    last = glue.get_crawler(Name=crawler)["Crawler"]["LastCrawl"]
    assert (f"s3://{bucket}/orcs/bad.orc: unreadable ORC file: the ORC postscript declares a footer of "
            f"{GIB - 67} and metadata of 0 bytes, more than the 16777216 allowed") in last["ErrorMessage"], last


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "src", "crawler", "testdata", "fuzz", "footer")


def test_an_orc_decimal_arrow_aborts_on_is_skipped_and_the_server_lives(server, glue):
    # footer_fuzz's find: a decimal of precision 116 made Arrow's ORC adapter abort the server.
    bucket = "footers-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    with open(os.path.join(CORPUS, "orc_decimal_unknown_kind_crash.orc"), "rb") as f:
        server.s3().put_object(Bucket=bucket, Key="dec/bad.orc", Body=f.read())
    db, crawler = unique("footers"), unique("footers_")
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_crawler(Name=crawler, Role="local", DatabaseName=db,
                        Targets={"S3Targets": [{"Path": f"s3://{bucket}/dec/"}]})
    crawl(glue, crawler)
    assert server.proc.poll() is None, server.log()
    last = glue.get_crawler(Name=crawler)["Crawler"]["LastCrawl"]
    assert (f"s3://{bucket}/dec/bad.orc: unreadable ORC file: the ORC footer declares a decimal of "
            "precision 116 (at most 38)") in last["ErrorMessage"], last


READ = """
    import sys
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["path", "format"])
    glue_context = GlueContext(SparkContext.getOrCreate())
    frame = glue_context.create_dynamic_frame.from_options(
        "s3", {"paths": [args["path"]]}, args["format"])
    print("rows", frame.count())
"""


@pytest.mark.parametrize("fmt,make,expected", [
    ("parquet", hostile_parquet,
     f"not a valid Parquet file: the Parquet footer declares {GIB - 12} bytes of metadata, more than"),
    ("orc", hostile_orc, f"not a valid ORC file: the ORC postscript declares a footer of {GIB - 67}"),
])
def test_a_job_run_reading_a_hostile_footer_fails_naming_the_file(kit, server, fmt, make, expected):
    bucket = "footers-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=bucket)
    make(server, bucket, f"in/bad.{fmt}")
    job = kit.job(READ)
    run = kit.run(job, timeout=120, Arguments={"--path": f"s3://{bucket}/in/", "--format": fmt})
    assert run["JobRunState"] == "FAILED", run
    assert f"s3://{bucket}/in/bad.{fmt}: {expected}" in run["ErrorMessage"], run["ErrorMessage"]
