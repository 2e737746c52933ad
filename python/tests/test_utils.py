import pytest

from awsglue.job import Job, current_job
from awsglue.utils import GlueArgumentError, getResolvedOptions
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)

ARGV = ["script.py", "--JOB_NAME", "orders", "--JOB_ID", "j_orders", "--JOB_RUN_ID", "jr_1",
        "--TempDir", "/tmp/x"]


def test_resolves_named_options_from_a_glue_command_line():
    argv = ["script.py", "--JOB_NAME", "orders", "--JOB_RUN_ID", "jr_1", "--day", "2024-01-02",
            "--flag=x"]
    assert getResolvedOptions(argv, ["JOB_NAME", "day", "flag"]) == {
        "JOB_NAME": "orders", "day": "2024-01-02", "flag": "x"}


def test_equals_form_keeps_everything_after_the_first_equals_sign():
    assert getResolvedOptions(ARGV + ["--where=a=b", "--empty="], ["where", "empty"]) == {
        "where": "a=b", "empty": ""}


def test_last_occurrence_wins_and_unknown_arguments_are_ignored():
    argv = ARGV + ["--day", "1", "--unknown", "u", "stray", "-x", "--day", "2", "--flagonly"]
    assert getResolvedOptions(argv, ["day"]) == {"day": "2"}


def test_values_may_start_with_a_single_dash():
    assert getResolvedOptions(ARGV + ["--offset", "-5"], ["offset"]) == {"offset": "-5"}


def test_missing_options_are_named():
    with pytest.raises(GlueArgumentError, match="required: --day, --month$"):
        getResolvedOptions(["script.py", "--JOB_NAME", "x"], ["JOB_NAME", "day", "month"])


def test_an_option_without_a_value_is_an_error():
    with pytest.raises(GlueArgumentError, match="argument --day: expected one argument"):
        getResolvedOptions(ARGV + ["--day", "--month", "1"], ["day", "month"])
    with pytest.raises(GlueArgumentError, match="argument --day: expected one argument"):
        getResolvedOptions(ARGV + ["--day"], ["day"])


def test_glue_argument_error_is_a_value_error_not_an_exit():
    with pytest.raises(ValueError):
        getResolvedOptions(ARGV, ["nope"])


def test_always_present_keys_resolve():
    args = getResolvedOptions(ARGV, ["JOB_NAME", "JOB_ID", "JOB_RUN_ID", "TempDir",
                                     "job-bookmark-option"])
    assert args == {"JOB_NAME": "orders", "JOB_ID": "j_orders", "JOB_RUN_ID": "jr_1",
                    "TempDir": "/tmp/x", "job-bookmark-option": "job-bookmark-disable"}


def test_bookmark_option_is_validated_even_when_not_asked_for():
    for value in ("job-bookmark-enable", "job-bookmark-disable", "job-bookmark-pause"):
        assert getResolvedOptions(ARGV + ["--job-bookmark-option", value],
                                  ["job-bookmark-option"]) == {"job-bookmark-option": value}
    with pytest.raises(GlueArgumentError, match="invalid choice: 'job-bookmark-on'"):
        getResolvedOptions(ARGV + ["--job-bookmark-option", "job-bookmark-on"], ["JOB_NAME"])


def test_bookmark_from_and_to_go_together_and_only_with_pause():
    pause = ["--job-bookmark-option", "job-bookmark-pause"]
    got = getResolvedOptions(ARGV + pause + ["--job-bookmark-from", "jr_a",
                                             "--job-bookmark-to", "jr_b"],
                             ["job-bookmark-from", "job-bookmark-to"])
    assert got == {"job-bookmark-from": "jr_a", "job-bookmark-to": "jr_b"}
    with pytest.raises(GlueArgumentError, match="must be given together"):
        getResolvedOptions(ARGV + pause + ["--job-bookmark-from", "jr_a"], ["JOB_NAME"])
    with pytest.raises(GlueArgumentError, match="only be used with --job-bookmark-option "
                                                "job-bookmark-pause"):
        getResolvedOptions(ARGV + ["--job-bookmark-option", "job-bookmark-enable",
                                   "--job-bookmark-from", "a", "--job-bookmark-to", "b"],
                           ["JOB_NAME"])


def test_reserved_names_are_refused():
    for name in ("conf", "debug", "mode", "--conf"):
        with pytest.raises(GlueArgumentError, match="reserved"):
            getResolvedOptions(ARGV + ["--conf", "x"], ["JOB_NAME", name])


def test_options_must_be_a_list():
    with pytest.raises(GlueArgumentError):
        getResolvedOptions(ARGV, "JOB_NAME")


def test_commit_requires_init():
    job = Job()
    with pytest.raises(RuntimeError):
        job.commit()
    job.init("orders", {"JOB_NAME": "orders"})
    job.commit()
    assert job.committed
