"""iam:GetRole and sts:GetCallerIdentity on the server's endpoint, over the AWS query protocol, as
boto3 (and so Apache Airflow's amazon provider, docs/airflow.md) calls them; a job whose Role is
the ARN GetRole answers has that Role's policy (docs/security.md)."""
import json
import os
import shutil
import tempfile

import botocore.exceptions
import pytest

from conftest import ACCOUNT_ID, Server, raises_glue
from jobkit import JobKit, unique


def test_get_role_answers_the_arn_of_a_role_name(server):
    iam = server.client("iam")
    role = iam.get_role(RoleName="local")["Role"]
    assert role["RoleName"] == "local"
    assert role["Arn"] == f"arn:aws:iam::{ACCOUNT_ID}:role/local"
    assert role["Path"] == "/"
    assert role["RoleId"].startswith("AROA") and len(role["RoleId"]) == 21
    assert role["MaxSessionDuration"] == 3600
    assert "default run policy" in role["Description"]
    # boto3 decodes the trust policy document: Glue may assume the role.
    statement = role["AssumeRolePolicyDocument"]["Statement"][0]
    assert statement["Principal"] == {"Service": "glue.amazonaws.com"}
    assert statement["Action"] == "sts:AssumeRole"
    # The same name, the same role.
    assert iam.get_role(RoleName="local")["Role"]["RoleId"] == role["RoleId"]
    assert iam.get_role(RoleName="other")["Role"]["RoleId"] != role["RoleId"]


def test_identity_errors_are_query_protocol_errors(server):
    iam = server.client("iam")
    with raises_glue("ValidationError", "roleName is invalid"):
        iam.get_role(RoleName="no/slashes")
    with raises_glue("InvalidAction", "Could not find operation ListRoles"):
        iam.list_roles()
    stranger = server.client("iam", key="test", secret="wrong")
    with pytest.raises(botocore.exceptions.ClientError) as info:
        stranger.get_role(RoleName="local")
    assert info.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_get_caller_identity_names_the_account(server):
    identity = server.client("sts").get_caller_identity()
    assert identity["Account"] == ACCOUNT_ID
    assert identity["Arn"] == f"arn:aws:iam::{ACCOUNT_ID}:root"


# Calls Glue and STS with the run's own credentials; writes what each answered to --out.
PROBE = """
    import json, os, sys
    import boto3, botocore.config, botocore.exceptions
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    config = botocore.config.Config(retries={"max_attempts": 1})
    endpoint = os.environ["AWS_ENDPOINT_URL_GLUE"]
    glue = boto3.client("glue", endpoint_url=endpoint, config=config)
    results = {"caller": boto3.client("sts", endpoint_url=endpoint, config=config).get_caller_identity()["Arn"]}
    for label, call in (("GetDatabase", lambda: glue.get_database(Name=args["--db"])),
                        ("CreateTable", lambda: glue.create_table(DatabaseName=args["--db"],
                                                                  TableInput={"Name": "t"}))):
        try:
            call()
            results[label] = "ok"
        except botocore.exceptions.ClientError as e:
            results[label] = e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"]
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""


@pytest.fixture()
def narrow_server():
    data_dir = tempfile.mkdtemp(prefix="openglue-identity-")
    config = os.path.join(data_dir, "openglue.conf")
    with open(config, "w") as f:
        f.write("role_policy = narrow: glue:GetDatabase\n")
    srv = Server(data_dir, ["--config", config]).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def test_a_job_role_given_as_its_arn_has_the_policy_of_its_name(narrow_server, tmp_path):
    srv = narrow_server
    glue = srv.client()
    arn = srv.client("iam").get_role(RoleName="narrow")["Role"]
    assert "role_policy lines" in arn["Description"]
    kit = JobKit(srv, glue)
    try:
        glue.create_database(DatabaseInput={"Name": "kept"})
        job = unique("probe")
        glue.create_job(Name=job, Role=arn["Arn"],
                        Command={"Name": "pythonshell", "ScriptLocation": kit.script(PROBE)})
        kit.jobs.append(job)
        assert glue.get_job(JobName=job)["Job"]["Role"] == arn["Arn"]  # kept as given
        out = tmp_path / "results.json"
        run = kit.run(job, timeout=60, Arguments={"--db": "kept", "--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run
        results = json.loads(out.read_text())
        assert results["GetDatabase"] == "ok"
        assert results["CreateTable"].startswith("AccessDeniedException: "), results
        assert "glue:CreateTable" in results["CreateTable"]
        # The run knows itself as a session of the role named by the ARN.
        assert results["caller"] == f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/narrow/{run['Id']}"
    finally:
        kit.close()
