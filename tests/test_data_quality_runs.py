"""Glue Data Quality's evaluation runs and recommendation runs end to end through boto3 against
the real server (docs/data-quality.md, "Evaluation and recommendation runs"): a CSV catalog table
with known rows, two rulesets (one passing, one with failing rules) evaluated by one
StartDataQualityRulesetEvaluationRun, the results it published (RulesetName,
RulesetEvaluationRunId, the rules' outcomes and metrics computed here from the rows), listing
with filters, a cancelled run, the errors of Start, the run's log stream, and a recommendation
run whose ruleset is stored (CreatedRulesetName) and holds on the table it came from."""
import os
import time
import uuid

import pytest

from conftest import raises_glue, unique
from jobkit import log_messages, srv, wait_for  # noqa: F401  (srv is a fixture)

ROWS = [(1, "ann", 10.5, "shipped"), (2, "bob", 20.0, "shipped"), (3, "cy", 30.0, "pending"),
        (4, "dee", 40.25, "cancelled"), (5, "ed", 5.0, "shipped")]
FINAL = {"SUCCEEDED", "FAILED", "STOPPED", "TIMEOUT"}


def _table(glue, server, db, name, rows=ROWS):
    bucket = "dqruns-" + uuid.uuid4().hex[:10]
    path = os.path.join(server.data_dir, "s3", bucket, name, "part-0.csv")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("id,name,amount,status\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")
    glue.create_table(DatabaseName=db, TableInput={
        "Name": name, "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "name", "Type": "string"},
                        {"Name": "amount", "Type": "double"}, {"Name": "status", "Type": "string"}],
            "Location": f"s3://{bucket}/{name}/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}}}})
    return {"GlueTable": {"DatabaseName": db, "TableName": name}}


def _wait(get, run_id, timeout=60):
    out = {}

    def done():
        out.update(get(RunId=run_id))
        return out["Status"] in FINAL
    wait_for(done, timeout, f"run {run_id} to end", interval=0.2)
    return out


@pytest.fixture()
def orders(glue, server, db):
    return _table(glue, server, db, "orders")


def test_evaluation_run_publishes_one_result_per_ruleset(glue, server, orders):
    good, bad = unique("dq_good"), unique("dq_bad")
    glue.create_data_quality_ruleset(Name=good, Ruleset=(
        'Rules = [ RowCount = 5, IsComplete "id", IsUnique "id", '
        'ColumnValues "amount" between 0 and 100, Mean "amount" > 10 ]'))
    glue.create_data_quality_ruleset(Name=bad, Ruleset=(
        'Rules = [ RowCount > 10, ColumnValues "status" in ["shipped", "pending"], IsComplete "name" ]'))
    before = time.time()
    run_id = glue.start_data_quality_ruleset_evaluation_run(
        DataSource=orders, Role="dq-role", RulesetNames=[good, bad], NumberOfWorkers=2,
        AdditionalRunOptions={"CloudWatchMetricsEnabled": False})["RunId"]
    assert run_id.startswith("dqrun-")
    first = glue.get_data_quality_ruleset_evaluation_run(RunId=run_id)
    assert first["Status"] in {"STARTING", "RUNNING"}

    run = _wait(glue.get_data_quality_ruleset_evaluation_run, run_id)
    assert run["Status"] == "SUCCEEDED", run.get("ErrorString")
    assert run["RulesetNames"] == [good, bad]
    assert run["DataSource"] == orders
    assert run["Role"] == "dq-role" and run["NumberOfWorkers"] == 2 and run["Timeout"] == 2880
    assert run["AdditionalRunOptions"] == {"CloudWatchMetricsEnabled": False}
    assert run["StartedOn"].timestamp() >= before - 1
    assert run["CompletedOn"] >= run["StartedOn"]
    assert len(run["ResultIds"]) == 2

    results = {r["RulesetName"]: r for r in
               glue.batch_get_data_quality_result(ResultIds=run["ResultIds"])["Results"]}
    assert set(results) == {good, bad}
    for name, result in results.items():
        assert result["RulesetEvaluationRunId"] == run_id
        assert result["EvaluationContext"] == name
        assert result["DataSource"] == orders
        assert "JobName" not in result and "JobRunId" not in result

    amounts = [r[2] for r in ROWS]
    ok = results[good]
    assert ok["Score"] == 1.0
    assert [r["Result"] for r in ok["RuleResults"]] == ["PASS"] * 5
    assert ok["RuleResults"][0]["EvaluatedMetrics"]["Dataset.*.RowCount"] == len(ROWS)
    assert ok["RuleResults"][4]["EvaluatedMetrics"]["Column.amount.Mean"] == \
        pytest.approx(sum(amounts) / len(amounts))

    ko = results[bad]
    assert [r["Result"] for r in ko["RuleResults"]] == ["FAIL", "FAIL", "PASS"]
    assert ko["Score"] == pytest.approx(1 / 3)
    compliance = sum(r[3] in ("shipped", "pending") for r in ROWS) / len(ROWS)
    assert ko["RuleResults"][1]["EvaluatedMetrics"]["Column.status.ColumnValues.Compliance"] == \
        pytest.approx(compliance)

    # Each result is a profile whose statistics are its metrics.
    stats = glue.list_data_quality_statistics(ProfileId=ok["ProfileId"])["Statistics"]
    by = {(st["StatisticName"], tuple(st["ColumnsReferenced"])): st for st in stats}
    assert by[("RowCount", ())]["DoubleValue"] == len(ROWS)
    assert by[("RowCount", ())]["EvaluationLevel"] == "Dataset"
    mean = by[("Mean", ("amount",))]
    assert mean["DoubleValue"] == pytest.approx(sum(amounts) / len(amounts))
    assert mean["RunIdentifier"] == {"RunId": run_id}
    glue.batch_put_data_quality_statistic_annotation(InclusionAnnotations=[
        {"ProfileId": ok["ProfileId"], "StatisticId": mean["StatisticId"], "InclusionAnnotation": "EXCLUDE"}])
    annotations = glue.list_data_quality_statistic_annotations(ProfileId=ok["ProfileId"])["Annotations"]
    assert [(a["StatisticId"], a["InclusionAnnotation"]["Value"]) for a in annotations] == \
        [(mean["StatisticId"], "EXCLUDE")]
    glue.put_data_quality_profile_annotation(ProfileId=ok["ProfileId"], InclusionAnnotation="INCLUDE")
    annotations = glue.list_data_quality_statistic_annotations(ProfileId=ok["ProfileId"])["Annotations"]
    assert len(annotations) == len(stats)
    assert {a["InclusionAnnotation"]["Value"] for a in annotations} == {"INCLUDE"}
    with raises_glue("EntityNotFoundException"):
        glue.put_data_quality_profile_annotation(ProfileId="dqprofile-none", InclusionAnnotation="INCLUDE")

    # ListDataQualityResults' DataSource filter finds both; another table's filter neither.
    listed = glue.list_data_quality_results(Filter={"DataSource": orders})["Results"]
    assert {r["ResultId"] for r in listed} == set(run["ResultIds"])
    other = {"GlueTable": {"DatabaseName": orders["GlueTable"]["DatabaseName"], "TableName": "nope"}}
    assert glue.list_data_quality_results(Filter={"DataSource": other})["Results"] == []

    # Listing runs: by table, by time.
    runs = glue.list_data_quality_ruleset_evaluation_runs(Filter={"DataSource": orders})["Runs"]
    assert [(r["RunId"], r["Status"]) for r in runs] == [(run_id, "SUCCEEDED")]
    assert runs[0]["DataSource"] == orders
    assert glue.list_data_quality_ruleset_evaluation_runs(
        Filter={"DataSource": other})["Runs"] == []
    assert glue.list_data_quality_ruleset_evaluation_runs(
        Filter={"DataSource": orders, "StartedAfter": time.time() + 60})["Runs"] == []
    assert [r["RunId"] for r in glue.list_data_quality_ruleset_evaluation_runs(
        Filter={"DataSource": orders, "StartedBefore": time.time() + 60})["Runs"]] == [run_id]

    # The run's log stream holds what it did.
    logs = server.client("logs")
    text = "\n".join(log_messages(logs, "/aws-glue/jobs/output", run_id))
    assert f"{good}: 5 rule(s) over 5 row(s)" in text and "published" in text

    # A finished run cannot be cancelled.
    with raises_glue("InvalidInputException", "already finished"):
        glue.cancel_data_quality_ruleset_evaluation_run(RunId=run_id)


def test_start_refuses_unknown_rulesets_tables_and_runs(glue, orders):
    name = unique("dq_known")
    glue.create_data_quality_ruleset(Name=name, Ruleset="Rules = [ RowCount > 0 ]")
    with raises_glue("EntityNotFoundException", "nope_ruleset"):
        glue.start_data_quality_ruleset_evaluation_run(
            DataSource=orders, Role="r", RulesetNames=[name, "nope_ruleset"])
    db = orders["GlueTable"]["DatabaseName"]
    with raises_glue("EntityNotFoundException"):
        glue.start_data_quality_ruleset_evaluation_run(
            DataSource={"GlueTable": {"DatabaseName": db, "TableName": "missing"}}, Role="r",
            RulesetNames=[name])
    with raises_glue("EntityNotFoundException"):
        glue.start_data_quality_rule_recommendation_run(
            DataSource={"GlueTable": {"DatabaseName": db, "TableName": "missing"}}, Role="r")
    # Nothing was started by the refused requests.
    assert glue.list_data_quality_ruleset_evaluation_runs(Filter={"DataSource": orders})["Runs"] == []
    with raises_glue("EntityNotFoundException", "dqrun-0000"):
        glue.get_data_quality_ruleset_evaluation_run(RunId="dqrun-0000")
    with raises_glue("EntityNotFoundException"):
        glue.get_data_quality_rule_recommendation_run(RunId="dqrun-0000")
    with raises_glue("EntityNotFoundException"):
        glue.cancel_data_quality_ruleset_evaluation_run(RunId="dqrun-0000")
    with raises_glue("InvalidInputException", "twice"):
        glue.start_data_quality_ruleset_evaluation_run(
            DataSource=orders, Role="r", RulesetNames=[name, name])


def test_cancel_stops_a_slow_run(glue, server, orders):
    slow = unique("dq_slow")
    # A statement that takes minutes: the run is cancelled while it evaluates it.
    glue.create_data_quality_ruleset(Name=slow, Ruleset=(
        'Rules = [ CustomSql "select sum(hash(a.range + b.range)) from range(200000000) a, '
        'range(1000) b" > 0 ]'))
    run_id = glue.start_data_quality_ruleset_evaluation_run(
        DataSource=orders, Role="r", RulesetNames=[slow])["RunId"]
    wait_for(lambda: glue.get_data_quality_ruleset_evaluation_run(RunId=run_id)["Status"] == "RUNNING",
             30, "the run to be RUNNING", interval=0.1)
    logs = server.client("logs")

    def evaluating():  # the rows are read: the statement is running
        try:
            return any("read 5 row(s)" in m for m in log_messages(logs, "/aws-glue/jobs/output", run_id))
        except logs.exceptions.ResourceNotFoundException:
            return False
    wait_for(evaluating, 30, "the run to evaluate", interval=0.2)
    glue.cancel_data_quality_ruleset_evaluation_run(RunId=run_id)
    assert glue.get_data_quality_ruleset_evaluation_run(RunId=run_id)["Status"] in {"STOPPING", "STOPPED"}
    run = _wait(glue.get_data_quality_ruleset_evaluation_run, run_id, timeout=30)
    assert run["Status"] == "STOPPED"
    assert run["ResultIds"] == []
    listed = glue.list_data_quality_ruleset_evaluation_runs(Filter={"DataSource": orders})["Runs"]
    assert [(r["RunId"], r["Status"]) for r in listed] == [(run_id, "STOPPED")]


def test_recommendation_run_stores_a_ruleset_that_holds(glue, orders):
    created = unique("dq_recommended")
    run_id = glue.start_data_quality_rule_recommendation_run(
        DataSource=orders, Role="dq-role", CreatedRulesetName=created, ClientToken="tok-" + created)["RunId"]
    # The same ClientToken answers the same run.
    assert glue.start_data_quality_rule_recommendation_run(
        DataSource=orders, Role="dq-role", CreatedRulesetName=created,
        ClientToken="tok-" + created)["RunId"] == run_id
    run = _wait(glue.get_data_quality_rule_recommendation_run, run_id)
    assert run["Status"] == "SUCCEEDED", run.get("ErrorString")
    assert run["CreatedRulesetName"] == created and run["Role"] == "dq-role"
    text = run["RecommendedRuleset"]
    assert 'IsUnique "id"' in text and "RowCount" in text

    stored = glue.get_data_quality_ruleset(Name=created)
    assert stored["Ruleset"] == text
    assert stored["RecommendationRunId"] == run_id
    assert stored["TargetTable"] == {"DatabaseName": orders["GlueTable"]["DatabaseName"],
                                     "TableName": "orders"}
    runs = glue.list_data_quality_rule_recommendation_runs(Filter={"DataSource": orders})["Runs"]
    assert [(r["RunId"], r["Status"]) for r in runs] == [(run_id, "SUCCEEDED")]
    # The name is taken now.
    with raises_glue("AlreadyExistsException", created):
        glue.start_data_quality_rule_recommendation_run(
            DataSource=orders, Role="dq-role", CreatedRulesetName=created)

    # Evaluated on the table it came from, every rule passes.
    eval_id = glue.start_data_quality_ruleset_evaluation_run(
        DataSource=orders, Role="dq-role", RulesetNames=[created])["RunId"]
    evaluated = _wait(glue.get_data_quality_ruleset_evaluation_run, eval_id)
    assert evaluated["Status"] == "SUCCEEDED", evaluated.get("ErrorString")
    result = glue.get_data_quality_result(ResultId=evaluated["ResultIds"][0])
    assert result["RuleResults"] and all(r["Result"] == "PASS" for r in result["RuleResults"]), \
        result["RuleResults"]
    assert result["Score"] == 1.0


def test_a_run_survives_a_server_restart_and_stops(srv):
    """The server is killed while a run evaluates: the next server re-adopts the run's process
    (still RUNNING, nothing orphaned) and a cancel stops it."""
    glue = srv.client()
    db = unique("dqrestart")
    glue.create_database(DatabaseInput={"Name": db})
    orders = _table(glue, srv, db, "orders")
    slow = unique("dq_slow")
    glue.create_data_quality_ruleset(Name=slow, Ruleset=(
        'Rules = [ CustomSql "select sum(hash(a.range + b.range)) from range(200000000) a, '
        'range(1000) b" > 0 ]'))
    run_id = glue.start_data_quality_ruleset_evaluation_run(
        DataSource=orders, Role="r", RulesetNames=[slow])["RunId"]
    wait_for(lambda: glue.get_data_quality_ruleset_evaluation_run(RunId=run_id)["Status"] == "RUNNING",
             30, "the run to be RUNNING", interval=0.1)
    srv.kill9()
    srv.start()
    glue = srv.client()
    assert glue.get_data_quality_ruleset_evaluation_run(RunId=run_id)["Status"] == "RUNNING"
    glue.cancel_data_quality_ruleset_evaluation_run(RunId=run_id)
    run = _wait(glue.get_data_quality_ruleset_evaluation_run, run_id, timeout=30)
    assert run["Status"] == "STOPPED"


def test_push_down_predicate_selects_the_partitions_evaluated(glue, server, db):
    bucket = "dqpart-" + uuid.uuid4().hex[:10]
    counts = {"eu": 3, "us": 2}
    for region, n in counts.items():
        path = os.path.join(server.data_dir, "s3", bucket, "events", f"region={region}", "p.csv")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("id\n" + "".join(f"{region}{i}\n" for i in range(n)))
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "events", "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
        "PartitionKeys": [{"Name": "region", "Type": "string"}],
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "string"}],
            "Location": f"s3://{bucket}/events/",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}}}})
    for region in counts:
        glue.create_partition(DatabaseName=db, TableName="events", PartitionInput={
            "Values": [region], "StorageDescriptor": {"Location": f"s3://{bucket}/events/region={region}/"}})
    name = unique("dq_eu")
    glue.create_data_quality_ruleset(Name=name, Ruleset=(
        f'Rules = [ RowCount = {counts["eu"]}, ColumnValues "region" in ["eu"] ]'))
    source = {"GlueTable": {"DatabaseName": db, "TableName": "events",
                            "AdditionalOptions": {"pushDownPredicate": "region = 'eu'"}}}
    run_id = glue.start_data_quality_ruleset_evaluation_run(
        DataSource=source, Role="r", RulesetNames=[name])["RunId"]
    run = _wait(glue.get_data_quality_ruleset_evaluation_run, run_id)
    assert run["Status"] == "SUCCEEDED", run.get("ErrorString")
    result = glue.get_data_quality_result(ResultId=run["ResultIds"][0])
    assert [r["Result"] for r in result["RuleResults"]] == ["PASS", "PASS"], result["RuleResults"]
    assert result["RuleResults"][0]["EvaluatedMetrics"]["Dataset.*.RowCount"] == counts["eu"]
    # The published DataSource names the table, without the options.
    assert result["DataSource"] == {"GlueTable": {"DatabaseName": db, "TableName": "events"}}


