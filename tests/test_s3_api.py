"""The embedded store over the S3 API: `openglue serve` supervises versitygw's posix backend over
<data_dir>/s3, so boto3's `s3` client and the files under the data folder are one store.

Every test goes through a real server and a real versitygw (built by `make deps`).
"""
import json
import os
import shutil
import signal
import socket
import tempfile
import time
import uuid

import boto3
import botocore.config
import botocore.exceptions
import pytest

from conftest import ACCESS_KEY, REGION, SECRET_KEY, Server
from jobkit import JobKit, free_port, process_alive, unique, wait_for, wait_run


def s3_client(endpoint, key=ACCESS_KEY, secret=SECRET_KEY):
    # Default checksum settings of current boto3 (CRC32 on PutObject): versitygw accepts them.
    config = botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"})
    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key,
                        aws_secret_access_key=secret, config=config)


def free_ports(count):
    """`count` distinct ports that were free a moment ago (all held open while picking)."""
    held = []
    try:
        for _ in range(count):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def children(pid, name="versitygw"):
    """Pids of the processes whose parent is `pid` and whose command is `name`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and comm == name:
            found.append(int(entry))
    return found


class S3Server(Server):
    """A server with the S3 API on a known port."""

    def __init__(self, data_dir, extra_args=(), env=None):
        # Both ports are fixed and distinct: with `--port 0` the system could hand the server
        # the S3 port just picked here, and versitygw would find it taken.
        self.s3_port, api_port = free_ports(2)
        super().__init__(data_dir, ["--port", str(api_port), "--s3-api-port", str(self.s3_port),
                                    *extra_args], env)

    @property
    def s3_endpoint(self):
        return f"http://127.0.0.1:{self.s3_port}"

    def s3(self, **kwargs):
        return s3_client(self.s3_endpoint, **kwargs)

    def gateway_pids(self):
        return children(self.proc.pid)


def s3_server(prefix="openglue-s3-"):
    """A started S3Server in a temporary data folder, stopped and removed afterwards: the body of
    a module fixture (`yield from s3_server(...)`)."""
    data_dir = tempfile.mkdtemp(prefix=prefix)
    srv = S3Server(data_dir).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def s3srv():
    yield from s3_server()


@pytest.fixture()
def bucket(s3srv):
    name = "b-" + uuid.uuid4().hex[:12]
    s3srv.s3().create_bucket(Bucket=name)
    return name


def test_put_object_over_s3_is_a_file_in_the_data_folder(s3srv, bucket):
    s3 = s3srv.s3()
    s3.put_object(Bucket=bucket, Key="dir/sub/a.csv", Body=b"id,v\n1,x\n")
    path = os.path.join(s3srv.data_dir, "s3", bucket, "dir", "sub", "a.csv")
    with open(path, "rb") as f:
        assert f.read() == b"id,v\n1,x\n"
    assert s3.head_object(Bucket=bucket, Key="dir/sub/a.csv")["ContentLength"] == 9


def test_a_file_placed_in_the_folder_is_an_object(s3srv):
    name = "placed-" + uuid.uuid4().hex[:8]
    folder = os.path.join(s3srv.data_dir, "s3", name, "year=2024")
    os.makedirs(folder)
    with open(os.path.join(folder, "part-0.json"), "wb") as f:
        f.write(b'{"a": 1}\n')
    s3 = s3srv.s3()
    assert name in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    body = s3.get_object(Bucket=name, Key="year=2024/part-0.json")["Body"].read()
    assert body == b'{"a": 1}\n'
    ranged = s3.get_object(Bucket=name, Key="year=2024/part-0.json", Range="bytes=1-4")
    assert ranged["Body"].read() == b'"a":'


def test_list_with_prefix_and_delimiter(s3srv, bucket):
    s3 = s3srv.s3()
    for key in ["logs/2024/a.txt", "logs/2024/b.txt", "logs/2025/c.txt", "logs/top.txt", "other.txt"]:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    page = s3.list_objects_v2(Bucket=bucket, Prefix="logs/", Delimiter="/")
    assert [c["Prefix"] for c in page["CommonPrefixes"]] == ["logs/2024/", "logs/2025/"]
    assert [o["Key"] for o in page["Contents"]] == ["logs/top.txt"]
    flat = s3.list_objects_v2(Bucket=bucket, Prefix="logs/2024/")
    assert [(o["Key"], o["Size"]) for o in flat["Contents"]] == [
        ("logs/2024/a.txt", 15), ("logs/2024/b.txt", 15)]
    # Paging with a continuation token.
    first = s3.list_objects_v2(Bucket=bucket, MaxKeys=2)
    assert first["IsTruncated"] and len(first["Contents"]) == 2
    rest = s3.list_objects_v2(Bucket=bucket, ContinuationToken=first["NextContinuationToken"])
    keys = [o["Key"] for o in first["Contents"] + rest["Contents"]]
    assert keys == sorted(["logs/2024/a.txt", "logs/2024/b.txt", "logs/2025/c.txt",
                           "logs/top.txt", "other.txt"])


def test_multipart_upload_lands_as_one_file(s3srv, bucket):
    s3 = s3srv.s3()
    part1, part2 = os.urandom(5 * 1024 * 1024), b"tail" * 1000
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big/blob.bin")
    parts = []
    for number, data in enumerate([part1, part2], start=1):
        etag = s3.upload_part(Bucket=bucket, Key="big/blob.bin", PartNumber=number,
                              UploadId=upload["UploadId"], Body=data)["ETag"]
        parts.append({"PartNumber": number, "ETag": etag})
    s3.complete_multipart_upload(Bucket=bucket, Key="big/blob.bin", UploadId=upload["UploadId"],
                                 MultipartUpload={"Parts": parts})
    with open(os.path.join(s3srv.data_dir, "s3", bucket, "big", "blob.bin"), "rb") as f:
        assert f.read() == part1 + part2
    # The high-level transfer (boto3's own multipart with default checksums) too.
    import io
    from boto3.s3.transfer import TransferConfig
    data = os.urandom(12 * 1024 * 1024)
    s3.upload_fileobj(io.BytesIO(data), bucket, "big/transfer.bin",
                      Config=TransferConfig(multipart_threshold=5 * 1024 * 1024,
                                            multipart_chunksize=5 * 1024 * 1024))
    out = io.BytesIO()
    s3.download_fileobj(bucket, "big/transfer.bin", out)
    assert out.getvalue() == data


def test_wrong_credentials_are_refused(s3srv, bucket):
    for key, secret in [(ACCESS_KEY, "wrong-secret"), ("NOSUCHKEY", SECRET_KEY)]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3srv.s3(key=key, secret=secret).list_objects_v2(Bucket=bucket)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3srv.s3(key=ACCESS_KEY, secret="wrong").put_object(Bucket=bucket, Key="x", Body=b"x")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert not os.path.exists(os.path.join(s3srv.data_dir, "s3", bucket, "x"))
    # Unsigned requests too.
    import urllib.error
    import urllib.request
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{s3srv.s3_endpoint}/{bucket}?list-type=2", timeout=10)
    assert e.value.code == 403


def test_path_traversal_keys_cannot_escape_the_store(s3srv, bucket):
    s3 = s3srv.s3()
    s3_root = os.path.join(s3srv.data_dir, "s3")
    before = set(os.listdir(s3srv.data_dir))
    for key in ["../escaped.txt", "a/../../escaped.txt", "../../escaped.txt", "..",
                "a/../../../" + os.path.basename(s3srv.data_dir) + "/escaped.txt"]:
        try:
            s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        except botocore.exceptions.ClientError as e:
            assert e.response["ResponseMetadata"]["HTTPStatusCode"] in (400, 403), key
    # Nothing appeared outside the store, in the data folder or above it.
    assert set(os.listdir(s3srv.data_dir)) == before
    assert not os.path.exists(os.path.join(os.path.dirname(s3srv.data_dir), "escaped.txt"))
    assert not os.path.exists(os.path.join(s3srv.data_dir, "escaped.txt"))
    # Reading the server's own files through a key is refused.
    for key in ["../../server.key", "../../catalog.db", "../s3api/users.json"]:
        with pytest.raises(botocore.exceptions.ClientError):
            s3.get_object(Bucket=bucket, Key=key)
    # A bucket name is never a path step either.
    for name in ["..", ".", "s3api"]:
        with pytest.raises((botocore.exceptions.ClientError,
                            botocore.exceptions.ParamValidationError)):
            s3.get_object(Bucket=name, Key="users.json")
    assert os.path.isdir(os.path.join(s3_root, bucket))


def test_a_job_uses_s3_and_glue_with_only_its_environment(s3srv, tmp_path):
    glue = s3srv.client()
    kit = JobKit(s3srv, glue)
    database = unique("s3job")
    glue.create_database(DatabaseInput={"Name": database})
    out_bucket = "jobout-" + uuid.uuid4().hex[:8]
    s3 = s3srv.s3()
    s3.create_bucket(Bucket=out_bucket)
    s3.put_object(Bucket=out_bucket, Key="input/in.txt", Body=b"from the test")
    creds = tmp_path / "creds.json"
    try:
        for command in ["pythonshell", "glueetl"]:
            job = kit.job("""
                import json, os, sys
                import boto3
                args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
                bucket = args["--bucket"]
                s3 = boto3.client("s3")      # no endpoint, no credentials: the environment's
                glue = boto3.client("glue")
                names = [d["Name"] for d in glue.get_databases()["DatabaseList"]]
                got = s3.get_object(Bucket=bucket, Key="input/in.txt")["Body"].read().decode()
                s3.put_object(Bucket=bucket, Key="output/" + args["--command"] + ".json",
                              Body=json.dumps({"databases": names, "read": got}).encode())
                listed = s3.list_objects_v2(Bucket=bucket, Prefix="output/")["Contents"]
                print("listed", [o["Key"] for o in listed])
                with open(args["--creds"], "w") as f:
                    json.dump({"key": os.environ["AWS_ACCESS_KEY_ID"],
                               "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
                               "endpoint": os.environ["AWS_ENDPOINT_URL_S3"],
                               "logs": os.environ["AWS_ENDPOINT_URL_LOGS"]}, f)
            """, command=command)
            run = kit.run(job, timeout=60, Arguments={"--bucket": out_bucket, "--command": command,
                                                      "--creds": str(creds)})
            assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
            path = os.path.join(s3srv.data_dir, "s3", out_bucket, "output", command + ".json")
            with open(path) as f:
                written = json.load(f)
            assert database in written["databases"]
            assert written["read"] == "from the test"
            captured = json.loads(creds.read_text())
            assert captured["endpoint"] == s3srv.s3_endpoint
            assert captured["logs"] == s3srv.endpoint
            # The run's own credential (not the server's), revoked once the run ended.
            assert captured["key"] != ACCESS_KEY
            with pytest.raises(botocore.exceptions.ClientError) as e:
                s3srv.s3(key=captured["key"], secret=captured["secret"]).list_objects_v2(
                    Bucket=out_bucket)
            assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    finally:
        kit.close()
        glue.delete_database(Name=database)


def test_the_s3_server_is_restarted_when_it_dies(s3srv, bucket):
    (old,) = s3srv.gateway_pids()
    os.kill(old, signal.SIGKILL)
    new = wait_for(lambda: [p for p in s3srv.gateway_pids() if p != old], 20, "a new versitygw")
    assert len(new) == 1

    def answers():
        try:
            s3srv.s3().put_object(Bucket=bucket, Key="after-restart.txt", Body=b"ok")
            return True
        except (botocore.exceptions.ClientError, botocore.exceptions.EndpointConnectionError):
            return False
    wait_for(answers, 20, "the restarted S3 API to answer", interval=0.2)
    assert os.path.exists(os.path.join(s3srv.data_dir, "s3", bucket, "after-restart.txt"))
    assert "restarting it in" in s3srv.log()


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_no_orphan_s3_server_after_the_server_stops(how):
    data_dir = tempfile.mkdtemp(prefix="openglue-s3-")
    srv = S3Server(data_dir).start()
    try:
        (gateway,) = srv.gateway_pids()
        srv.s3().create_bucket(Bucket="alive")
        if how == "sigterm":
            srv.stop()
        else:
            srv.kill9()
        wait_for(lambda: not process_alive(gateway), 30, f"versitygw {gateway} to end")
        # Its port is free again: nothing listens there, and a new server takes the same one.
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Go's listeners do
            probe.bind(("127.0.0.1", srv.s3_port))
        srv.start()
        assert srv.s3().head_bucket(Bucket="alive")["ResponseMetadata"]["HTTPStatusCode"] == 200
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_s3_api_off_and_an_absent_binary(tmp_path):
    data_dir = tempfile.mkdtemp(prefix="openglue-s3-")
    try:
        srv = Server(data_dir, ["--s3-api", "off"]).start()
        try:
            assert children(srv.proc.pid) == []
        finally:
            srv.stop()
        # "on" with no such binary: the server refuses to start, naming the binary.
        srv = Server(data_dir, ["--s3-api", "on", "--s3-api-binary", "/nonexistent/versitygw"])
        with pytest.raises(RuntimeError, match="/nonexistent/versitygw"):
            srv.start()
        srv.stop()
        # "auto" with no such binary: the server runs without the S3 API.
        srv = Server(data_dir, ["--s3-api-binary", "/nonexistent/versitygw", "--s3-api", "auto"])
        srv.start()
        try:
            assert children(srv.proc.pid) == []
            assert srv.client().get_databases()["DatabaseList"] is not None
        finally:
            srv.stop()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="job users (and the unprivileged S3 server) need root")
def test_a_link_planted_in_the_store_reaches_nothing_private(s3srv, bucket):
    # A job can write into the store directly (OPENGLUE_S3_ROOT). versitygw follows links, so it
    # runs as an unprivileged uid of the store's group: a link to the server's own files is
    # refused, as it would be to the job itself.
    bucket_dir = os.path.join(s3srv.data_dir, "s3", bucket)
    os.symlink(os.path.join(s3srv.data_dir, "server.key"), os.path.join(bucket_dir, "leak.key"))
    os.symlink(s3srv.data_dir, os.path.join(bucket_dir, "datadir"))
    s3 = s3srv.s3()
    for key in ["leak.key", "datadir/server.key", "datadir/catalog.db"]:
        with pytest.raises(botocore.exceptions.ClientError):
            s3.get_object(Bucket=bucket, Key=key)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.put_object(Bucket=bucket, Key="datadir/planted.txt", Body=b"x")
    assert not os.path.exists(os.path.join(s3srv.data_dir, "planted.txt"))


def gateway_iam_dir(srv):
    """The private tmpfs folder of versitygw's users.json, from its command line."""
    [pid] = srv.gateway_pids()
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        args = f.read().split(b"\0")
    return args[args.index(b"--iam-dir") + 1].decode()


