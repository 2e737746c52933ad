#!/usr/bin/env python3
"""Writes the seed corpora of src/api/request_fuzz.cc and src/api/sigv4_fuzz.cc.

request/: one file per case, "<Operation>\\n<JSON body>": real requests of every kind the
catalog and job services take, plus the hostile shapes the security review sent.
sigv4/: "METHOD PATH?QUERY\\nName: value...\\n\\nbody" requests signed by botocore with its clock
pinned to 2026-03-14T09:26:53Z (the fuzz target's clock), valid and broken.

Usage: python3 src/api/testdata/fuzz/make_seeds.py   (rewrites the files; deterministic)
Files found by fuzzing (crash-*, or named after the defect) are kept: only seed-* files are
rewritten.
"""
import datetime
import json
import os
from unittest import mock

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "AKIAOPENGLUEEXAMPLE1"
SECRET = "openglue/Secret+Key/EXAMPLE0123456789abcd"
WHEN = datetime.datetime(2026, 3, 14, 9, 26, 53)

COLUMNS = [{"Name": "id", "Type": "bigint"}, {"Name": "name", "Type": "string"}]
TABLE = {"Name": "orders", "StorageDescriptor": {"Columns": COLUMNS, "Location": "s3://b/orders/"},
         "PartitionKeys": [{"Name": "year", "Type": "string"}, {"Name": "month", "Type": "int"}],
         "TableType": "EXTERNAL_TABLE", "Parameters": {"classification": "parquet"}}

REQUESTS = [
    ("CreateDatabase", {"DatabaseInput": {"Name": "sales", "Description": "d",
                                          "Parameters": {"k": "v"}}}),
    ("GetDatabase", {"Name": "sales"}),
    ("GetDatabases", {"MaxResults": 10}),
    ("UpdateDatabase", {"Name": "sales", "DatabaseInput": {"Name": "sales", "Description": "e"}}),
    ("CreateTable", {"DatabaseName": "sales", "TableInput": TABLE}),
    ("GetTable", {"DatabaseName": "sales", "Name": "orders"}),
    ("GetTables", {"DatabaseName": "sales", "Expression": "ord*|x.*", "MaxResults": 5}),
    ("UpdateTable", {"DatabaseName": "sales", "TableInput": TABLE, "SkipArchive": False}),
    ("GetTableVersions", {"DatabaseName": "sales", "TableName": "orders"}),
    ("BatchCreatePartition", {"DatabaseName": "sales", "TableName": "orders", "PartitionInputList": [
        {"Values": ["2024", "1"], "StorageDescriptor": {"Columns": COLUMNS,
                                                       "Location": "s3://b/orders/2024/1/"}},
        {"Values": ["2024", "2"]}]}),
    ("GetPartitions", {"DatabaseName": "sales", "TableName": "orders",
                       "Expression": "year = '2024' AND month IN (1, 2) OR (month) BETWEEN 1 AND 3e1",
                       "Segment": {"SegmentNumber": 0, "TotalSegments": 2}}),
    ("GetPartition", {"DatabaseName": "sales", "TableName": "orders", "PartitionValues": ["2024", "1"]}),
    ("BatchGetPartition", {"DatabaseName": "sales", "TableName": "orders",
                           "PartitionsToGet": [{"Values": ["2024", "1"]}, {"Values": ["x", "y"]}]}),
    ("BatchDeletePartition", {"DatabaseName": "sales", "TableName": "orders",
                              "PartitionsToDelete": [{"Values": ["2024", "2"]}]}),
    ("CreatePartitionIndex", {"DatabaseName": "sales", "TableName": "orders",
                              "PartitionIndex": {"Keys": ["year"], "IndexName": "by_year"}}),
    ("CreateUserDefinedFunction", {"DatabaseName": "sales", "FunctionInput": {
        "FunctionName": "f", "ClassName": "a.B", "OwnerName": "o", "OwnerType": "USER",
        "ResourceUris": [{"ResourceType": "JAR", "Uri": "s3://b/f.jar"}]}}),
    ("GetUserDefinedFunctions", {"Pattern": "(a+)+c", "DatabaseName": "sales"}),
    ("UpdateColumnStatisticsForTable", {"DatabaseName": "sales", "TableName": "orders",
                                        "ColumnStatisticsList": [{
                                            "ColumnName": "id", "ColumnType": "bigint",
                                            "AnalyzedTime": 1700000000,
                                            "StatisticsData": {"Type": "LONG", "LongColumnStatisticsData": {
                                                "MinimumValue": 1, "MaximumValue": 9,
                                                "NumberOfNulls": 0, "NumberOfDistinctValues": 9}}}]}),
    ("TagResource", {"ResourceArn": "arn:aws:glue:us-east-1:000000000000:database/sales",
                     "TagsToAdd": {"team": "a"}}),
    ("GetTags", {"ResourceArn": "arn:aws:glue:us-east-1:000000000000:job/orders"}),
    ("CreateJob", {"Name": "orders", "Role": "local", "Command": {"Name": "pythonshell",
                   "ScriptLocation": "s3://scripts/orders.py", "PythonVersion": "3"},
                   "DefaultArguments": {"--job-bookmark-option": "job-bookmark-enable"},
                   "ExecutionProperty": {"MaxConcurrentRuns": 2}, "MaxRetries": 1, "Timeout": 5}),
    ("GetJob", {"JobName": "orders"}),
    ("UpdateJob", {"JobName": "orders", "JobUpdate": {"Role": "local", "Command": {
        "Name": "glueetl", "ScriptLocation": "s3://scripts/../../etc/passwd"}}}),
    ("StartJobRun", {"JobName": "orders", "Arguments": {"--day": "1"}, "Timeout": None}),
    ("GetJobRuns", {"JobName": "orders", "MaxResults": 3}),
    ("BatchStopJobRun", {"JobName": "orders", "JobRunIds": ["jr_0"]}),
    ("ListJobs", {"Tags": {"team": "a"}}),
    ("DeleteTable", {"DatabaseName": "sales", "Name": "orders"}),
    ("DeleteDatabase", {"Name": "sales"}),
    ("Logs_20140328.GetLogEvents", {"logGroupName": "/aws-glue/jobs/output", "logStreamName": "jr_0"}),
    ("Logs_20140328.FilterLogEvents", {"logGroupName": "/aws-glue/jobs/error",
                                       "filterPattern": "?ERROR ?\"Trace back\" -x"}),
]
RAW = [
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "\xc3\xa9\xc3"}}'),
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "a\\u0000b"}}'),
    ("CreateJob", b'{"Name":"j","Role":"r","Command":{"Name":"x"},"ExecutionProperty":{"MaxConcurrentRuns":null}}'),
    ("GetDatabases", b'{"MaxResults": 1e999}'),
    ("GetDatabases", b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['),
    ("GetTable", b'{"DatabaseName": 1, "Name": {"x": []}}'),
    ("\xff\xfe", b"{}"),
    ("GetTables", b""),
]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def request_seeds():
    out = os.path.join(HERE, "request")
    os.makedirs(out, exist_ok=True)
    n = 0
    for op, body in REQUESTS:
        n += 1
        write(os.path.join(out, f"seed-{n:02d}-{op.split('.')[-1]}"),
              op.encode() + b"\n" + json.dumps(body, sort_keys=True).encode())
    for op, body in RAW:
        n += 1
        name = op.encode("latin-1") if isinstance(op, str) else op
        write(os.path.join(out, f"seed-{n:02d}-raw"), name + b"\n" + body)


def signed(auth_class, method, url, headers, body, **kwargs):
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body)
    with mock.patch("botocore.auth.get_current_datetime", return_value=WHEN):
        auth_class(Credentials(KEY, SECRET), "glue", "us-east-1", **kwargs).add_auth(request)
    target = request.url.split("://", 1)[1]
    target = target[target.index("/"):] if "/" in target else "/"
    lines = [f"{method} {target}"] + [f"{k}: {v}" for k, v in request.headers.items()]
    lines.append("Host: 127.0.0.1:4690")
    return ("\n".join(lines) + "\n\n").encode() + (body or b"")


