"""Triggers end to end through boto3 against the real server: the operations and their shapes and
errors, ON_DEMAND, SCHEDULED (cron, on time), CONDITIONAL (AND / ANY, fired once per satisfying
runs) and EVENT (stored, inert). See docs/workflows.md."""
import time

import pytest

from conftest import raises_glue
from jobkit import unique
from schedkit import SchedKit


@pytest.fixture()
def kit(server, glue, tmp_path):
    k = SchedKit(server, glue, tmp_path)
    yield k
    k.close()


def action(job, **kwargs):
    return dict(JobName=job, **kwargs)


def test_trigger_operations_shapes_and_errors(kit):
    glue = kit.glue
    job, other = kit.job(), kit.job()
    name = kit.trigger(Type="ON_DEMAND", Actions=[action(job)], Description="by hand",
                       Tags={"team": "etl"})
    trigger = glue.get_trigger(Name=name)["Trigger"]
    assert trigger["Name"] == name and trigger["Type"] == "ON_DEMAND"
    assert trigger["State"] == "CREATED" and trigger["Description"] == "by hand"
    assert trigger["Actions"] == [{"JobName": job}]
    scheduled = kit.trigger(Type="SCHEDULED", Schedule="cron(0 12 * * ? *)",
                            Actions=[action(other)], StartOnCreation=True)
    assert glue.get_trigger(Name=scheduled)["Trigger"]["State"] == "ACTIVATED"

    # Filters: the triggers that start a job; tags.
    got = glue.get_triggers(DependentJobName=job)["Triggers"]
    assert [t["Name"] for t in got] == [name]
    assert glue.list_triggers(DependentJobName=other)["TriggerNames"] == [scheduled]
    assert glue.list_triggers(Tags={"team": "etl"})["TriggerNames"] == [name]
    assert glue.get_tags(ResourceArn=f"arn:aws:glue:us-east-1:000000000000:trigger/{name}")["Tags"] == {"team": "etl"}
    batch = glue.batch_get_triggers(TriggerNames=[name, "nope"])
    assert [t["Name"] for t in batch["Triggers"]] == [name]
    assert batch["TriggersNotFound"] == ["nope"]

    updated = glue.update_trigger(Name=name, TriggerUpdate={
        "Description": "changed", "Actions": [action(other, Arguments={"--x": "1"})]})["Trigger"]
    assert updated["Description"] == "changed"
    assert updated["Actions"] == [{"JobName": other, "Arguments": {"--x": "1"}}]
    assert glue.stop_trigger(Name=scheduled)["Name"] == scheduled
    assert glue.get_trigger(Name=scheduled)["Trigger"]["State"] == "DEACTIVATED"

    with raises_glue("AlreadyExistsException", name):
        glue.create_trigger(Name=name, Type="ON_DEMAND", Actions=[action(job)])
    with raises_glue("InvalidInputException", "ON_DEMAND"):
        glue.create_trigger(Name=unique("t"), Type="ON_DEMAND", Actions=[action(job)],
                            StartOnCreation=True)
    with raises_glue("EntityNotFoundException", "no_such_job"):
        glue.create_trigger(Name=unique("t"), Type="ON_DEMAND", Actions=[action("no_such_job")])
    with raises_glue("InvalidInputException", "Hours"):
        glue.create_trigger(Name=unique("t"), Type="SCHEDULED", Schedule="cron(0 25 * * ? *)",
                            Actions=[action(job)])
    with raises_glue("InvalidInputException", "Schedule"):
        glue.create_trigger(Name=unique("t"), Type="SCHEDULED", Actions=[action(job)])
    with raises_glue("InvalidInputException", "Predicate"):
        glue.create_trigger(Name=unique("t"), Type="CONDITIONAL", Actions=[action(job)])
    with raises_glue("InvalidInputException", "State"):
        glue.create_trigger(Name=unique("t"), Type="CONDITIONAL", Actions=[action(job)],
                            Predicate={"Conditions": [{"JobName": other, "State": "RUNNING",
                                                       "LogicalOperator": "EQUALS"}]})
    with raises_glue("EntityNotFoundException", "no_such_workflow"):
        glue.create_trigger(Name=unique("t"), Type="ON_DEMAND", Actions=[action(job)],
                            WorkflowName="no_such_workflow")
    with raises_glue("EntityNotFoundException"):
        glue.start_trigger(Name="no_such_trigger")

    assert glue.delete_trigger(Name=name)["Name"] == name
    with raises_glue("EntityNotFoundException", name):
        glue.get_trigger(Name=name)
    glue.delete_trigger(Name=name)  # deleting what is gone is not an error