@pytest.mark.skipif(os.geteuid() != 0, reason="job users (and the unprivileged S3 server) need root")
def test_links_to_what_the_gateway_itself_can_read_are_not_followed(s3srv, bucket):
    # The gateway runs in a mount namespace of its own where the store is mounted nosymfollow:
    # a link a job plants in the store is not followed, even to files the gateway's own uid
    # may read (its accounts file, its environment with the root key pair, a readable file).
    [pid] = s3srv.gateway_pids()
    accounts = os.path.join(gateway_iam_dir(s3srv), "users.json")
    with open(accounts, "rb") as f:
        assert b"accessAccounts" in f.read()
    outside_dir = tempfile.mkdtemp(prefix="openglue-outside-")
    bucket_dir = os.path.join(s3srv.data_dir, "s3", bucket)
    links = {"accounts.json": accounts, "environ": "/proc/self/environ",
             "outside.txt": None, "outside-dir": outside_dir, "deep/environ": "/proc/self/environ"}
    try:
        os.chmod(outside_dir, 0o755)
        outside = os.path.join(outside_dir, "public.txt")
        with open(outside, "wb") as f:
            f.write(b"outside the store")
        os.chmod(outside, 0o644)
        links["outside.txt"] = outside
        os.makedirs(os.path.join(bucket_dir, "deep"))
        for name, target in links.items():
            os.symlink(target, os.path.join(bucket_dir, name))
        s3 = s3srv.s3()
        for key in [*links, "outside-dir/public.txt"]:
            try:
                body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            except botocore.exceptions.ClientError:
                continue
            pytest.fail(f"{key} was served: {body[:80]!r}")
        with pytest.raises(botocore.exceptions.ClientError):
            s3.put_object(Bucket=bucket, Key="outside-dir/planted.txt", Body=b"x")
        assert not os.path.exists(os.path.join(outside_dir, "planted.txt"))
        # Regular objects, nested keys and listings still work beside the links.
        s3.put_object(Bucket=bucket, Key="plain.txt", Body=b"plain")
        s3.put_object(Bucket=bucket, Key="a/b/c/nested.txt", Body=b"nested")
        assert s3.get_object(Bucket=bucket, Key="plain.txt")["Body"].read() == b"plain"
        assert s3.get_object(Bucket=bucket, Key="a/b/c/nested.txt")["Body"].read() == b"nested"
        with open(os.path.join(bucket_dir, "deep", "direct.txt"), "wb") as f:
            f.write(b"placed")
        assert s3.get_object(Bucket=bucket, Key="deep/direct.txt")["Body"].read() == b"placed"
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="a/")
        assert [o["Key"] for o in listed.get("Contents", [])] == ["a/b/c/nested.txt"]
        # The namespace is the gateway's alone: the server's own view of the store is unchanged.
        with open(f"/proc/{s3srv.proc.pid}/mountinfo") as f:
            assert os.path.join(s3srv.data_dir, "s3") not in f.read()
        assert s3srv.gateway_pids() == [pid]
        with open(f"/proc/{pid}/mountinfo") as f:
            store = [line.split() for line in f if line.split()[4] == os.path.join(s3srv.data_dir, "s3")]
        assert store and "nosymfollow" in store[-1][5].split(","), store
        assert "symbolic links in the store are not followed" in s3srv.log()
    finally:
        shutil.rmtree(outside_dir, ignore_errors=True)
        for name in links:  # the module's other tests walk the store
            if os.path.islink(os.path.join(bucket_dir, name)):
                os.unlink(os.path.join(bucket_dir, name))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"), reason="needs root and capsh")
