"""End-to-end tests of Glue connections (CreateConnection, GetConnection(s), UpdateConnection,
DeleteConnection, BatchDeleteConnection) through boto3 and the AWS CLI against the real server,
and of how their passwords are kept: encrypted at rest under the connection key file, never in
the server's log."""
import datetime
import glob
import os
import shutil
import stat
import tempfile
import uuid

import pytest

from conftest import ACCOUNT_ID, REGION, Server, all_pages, raises_glue, unique

URL = "jdbc:postgresql://127.0.0.1:5432/orders"


def secret():
    """A password no other byte of the data folder or the log can contain by chance."""
    return "pw-" + uuid.uuid4().hex + "-Zq9"


def jdbc_input(name, password=None, criteria=None, **extra):
    props = {"JDBC_CONNECTION_URL": URL, "USERNAME": "etl"}
    if password is not None:
        props["PASSWORD"] = password
    return {"Name": name, "ConnectionType": "JDBC", "ConnectionProperties": props,
            **({"MatchCriteria": criteria} if criteria is not None else {}), **extra}


def connection_arn(name):
    return f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:connection/{name}"


def stored_bytes(data_dir):
    """Every byte the server keeps in its data folder outside the object store and the logs:
    the SQLite store (with its WAL) and anything else at the top level."""
    out = b""
    for path in glob.glob(os.path.join(data_dir, "*")):
        if os.path.isfile(path) and not path.endswith("server.log"):
            with open(path, "rb") as f:
                out += f.read()
    return out


@pytest.fixture()
def private_server():
    """A server of the test's own (restarts, key files); its data folder is removed after."""
    made = []

    def make(extra_args=(), data_dir=None):
        srv = Server(data_dir or tempfile.mkdtemp(prefix="openglue-conn-"), extra_args)
        made.append(srv)
        return srv
    yield make
    for srv in made:
        srv.stop()
        shutil.rmtree(srv.data_dir, ignore_errors=True)


# --- CRUD ---------------------------------------------------------------------------------

def test_create_get_with_and_without_password(glue):
    name = unique("Orders")
    password = secret()
    before = datetime.datetime.now(datetime.timezone.utc)
    r = glue.create_connection(ConnectionInput=jdbc_input(
        name, password, criteria=["orders"], Description="the orders database",
        PhysicalConnectionRequirements={"AvailabilityZone": "local"}))
    assert r["CreateConnectionStatus"] == "READY"

    c = glue.get_connection(Name=name)["Connection"]
    assert c["Name"] == name  # kept as given, not folded
    assert c["ConnectionType"] == "JDBC"
    assert c["ConnectionProperties"] == {"JDBC_CONNECTION_URL": URL, "USERNAME": "etl", "PASSWORD": password}
    assert c["MatchCriteria"] == ["orders"]
    assert c["Description"] == "the orders database"
    assert c["PhysicalConnectionRequirements"] == {"AvailabilityZone": "local"}
    assert c["Status"] == "READY"
    assert abs((c["CreationTime"] - before).total_seconds()) < 60
    assert c["LastUpdatedTime"] == c["CreationTime"]

    hidden = glue.get_connection(Name=name, HidePassword=True)["Connection"]
    assert hidden["ConnectionProperties"] == {"JDBC_CONNECTION_URL": URL, "USERNAME": "etl"}
    explicit = glue.get_connection(Name=name, HidePassword=False)["Connection"]
    assert explicit["ConnectionProperties"]["PASSWORD"] == password

    with raises_glue("EntityNotFoundException", name.lower()):
        glue.get_connection(Name=name.lower())
    with raises_glue("AlreadyExistsException", name):
        glue.create_connection(ConnectionInput=jdbc_input(name, "x"))