def test_dynamic_rules_compare_with_the_rulesets_earlier_runs(glue, orders):
    name = unique("dq_dynamic")
    glue.create_data_quality_ruleset(Name=name, Ruleset="Rules = [ RowCount >= avg(last(2)) ]")
    outcomes = []
    for _ in range(2):
        run_id = glue.start_data_quality_ruleset_evaluation_run(
            DataSource=orders, Role="r", RulesetNames=[name])["RunId"]
        run = _wait(glue.get_data_quality_ruleset_evaluation_run, run_id)
        assert run["Status"] == "SUCCEEDED", run.get("ErrorString")
        rule = glue.get_data_quality_result(ResultId=run["ResultIds"][0])["RuleResults"][0]
        outcomes.append((rule["Result"], rule.get("EvaluationMessage", "")))
    # No history the first time (the rule says so); the second run compares with the first.
    assert outcomes[0][0] == "ERROR" and "history" in outcomes[0][1]
    assert outcomes[1] == ("PASS", "")


def test_the_job_api_does_not_reach_the_data_quality_runs(glue):
    """The module runs' owner names are reserved: no user job can take one, and the job-run
    operations do not show, start or stop data-quality runs."""
    import botocore.exceptions
    with pytest.raises(botocore.exceptions.ClientError) as e:
        glue.create_job(Name="openglue:data-quality-evaluation", Role="local",
                        Command={"Name": "glueetl", "ScriptLocation": "s3://x/y.py"})
    assert e.value.response["Error"]["Code"] == "InvalidInputException"
    assert "reserved" in e.value.response["Error"]["Message"]
    for call, kwargs in ((glue.get_job_runs, {}), (glue.start_job_run, {}),
                         (glue.batch_stop_job_run, {"JobRunIds": ["jr_x"]}),
                         (glue.get_job_run, {"RunId": "jr_x"})):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(JobName="openglue:data-quality-recommendation", **kwargs)
        assert e.value.response["Error"]["Code"] == "EntityNotFoundException", call
