"""openglue_runtime.partition_predicate: push_down_predicate as a Spark SQL predicate over a
table's typed partition columns. Expected results follow Spark SQL's documented semantics
(three-valued logic, implicit casts of strings in comparisons, LIKE's % and _), worked out by
hand for each case."""
import pytest

from openglue_runtime.partition_predicate import Predicate, PredicateError

KEYS = [("region", "string"), ("year", "int"), ("day", "date"), ("score", "double")]
ROW = {"region": "eu-west", "year": "2024", "day": "2024-03-09", "score": "7.5"}


@pytest.mark.parametrize("text,expected", [
    ("region == 'eu-west'", True),
    ("region = \"eu-west\"", True),
    ("REGION = 'eu-west'", True),                      # column names are case-insensitive
    ("`region` <> 'eu-west'", False),
    ("year = 2024 AND region LIKE 'eu-%'", True),
    ("year = '2024'", True),                           # the string is cast to the int
    ("year > '2023.5'", True),                         # ... or to a double when it has one
    ("year in (2022, 2023)", False),
    ("year not in (2022, 2023)", True),
    ("year between 2020 and 2024", True),
    ("year not between 2020 and 2024", False),
    ("day = date '2024-03-09'", True),
    ("day > '2024-03-01'", True),                      # string vs date: cast to date
    ("day = to_date('09/03/2024', 'dd/MM/yyyy')", True),
    ("date_format(day, 'yyyyMM') = '202403'", True),
    ("month(day) = 3 and dayofmonth(day) = 9 and year(day) = year", True),
    ("score >= 7.5 and score * 2 = 15", True),
    ("year % 4 = 0 and -year < 0", True),
    ("region rlike '^eu-(west|east)$'", True),
    ("region not like '%east'", True),
    ("upper(region) = 'EU-WEST' && length(region) = 7", True),
    ("substring(region, 1, 2) = 'eu' || false", True),
    ("concat(region, '/', year) = 'eu-west/2024'", True),
    ("cast(year as string) = '2024' and cast(score as int) = 7", True),
    ("!(region = 'us-east')", True),
    ("not region = 'eu-west' or year = 1999", False),
    ("(region = 'eu-west') = true", True),
])
def test_operators_and_functions(text, expected):
    assert Predicate(text, KEYS).matches(ROW) is expected


def test_null_is_not_true():
    """A null partition value makes a comparison null, and null is not read; `IS NULL`, `<=>`
    and OR with a true side are the ways through (Spark's three-valued logic)."""
    row = dict(ROW, year=None)
    assert not Predicate("year = 2024", KEYS).matches(row)
    assert not Predicate("not year = 2024", KEYS).matches(row)
    assert not Predicate("year in (2024, null)", KEYS).matches(dict(ROW, year="1"))
    assert Predicate("year is null", KEYS).matches(row)
    assert not Predicate("year is not null", KEYS).matches(row)
    assert Predicate("year <=> null", KEYS).matches(row)
    assert Predicate("year = 2024 or region = 'eu-west'", KEYS).matches(row)
    assert not Predicate("year = 2024 and region = 'eu-west'", KEYS).matches(row)
    # A value that does not convert to the column's type is null (Spark's non-ANSI cast).
    assert not Predicate("year > 0", KEYS).matches(dict(ROW, year="n/a"))


@pytest.mark.parametrize("text,message", [
    ("year ==", r"expected a value.*position 8"),
    ("year = = 2024", r"expected a value.*position 8"),
    ("region = 'eu", r"unexpected character \"'\" at position 10"),
    ("month = 1", r"'month', which is not a partition column .*region, year, day, score"),
    ("explode(region) = 'x'", r"function explode\(\) is not supported"),
    ("year in (2024", r"expected '\)' closing the IN list"),
    ("", r"push_down_predicate is empty"),
    ("year = 2024 region", r"unexpected text at position 13"),
])
def test_errors_name_the_position(text, message):
    with pytest.raises(PredicateError, match=message):
        Predicate(text, KEYS)
