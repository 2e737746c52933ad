"""SigV4 authentication, credentials configuration and the command line, against the real server.

Raw requests are signed with botocore's signer (tests/wire.py), then exactly one thing is broken.
"""
import datetime
import os
import shutil
import subprocess
import tempfile

import botocore.exceptions
import pytest

from conftest import BIN, Server
from wire import CONTENT_TYPE, op, post, signed_headers, utcnow


def error_of(response, status):
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].split(";")[0].strip() == CONTENT_TYPE
    body = response.json()
    assert body["message"], body
    return body["__type"], body["message"]


def client_error(call, **kwargs):
    with pytest.raises(botocore.exceptions.ClientError) as info:
        call(**kwargs)
    response = info.value.response
    return (response["Error"]["Code"], response["Error"]["Message"],
            response["ResponseMetadata"]["HTTPStatusCode"])


@pytest.fixture()
def start_server():
    """Starts servers of the test's own (extra flags and environment); stops them after."""
    started = []

    def start(extra_args=(), env=None):
        data_dir = tempfile.mkdtemp(prefix="openglue-auth-")
        srv = Server(data_dir, extra_args=extra_args, env=env)
        started.append(srv)
        return srv.start()

    yield start
    for srv in started:
        srv.stop()
        shutil.rmtree(srv.data_dir, ignore_errors=True)


# ---- boto3 -----------------------------------------------------------------------------------

def test_default_credentials_work(server):
    glue = server.client()
    assert isinstance(glue.get_databases()["DatabaseList"], list)
    response = post(server.endpoint, op("GetDatabases"), {})
    assert response.status_code == 200, response.text


def test_wrong_secret_is_invalid_signature(server):
    code, message, status = client_error(server.client(secret="not-the-secret").get_databases)
    assert (code, status) == ("InvalidSignatureException", 403)
    assert "signature we calculated does not match" in message


def test_unknown_access_key_is_unrecognized_client(server):
    code, message, status = client_error(server.client(key="AKIDUNKNOWN", secret="test").get_databases)
    assert (code, status) == ("UnrecognizedClientException", 403)
    assert "security token" in message


def test_refused_write_is_not_applied(server, glue):
    name = "refused_" + os.urandom(5).hex()
    code, _, _ = client_error(server.client(secret="wrong").create_database,
                              DatabaseInput={"Name": name})
    assert code == "InvalidSignatureException"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name=name)


# ---- Tampering ---------------------------------------------------------------------------------

def test_body_tampered_after_signing(server, glue):
    signed_name = "signed_" + os.urandom(4).hex()
    sent_name = "sent___" + os.urandom(4).hex()
    assert len(signed_name) == len(sent_name)
    headers = signed_headers(server.endpoint, op("CreateDatabase"),
                             f'{{"DatabaseInput": {{"Name": "{signed_name}"}}}}'.encode())
    response = post(server.endpoint, op("CreateDatabase"),
                    f'{{"DatabaseInput": {{"Name": "{sent_name}"}}}}'.encode(), headers=headers)
    kind, _ = error_of(response, 403)
    assert kind == "InvalidSignatureException"
    for name in (signed_name, sent_name):
        with pytest.raises(glue.exceptions.EntityNotFoundException):
            glue.get_database(Name=name)


def test_signed_header_tampered_after_signing(server):
    headers = signed_headers(server.endpoint, op("GetDatabases"), b"{}")
    headers["X-Amz-Target"] = op("GetTables")
    kind, message = error_of(post(server.endpoint, None, b"{}", headers=headers), 403)
    assert kind == "InvalidSignatureException"
    assert "signature we calculated does not match" in message


def test_declared_payload_hash_must_match_body(server):
    headers = signed_headers(server.endpoint, op("GetDatabases"), b"{}",
                             headers={"X-Amz-Content-Sha256": "0" * 64})
    kind, _ = error_of(post(server.endpoint, None, b"{}", headers=headers), 403)
    assert kind == "InvalidSignatureException"


# ---- Missing and malformed Authorization ------------------------------------------------------

def test_missing_authorization(server):
    kind, message = error_of(post(server.endpoint, op("GetDatabases"), {}, sign=False), 403)
    assert kind == "MissingAuthenticationTokenException"
    assert message == "Missing Authentication Token"