def test_without_cap_sys_admin_the_gateway_still_serves_and_one_warning_says_so(tmp_path, monkeypatch):
    import conftest
    wrapper = tmp_path / "openglue-no-sys-admin"
    wrapper.write_text(f'#!/bin/sh\nexec capsh --drop=cap_sys_admin -- -c \'exec "$@"\' sh {conftest.BIN} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(conftest, "BIN", str(wrapper))
    data_dir = tempfile.mkdtemp(prefix="openglue-s3-")
    srv = S3Server(data_dir)
    try:
        srv.start()
        wait_for(lambda: "listening on" in srv.log(), 20, "the S3 API's log line")
        s3 = srv.s3()
        s3.create_bucket(Bucket="nocap")
        s3.put_object(Bucket="nocap", Key="k/x.txt", Body=b"x")
        assert s3.get_object(Bucket="nocap", Key="k/x.txt")["Body"].read() == b"x"
        # A restart of the gateway does not repeat the warning.
        starts = srv.log().count("S3 API server (pid")
        os.kill(children(srv.proc.pid, "versitygw")[0], signal.SIGKILL)
        wait_for(lambda: srv.log().count("S3 API server (pid") > starts, 10, "the restart line")
        wait_for(lambda: len(children(srv.proc.pid, "versitygw")) == 1, 10, "the restarted gateway")
        log = srv.log()
        assert log.count("could not keep versitygw from following symbolic links") == 1, log
        assert "unshare(CLONE_NEWNS)" in log
        assert "symbolic links in the store are not followed" not in log
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_taken_default_port_moves_the_s3_api_elsewhere():
    import re
    import socket
    data_dir = tempfile.mkdtemp(prefix="openglue-s3-")
    port = free_port()
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            squatter.bind(("127.0.0.1", port + 1))
        except OSError:
            pytest.skip(f"port {port + 1} is in use already")
        squatter.listen(1)
        srv = Server(data_dir, ["--port", str(port)]).start()
        try:
            found = wait_for(lambda: re.search(r"S3 API .* listening on (http://127\.0\.0\.1:(\d+))",
                                               srv.log()), 10, "the S3 API's log line")
            assert int(found.group(2)) != port + 1
            s3 = s3_client(found.group(1))
            s3.create_bucket(Bucket="moved")
            assert os.path.isdir(os.path.join(data_dir, "s3", "moved"))
        finally:
            srv.stop()
            shutil.rmtree(data_dir, ignore_errors=True)


def test_secrets_of_the_s3_api_are_not_kept_in_the_data_folder(s3srv):
    # users.json (run secrets, configured pairs) lives on a tmpfs, not under data_dir.
    for folder, _, files in os.walk(s3srv.data_dir):
        assert "users.json" not in files, folder
        for name in files:
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    assert b'accessAccounts' not in f.read(), name
            except OSError:
                pass


def test_job_scripts_come_from_a_configured_external_endpoint(s3srv, tmp_path):
    # s3srv's S3 API plays an external S3-compatible endpoint for a second server.
    s3 = s3srv.s3()
    s3.create_bucket(Bucket="ext-scripts")
    s3.put_object(Bucket="ext-scripts", Key="jobs/remote.py", Body=(
        b"import sys\nargs = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
        b"open(args['--out'], 'w').write('ran the remote script')\n"))
    data_dir = tempfile.mkdtemp(prefix="openglue-s3-")
    srv = Server(data_dir, ["--s3-api", "off", "--s3-endpoint", s3srv.s3_endpoint,
                            "--s3-access-key-id", ACCESS_KEY],
                 env={"OPENGLUE_S3_SECRET_ACCESS_KEY": SECRET_KEY}).start()
    try:
        glue = srv.client()
        kit = JobKit(srv, glue)
        out = tmp_path / "out.txt"
        job = kit.job(script="s3://ext-scripts/jobs/remote.py")
        run = kit.run(job, timeout=60, Arguments={"--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        assert out.read_text() == "ran the remote script"
        # The second server's own embedded store is not where s3:// goes any more.
        local = os.path.join(data_dir, "s3", "ext-scripts", "jobs")
        os.makedirs(local)
        with open(os.path.join(local, "local-only.py"), "w") as f:
            f.write("pass\n")
        run = kit.run(kit.job(script="s3://ext-scripts/jobs/local-only.py"), timeout=60)
        assert run["JobRunState"] in ("FAILED", "ERROR")
        assert "local-only.py" in run.get("ErrorMessage", "")
        kit.close()
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_the_external_endpoints_secret_is_refused_as_a_flag(tmp_path):
    import subprocess
    from conftest import BIN
    result = subprocess.run([BIN, "serve", "--s3-secret-access-key", "x"], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode != 0
    assert "OPENGLUE_S3_SECRET_ACCESS_KEY" in result.stderr