def test_update_replaces_the_definition_and_renames(glue):
    name = unique("upd")
    glue.create_connection(ConnectionInput=jdbc_input(name, secret()))
    created = glue.get_connection(Name=name)["Connection"]["CreationTime"]
    new_password = secret()
    glue.update_connection(Name=name, ConnectionInput=jdbc_input(name, new_password, Description="v2"))
    c = glue.get_connection(Name=name)["Connection"]
    assert c["ConnectionProperties"]["PASSWORD"] == new_password
    assert c["Description"] == "v2"
    assert c["CreationTime"] == created
    assert c["LastUpdatedTime"] >= created

    # Without PASSWORD the connection no longer has one: the input is the whole definition.
    glue.update_connection(Name=name, ConnectionInput=jdbc_input(name))
    assert "PASSWORD" not in glue.get_connection(Name=name)["Connection"]["ConnectionProperties"]

    renamed = unique("renamed")
    glue.update_connection(Name=name, ConnectionInput=jdbc_input(renamed, new_password))
    with raises_glue("EntityNotFoundException", name):
        glue.get_connection(Name=name)
    assert glue.get_connection(Name=renamed)["Connection"]["ConnectionProperties"]["PASSWORD"] == new_password
    with raises_glue("EntityNotFoundException", "ghost"):
        glue.update_connection(Name=unique("ghost"), ConnectionInput=jdbc_input("ghost"))
    other = unique("other")
    glue.create_connection(ConnectionInput=jdbc_input(other))
    with raises_glue("AlreadyExistsException", other):
        glue.update_connection(Name=renamed, ConnectionInput=jdbc_input(other))


def test_delete_and_batch_delete_with_a_missing_name(glue):
    a, b, c, missing = unique("a"), unique("b"), unique("c"), unique("missing")
    for name in (a, b, c):
        glue.create_connection(ConnectionInput=jdbc_input(name, secret()))
    glue.delete_connection(ConnectionName=a)
    with raises_glue("EntityNotFoundException", a):
        glue.delete_connection(ConnectionName=a)
    r = glue.batch_delete_connection(ConnectionNameList=[b, missing, c])
    assert r["Succeeded"] == [b, c]
    assert list(r["Errors"]) == [missing]
    assert r["Errors"][missing]["ErrorCode"] == "EntityNotFoundException"
    assert missing in r["Errors"][missing]["ErrorMessage"]
    for name in (b, c):
        with raises_glue("EntityNotFoundException"):
            glue.get_connection(Name=name)


