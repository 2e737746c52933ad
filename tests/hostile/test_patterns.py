"""Hostile client patterns (issue 6, defect 4): GetTables `Expression` and GetUserDefinedFunctions
`Pattern` are matched by a linear-time engine (RE2), so a pattern built for catastrophic
backtracking answers at once instead of spinning a CPU. Each test is bounded in time and talks to
the test server on 127.0.0.1 only."""
import time

import botocore.exceptions
import pytest

from conftest import raises_glue, table_input

NAUGHTY = "a" * 24 + "!"


def timed(call, **kwargs):
    start = time.monotonic()
    try:
        result = call(**kwargs)
    except botocore.exceptions.ClientError as e:
        result = e
    return result, time.monotonic() - start


@pytest.fixture()
def naughty_table(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(NAUGHTY))
    glue.create_table(DatabaseName=db, TableInput=table_input("a" * 200 + "!"))
    glue.create_table(DatabaseName=db, TableInput=table_input("aaac"))
    return db


@pytest.mark.parametrize("expression", ["((a+)+)+c", "(a+)+c", "(a|a)*c", "(a*)*c", "(a|aa)+c"])
def test_catastrophic_table_expression_answers_at_once(glue, naughty_table, expression):
    out, elapsed = timed(glue.get_tables, DatabaseName=naughty_table, Expression=expression)
    assert elapsed < 1.0, f"{expression} took {elapsed:.2f}s"
    assert [t["Name"] for t in out["TableList"]] == ["aaac"]


def test_long_pathological_table_expression_answers_at_once(glue, raw_glue, naughty_table):
    # The longest pattern the service model lets through (2,048 characters) reaches the engine.
    # ('*' is the dialect's wildcard, so the repetition here is '?' and '+'.)
    expression = "(a?)+" * 409 + "c"
    assert len(expression) <= 2048
    out, elapsed = timed(glue.get_tables, DatabaseName=naughty_table, Expression=expression)
    assert elapsed < 1.0, f"took {elapsed:.2f}s"
    if isinstance(out, Exception):  # too large for the engine's budget: refused, not run
        assert out.response["Error"]["Code"] == "InvalidInputException"
    else:
        assert [t["Name"] for t in out["TableList"]] == ["aaac"]
    # 10,000 characters: refused by the model's length limit before any matching, at once.
    huge = "((a+)+)+" * 1250
    assert len(huge) == 10_000
    out, elapsed = timed(raw_glue.get_tables, DatabaseName=naughty_table, Expression=huge)
    assert elapsed < 1.0, f"took {elapsed:.2f}s"
    assert isinstance(out, botocore.exceptions.ClientError)
    assert out.response["Error"]["Code"] in ("ValidationException", "InvalidInputException")


def test_catastrophic_function_pattern_answers_at_once(glue, db):
    glue.create_user_defined_function(DatabaseName=db, FunctionInput={
        "FunctionName": NAUGHTY, "ClassName": "x.Y", "OwnerName": "o", "OwnerType": "USER"})
    out, elapsed = timed(glue.get_user_defined_functions, DatabaseName=db, Pattern="((a+)+)+c")
    assert elapsed < 1.0, f"took {elapsed:.2f}s"
    assert out["UserDefinedFunctions"] == []
    pattern = "(a+)+" * 50 + "c"  # 251 characters, under the model's 255
    out, elapsed = timed(glue.get_user_defined_functions, DatabaseName=db, Pattern=pattern)
    assert elapsed < 1.0, f"took {elapsed:.2f}s"


@pytest.mark.parametrize("expression", ["(a)\\1", "a(?=b)", "(", "a{2,1}", "a)(b", "x|)"])
def test_pattern_the_engine_cannot_run_is_invalid_input(glue, naughty_table, expression):
    with raises_glue("InvalidInputException"):
        glue.get_tables(DatabaseName=naughty_table, Expression=expression)


def test_deeply_nested_pattern_answers_quickly(glue, naughty_table):
    expression = "(" * 600 + "a?" + ")+" * 600 + "c"
    out, elapsed = timed(glue.get_tables, DatabaseName=naughty_table, Expression=expression)
    assert elapsed < 1.0, f"took {elapsed:.2f}s"
    if isinstance(out, Exception):  # past the engine's nesting limit: refused, not run
        assert out.response["Error"]["Code"] == "InvalidInputException"
    else:
        assert [t["Name"] for t in out["TableList"]] == ["aaac"]


def test_dialect_is_unchanged(glue, naughty_table):
    """Same semantics as before the engine change: whole-name, case-insensitive, '*' wildcard,
    '|' alternatives, '.*' kept as a regex."""
    def names(expression):
        return sorted(t["Name"] for t in glue.get_tables(DatabaseName=naughty_table,
                                                          Expression=expression)["TableList"])
    assert names("AAAC") == ["aaac"]
    assert names("aaa") == []            # whole name, not a substring
    assert names("*c") == ["aaac"]
    assert names("aa.*c|nothing") == ["aaac"]
    assert names("*!") == sorted(["a" * 200 + "!", NAUGHTY])
    assert len(names("*")) == 3