def test_on_demand_trigger_starts_its_jobs_with_merged_arguments(kit):
    glue = kit.glue
    job = kit.job(a="job", b="job")
    second = kit.job()
    name = kit.trigger(Type="ON_DEMAND", Actions=[
        action(job, Arguments={"--b": "trigger"}, Timeout=7), action(second)])
    glue.start_trigger(Name=name)
    run = kit.wait_runs(job, 1)[0]
    assert run["JobRunState"] == "SUCCEEDED", run
    assert run["TriggerName"] == name
    assert run["Timeout"] == 7
    assert run["Arguments"]["--a"] == "job" and run["Arguments"]["--b"] == "trigger"
    trace = kit.traces(job)
    assert len(trace) == 1 and trace[0]["--b"] == "trigger" and trace[0]["--a"] == "job"
    assert kit.wait_runs(second, 1)[0]["TriggerName"] == name
    # Once per StartTrigger.
    glue.start_trigger(Name=name)
    assert len(kit.wait_runs(job, 2)) == 2
    time.sleep(0.5)
    assert len(kit.runs(job)) == 2


def test_scheduled_trigger_fires_on_the_minute_while_activated(kit):
    glue = kit.glue
    job = kit.job()
    name = kit.trigger(Type="SCHEDULED", Schedule="cron(* * * * ? *)", Actions=[action(job)],
                       StartOnCreation=True)
    run = kit.wait_runs(job, 1, timeout=75)[0]
    assert run["TriggerName"] == name
    started = run["StartedOn"].timestamp()
    # Due on the whole minute; started within a second of it.
    assert started - (started // 60) * 60 < 1.0, run["StartedOn"]
    glue.stop_trigger(Name=name)
    assert glue.get_trigger(Name=name)["Trigger"]["State"] == "DEACTIVATED"
    # (That a deactivated trigger does not fire, and that missed fires are not replayed, is
    # checked with an injected clock: src/schedule/scheduler_test.cc.)


def conditional(kit, logical, conditions, target, start=True):
    return kit.trigger(Type="CONDITIONAL", StartOnCreation=start, Actions=[action(target)],
                       Predicate={"Logical": logical, "Conditions": [
                           {"LogicalOperator": "EQUALS", "JobName": j, "State": s}
                           for j, s in conditions]})


def test_conditional_and_waits_for_both_jobs_and_fires_once_per_pair(kit):
    glue = kit.glue
    a, b, c = kit.job(), kit.job(), kit.job()
    name = conditional(kit, "AND", [(a, "SUCCEEDED"), (b, "SUCCEEDED")], c)
    inactive = conditional(kit, "AND", [(a, "SUCCEEDED"), (b, "SUCCEEDED")], c, start=False)
    assert glue.get_trigger(Name=inactive)["Trigger"]["State"] == "CREATED"
    glue.start_job_run(JobName=a)
    kit.wait_runs(a, 1)
    time.sleep(1)
    assert kit.runs(c) == []  # only one of the two
    glue.start_job_run(JobName=b)
    kit.wait_runs(b, 1)
    runs = kit.wait_runs(c, 1)
    assert runs[0]["TriggerName"] == name
    # A's run was consumed by that fire: another run of A alone fires nothing.
    glue.start_job_run(JobName=a)
    kit.wait_runs(a, 2)
    time.sleep(1)
    assert len(kit.runs(c)) == 1
    glue.start_job_run(JobName=b)
    kit.wait_runs(b, 2)
    assert len(kit.wait_runs(c, 2)) == 2
    time.sleep(1)
    assert len(kit.runs(c)) == 2


def test_conditional_any_fires_on_the_first_and_on_each_satisfying_run(kit):
    glue = kit.glue
    a, b, c = kit.job(), kit.job(fail="yes"), kit.job()
    conditional(kit, "ANY", [(a, "SUCCEEDED"), (b, "FAILED")], c)
    glue.start_job_run(JobName=a)
    assert len(kit.wait_runs(c, 1)) == 1
    glue.start_job_run(JobName=b)
    assert kit.wait_runs(b, 1)[0]["JobRunState"] == "FAILED"
    assert len(kit.wait_runs(c, 2)) == 2
    time.sleep(1)
    assert len(kit.runs(c)) == 2


def test_deactivated_conditional_trigger_does_not_fire(kit):
    glue = kit.glue
    a, c = kit.job(), kit.job()
    name = conditional(kit, "AND", [(a, "SUCCEEDED")], c)
    glue.stop_trigger(Name=name)
    glue.start_job_run(JobName=a)
    kit.wait_runs(a, 1)
    time.sleep(1)
    assert kit.runs(c) == []
    glue.start_trigger(Name=name)
    assert glue.get_trigger(Name=name)["Trigger"]["State"] == "ACTIVATED"
    glue.start_job_run(JobName=a)
    kit.wait_runs(c, 1)


def test_event_trigger_is_stored_but_inert(kit):
    glue = kit.glue
    job = kit.job()
    name = kit.trigger(Type="EVENT", Actions=[action(job)],
                       EventBatchingCondition={"BatchSize": 5, "BatchWindow": 60})
    trigger = glue.get_trigger(Name=name)["Trigger"]
    assert trigger["Type"] == "EVENT"
    assert trigger["EventBatchingCondition"] == {"BatchSize": 5, "BatchWindow": 60}
    glue.start_trigger(Name=name)
    assert glue.get_trigger(Name=name)["Trigger"]["State"] == "ACTIVATED"
    time.sleep(1)
    assert kit.runs(job) == []


def test_crawler_actions_and_conditions_are_stored(kit):
    glue = kit.glue
    job = kit.job()
    crawler, _ = kit.crawler()
    other, _ = kit.crawler()
    name = kit.trigger(Type="CONDITIONAL", Actions=[{"CrawlerName": crawler}],
                       Predicate={"Conditions": [{"LogicalOperator": "EQUALS",
                                                  "CrawlerName": other, "CrawlState": "SUCCEEDED"},
                                                 {"LogicalOperator": "EQUALS",
                                                  "JobName": job, "State": "SUCCEEDED"}]})
    trigger = glue.get_trigger(Name=name)["Trigger"]
    assert trigger["Actions"] == [{"CrawlerName": crawler}]
    assert trigger["Predicate"]["Conditions"][0]["CrawlState"] == "SUCCEEDED"
    with raises_glue("EntityNotFoundException", "no-such-crawler"):
        glue.create_trigger(Name=unique("t"), Type="ON_DEMAND",
                            Actions=[{"CrawlerName": "no-such-crawler"}])
    with raises_glue("InvalidInputException", "CrawlState"):
        glue.create_trigger(Name=unique("t"), Type="CONDITIONAL", Actions=[action(job)],
                            Predicate={"Conditions": [{"CrawlerName": crawler, "CrawlState": "RUNNING"}]})
    with raises_glue("InvalidInputException", "either"):
        glue.create_trigger(Name=unique("t"), Type="ON_DEMAND",
                            Actions=[{"JobName": job, "CrawlerName": crawler}])