"""The Glue JSON 1.1 wire protocol, driven with raw HTTP against the real server.

Every request is signed with botocore's SigV4 signer, so the only thing wrong with a request is
the thing under test: the operation, the JSON, a member's type or value.
"""
import datetime
import http.client
import json
import random
import threading
import time
import uuid

import pytest

from conftest import Server, partition_input, table_input
from wire import CONTENT_TYPE, op, post, signed_headers, utcnow


def error_of(response, status=400):
    """Asserts `response` is a Glue error in AWS's form and returns (type, message)."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].split(";")[0].strip() == CONTENT_TYPE
    body = response.json()
    assert isinstance(body, dict), body
    assert isinstance(body.get("__type"), str) and body["__type"], body
    assert isinstance(body.get("message"), str) and body["message"], body
    return body["__type"], body["message"]


def ok(response):
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].split(";")[0].strip() == CONTENT_TYPE
    return response.json()


def new_name(prefix="p"):
    return prefix + "_" + uuid.uuid4().hex[:10]


# ---- Operations and targets ------------------------------------------------------------------

def test_unknown_operation(server):
    kind, message = error_of(post(server.endpoint, op("NoSuchOperationAtAll"), {}))
    assert kind == "UnknownOperationException"
    assert "NoSuchOperationAtAll" in message


def test_target_of_another_service_is_unknown(server):
    kind, _ = error_of(post(server.endpoint, "AWSGlueX.GetDatabases", {}))
    assert kind == "UnknownOperationException"
    kind, _ = error_of(post(server.endpoint, "GetDatabases", {}))
    assert kind == "UnknownOperationException"


def test_missing_target(server):
    kind, message = error_of(post(server.endpoint, None, {}))
    assert kind == "UnknownOperationException"
    assert "X-Amz-Target" in message


def test_known_operation_answers_200_with_json(server):
    response = post(server.endpoint, op("GetDatabases"), {})
    body = ok(response)
    assert isinstance(body["DatabaseList"], list)
    assert response.headers.get("x-amzn-RequestId")


def test_empty_body_is_an_empty_request(server):
    body = ok(post(server.endpoint, op("GetDatabases"), b""))
    assert isinstance(body["DatabaseList"], list)


# ---- Malformed JSON --------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    b"{not json",
    b'{"DatabaseInput": {"Name": "x"}',
    b'{"DatabaseInput": {"Name": "x"}} trailing',
    b"\xff\xfe\x00garbage",
    b"[1, 2",
])
def test_malformed_json_is_serialization_exception(server, body):
    kind, _ = error_of(post(server.endpoint, op("CreateDatabase"), body))
    assert kind == "SerializationException"


@pytest.mark.parametrize("body", [b"[]", b'"DatabaseInput"', b"42", b"null", b"true"])
def test_body_that_is_not_an_object_is_serialization_exception(server, body):
    kind, _ = error_of(post(server.endpoint, op("CreateDatabase"), body))
    assert kind == "SerializationException"


# ---- Members of the wrong type ----------------------------------------------------------------

WRONG_TYPES = [
    # (operation, request, the member the message must name)
    ("CreateDatabase", {"DatabaseInput": "raw"}, "databaseInput"),
    ("CreateDatabase", {"DatabaseInput": ["raw"]}, "databaseInput"),
    ("CreateDatabase", {"DatabaseInput": {"Name": 5}}, "databaseInput.name"),
    ("CreateDatabase", {"DatabaseInput": {"Name": "x", "Parameters": ["a", "b"]}},
     "databaseInput.parameters"),
    ("CreateDatabase", {"DatabaseInput": {"Name": "x", "Parameters": {"k": 1}}},
     "databaseInput.parameters"),
    ("GetDatabases", {"MaxResults": "5"}, "maxResults"),
    ("GetDatabases", {"MaxResults": 2.5}, "maxResults"),
    ("GetDatabases", {"MaxResults": True}, "maxResults"),
    ("CreateTable", {"DatabaseName": "d", "TableInput": {"Name": "t", "PartitionKeys": {"a": 1}}},
     "tableInput.partitionKeys"),
    ("CreateTable", {"DatabaseName": "d", "TableInput": {"Name": "t", "Retention": "7"}},
     "tableInput.retention"),
    ("CreateTable", {"DatabaseName": "d", "TableInput": {"Name": "t", "LastAccessTime": "yesterday"}},
     "tableInput.lastAccessTime"),
    ("CreateTable", {"DatabaseName": "d",
                     "TableInput": {"Name": "t", "StorageDescriptor": {"Compressed": "yes"}}},
     "tableInput.storageDescriptor.compressed"),
    ("BatchCreatePartition", {"DatabaseName": "d", "TableName": "t",
                              "PartitionInputList": [{"Values": "2024"}]},
     "partitionInputList.1.member.values"),
    ("BatchCreatePartition", {"DatabaseName": "d", "TableName": "t", "PartitionInputList": "all"},
     "partitionInputList"),
    ("GetPartitions", {"DatabaseName": "d", "TableName": "t", "ExcludeColumnSchema": "true"},
     "excludeColumnSchema"),
    ("GetPartitions", {"DatabaseName": "d", "TableName": "t", "Segment": 3}, "segment"),
    ("GetTable", {"DatabaseName": ["d"], "Name": "t"}, "databaseName"),
    ("GetTable", {"DatabaseName": {"d": "e"}, "Name": "t"}, "databaseName"),
]


@pytest.mark.parametrize("operation,request_body,member", WRONG_TYPES,
                         ids=[f"{o}-{m}-{i}" for i, (o, _, m) in enumerate(WRONG_TYPES)])
def test_wrong_member_type_is_serialization_exception_naming_member(server, operation,
                                                                     request_body, member):
    kind, message = error_of(post(server.endpoint, op(operation), request_body))
    assert kind == "SerializationException", message
    assert f"'{member}" in message, message


@pytest.mark.parametrize("number", [b"99999999999", b"18446744073709551615", b"18446744073709551616",
                                    b"-99999999999", b"1e300", b"1.0e1000"])
def test_integer_out_of_range_is_serialization_exception(server, number):
    kind, message = error_of(post(server.endpoint, op("GetDatabases"), b'{"MaxResults": ' + number + b"}"))
    assert kind == "SerializationException", message


def test_whole_number_written_as_float_is_an_integer(server):
    body = ok(post(server.endpoint, op("GetDatabases"), b'{"MaxResults": 5.0}'))
    assert isinstance(body["DatabaseList"], list)


@pytest.mark.parametrize("body", [
    b"[" * 100000 + b"]" * 100000,
    b'{"DatabaseInput": {"Name": "x", "Parameters": {"a": ' + b"[" * 100000 + b"]" * 100000 + b"}}}",
    b'{"DatabaseInput": {"Name": "x", "Parameters": ' + b'{"a": ' * 50000 + b"1" + b"}" * 50000 + b"}}",
])
def test_deeply_nested_json_is_rejected_and_server_survives(server, body):
    kind, _ = error_of(post(server.endpoint, op("CreateDatabase"), body))
    assert kind in ("SerializationException", "ValidationException")
    assert server.proc.poll() is None, server.log()
    ok(post(server.endpoint, op("GetDatabases"), {}))


def test_unknown_members_are_ignored_and_not_stored(server, glue, db):
    deep = json.loads('{"a": ' * 200 + "1" + "}" * 200)
    request = {"DatabaseName": db, "NotAMember": 1, "TableInput": {
        "Name": "t", "Bogus": {"x": 1},
        "StorageDescriptor": {"Columns": [{"Name": "a", "Type": "int", "Junk": [1, 2]}],
                              "Location": "s3://b/t/", "Junk2": deep,
                              "SerdeInfo": {"SerializationLibrary": "x", "Junk3": "y"}},
        "PartitionKeys": [{"Name": "p", "Type": "string", "Junk4": True}]}}
    ok(post(server.endpoint, op("CreateTable"), request))
    table = ok(post(server.endpoint, op("GetTable"), {"DatabaseName": db, "Name": "t"}))["Table"]
    assert "Bogus" not in table
    sd = table["StorageDescriptor"]
    assert sd["Columns"] == [{"Name": "a", "Type": "int"}]
    assert "Junk2" not in sd and "Junk3" not in sd["SerdeInfo"]
    assert sd["Location"] == "s3://b/t/"
    assert table["PartitionKeys"] == [{"Name": "p", "Type": "string"}]


# ---- Required members ------------------------------------------------------------------------

def test_missing_required_member_exact_aws_message(server):
    kind, message = error_of(post(server.endpoint, op("CreateDatabase"), {"DatabaseInput": {}}))
    assert kind == "ValidationException"
    assert message == ("1 validation error detected: Value null at 'databaseInput.name' failed to "
                       "satisfy constraint: Member must not be null")


def test_json_null_counts_as_missing(server):
    kind, message = error_of(post(server.endpoint, op("CreateDatabase"),
                                  {"DatabaseInput": {"Name": None}}))
    assert kind == "ValidationException"
    assert "Value null at 'databaseInput.name'" in message


@pytest.mark.parametrize("operation,request_body,members", [
    ("CreateDatabase", {}, ["databaseInput"]),
    ("GetTable", {"DatabaseName": "d"}, ["name"]),
    ("GetPartitions", {}, ["databaseName", "tableName"]),
    ("BatchCreatePartition", {"DatabaseName": "d", "TableName": "t"}, ["partitionInputList"]),
    ("CreateTable", {"DatabaseName": "d", "TableInput": {
        "Name": "t", "StorageDescriptor": {"Columns": [{"Name": "a"}, {"Type": "int"}]}}},
     ["tableInput.storageDescriptor.columns.2.member.name"]),
    ("TagResource", {}, ["resourceArn", "tagsToAdd"]),
])
def test_missing_required_members_are_all_listed(server, operation, request_body, members):
    kind, message = error_of(post(server.endpoint, op(operation), request_body))
    assert kind == "ValidationException"
    count = len(members)
    assert message.startswith(f"{count} validation error{'s' if count > 1 else ''} detected: "), message
    for member in members:
        assert (f"Value null at '{member}' failed to satisfy constraint: Member must not be null"
                in message), message


# ---- Model limits ----------------------------------------------------------------------------

def test_name_of_255_characters_is_accepted_and_256_rejected(server, glue):
    longest = "d" + uuid.uuid4().hex[:10] + "x" * 244
    assert len(longest) == 255
    ok(post(server.endpoint, op("CreateDatabase"), {"DatabaseInput": {"Name": longest}}))
    try:
        assert glue.get_database(Name=longest)["Database"]["Name"] == longest
    finally:
        glue.delete_database(Name=longest)

    too_long = longest + "y"
    kind, message = error_of(post(server.endpoint, op("CreateDatabase"),
                                  {"DatabaseInput": {"Name": too_long}}))
    assert kind == "ValidationException"
    assert "at 'databaseInput.name' failed to satisfy constraint: Member must have length less " \
           "than or equal to 255" in message
    names = [d["Name"] for d in glue.get_paginator("get_databases").paginate().build_full_result()["DatabaseList"]]
    assert too_long not in names and longest not in names


def test_empty_name_is_below_minimum_length(server):
    kind, message = error_of(post(server.endpoint, op("CreateDatabase"),
                                  {"DatabaseInput": {"Name": ""}}))
    assert kind == "ValidationException"
    assert "'databaseInput.name'" in message and "greater than or equal to 1" in message


@pytest.mark.parametrize("operation,request_body,accepted", [
    ("GetDatabases", {"MaxResults": 100}, True),
    ("GetDatabases", {"MaxResults": 101}, False),
    ("GetDatabases", {"MaxResults": 0}, False),
    ("GetDatabases", {"MaxResults": -1}, False),
])
def test_max_results_range(server, operation, request_body, accepted):
    response = post(server.endpoint, op(operation), request_body)
    if accepted:
        ok(response)
    else:
        kind, message = error_of(response)
        assert kind == "ValidationException"
        assert f"Value '{request_body['MaxResults']}' at 'maxResults'" in message


def test_get_partitions_max_results_limit_is_1000(server, glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    ok(post(server.endpoint, op("GetPartitions"),
            {"DatabaseName": db, "TableName": "t", "MaxResults": 1000}))
    kind, message = error_of(post(server.endpoint, op("GetPartitions"),
                                  {"DatabaseName": db, "TableName": "t", "MaxResults": 1001}))
    assert kind == "ValidationException"
    assert "'maxResults'" in message and "less than or equal to 1000" in message


def test_enum_value_outside_the_set(server):
    kind, message = error_of(post(server.endpoint, op("GetDatabases"), {"ResourceShareType": "MINE"}))
    assert kind == "ValidationException"
    assert "Value 'MINE' at 'resourceShareType' failed to satisfy constraint: Member must satisfy " \
           "enum value set: [" in message
    for allowed in ("FOREIGN", "ALL"):
        assert allowed in message
    ok(post(server.endpoint, op("GetDatabases"), {"ResourceShareType": "ALL"}))


def test_list_longer_than_model_max(server, glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    inputs = [partition_input([str(i)]) for i in range(101)]
    kind, message = error_of(post(server.endpoint, op("BatchCreatePartition"),
                                  {"DatabaseName": db, "TableName": "t", "PartitionInputList": inputs}))
    assert kind == "ValidationException"
    assert "at 'partitionInputList' failed to satisfy constraint: Member must have length less " \
           "than or equal to 100" in message


def test_map_with_too_many_entries(server):
    tags = {f"k{i}": "v" for i in range(51)}
    kind, message = error_of(post(server.endpoint, op("TagResource"), {
        "ResourceArn": "arn:aws:glue:us-east-1:000000000000:database/x", "TagsToAdd": tags}))
    assert kind == "ValidationException"
    assert "'tagsToAdd'" in message and "less than or equal to 50" in message


def test_name_with_a_control_character_fails_the_model_pattern(server, glue):
    name = "bad\nname_" + uuid.uuid4().hex[:6]
    try:
        kind, message = error_of(post(server.endpoint, op("CreateDatabase"), {"DatabaseInput": {"Name": name}}))
        assert kind == "ValidationException"
        assert "Member must satisfy regular expression pattern" in message
    finally:
        try:
            glue.delete_database(Name=name)
        except (glue.exceptions.EntityNotFoundException, glue.exceptions.ValidationException):
            pass


def test_every_violation_is_counted(server):
    kind, message = error_of(post(server.endpoint, op("GetPartitions"), {
        "DatabaseName": "", "TableName": "t" * 256, "MaxResults": 0}))
    assert kind == "ValidationException"
    assert message.startswith("3 validation errors detected: "), message
    for member in ("databaseName", "tableName", "maxResults"):
        assert f"at '{member}'" in message


# ---- Error documents -------------------------------------------------------------------------

def test_catalog_errors_are_json_with_type_and_message(server):
    missing = new_name("nodb")
    kind, message = error_of(post(server.endpoint, op("GetDatabase"), {"Name": missing}))
    assert kind == "EntityNotFoundException"
    assert missing in message


def test_error_responses_carry_request_id(server):
    response = post(server.endpoint, op("NoSuchOperationAtAll"), {})
    error_of(response)
    assert response.headers.get("x-amzn-RequestId")


# ---- Connections -----------------------------------------------------------------------------

def test_keep_alive_many_requests_on_one_connection(server, glue, db):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.connect()
    first_socket = conn.sock
    try:
        for i in range(150):
            if i % 3 == 0:
                target, body, expect = "CreateTable", {"DatabaseName": db, "TableInput": {"Name": f"t{i}"}}, 200
            elif i % 3 == 1:
                target, body, expect = "GetTable", {"DatabaseName": db, "Name": f"t{i - 1}"}, 200
            else:  # an error must not close the connection either
                target, body, expect = "GetTable", {"DatabaseName": db, "Name": f"missing{i}"}, 400
            data = json.dumps(body).encode()
            headers = signed_headers(server.endpoint, op(target), data)
            conn.request("POST", "/", body=data, headers=headers)
            response = conn.getresponse()
            payload = json.loads(response.read())
            assert response.status == expect, payload
            if target == "GetTable" and expect == 200:
                assert payload["Table"]["Name"] == f"t{i - 1}"
            if expect == 400:
                assert payload["__type"] == "EntityNotFoundException"
            assert conn.sock is first_socket, f"connection was closed after request {i}"
    finally:
        conn.close()
    assert len(glue.get_tables(DatabaseName=db)["TableList"]) == 50


def test_many_concurrent_clients(server, glue, db):
    threads_count = 32
    duration = 2.5
    clients = [server.client() for _ in range(threads_count)]
    failures = []
    written = [0] * threads_count
    calls = [0] * threads_count
    stop_at = time.time() + duration

    def worker(index):
        client = clients[index]
        table = f"t{index}"
        rng = random.Random(index)
        try:
            client.create_table(DatabaseName=db, TableInput=table_input(table))
            batch = 0
            # At least 5 calls each even when the machine is slow: a client that cannot get
            # its calls through shows as a hung thread below, not as a short count.
            while time.time() < stop_at or calls[index] < 5:
                calls[index] += 1
                choice = rng.random()
                if choice < 0.35:
                    values = [[f"{batch}-{j}"] for j in range(5)]
                    result = client.batch_create_partition(
                        DatabaseName=db, TableName=table,
                        PartitionInputList=[partition_input(v) for v in values])
                    assert result.get("Errors", []) == [], result
                    written[index] += 5
                    batch += 1
                elif choice < 0.6 and batch:
                    b, j = rng.randrange(batch), rng.randrange(5)
                    got = client.get_partition(DatabaseName=db, TableName=table,
                                               PartitionValues=[f"{b}-{j}"])["Partition"]
                    assert got["Values"] == [f"{b}-{j}"]
                    assert got["TableName"] == table
                elif choice < 0.8:
                    got = client.get_table(DatabaseName=db, Name=table)["Table"]
                    assert got["Name"] == table
                    assert [c["Name"] for c in got["StorageDescriptor"]["Columns"]] == ["id", "v"]
                elif choice < 0.9:
                    with pytest.raises(client.exceptions.EntityNotFoundException):
                        client.get_table(DatabaseName=db, Name=f"absent{index}")
                else:
                    names = [d["Name"] for d in client.get_databases(MaxResults=100)["DatabaseList"]]
                    assert isinstance(names, list)
            partitions = []
            paginator = client.get_paginator("get_partitions")
            for page in paginator.paginate(DatabaseName=db, TableName=table):
                partitions.extend(page["Partitions"])
            expected = sorted(f"{b}-{j}" for b in range(batch) for j in range(5))
            assert sorted(p["Values"][0] for p in partitions) == expected
        except Exception as e:  # noqa: BLE001 - reported below with the thread's index
            failures.append((index, repr(e)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(threads_count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a client thread hung"
    assert failures == [], failures[:5]
    assert min(calls) >= 5, calls  # every client really took part
    assert sum(written) > 0
    assert server.proc.poll() is None, "the server died: " + server.log()
    tables = glue.get_tables(DatabaseName=db)["TableList"]
    assert len(tables) == threads_count


def test_more_open_connections_than_worker_threads(tmp_path):
    """boto3 keeps its connections open. A server with 4 worker threads must still answer a
    fifth, sixth, ... client at once, not after an idle connection times out."""
    srv = Server(str(tmp_path), extra_args=["--http-threads", "4"]).start()
    try:
        clients = []
        for i in range(12):
            client = srv.client()
            started = time.time()
            assert isinstance(client.get_databases()["DatabaseList"], list)
            elapsed = time.time() - started
            assert elapsed < 3, f"client {i} waited {elapsed:.1f} s for a worker"
            clients.append(client)  # keeps its idle keep-alive connection open
        # Raw connections, each left open after one request.
        conns = []
        for i in range(8):
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=3)
            data = b"{}"
            conn.request("POST", "/", body=data,
                         headers=signed_headers(srv.endpoint, op("GetDatabases"), data))
            response = conn.getresponse()
            assert response.status == 200
            response.read()
            conns.append(conn)
        for conn in conns:
            conn.close()
    finally:
        srv.stop()


# ---- Validation failures leave nothing behind -------------------------------------------------

def test_rejected_batch_create_partition_creates_nothing(server, glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    # 100 valid partitions and one too many: rejected as a whole.
    inputs = [partition_input([str(i)]) for i in range(101)]
    kind, _ = error_of(post(server.endpoint, op("BatchCreatePartition"),
                            {"DatabaseName": db, "TableName": "t", "PartitionInputList": inputs}))
    assert kind == "ValidationException"
    # A valid count, but the last value is longer than the model allows.
    inputs = [partition_input([str(i)]) for i in range(5)] + [partition_input(["v" * 1025])]
    kind, message = error_of(post(server.endpoint, op("BatchCreatePartition"),
                                  {"DatabaseName": db, "TableName": "t", "PartitionInputList": inputs}))
    assert kind == "ValidationException"
    assert "partitionInputList.6.member.values" in message
    # A valid count, but the last element has a member of the wrong type.
    inputs = [partition_input([str(i)]) for i in range(5)] + [{"Values": ["x"], "Parameters": []}]
    kind, _ = error_of(post(server.endpoint, op("BatchCreatePartition"),
                            {"DatabaseName": db, "TableName": "t", "PartitionInputList": inputs}))
    assert kind == "SerializationException"
    assert glue.get_partitions(DatabaseName=db, TableName="t")["Partitions"] == []


def test_rejected_create_table_creates_nothing(server, glue, db):
    bad = table_input("t")
    bad["StorageDescriptor"]["Columns"].append({"Name": "c" * 256, "Type": "int"})
    kind, _ = error_of(post(server.endpoint, op("CreateTable"), {"DatabaseName": db, "TableInput": bad}))
    assert kind == "ValidationException"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="t")
    assert glue.get_tables(DatabaseName=db)["TableList"] == []


# ---- Timestamps ------------------------------------------------------------------------------

def test_timestamps_are_parsed_as_datetimes_by_boto3(glue, db):
    before = utcnow() - datetime.timedelta(seconds=5)
    database = glue.get_database(Name=db)["Database"]
    assert isinstance(database["CreateTime"], datetime.datetime)
    assert database["CreateTime"].tzinfo is not None

    accessed = datetime.datetime(2021, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    tin = table_input("t")
    tin["LastAccessTime"] = accessed
    glue.create_table(DatabaseName=db, TableInput=tin)
    table = glue.get_table(DatabaseName=db, Name="t")["Table"]
    for field in ("CreateTime", "UpdateTime"):
        assert isinstance(table[field], datetime.datetime), field
        assert before <= table[field] <= utcnow() + datetime.timedelta(seconds=5), table[field]
    assert table["LastAccessTime"] == accessed


def test_timestamps_on_the_wire_are_epoch_seconds_and_iso_input_is_accepted(server, glue, db):
    tin = {"Name": "t", "LastAccessTime": "2022-06-07T08:09:10Z"}
    ok(post(server.endpoint, op("CreateTable"), {"DatabaseName": db, "TableInput": tin}))
    raw = ok(post(server.endpoint, op("GetTable"), {"DatabaseName": db, "Name": "t"}))["Table"]
    assert isinstance(raw["CreateTime"], (int, float)) and not isinstance(raw["CreateTime"], bool)
    assert abs(raw["CreateTime"] - time.time()) < 60
    assert raw["LastAccessTime"] == pytest.approx(
        datetime.datetime(2022, 6, 7, 8, 9, 10, tzinfo=datetime.timezone.utc).timestamp())
    table = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert table["LastAccessTime"] == datetime.datetime(2022, 6, 7, 8, 9, 10,
                                                        tzinfo=datetime.timezone.utc)