def test_get_connections_filters_and_pages(glue):
    tag = uuid.uuid4().hex[:8]  # the session server holds other tests' connections too
    names = sorted(unique(f"list{i}") for i in range(5))
    for i, name in enumerate(names):
        glue.create_connection(ConnectionInput=jdbc_input(
            name, secret(), criteria=[tag] + (["even"] if i % 2 == 0 else [])))
    kafka = unique("kafka")
    glue.create_connection(ConnectionInput={
        "Name": kafka, "ConnectionType": "KAFKA", "MatchCriteria": [tag, "even"],
        "ConnectionProperties": {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092"}})

    def listed(**filter_):
        return [c["Name"] for c in all_pages(glue.get_connections, "ConnectionList",
                                             Filter=filter_, MaxResults=2)]

    assert listed(MatchCriteria=[tag]) == sorted(names + [kafka])
    assert listed(MatchCriteria=[tag], ConnectionType="JDBC") == names
    assert listed(MatchCriteria=[tag, "even"]) == sorted([names[0], names[2], names[4], kafka])
    assert listed(MatchCriteria=[tag, "even"], ConnectionType="KAFKA") == [kafka]
    assert listed(MatchCriteria=[tag, "nothing-has-this"]) == []

    page = glue.get_connections(Filter={"MatchCriteria": [tag], "ConnectionType": "JDBC"},
                                MaxResults=2, HidePassword=True)
    assert len(page["ConnectionList"]) == 2 and "NextToken" in page
    assert all("PASSWORD" not in c["ConnectionProperties"] for c in page["ConnectionList"])
    page = glue.get_connections(Filter={"MatchCriteria": [tag], "ConnectionType": "JDBC"}, MaxResults=2)
    assert all(c["ConnectionProperties"]["PASSWORD"].startswith("pw-") for c in page["ConnectionList"])
    # Without a filter, every connection shows up once across the pages.
    every = [c["Name"] for c in all_pages(glue.get_connections, "ConnectionList", MaxResults=3)]
    assert len(every) == len(set(every)) and set(names + [kafka]) <= set(every)
    with raises_glue("InvalidInputException"):
        glue.get_connections(NextToken="not-a-token")


def test_catalog_id_is_a_namespace(glue):
    name = unique("ns")
    glue.create_connection(CatalogId="111122223333", ConnectionInput=jdbc_input(name, "p"))
    assert glue.get_connection(CatalogId="111122223333", Name=name)["Connection"]["Name"] == name
    with raises_glue("EntityNotFoundException"):
        glue.get_connection(Name=name)
    glue.delete_connection(CatalogId="111122223333", ConnectionName=name)


def test_tags_on_connections(glue):
    name = unique("tagged")
    glue.create_connection(ConnectionInput=jdbc_input(name), Tags={"team": "data"})
    assert glue.get_tags(ResourceArn=connection_arn(name))["Tags"] == {"team": "data"}
    glue.tag_resource(ResourceArn=connection_arn(name), TagsToAdd={"env": "dev"})
    assert glue.get_tags(ResourceArn=connection_arn(name))["Tags"] == {"team": "data", "env": "dev"}
    renamed = unique("tagged2")
    glue.update_connection(Name=name, ConnectionInput=jdbc_input(renamed))
    assert glue.get_tags(ResourceArn=connection_arn(renamed))["Tags"] == {"team": "data", "env": "dev"}
    glue.delete_connection(ConnectionName=renamed)
    with raises_glue("EntityNotFoundException"):
        glue.get_tags(ResourceArn=connection_arn(renamed))


def test_bad_input(glue, raw_glue):
    # The service model's limits come first, as AWS's front end gives them (ValidationException).
    with raises_glue("ValidationException", "connectionType", "enum"):
        glue.create_connection(ConnectionInput={"Name": unique("x"), "ConnectionType": "FTP",
                                                "ConnectionProperties": {}})
    with raises_glue("ValidationException", "enum"):
        raw_glue.create_connection(ConnectionInput={"Name": unique("x"), "ConnectionType": "JDBC",
                                                    "ConnectionProperties": {"JDBC_CONNECTION_URL": URL,
                                                                             "NOT_A_KEY": "v"}})
    with raises_glue("ValidationException", "length"):
        raw_glue.create_connection(ConnectionInput=jdbc_input("n" * 256))
    with raises_glue("ValidationException", "length"):
        raw_glue.create_connection(ConnectionInput=jdbc_input(unique("x"), "p" * 1025))
    with raises_glue("ValidationException", "null"):
        raw_glue.create_connection(ConnectionInput={"Name": unique("x"), "ConnectionType": "JDBC"})
    with raises_glue("ValidationException", "25"):
        raw_glue.batch_delete_connection(ConnectionNameList=[f"c{i}" for i in range(26)])
    # What the model cannot say: Glue's InvalidInputException.
    with raises_glue("InvalidInputException", "JDBC_CONNECTION_URL"):
        glue.create_connection(ConnectionInput={"Name": unique("x"), "ConnectionType": "JDBC",
                                                "ConnectionProperties": {"USERNAME": "u"}})
    with raises_glue("InvalidInputException", "jdbc:"):
        glue.create_connection(ConnectionInput={"Name": unique("x"), "ConnectionType": "JDBC",
                                                "ConnectionProperties": {"JDBC_CONNECTION_URL": "mysql://h/d"}})
    with raises_glue("InvalidInputException", "BasicAuthenticationCredentials"):
        glue.create_connection(ConnectionInput=jdbc_input(unique("x"), AuthenticationConfiguration={
            "AuthenticationType": "BASIC",
            "BasicAuthenticationCredentials": {"Username": "u", "Password": "p"}}))


def test_aws_cli_get_connection(glue, aws_cli):
    name = unique("cli")
    password = secret()
    glue.create_connection(ConnectionInput=jdbc_input(name, password))
    out = aws_cli("glue", "get-connection", "--name", name, "--hide-password")
    assert out["Connection"]["Name"] == name
    assert out["Connection"]["ConnectionProperties"] == {"JDBC_CONNECTION_URL": URL, "USERNAME": "etl"}
    out = aws_cli("glue", "get-connection", "--name", name)
    assert out["Connection"]["ConnectionProperties"]["PASSWORD"] == password
    failed = aws_cli("glue", "get-connection", "--name", unique("nope"), expect_error=True)
    assert "EntityNotFoundException" in failed.stderr


# --- Passwords at rest and in the log ------------------------------------------------------

def test_passwords_are_encrypted_at_rest_and_never_logged(private_server):
    srv = private_server(["--log-level", "debug"]).start()
    glue = srv.client()
    names = [unique("atrest"), unique("kafka")]
    password, kafka_password, updated = secret(), secret(), secret()
    glue.create_connection(ConnectionInput=jdbc_input(names[0], password))
    glue.create_connection(ConnectionInput={
        "Name": names[1], "ConnectionType": "KAFKA",
        "ConnectionProperties": {"KAFKA_BOOTSTRAP_SERVERS": "h:9092", "KAFKA_SASL_PLAIN_PASSWORD": kafka_password}})
    glue.get_connection(Name=names[0])
    glue.get_connections()
    with raises_glue("ValidationException"):  # a refused request echoes nothing into the log
        glue.create_connection(ConnectionInput=jdbc_input(unique("x"), password + "x" * 1024))
    glue.update_connection(Name=names[0], ConnectionInput=jdbc_input(names[0], updated))
    assert glue.get_connection(Name=names[0])["Connection"]["ConnectionProperties"]["PASSWORD"] == updated

    on_disk = stored_bytes(srv.data_dir)
    assert names[0].encode() in on_disk  # the store really was read
    for value in (password, kafka_password, updated):
        assert value.encode() not in on_disk
    key = os.path.join(srv.data_dir, "connection.key")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert os.path.getsize(key) == 32
    srv.stop()
    log = open(srv.log_path, "rb").read()
    assert b"POST" in log  # debug logging was on
    for value in (password, kafka_password, updated):
        assert value.encode() not in log


def test_restart_keeps_connections_readable(private_server):
    srv = private_server().start()
    name, password = unique("restart"), secret()
    srv.client().create_connection(ConnectionInput=jdbc_input(name, password))
    key_before = open(os.path.join(srv.data_dir, "connection.key"), "rb").read()
    srv.stop()
    srv.start()
    assert open(os.path.join(srv.data_dir, "connection.key"), "rb").read() == key_before
    c = srv.client().get_connection(Name=name)["Connection"]
    assert c["ConnectionProperties"]["PASSWORD"] == password


def start_fails(srv):
    with pytest.raises(RuntimeError) as info:
        srv.start()
    # A clean exit with a message, not a crash (a signal gives a negative return code).
    assert srv.proc.returncode > 0, srv.log()
    return str(info.value)


def test_lost_or_replaced_key_file_stops_the_server_with_a_clear_message(private_server):
    srv = private_server().start()
    name, password = unique("lost"), secret()
    srv.client().create_connection(ConnectionInput=jdbc_input(name, password))
    srv.stop()
    key = os.path.join(srv.data_dir, "connection.key")
    original = open(key, "rb").read()

    os.unlink(key)
    message = start_fails(srv)
    assert name in message and "connection key" in message and "missing" in message
    assert not os.path.exists(key)  # no new key made over passwords it could not open

    with open(key, "wb") as f:
        f.write(os.urandom(32))
    message = start_fails(srv)
    assert name in message and "key file" in message

    with open(key, "wb") as f:
        f.write(b"short")
    message = start_fails(srv)
    assert "exactly 32 bytes" in message and password not in message

    with open(key, "wb") as f:
        f.write(original)
    srv.start()
    assert srv.client().get_connection(Name=name)["Connection"]["ConnectionProperties"]["PASSWORD"] == password


def test_configured_key_file(private_server, tmp_path):
    key = tmp_path / "conn.key"
    srv = private_server(["--connection-key-file", str(key)])
    message = start_fails(srv)
    assert str(key) in message  # a configured file must exist: never made silently
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    srv.start()
    name, password = unique("configured"), secret()
    srv.client().create_connection(ConnectionInput=jdbc_input(name, password))
    assert not os.path.exists(os.path.join(srv.data_dir, "connection.key"))
    srv.stop()
    srv.start()
    assert srv.client().get_connection(Name=name)["Connection"]["ConnectionProperties"]["PASSWORD"] == password
    srv.stop()
    # The same data folder with the default (new) key: refused, naming the connection.
    plain = private_server(data_dir=srv.data_dir)
    message = start_fails(plain)
    assert name in message
