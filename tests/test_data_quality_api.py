"""Glue Data Quality's rulesets and results end to end through boto3 against the real server, and
the OpenGlue extension operation OpenGluePublishDataQualityResult by which a job run's evaluation
publishes its result (signed as the job runtime signs it: openglue_runtime.bookmarks.signed_call).
See docs/data-quality.md."""
import json
import os
import sys
import time

import botocore.credentials
import pytest

from conftest import ACCESS_KEY, ACCOUNT_ID, REGION, ROOT, SECRET_KEY, all_pages, raises_glue, unique
from jobkit import kit, wait_file, wait_run  # noqa: F401  (kit is a fixture)

sys.path.insert(0, os.path.join(ROOT, "python"))
from openglue_runtime.bookmarks import BookmarkServiceError, signed_call  # noqa: E402

PUBLISH = "OpenGluePublishDataQualityResult"


def ruleset_arn(name):
    return f"arn:aws:glue:{REGION}:{ACCOUNT_ID}:dataQualityRuleset/{name}"


def publish(server, body, key=ACCESS_KEY, secret=SECRET_KEY):
    return signed_call(PUBLISH, body, endpoint=server.endpoint, region=REGION,
                       credentials=botocore.credentials.Credentials(key, secret))


def publish_error(server, body):
    with pytest.raises(BookmarkServiceError) as info:
        publish(server, body)
    return info.value


def as_epoch(value):
    """boto3 parses wire timestamps into datetimes."""
    return value.timestamp()


# ---- Rulesets -------------------------------------------------------------------------------------