def sigv4_seeds():
    out = os.path.join(HERE, "sigv4")
    os.makedirs(out, exist_ok=True)
    glue_headers = [("X-Amz-Target", "AWSGlue.GetDatabases"),
                    ("Content-Type", "application/x-amz-json-1.1")]
    valid = signed(SigV4Auth, "POST", "http://127.0.0.1:4690/", glue_headers, b'{"MaxResults": 10}')
    seeds = {
        "seed-01-valid-post": valid,
        "seed-02-valid-query": signed(SigV4Auth, "GET",
                                      "http://127.0.0.1:4690/a/./b//c/../d%20e/~x?b=2&a=z&a=%2Fy&c",
                                      [("X-Spaced", "  a   b \t c  ")], b""),
        "seed-03-date-header": signed(SigV4Auth, "POST", "http://127.0.0.1:4690/",
                                      [("Date", "x")] + glue_headers, b"{}"),
        "seed-04-presigned": signed(SigV4QueryAuth, "GET", "http://127.0.0.1:4690/?Action=x",
                                    [], b"", expires=300),
        "seed-05-tampered-body": valid[:-3] + b"99}",
        "seed-06-no-auth": b"POST /\nHost: h\nX-Amz-Date: 20260314T092653Z\n\n{}",
        "seed-07-bad-scope": b"POST /\nHost: h\nX-Amz-Date: 20260314T092653Z\nAuthorization: "
                             b"AWS4-HMAC-SHA256 Credential=AKIAOPENGLUEEXAMPLE1/2026/us/glue, "
                             b"SignedHeaders=host;;x-amz-date, Signature=zz\n\n",
        "seed-08-duplicate-params": b"GET /?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Algorithm=x&"
                                    b"X-Amz-Credential=%2F%2F%2F&X-Amz-Expires=-1&X-Amz-Date=9\n"
                                    b"Host: h\nAuthorization: AWS4-HMAC-SHA256 ,,,,=\n\n",
    }
    for name, data in seeds.items():
        write(os.path.join(out, name), data)


if __name__ == "__main__":
    request_seeds()
    sigv4_seeds()
