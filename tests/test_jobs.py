"""Job definitions: CreateJob, UpdateJob, GetJob, GetJobs, ListJobs (Tags), BatchGetJobs,
DeleteJob, through boto3 (and the AWS CLI) against the real server. See docs/jobs.md."""
import datetime
import json

import pytest

from conftest import all_pages, raises_glue
from jobkit import kit, unique, wait_run  # noqa: F401  (kit is a fixture)

SCRIPT = "s3://scripts/never_run.py"


def command(name="glueetl", location=SCRIPT):
    return {"Name": name, "ScriptLocation": location}


def test_create_job_fills_in_the_defaults(kit, glue):
    name = unique("job")
    before = datetime.datetime.now(datetime.timezone.utc)
    response = glue.create_job(Name=name, Role="local", Command=command())
    kit.jobs.append(name)
    assert response["Name"] == name
    job = glue.get_job(JobName=name)["Job"]
    assert job["Name"] == name
    assert job["Role"] == "local"
    assert job["Command"] == {"Name": "glueetl", "ScriptLocation": SCRIPT}
    assert job["ExecutionProperty"] == {"MaxConcurrentRuns": 1}
    assert job["Timeout"] == 2880
    assert job["MaxRetries"] == 0
    assert isinstance(job["CreatedOn"], datetime.datetime)
    assert isinstance(job["LastModifiedOn"], datetime.datetime)
    assert abs((job["CreatedOn"] - before).total_seconds()) < 60
    assert job["LastModifiedOn"] >= job["CreatedOn"]
    assert "NonOverridableArguments" not in job
    assert "Description" not in job


def test_create_job_keeps_what_it_was_given(kit, glue):
    name = unique("job")
    glue.create_job(
        Name=name, Role="arn:aws:iam::000000000000:role/etl", Description="nightly orders",
        Command={"Name": "pythonshell", "ScriptLocation": "s3://scripts/orders.py",
                 "PythonVersion": "3.9"},
        DefaultArguments={"--greeting": "hi", "--job-bookmark-option": "job-bookmark-enable"},
        NonOverridableArguments={"--env": "prod"},
        ExecutionProperty={"MaxConcurrentRuns": 3}, MaxRetries=2, Timeout=15,
        GlueVersion="4.0", JobRunQueuingEnabled=True, Connections={"Connections": ["pg"]},
        NotificationProperty={"NotifyDelayAfter": 5})
    kit.jobs.append(name)
    job = glue.get_job(JobName=name)["Job"]
    assert job["Role"] == "arn:aws:iam::000000000000:role/etl"
    assert job["Description"] == "nightly orders"
    assert job["Command"] == {"Name": "pythonshell", "ScriptLocation": "s3://scripts/orders.py",
                              "PythonVersion": "3.9"}
    assert job["DefaultArguments"] == {"--greeting": "hi",
                                       "--job-bookmark-option": "job-bookmark-enable"}
    assert job["NonOverridableArguments"] == {"--env": "prod"}
    assert job["ExecutionProperty"] == {"MaxConcurrentRuns": 3}
    assert job["MaxRetries"] == 2
    assert job["Timeout"] == 15
    assert job["GlueVersion"] == "4.0"
    assert job["JobRunQueuingEnabled"] is True
    assert job["Connections"] == {"Connections": ["pg"]}
    assert job["NotificationProperty"] == {"NotifyDelayAfter": 5}


def test_create_job_twice_is_already_exists(kit, glue):
    name = kit.job(script=SCRIPT)
    with raises_glue("AlreadyExistsException", name):
        glue.create_job(Name=name, Role="other", Command=command())
    # The first definition is untouched.
    assert glue.get_job(JobName=name)["Job"]["Role"] == "local"


@pytest.mark.parametrize("command_name", ["gluestreaming", "glueray", "Glueetl", "my-custom"])
def test_any_command_name_is_accepted_and_its_run_fails_as_glue_says(kit, glue, command_name):
    # AWS accepts any Command.Name at CreateJob (tools create gluestreaming, glueray and custom
    # jobs) and fails a run it cannot run with this message.
    script = kit.script("print('never runs')")
    name = kit.job(script=script, command=command_name)
    assert glue.get_job(JobName=name)["Job"]["Command"] == command(command_name, script)
    run = kit.run(name)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == "Could not find command for the given criteria"
    # UpdateJob accepts it too, and back.
    existing = kit.job(script=SCRIPT)
    glue.update_job(JobName=existing, JobUpdate={"Role": "local", "Command": command(command_name)})
    assert glue.get_job(JobName=existing)["Job"]["Command"]["Name"] == command_name
    glue.update_job(JobName=existing, JobUpdate={"Role": "local", "Command": command()})
    assert glue.get_job(JobName=existing)["Job"]["Command"]["Name"] == "glueetl"


