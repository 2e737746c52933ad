"""Raw Glue JSON 1.1 requests for the protocol and auth tests.

Requests are signed with botocore's own SigV4 signer, so a test can break exactly one thing (the
body, a header, the time, the Authorization header) and leave everything else as boto3 sends it.
"""
import datetime
import json
from unittest import mock

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import requests

from conftest import ACCESS_KEY, REGION, SECRET_KEY

CONTENT_TYPE = "application/x-amz-json-1.1"


def encode(body):
    if isinstance(body, (dict, list)):
        return json.dumps(body).encode()
    if isinstance(body, str):
        return body.encode()
    return body


def signed_headers(endpoint, target, body, key=ACCESS_KEY, secret=SECRET_KEY, when=None,
                   headers=None):
    """The headers boto3 would send for `body` to `target` (None: no X-Amz-Target), signed with
    `key`/`secret` at time `when` (a UTC datetime; default now)."""
    all_headers = {"Content-Type": CONTENT_TYPE}
    if target is not None:
        all_headers["X-Amz-Target"] = target
    all_headers.update(headers or {})
    request = botocore.awsrequest.AWSRequest(method="POST", url=endpoint + "/", data=encode(body),
                                             headers=all_headers)
    signer = botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "glue", REGION)
    if when is None:
        signer.add_auth(request)
    else:
        with mock.patch.object(botocore.auth, "get_current_datetime", lambda: when):
            signer.add_auth(request)
    return dict(request.headers.items())


def unsigned_headers(target):
    headers = {"Content-Type": CONTENT_TYPE}
    if target is not None:
        headers["X-Amz-Target"] = target
    return headers


def post(endpoint, target, body, headers=None, session=None, sign=True, **sign_args):
    """POSTs `body` (dict, str or bytes) to the server; returns the requests.Response."""
    data = encode(body)
    if headers is None:
        headers = signed_headers(endpoint, target, data, **sign_args) if sign else unsigned_headers(target)
    return (session or requests).post(endpoint + "/", data=data, headers=headers, timeout=60)


def op(operation):
    return "AWSGlue." + operation


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)