def _with_authorization(server, rewrite):
    headers = signed_headers(server.endpoint, op("GetDatabases"), b"{}")
    headers["Authorization"] = rewrite(headers["Authorization"])
    return post(server.endpoint, None, b"{}", headers=headers)


def _drop_part(name):
    def rewrite(authorization):
        algorithm, rest = authorization.split(" ", 1)
        parts = [p for p in rest.split(", ") if not p.startswith(name + "=")]
        assert len(parts) == 2
        return algorithm + " " + ", ".join(parts)
    return rewrite


@pytest.mark.parametrize("rewrite,fragment", [
    (_drop_part("Signature"), "'Signature'"),
    (_drop_part("Credential"), "'Credential'"),
    (_drop_part("SignedHeaders"), "'SignedHeaders'"),
    (lambda a: a.replace("/us-east-1/glue/aws4_request", "/us-east-1/aws4_request"), "Credential"),
    (lambda a: a.replace("/aws4_request", "/aws5_request"), "terminator"),
    (lambda a: a.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1"), "AWS4-HMAC-SHA256"),
    (lambda a: a.replace("SignedHeaders=content-type;host;", "SignedHeaders=content-type;"), "Host"),
], ids=["no-signature", "no-credential", "no-signed-headers", "short-scope", "bad-terminator",
        "bad-algorithm", "host-not-signed"])
def test_malformed_authorization_is_incomplete_signature(server, rewrite, fragment):
    kind, message = error_of(_with_authorization(server, rewrite), 400)
    assert kind == "IncompleteSignatureException", message
    assert fragment in message


def test_bad_credential_date_is_incomplete_signature(server):
    today = utcnow().strftime("%Y%m%d")
    kind, message = error_of(_with_authorization(server, lambda a: a.replace(today, "2024-1-1")), 400)
    assert kind == "IncompleteSignatureException"
    assert "yyyymmdd" in message


def test_missing_date_is_incomplete_signature(server):
    headers = signed_headers(server.endpoint, op("GetDatabases"), b"{}")
    del headers["X-Amz-Date"]
    kind, message = error_of(post(server.endpoint, None, b"{}", headers=headers), 400)
    assert kind == "IncompleteSignatureException"
    assert "X-Amz-Date" in message


# ---- Request time ------------------------------------------------------------------------------

def test_request_20_minutes_old_is_expired(server):
    when = utcnow() - datetime.timedelta(minutes=20)
    kind, message = error_of(post(server.endpoint, op("GetDatabases"), {}, when=when), 403)
    assert kind == "InvalidSignatureException"
    assert message.startswith("Signature expired"), message
    assert when.strftime("%Y%m%dT%H%M%SZ") in message


def test_request_20_minutes_ahead_is_not_yet_current(server):
    when = utcnow() + datetime.timedelta(minutes=20)
    kind, message = error_of(post(server.endpoint, op("GetDatabases"), {}, when=when), 403)
    assert kind == "InvalidSignatureException"
    assert message.startswith("Signature not yet current"), message


@pytest.mark.parametrize("minutes", [-10, 10])
def test_request_within_allowed_skew_is_accepted(server, minutes):
    when = utcnow() + datetime.timedelta(minutes=minutes)
    response = post(server.endpoint, op("GetDatabases"), {}, when=when)
    assert response.status_code == 200, response.text


def test_clock_skew_is_configurable(start_server):
    srv = start_server(["--max-clock-skew-seconds", "60"])
    when = utcnow() - datetime.timedelta(minutes=3)
    kind, message = error_of(post(srv.endpoint, op("GetDatabases"), {}, when=when), 403)
    assert kind == "InvalidSignatureException" and message.startswith("Signature expired")
    assert post(srv.endpoint, op("GetDatabases"), {}).status_code == 200


# ---- Configured authentication -----------------------------------------------------------------

def test_auth_none_accepts_unsigned_requests(start_server):
    srv = start_server(["--auth", "none"])
    response = post(srv.endpoint, op("CreateDatabase"), {"DatabaseInput": {"Name": "open"}}, sign=False)
    assert response.status_code == 200, response.text
    response = post(srv.endpoint, op("GetDatabase"), {"Name": "open"}, sign=False)
    assert response.status_code == 200 and response.json()["Database"]["Name"] == "open"
    # Any credentials are fine too.
    assert srv.client(key="anyone", secret="anything").get_database(Name="open")["Database"]["Name"] == "open"


def test_config_file_credentials(start_server, tmp_path):
    config = tmp_path / "openglue.conf"
    config.write_text("# credentials for the test\naccess_key_id = AKFILE\nsecret_access_key = SKFILE\n")
    srv = start_server(["--config", str(config)])
    assert isinstance(srv.client(key="AKFILE", secret="SKFILE").get_databases()["DatabaseList"], list)
    code, _, status = client_error(srv.client().get_databases)
    assert (code, status) == ("UnrecognizedClientException", 403)
    code, _, _ = client_error(srv.client(key="AKFILE", secret="test").get_databases)
    assert code == "InvalidSignatureException"


def test_environment_credentials(start_server):
    srv = start_server(env={"OPENGLUE_ACCESS_KEY_ID": "AKENV", "OPENGLUE_SECRET_ACCESS_KEY": "SKENV"})
    assert isinstance(srv.client(key="AKENV", secret="SKENV").get_databases()["DatabaseList"], list)
    code, _, status = client_error(srv.client().get_databases)
    assert (code, status) == ("UnrecognizedClientException", 403)
    code, _, _ = client_error(srv.client(key="AKENV", secret="test").get_databases)
    assert code == "InvalidSignatureException"


def test_environment_wins_over_config_file(start_server, tmp_path):
    config = tmp_path / "openglue.conf"
    config.write_text("access_key_id = AKFILE\nsecret_access_key = SKFILE\n")
    srv = start_server(["--config", str(config)],
                       env={"OPENGLUE_ACCESS_KEY_ID": "AKENV", "OPENGLUE_SECRET_ACCESS_KEY": "SKENV"})
    assert isinstance(srv.client(key="AKENV", secret="SKENV").get_databases()["DatabaseList"], list)
    code, _, _ = client_error(srv.client(key="AKFILE", secret="SKFILE").get_databases)
    assert code == "UnrecognizedClientException"


def test_unrelated_openglue_environment_variables_are_ignored(start_server):
    # `make test` sets OPENGLUE_BIN for the test suite; the server inherits it.
    srv = start_server(env={"OPENGLUE_BIN": "/somewhere/openglue", "OPENGLUE_SOMETHING_ELSE": "x"})
    assert isinstance(srv.client().get_databases()["DatabaseList"], list)


# ---- Command line --------------------------------------------------------------------------------

def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=30)