def test_a_job_without_script_location_is_made_and_its_run_fails_saying_so(kit, glue):
    # Command.ScriptLocation is optional in Glue's model (moto's suite makes jobs without one).
    name = unique("noscript")
    glue.create_job(Name=name, Role="local", Command={"Name": "glueetl"})
    assert glue.get_job(JobName=name)["Job"]["Command"] == {"Name": "glueetl"}
    run_id = glue.start_job_run(JobName=name)["JobRunId"]
    run = wait_run(glue, name, run_id)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"].startswith("The job has no Command.ScriptLocation")
    glue.delete_job(JobName=name)


def test_unknown_job_is_entity_not_found(glue):
    missing = unique("missing")
    with raises_glue("EntityNotFoundException", missing):
        glue.get_job(JobName=missing)
    with raises_glue("EntityNotFoundException", missing):
        glue.update_job(JobName=missing, JobUpdate={"Role": "r", "Command": command()})
    with raises_glue("EntityNotFoundException", missing):
        glue.start_job_run(JobName=missing)
    with raises_glue("EntityNotFoundException"):
        glue.get_job_runs(JobName=missing)
    with raises_glue("EntityNotFoundException"):
        glue.get_job_run(JobName=missing, RunId="jr_" + "0" * 64)
    # As in AWS Glue, deleting a job that does not exist is not an error.
    assert glue.delete_job(JobName=missing)["JobName"] == missing


def test_get_jobs_pages_over_every_job(kit, glue):
    names = [kit.job(script=SCRIPT, name=unique("paged")) for _ in range(5)]
    pages = []
    token = None
    while True:
        page = glue.get_jobs(MaxResults=2, **({"NextToken": token} if token else {}))
        assert len(page["Jobs"]) <= 2
        pages.append(page["Jobs"])
        token = page.get("NextToken")
        if not token:
            break
    listed = [job["Name"] for jobs in pages for job in jobs]
    assert len(pages) >= 3
    # Every job exactly once, whole definitions.
    assert len(listed) == len(set(listed))
    assert set(names) <= set(listed)
    by_name = {job["Name"]: job for jobs in pages for job in jobs}
    assert by_name[names[0]]["Command"]["ScriptLocation"] == SCRIPT
    assert by_name[names[0]]["Timeout"] == 2880
    # boto3's paginator agrees.
    paginated = glue.get_paginator("get_jobs").paginate(PaginationConfig={"PageSize": 3})
    assert [j["Name"] for j in paginated.build_full_result()["Jobs"]] == listed


def test_list_jobs_filters_by_tags_and_pages(kit, glue):
    suite = unique("suite")
    teams = {kit.job(script=SCRIPT, Tags={"suite": suite, "team": team}): team
             for team in ["a", "b", "a", "b", "b"]}
    tagged = sorted(teams)
    kit.job(script=SCRIPT, Tags={"suite": "other"})
    kit.job(script=SCRIPT)

    pages = []
    token = None
    while True:
        page = glue.list_jobs(MaxResults=2, Tags={"suite": suite},
                              **({"NextToken": token} if token else {}))
        pages.append(page["JobNames"])
        token = page.get("NextToken")
        if not token:
            break
    assert [len(p) for p in pages] == [2, 2, 1]
    assert sorted(n for p in pages for n in p) == tagged

    # Every tag must match, key and value.
    team_a = glue.list_jobs(Tags={"suite": suite, "team": "a"})["JobNames"]
    assert sorted(team_a) == sorted(n for n, t in teams.items() if t == "a")
    assert glue.list_jobs(Tags={"suite": suite, "team": "c"})["JobNames"] == []

    # Without a filter every job is listed, exactly once.
    everything = all_pages(glue.list_jobs, "JobNames", MaxResults=3)
    assert len(everything) == len(set(everything))
    assert set(tagged) <= set(everything)