def test_ruleset_create_get_update_list_delete(glue):
    name = unique("orders_dq")
    text = 'Rules = [ IsComplete "id", ColumnValues "status" in ["a", "b"], RowCount > 0 ]'
    before = time.time()
    created = glue.create_data_quality_ruleset(
        Name=name, Description="checks of orders", Ruleset=text,
        TargetTable={"DatabaseName": "sales", "TableName": "orders"},
        Tags={"team": "etl", "env": "test"})
    assert created["Name"] == name

    got = glue.get_data_quality_ruleset(Name=name)
    assert got["Name"] == name
    assert got["Description"] == "checks of orders"
    assert got["Ruleset"] == text
    assert got["TargetTable"] == {"DatabaseName": "sales", "TableName": "orders"}
    assert "RecommendationRunId" not in got
    assert "DataQualitySecurityConfiguration" not in got
    assert before - 1 <= as_epoch(got["CreatedOn"]) <= time.time() + 1
    assert got["LastModifiedOn"] == got["CreatedOn"]

    # Tags live on the ruleset's ARN.
    assert glue.get_tags(ResourceArn=ruleset_arn(name))["Tags"] == {"team": "etl", "env": "test"}
    glue.tag_resource(ResourceArn=ruleset_arn(name), TagsToAdd={"owner": "me"})
    assert glue.get_tags(ResourceArn=ruleset_arn(name))["Tags"]["owner"] == "me"

    # The list: RuleCount counts the top-level rules; filters by table and tags.
    listed = [r for r in all_pages(glue.list_data_quality_rulesets, "Rulesets") if r["Name"] == name]
    assert len(listed) == 1
    assert listed[0]["RuleCount"] == 3
    assert listed[0]["Description"] == "checks of orders"
    assert listed[0]["TargetTable"] == {"DatabaseName": "sales", "TableName": "orders"}
    assert listed[0]["CreatedOn"] == got["CreatedOn"]
    by_name = glue.list_data_quality_rulesets(Filter={"Name": name})["Rulesets"]
    assert [r["Name"] for r in by_name] == [name]
    by_tag = glue.list_data_quality_rulesets(Tags={"owner": "me"})["Rulesets"]
    assert name in [r["Name"] for r in by_tag]
    assert name not in [r["Name"] for r in glue.list_data_quality_rulesets(Tags={"owner": "you"})["Rulesets"]]
    other_table = glue.list_data_quality_rulesets(
        Filter={"Name": name, "TargetTable": {"DatabaseName": "sales", "TableName": "customers"}})
    assert other_table["Rulesets"] == []

    time.sleep(1.1)  # so LastModifiedOn moves on a wall clock of second-level precision
    updated = glue.update_data_quality_ruleset(Name=name, Description="v2",
                                               Ruleset='Rules = [ IsUnique "id" ]')
    assert (updated["Name"], updated["Description"], updated["Ruleset"]) == (
        name, "v2", 'Rules = [ IsUnique "id" ]')
    got2 = glue.get_data_quality_ruleset(Name=name)
    assert got2["Ruleset"] == 'Rules = [ IsUnique "id" ]'
    assert got2["CreatedOn"] == got["CreatedOn"]
    assert got2["LastModifiedOn"] > got["LastModifiedOn"]
    listed = glue.list_data_quality_rulesets(Filter={"Name": name})["Rulesets"]
    assert listed[0]["RuleCount"] == 1
    assert glue.list_data_quality_rulesets(
        Filter={"Name": name, "LastModifiedAfter": got["LastModifiedOn"]})["Rulesets"][0]["Name"] == name

    glue.delete_data_quality_ruleset(Name=name)
    with raises_glue("EntityNotFoundException", name):
        glue.get_data_quality_ruleset(Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_tags(ResourceArn=ruleset_arn(name))
    assert glue.list_data_quality_rulesets(Filter={"Name": name})["Rulesets"] == []


def test_ruleset_errors(glue):
    name = unique("dq")
    glue.create_data_quality_ruleset(Name=name, Ruleset="Rules = [ RowCount > 1 ]")
    try:
        with raises_glue("AlreadyExistsException", name, "already exists"):
            glue.create_data_quality_ruleset(Name=name, Ruleset="Rules = [ RowCount > 2 ]")
        assert glue.get_data_quality_ruleset(Name=name)["Ruleset"] == "Rules = [ RowCount > 1 ]"
        with raises_glue("InvalidInputException", "not followed by a `[`"):
            glue.update_data_quality_ruleset(Name=name, Ruleset="Rules IsComplete \"x\"")
        assert glue.get_data_quality_ruleset(Name=name)["Ruleset"] == "Rules = [ RowCount > 1 ]"
    finally:
        glue.delete_data_quality_ruleset(Name=name)
    missing = unique("missing")
    for call in (lambda: glue.get_data_quality_ruleset(Name=missing),
                 lambda: glue.update_data_quality_ruleset(Name=missing, Description="x"),
                 lambda: glue.delete_data_quality_ruleset(Name=missing)):
        with raises_glue("EntityNotFoundException", missing, "not found"):
            call()
    with raises_glue("InvalidInputException", "no `Rules"):
        glue.create_data_quality_ruleset(Name=unique("bad"), Ruleset='IsComplete "id"')
    with raises_glue("InvalidInputException", "never closed"):
        glue.create_data_quality_ruleset(Name=unique("bad"), Ruleset='Rules = [ IsComplete "id"')
    with raises_glue("InvalidInputException", "empty"):
        glue.create_data_quality_ruleset(Name=unique("bad"), Ruleset="   ")


def test_ruleset_request_validation(raw_glue):
    # The service model's constraints: Ruleset is required.
    with raises_glue("ValidationException", "ruleset"):
        raw_glue.create_data_quality_ruleset(Name=unique("dq"))


# ---- Results --------------------------------------------------------------------------------------

def result_body(job, run_id, started, score, table):
    return {
        "JobName": job,
        "JobRunId": run_id,
        "EvaluationContext": "EvaluateDataQuality_node1",
        "RulesetName": "orders_dq",
        "Ruleset": 'Rules = [ IsComplete "id", ColumnValues "v" > 0 ]',
        "Score": score,
        "StartedOn": started,
        "CompletedOn": started + 4,
        "DataSource": {"GlueTable": {"DatabaseName": "sales", "TableName": table}},
        "RuleResults": [
            {"Name": "Rule_1", "Description": 'IsComplete "id"', "Result": "PASS",
             "EvaluatedMetrics": {"Column.id.Completeness": 1.0}, "EvaluatedRule": 'IsComplete "id"'},
            {"Name": "Rule_2", "Description": 'ColumnValues "v" > 0', "Result": "FAIL",
             "EvaluationMessage": "Value: -1.0 does not meet the constraint requirement!",
             "EvaluatedMetrics": {"Column.v.Minimum": -1.0}, "EvaluatedRule": 'ColumnValues "v" > 0',
             "Labels": {"severity": "high"}},
        ],
        "AnalyzerResults": [{"Name": "RowCount", "EvaluatedMetrics": {"Dataset.*.RowCount": 10.0}}],
    }


def expected_result(body, result_id):
    """What GetDataQualityResult returns for a published `body`, as boto3 parses it."""
    out = {k: v for k, v in body.items() if k not in ("Ruleset", "StartedOn", "CompletedOn")}
    out["ResultId"] = result_id
    return out


def test_publish_then_get_list_and_batch_get(glue, server):
    job = unique("dqjob")
    started = float(int(time.time()) - 3600)
    first = result_body(job, "jr_first", started, 0.5, "orders")
    second = result_body(job, "jr_second", started + 600, 1.0, "customers")
    second["RuleResults"] = second["RuleResults"][:1]
    id1 = publish(server, first)["ResultId"]
    id2 = publish(server, second)["ResultId"]
    for result_id in (id1, id2):
        assert result_id.startswith("dqresult-") and len(result_id) == len("dqresult-") + 40
        assert all(c in "0123456789abcdef" for c in result_id[len("dqresult-"):])
    assert id1 != id2

    got = glue.get_data_quality_result(ResultId=id1)
    got.pop("ResponseMetadata")
    assert as_epoch(got.pop("StartedOn")) == started
    assert as_epoch(got.pop("CompletedOn")) == started + 4
    # Every result is a profile of statistics (docs/data-quality.md, "Statistics").
    profile1 = got.pop("ProfileId")
    assert profile1.startswith("dqprofile-") and len(profile1) == len("dqprofile-") + 40
    assert got == expected_result(first, id1)

    # Newest first; the JobName filter finds exactly these two.
    listed = glue.list_data_quality_results(Filter={"JobName": job})["Results"]
    assert [r["ResultId"] for r in listed] == [id2, id1]
    assert listed[0]["JobRunId"] == "jr_second"
    assert listed[0]["DataSource"] == {"GlueTable": {"DatabaseName": "sales", "TableName": "customers"}}
    assert as_epoch(listed[0]["StartedOn"]) == started + 600
    assert set(listed[1]) == {"ResultId", "DataSource", "JobName", "JobRunId", "StartedOn"}
    after = glue.list_data_quality_results(Filter={"JobName": job, "StartedAfter": started + 1})["Results"]
    assert [r["ResultId"] for r in after] == [id2]
    by_run = glue.list_data_quality_results(Filter={"JobRunId": "jr_first", "JobName": job})["Results"]
    assert [r["ResultId"] for r in by_run] == [id1]
    by_table = glue.list_data_quality_results(Filter={
        "JobName": job, "DataSource": {"GlueTable": {"DatabaseName": "sales", "TableName": "orders"}}})
    assert [r["ResultId"] for r in by_table["Results"]] == [id1]
    # Paged by hand, one a page: the same two, in the same order.
    pages = all_pages(glue.list_data_quality_results, "Results", Filter={"JobName": job}, MaxResults=1)
    assert [r["ResultId"] for r in pages] == [id2, id1]

    unknown = "dqresult-" + "0" * 40
    batch = glue.batch_get_data_quality_result(ResultIds=[id2, unknown, id1])
    assert [r["ResultId"] for r in batch["Results"]] == [id2, id1]
    assert batch["ResultsNotFound"] == [unknown]
    r2 = batch["Results"][0]
    assert as_epoch(r2.pop("StartedOn")) == started + 600
    r2.pop("CompletedOn")
    assert r2.pop("ProfileId") not in ("", profile1)
    assert r2 == expected_result(second, id2)
    assert glue.batch_get_data_quality_result(ResultIds=[id1])["ResultsNotFound"] == []

    with raises_glue("EntityNotFoundException", unknown):
        glue.get_data_quality_result(ResultId=unknown)


def test_publish_refuses_bad_members(server):
    base = result_body("j", "jr_x", 1772323200.0, 0.5, "orders")
    cases = [
        ({"Score": 1.5}, "score"),
        ({"Score": None}, "Score is required"),
        ({"StartedOn": None}, "StartedOn is required"),
        ({"CompletedOn": 1.0}, "CompletedOn is before StartedOn"),
        ({"RuleResults": None}, "RuleResults is required"),
        ({"RuleResults": [{"Name": "r", "Result": "MAYBE"}]}, "result"),
        ({"DataSource": {"GlueTable": {"DatabaseName": "sales"}}}, "tableName"),
        ({"Scroe": 1}, "unknown member Scroe"),
    ]
    for change, fragment in cases:
        body = dict(base)
        for key, value in change.items():
            if value is None:
                body.pop(key)
            else:
                body[key] = value
        error = publish_error(server, body)
        assert error.code == "InvalidInputException", (change, error)
        assert fragment.lower() in error.message.lower(), (change, error.message)
        assert PUBLISH in error.message


def test_results_survive_a_restart(fresh_server):
    glue = fresh_server.client()
    glue.create_data_quality_ruleset(Name="kept", Ruleset="Rules = [ RowCount > 0 ]",
                                     Tags={"k": "v"})
    result_id = publish(fresh_server, result_body("job", "jr_1", 1772323200.0, 0.5, "t"))["ResultId"]
    fresh_server.stop()
    fresh_server.start()
    glue = fresh_server.client()
    assert glue.get_data_quality_ruleset(Name="kept")["Ruleset"] == "Rules = [ RowCount > 0 ]"
    assert glue.get_tags(ResourceArn=ruleset_arn("kept"))["Tags"] == {"k": "v"}
    assert glue.get_data_quality_result(ResultId=result_id)["Score"] == 0.5
    assert [r["ResultId"] for r in glue.list_data_quality_results()["Results"]] == [result_id]


# ---- A job run publishes with its own credentials -------------------------------------------------

RUN_SCRIPT = '''
import json, os, sys, time
from openglue_runtime.bookmarks import BookmarkServiceError, signed_call
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
body = {"Score": 1.0, "StartedOn": time.time() - 1, "CompletedOn": time.time(),
        "RuleResults": [{"Name": "Rule_1", "Result": "PASS"}]}
result = {"run_id": os.environ["OPENGLUE_JOB_RUN_ID"]}
result["own"] = signed_call("OpenGluePublishDataQualityResult", body)
try:
    signed_call("OpenGluePublishDataQualityResult", dict(body, JobName="someone_else"))
    result["other"] = "allowed"
except BookmarkServiceError as error:
    result["other"] = error.code
out = args["--out"]
with open(os.path.join(out, "result.json.tmp"), "w") as f:
    json.dump(result, f)
os.rename(os.path.join(out, "result.json.tmp"), os.path.join(out, "result.json"))
'''


def test_a_run_publishes_as_its_own_run(glue, kit, tmp_path):
    job = kit.job(RUN_SCRIPT, command="pythonshell")
    out = tmp_path / unique("out")
    out.mkdir()
    os.chmod(out, 0o777)
    run_id = kit.start(job, Arguments={"--out": str(out)})
    result = json.loads(wait_file(str(out / "result.json"), timeout=60))
    assert wait_run(glue, job, run_id, timeout=60)["JobRunState"] == "SUCCEEDED"
    assert result["run_id"] == run_id
    assert result["other"] == "AccessDeniedException"
    got = glue.get_data_quality_result(ResultId=result["own"]["ResultId"])
    assert (got["JobName"], got["JobRunId"]) == (job, run_id)
    listed = glue.list_data_quality_results(Filter={"JobName": job})["Results"]
    assert [r["ResultId"] for r in listed] == [result["own"]["ResultId"]]