def test_help_exits_zero_with_usage():
    result = run("--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout and "serve" in result.stdout


def test_serve_help_exits_zero_with_options():
    result = run("serve", "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout
    for flag in ("--port", "--data-dir", "--config", "--auth", "--access-key-id"):
        assert flag in result.stdout


@pytest.mark.parametrize("args,fragments", [
    (["serve", "--no-such-flag", "1"], ["unknown", "no-such-flag"]),
    (["serve", "--no-such-flag"], ["unknown option --no-such-flag"]),
    (["serve", "--port"], ["--port needs a value"]),
    (["serve", "--port", "seventy"], ["port", "seventy"]),
    (["serve", "--auth", "maybe"], ["auth", "sigv4 or none"]),
    (["serve", "stray"], ["unexpected argument 'stray'"]),
    (["no-such-command"], ["unknown command 'no-such-command'"]),
])
def test_bad_command_line_exits_nonzero_with_message(tmp_path, args, fragments):
    # --data-dir comes last, so a flag missing its value must not swallow it.
    result = run(*args, *(["--data-dir", str(tmp_path)] if args[0] == "serve" else []))
    assert result.returncode != 0
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert "listening" not in result.stdout + result.stderr


def test_unreadable_config_file_exits_nonzero(tmp_path):
    result = run("serve", "--config", str(tmp_path / "missing.conf"), "--data-dir", str(tmp_path))
    assert result.returncode != 0
    assert "missing.conf" in result.stderr


def test_bad_config_line_names_file_and_line(tmp_path):
    config = tmp_path / "bad.conf"
    config.write_text("port = 0\nthis line has no equals sign\n")
    result = run("serve", "--config", str(config), "--data-dir", str(tmp_path))
    assert result.returncode != 0
    assert "bad.conf:2" in result.stderr