def test_tag_resource_on_a_job_arn_feeds_get_tags_and_list_jobs(kit, glue):
    suite = unique("suite")
    name = kit.job(script=SCRIPT, Tags={"suite": suite})
    arn = f"arn:aws:glue:us-east-1:000000000000:job/{name}"
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"suite": suite}
    glue.tag_resource(ResourceArn=arn, TagsToAdd={"team": "a"})
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"suite": suite, "team": "a"}
    assert glue.list_jobs(Tags={"suite": suite, "team": "a"})["JobNames"] == [name]
    glue.untag_resource(ResourceArn=arn, TagsToRemove=["team"])
    assert glue.list_jobs(Tags={"suite": suite, "team": "a"})["JobNames"] == []
    with raises_glue("EntityNotFoundException"):
        glue.get_tags(ResourceArn=f"arn:aws:glue:us-east-1:000000000000:job/{unique('nojob')}")


def test_a_bad_next_token_is_invalid_input(glue):
    with raises_glue("InvalidInputException"):
        glue.get_jobs(NextToken="not a token!")
    with raises_glue("InvalidInputException"):
        glue.list_jobs(NextToken="not a token!")


def test_batch_get_jobs_reports_the_missing_ones(kit, glue):
    a = kit.job(script=SCRIPT, Description="first")
    b = kit.job(script=SCRIPT, Description="second")
    missing = unique("missing")
    result = glue.batch_get_jobs(JobNames=[a, missing, b])
    assert sorted(job["Name"] for job in result["Jobs"]) == sorted([a, b])
    assert {job["Name"]: job["Description"] for job in result["Jobs"]} == {a: "first", b: "second"}
    assert result["JobsNotFound"] == [missing]


def test_update_job_replaces_the_whole_definition(kit, glue):
    name = unique("job")
    glue.create_job(Name=name, Role="local", Command=command(), Description="old",
                    DefaultArguments={"--a": "1", "--b": "2"}, MaxRetries=2, Timeout=10,
                    ExecutionProperty={"MaxConcurrentRuns": 4}, GlueVersion="3.0")
    kit.jobs.append(name)
    created = glue.get_job(JobName=name)["Job"]
    result = glue.update_job(JobName=name, JobUpdate={
        "Role": "new-role", "Command": command("pythonshell", "s3://scripts/v2.py"),
        "DefaultArguments": {"--c": "3"}})
    assert result["JobName"] == name
    job = glue.get_job(JobName=name)["Job"]
    assert job["Role"] == "new-role"
    assert job["Command"] == {"Name": "pythonshell", "ScriptLocation": "s3://scripts/v2.py"}
    assert job["DefaultArguments"] == {"--c": "3"}
    # What the update did not mention is gone, back to the defaults.
    assert "Description" not in job
    assert "GlueVersion" not in job
    assert job["MaxRetries"] == 0
    assert job["Timeout"] == 2880
    assert job["ExecutionProperty"] == {"MaxConcurrentRuns": 1}
    assert job["CreatedOn"] == created["CreatedOn"]
    assert job["LastModifiedOn"] >= created["LastModifiedOn"]


def test_delete_job(kit, glue):
    suite = unique("suite")
    name = kit.job(script=SCRIPT, Tags={"suite": suite})
    assert glue.delete_job(JobName=name)["JobName"] == name
    with raises_glue("EntityNotFoundException", name):
        glue.get_job(JobName=name)
    assert glue.batch_get_jobs(JobNames=[name])["JobsNotFound"] == [name]
    assert glue.list_jobs(Tags={"suite": suite})["JobNames"] == []
    assert name not in all_pages(glue.list_jobs, "JobNames")
    # The name is free again; the new job does not inherit the old one's tags.
    glue.create_job(Name=name, Role="local", Command=command())
    assert glue.list_jobs(Tags={"suite": suite})["JobNames"] == []




def test_aws_cli_creates_runs_and_reads_a_job(kit, server, tmp_path, aws_cli):
    def aws(*args):
        return aws_cli("glue", *args)

    name = unique("cli")
    location = kit.script("print('hello from the cli job')\n")
    kit.jobs.append(name)
    assert aws("create-job", "--name", name, "--role", "local", "--command",
               json.dumps({"Name": "pythonshell", "ScriptLocation": location}),
               "--default-arguments", json.dumps({"--k": "v"}))["Name"] == name
    job = aws("get-job", "--job-name", name)["Job"]
    assert job["Command"]["ScriptLocation"] == location
    assert job["DefaultArguments"] == {"--k": "v"}
    assert job["Timeout"] == 2880
    run_id = aws("start-job-run", "--job-name", name)["JobRunId"]
    assert wait_run(kit.glue, name, run_id)["JobRunState"] == "SUCCEEDED"
    runs = aws("get-job-runs", "--job-name", name)["JobRuns"]
    assert [r["Id"] for r in runs] == [run_id]
    assert runs[0]["JobRunState"] == "SUCCEEDED"
