"""awsgluedq and DQDL: the parser's errors, every rule type passing and failing on both engines,
Glue Studio's data-quality blocks (the default ruleset, a failing node that fails the job,
row-level outcomes).

Expected metric values are computed in the tests from the rows themselves with plain Python
(statistics, collections), not by the code under test; outcome semantics (between is exclusive,
a null fails ColumnValues, Uniqueness = values seen once / rows) follow the DQDL reference and
AWS's published grammar (docs/data-quality.md says which)."""
import collections
import datetime
import math
import statistics

import pytest

from awsglue.dynamicframe import DynamicFrame, DynamicFrameCollection
from awsglue.transforms import SelectFromCollection
from awsgluedq.transforms import EvaluateDataQuality
from openglue_runtime.quality import dqdl

from engine_kit import glue_context

NOW = datetime.datetime.now(datetime.timezone.utc)
ROWS = [
    {"id": 1, "name": "alice", "price": 10.0, "qty": 1, "code": "A1", "day": (NOW - datetime.timedelta(days=1)).date().isoformat(), "txt": "12"},
    {"id": 2, "name": "bob", "price": 20.0, "qty": 2, "code": "B2", "day": (NOW - datetime.timedelta(days=2)).date().isoformat(), "txt": "7"},
    {"id": 3, "name": "carol", "price": 30.0, "qty": 3, "code": "C3", "day": (NOW - datetime.timedelta(days=3)).date().isoformat(), "txt": "x"},
    {"id": 4, "name": "bob", "price": 40.0, "qty": None, "code": "zz", "day": (NOW - datetime.timedelta(days=40)).date().isoformat(), "txt": "5"},
    {"id": 5, "name": "", "price": 50.0, "qty": 5, "code": "E5", "day": (NOW - datetime.timedelta(days=4)).date().isoformat(), "txt": "9"},
]
PRICES = [r["price"] for r in ROWS]
NAMES = [r["name"] for r in ROWS]


@pytest.fixture(params=["embedded", "spark"], scope="module")
def ctx(request):
    return glue_context(request.param)


@pytest.fixture(scope="module")
def dyf(ctx):
    return DynamicFrame.from_records(ROWS, ctx, "orders")


def outcomes(frame, ruleset, **kw):
    out = EvaluateDataQuality.apply(frame=frame, ruleset=ruleset, **kw)
    return {r["Rule"]: r for r in out.to_arrow().to_pylist()}


def metrics(row):
    m = row["EvaluatedMetrics"]
    return dict(m) if not isinstance(m, dict) else m


# ---------------------------------------------------------------------------- the parser

@pytest.mark.parametrize("text, where, reason", [
    ("Rules = [ RowCount > ]", (1, 22), "expected a number"),
    ("Rules = [ Foo \"x\" ]", (1, 11), "unknown rule type 'Foo'"),
    ("Rules = [ IsComplete \"a\" IsUnique \"b\" ]", (1, 26), "expected ',' between rules"),
    ("Rules = [\n  RowCount > 1,\n  Mean \"x\" ]", (3, 12), "expected a condition for Mean"),
    ("Rules = [ IsComplete \"a\" > 3 ]", (1, 26), "IsComplete takes no condition"),
    ("Rules = [ ColumnCorrelation \"a\" > 0.5 ]", (1, 11), "ColumnCorrelation takes 2"),
    ("Rules = [ RowCount > 1 with threshold > 0.5 ]", (1, 11), "does not take 'with threshold'"),
    ("Rules = [ (RowCount > 1) and (RowCount > 2) or (RowCount > 3) ]", (1, 45), "cannot be mixed"),
    ("Rules = [ IsComplete \"a ]", (1, 22), "not closed"),
    ("", (1, 1), "the ruleset is empty"),
])
def test_syntax_errors_name_the_line_and_column(text, where, reason):
    with pytest.raises(dqdl.DQDLSyntaxError) as e:
        dqdl.parse(text)
    assert (e.value.line, e.value.column) == where
    assert reason in str(e.value)
    assert str(e.value).startswith(f"line {where[0]}, column {where[1]}: ")


def test_the_whole_grammar_parses():
    rs = dqdl.parse('''
        Metadata = { "Version": "1.0", "Owners": ["a", "b"] }
        DataSources = { "Default": "orders" }
        allowed = ["A1", "B2"]
        DefaultLabels = ["team" = "data"]
        Rules = [
            # a comment
            RowCount > avg(last(3)) * 0.9,
            ColumnValues "code" in $allowed,
            ColumnValues "code" not in ["X", NULL, EMPTY, WHITESPACES_ONLY],
            ColumnValues "day" > (now() - 3 days),
            ColumnValues "id" != 3 with threshold >= 0.5,
            ColumnValues "name" not matches "[0-9]+",
            ColumnValues "price" not between 1 and 2 where "qty > 1" labels = ["k" = "v"],
            DataFreshness "day" <= 24 hours,
            IsUnique "id" and "name",
            (IsComplete "id") and ((IsUnique "id") or (RowCount = 0)) labels = ["c" = "d"]
        ]
        Analyzers = [ AllStatistics "price", RowCount ]''')
    assert rs.metadata == {"Version": "1.0", "Owners": ["a", "b"]}
    assert rs.default_labels == {"team": "data"}
    assert len(rs.rules) == 10 and len(rs.analyzers) == 2
    price = rs.rules[6]
    assert (price.condition.op, price.condition.negated, price.where, price.labels) == \
        ("between", True, "qty > 1", {"k": "v"})
    assert rs.rules[8].parameters == ["id", "name"]
    # labels after a parenthesised rule belong to it (the grammar's `( rule ) labels`)
    assert rs.rules[9].op == "and" and rs.rules[9].children[1].labels == {"c": "d"}
    assert rs.rules[4].threshold.op == ">="


# ---------------------------------------------------------------------------- rule types

def test_dataset_and_column_statistics(dyf):
    got = outcomes(dyf, """Rules = [
        RowCount = 5, RowCount between 5 and 10, ColumnCount = 7, ColumnExists "price",
        ColumnExists "nope", ColumnNamesMatchPattern "[a-z]+",
        Mean "price" = 30, Sum "price" > 150, StandardDeviation "price" < 15,
        Variance "price" > 100, ColumnCorrelation "price" "id" > 0.99,
        Entropy "name" > 1.3, DistinctValuesCount "name" = 4, UniqueValueRatio "name" between 0.7 and 0.8
    ]""")
    assert got["RowCount = 5"]["Outcome"] == "Passed"
    # between is exclusive (DQDL): 5 is not between 5 and 10
    assert got["RowCount between 5 and 10"]["Outcome"] == "Failed"
    assert got["RowCount between 5 and 10"]["FailureReason"] == \
        "Value: 5.0 does not meet the constraint requirement!"
    assert metrics(got["RowCount = 5"]) == {"Dataset.*.RowCount": 5.0}
    assert got["ColumnCount = 7"]["Outcome"] == "Passed"
    assert got['ColumnExists "price"']["Outcome"] == "Passed"
    assert got['ColumnExists "nope"']["Outcome"] == "Failed"
    assert got['ColumnNamesMatchPattern "[a-z]+"']["Outcome"] == "Passed"
    assert metrics(got['Mean "price" = 30'])["Column.price.Mean"] == statistics.fmean(PRICES)
    assert got['Sum "price" > 150']["Outcome"] == "Failed"            # 150 is not > 150
    sd = statistics.pstdev(PRICES)
    assert math.isclose(metrics(got['StandardDeviation "price" < 15'])["Column.price.StandardDeviation"], sd)
    assert got['StandardDeviation "price" < 15']["Outcome"] == ("Passed" if sd < 15 else "Failed")
    assert math.isclose(metrics(got['Variance "price" > 100'])["Column.price.Variance"], statistics.pvariance(PRICES))
    assert got['ColumnCorrelation "price" "id" > 0.99']["Outcome"] == "Passed"
    counts = collections.Counter(NAMES)
    n = len(NAMES)
    entropy = -sum(c / n * math.log(c / n) for c in counts.values())
    assert math.isclose(metrics(got['Entropy "name" > 1.3'])["Column.name.Entropy"], entropy)
    assert got['DistinctValuesCount "name" = 4']["Outcome"] == "Passed"
    ratio = sum(1 for c in counts.values() if c == 1) / len(counts)       # 3 / 4
    assert metrics(got['UniqueValueRatio "name" between 0.7 and 0.8'])["Column.name.UniqueValueRatio"] == ratio


def test_completeness_uniqueness_and_keys(dyf):
    got = outcomes(dyf, """Rules = [
        IsComplete "id", IsComplete "qty", Completeness "qty" >= 0.8, Completeness "qty" > 0.8,
        IsUnique "id", IsUnique "name", Uniqueness "name" = 0.6, IsPrimaryKey "id",
        IsPrimaryKey "qty", IsUnique "name" "price"
    ]""")
    assert got['IsComplete "id"']["Outcome"] == "Passed"
    assert got['IsComplete "qty"']["Outcome"] == "Failed"
    assert metrics(got['IsComplete "qty"'])["Column.qty.Completeness"] == 4 / 5
    assert got['Completeness "qty" >= 0.8']["Outcome"] == "Passed"
    assert got['Completeness "qty" > 0.8']["Outcome"] == "Failed"
    assert got['IsUnique "id"']["Outcome"] == "Passed"
    assert got['IsUnique "name"']["Outcome"] == "Failed"
    singles = sum(1 for c in collections.Counter(NAMES).values() if c == 1)
    assert metrics(got['Uniqueness "name" = 0.6'])["Column.name.Uniqueness"] == singles / 5
    assert got['Uniqueness "name" = 0.6']["Outcome"] == "Passed"
    assert got['IsPrimaryKey "id"']["Outcome"] == "Passed"
    assert got['IsPrimaryKey "qty"']["Outcome"] == "Failed"
    assert got['IsUnique "name" "price"']["Outcome"] == "Passed"


def test_column_values_length_types_freshness(dyf):
    got = outcomes(dyf, """Rules = [
        ColumnValues "price" between 5 and 55, ColumnValues "price" > 10,
        ColumnValues "price" > 10 with threshold >= 0.8, ColumnValues "price" > 10 with threshold > 0.8,
        ColumnValues "code" in ["A1", "B2", "C3", "E5"], ColumnValues "code" matches "[A-Z][0-9]",
        ColumnValues "code" matches "[A-Z][0-9]" with threshold = 0.8,
        ColumnValues "qty" in [1, 2, 3, 5, NULL], ColumnValues "qty" <= 5,
        ColumnValues "name" != EMPTY, ColumnValues "day" > (now() - 30 days) with threshold >= 0.8,
        ColumnLength "name" between 2 and 6, ColumnLength "name" <= 5,
        ColumnDataType "txt" = "INTEGER" with threshold >= 0.8, ColumnDataType "txt" = "INTEGER",
        ColumnDataType "price" = "DOUBLE",
        DataFreshness "day" <= 5 days, DataFreshness "day" <= 5 days with threshold >= 0.8
    ]""")
    def o(rule):
        return got[rule]["Outcome"]
    assert o('ColumnValues "price" between 5 and 55') == "Passed"
    assert o('ColumnValues "price" > 10') == "Failed"
    compliance = sum(p > 10 for p in PRICES) / 5
    assert metrics(got['ColumnValues "price" > 10'])["Column.price.ColumnValues.Compliance"] == compliance
    assert metrics(got['ColumnValues "price" > 10'])["Column.price.Maximum"] == max(PRICES)
    assert o('ColumnValues "price" > 10 with threshold >= 0.8') == "Passed"
    assert o('ColumnValues "price" > 10 with threshold > 0.8') == "Failed"
    assert o('ColumnValues "code" in ["A1", "B2", "C3", "E5"]') == "Failed"          # zz
    assert o('ColumnValues "code" matches "[A-Z][0-9]"') == "Failed"
    assert o('ColumnValues "code" matches "[A-Z][0-9]" with threshold = 0.8') == "Passed"
    assert o('ColumnValues "qty" in [1, 2, 3, 5, NULL]') == "Passed"
    assert o('ColumnValues "qty" <= 5') == "Failed"                                   # the null
    assert o('ColumnValues "name" != EMPTY') == "Failed"
    assert o('ColumnValues "day" > (now() - 30 days) with threshold >= 0.8') == "Passed"
    assert o('ColumnLength "name" between 2 and 6') == "Failed"                       # ""
    lengths = [len(x) for x in NAMES]
    assert metrics(got['ColumnLength "name" <= 5'])["Column.name.MaximumLength"] == max(lengths)
    assert metrics(got['ColumnLength "name" <= 5'])["Column.name.MinimumLength"] == min(lengths)
    assert o('ColumnLength "name" <= 5') == "Passed"
    assert o('ColumnDataType "txt" = "INTEGER" with threshold >= 0.8') == "Passed"
    assert o('ColumnDataType "txt" = "INTEGER"') == "Failed"                          # "x"
    assert o('ColumnDataType "price" = "DOUBLE"') == "Passed"
    assert o('DataFreshness "day" <= 5 days') == "Failed"                             # 40 days
    assert o('DataFreshness "day" <= 5 days with threshold >= 0.8') == "Passed"


def test_where_composites_custom_sql_and_errors(dyf):
    got = outcomes(dyf, """Rules = [
        RowCount = 3 where "price > 15 and price < 45",
        ColumnValues "qty" > 1 where "id > 1",
        (RowCount > 1) and (IsComplete "qty"), (RowCount > 1) or (IsComplete "qty"),
        (RowCount > 1) and ((IsComplete "qty") or (IsUnique "id")),
        CustomSql "select count(*) from primary where price >= 30" = 3,
        CustomSql "select id from primary" > 0,
        Mean "missing" > 1, RowCount > 1 where "no_such_column > 1",
        IsComplete "id" labels = ["severity" = "high"]
    ]""")
    assert got['RowCount = 3 where "price > 15 and price < 45"']["Outcome"] == "Passed"
    assert got['ColumnValues "qty" > 1 where "id > 1"']["Outcome"] == "Failed"       # id 4: null qty
    assert got['(RowCount > 1) and (IsComplete "qty")']["Outcome"] == "Failed"
    assert got['(RowCount > 1) or (IsComplete "qty")']["Outcome"] == "Passed"
    assert got['(RowCount > 1) and ((IsComplete "qty") or (IsUnique "id"))']["Outcome"] == "Passed"
    assert got['CustomSql "select count(*) from primary where price >= 30" = 3']["Outcome"] == "Passed"
    bad = got['CustomSql "select id from primary" > 0']
    assert bad["Outcome"] == "Error" and "must return one value" in bad["FailureReason"]
    missing = got['Mean "missing" > 1']
    assert missing["Outcome"] == "Error"
    assert missing["FailureReason"].startswith('Column "missing" does not exist')
    assert got['RowCount > 1 where "no_such_column > 1"']["Outcome"] == "Error"
    # the other rules of the ruleset were still evaluated
    assert got['IsComplete "id" labels = ["severity" = "high"]']["Outcome"] == "Passed"


def test_reference_data_sets(ctx, dyf):
    ref = DynamicFrame.from_records([{"id": i, "name": n} for i, n in
                                     [(1, "alice"), (2, "bob"), (3, "carol"), (9, "x")]], ctx, "ref")
    got = outcomes(dyf, """Rules = [
        ReferentialIntegrity "id" "reference.id" = 0.6, ReferentialIntegrity "id" "reference.id" = 1.0,
        RowCountMatch "reference" = 1.25, SchemaMatch "reference" between 0.2 and 0.3,
        DatasetMatch "reference" "id" "name" = 0.6, AggregateMatch "count(*)" "count(reference.*)" = 0.8,
        RowCountMatch "other" > 0
    ]""", additional_data_sources={"reference": ref})
    assert got['ReferentialIntegrity "id" "reference.id" = 0.6']["Outcome"] == "Passed"   # 3 of 5
    assert got['ReferentialIntegrity "id" "reference.id" = 1.0']["Outcome"] == "Failed"
    assert got['RowCountMatch "reference" = 1.25']["Outcome"] == "Passed"                 # 5 / 4
    assert metrics(got['SchemaMatch "reference" between 0.2 and 0.3'])["Dataset.reference.SchemaMatch"] == 2 / 7
    assert got['DatasetMatch "reference" "id" "name" = 0.6']["Outcome"] == "Passed"
    assert got['AggregateMatch "count(*)" "count(reference.*)" = 0.8']["Outcome"] == "Passed"
    other = got['RowCountMatch "other" > 0']
    assert other["Outcome"] == "Error" and '"other" was not given' in other["FailureReason"]


# ---------------------------------------------------------------------------- Glue Studio

DEFAULT_DATA_QUALITY_RULESET = """
    Rules = [
        ColumnCount > 0
    ]
"""


def test_studio_default_block_changes_nothing(ctx, dyf):
    before = dyf.to_arrow().to_pylist()
    out = EvaluateDataQuality().process_rows(
        frame=dyf, ruleset=DEFAULT_DATA_QUALITY_RULESET,
        publishing_options={"dataQualityEvaluationContext": "EvaluateDataQuality_node1700000000000",
                            "enableDataQualityResultsPublishing": True},
        additional_options={"dataQualityResultsPublishing.strategy": "BEST_EFFORT",
                            "observations.scope": "ALL"})
    assert isinstance(out, DynamicFrameCollection)
    assert set(out.keys()) == {"ruleOutcomes", "rowLevelOutcomes", "originalData"}
    assert out["originalData"].to_arrow().to_pylist() == before
    assert dyf.to_arrow().to_pylist() == before
    rule = out["ruleOutcomes"].to_arrow().to_pylist()
    assert [(r["Rule"], r["Outcome"], r["FailureReason"]) for r in rule] == \
        [("ColumnCount > 0", "Passed", None)]


def test_studio_failing_node_fails_the_job_with_glues_message(dyf):
    ruleset = 'Rules = [ IsComplete "qty", RowCount > 0 ]'
    node = EvaluateDataQuality().process_rows(
        frame=dyf, ruleset=ruleset,
        publishing_options={"dataQualityEvaluationContext": "EvaluateDataQuality_node1",
                            "enableDataQualityCloudWatchMetrics": True,
                            "enableDataQualityResultsPublishing": True},
        additional_options={"performanceTuning.caching": "CACHE_NOTHING"})
    outcomes_frame = SelectFromCollection.apply(dfc=node, key="ruleOutcomes",
                                                transformation_ctx="ruleOutcomes")
    with pytest.raises(AssertionError, match="The job failed due to failing DQ rules for node: "
                                             "EvaluateDataQuality_node1"):
        assert node[EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY].filter(
            lambda x: x["Outcome"] == "Failed").count() == 0, \
            "The job failed due to failing DQ rules for node: EvaluateDataQuality_node1"
    assert outcomes_frame.count() == 2


def test_row_level_outcomes(dyf):
    node = EvaluateDataQuality().process_rows(
        frame=dyf, ruleset='Rules = [ IsComplete "qty", ColumnValues "price" > 15, RowCount > 0, IsUnique "name" ]',
        publishing_options={"dataQualityEvaluationContext": "rows"})
    rows = SelectFromCollection.apply(dfc=node, key="rowLevelOutcomes").to_arrow().to_pylist()
    # every row once (the embedded engine keeps the frame's order; Spark promises none)
    assert sorted(r["id"] for r in rows) == [r["id"] for r in ROWS]
    by_id = {r["id"]: r for r in rows}
    # id 1: price 10 fails ColumnValues; "alice" unique
    assert by_id[1]["DataQualityRulesFail"] == ['ColumnValues "price" > 15']
    assert by_id[1]["DataQualityRulesPass"] == ['IsComplete "qty"', 'IsUnique "name"']
    assert by_id[1]["DataQualityRulesSkip"] == ["RowCount > 0"]
    assert by_id[1]["DataQualityEvaluationResult"] == "Failed"
    # id 3: passes all row-level rules
    assert by_id[3]["DataQualityRulesFail"] == []
    assert by_id[3]["DataQualityEvaluationResult"] == "Passed"
    # id 4: null qty, "bob" seen twice
    assert by_id[4]["DataQualityRulesFail"] == ['IsComplete "qty"', 'IsUnique "name"']
    # the original columns are all there, unchanged
    assert {k: by_id[2][k] for k in ROWS[1]} == ROWS[1]


def test_a_ruleset_that_is_not_dqdl_fails_before_reading(dyf):
    with pytest.raises(ValueError, match=r"line 1, column 22: expected a number"):
        EvaluateDataQuality.apply(frame=dyf, ruleset="Rules = [ RowCount > ]")


# ---------------------------------------------------------------------------- recommendations

def test_a_recommended_ruleset_holds_on_the_rows_it_was_made_from(ctx, dyf):
    from openglue_runtime.quality import evaluate as ev, recommend
    on_spark = hasattr(ctx._engine, "from_spark")
    backend = ev.SparkBackend(dyf.toDF()) if on_spark else ev.DuckDBBackend(dyf.to_arrow())
    text = recommend.recommend(backend)
    rules = [r.strip().rstrip(",") for r in text.splitlines()[1:-1]]
    assert rules[0] == "RowCount between 2 and 11"
    assert 'IsComplete "id"' in rules and 'IsUnique "id"' in rules
    assert 'Completeness "qty" >= 0.8' in rules
    assert 'ColumnValues "id" between 0 and 6' in rules
    assert 'ColumnValues "qty" between 0 and 6 with threshold >= 0.8' in rules
    assert 'ColumnValues "name" in ["", "alice", "bob", "carol"]' in rules
    got = outcomes(dyf, text)
    assert {r["Outcome"] for r in got.values()} == {"Passed"}, got


# ---------------------------------------------------------------------------- dynamic rules

def test_dynamic_rules_and_anomalies_compare_with_the_history():
    import pyarrow as pa
    from openglue_runtime.quality import evaluate as ev
    backend = ev.DuckDBBackend(pa.table({"x": [1, 2, 3, 4, 5]}))
    rules = ['RowCount > avg(last(2)) * 0.5', 'RowCount < min(last(3))', 'Mean "x" <= max(last(1)) + 1',
             'DetectAnomalies "RowCount"', 'RowCount = last(1)']
    ruleset = "Rules = [ " + ", ".join(rules) + " ]"
    history = {rules[0]: [4.0, 6.0, 100.0], rules[1]: [9.0, 7.0, 8.0], rules[2]: [2.0],
               rules[3]: [100.0, 101.0, 99.0, 100.0]}
    got = {o.rule: o for o in ev.evaluate(backend, ruleset, history=history)[0].outcomes}
    assert got[rules[0]].outcome == "Passed"       # 5 > (4 + 6) / 2 * 0.5
    assert got[rules[1]].outcome == "Passed"       # 5 < 7
    assert got[rules[2]].outcome == "Passed"       # mean 3 <= 2 + 1
    assert got[rules[3]].outcome == "Failed"       # 5 rows against ~100: an anomaly
    assert got[rules[4]].outcome == "Error"
    assert "no history" in got[rules[4]].failure_reason
    calm = {rules[3]: [5.0, 5.0, 6.0, 4.0]}
    again = {o.rule: o for o in ev.evaluate(backend, ruleset, history=calm)[0].outcomes}
    assert again[rules[3]].outcome == "Passed"


def test_a_rulesets_sql_reaches_no_files_on_the_embedded_engine(tmp_path):
    """CustomSql and where clauses run in DuckDB over the rows in memory; files, extensions and
    the settings that would allow them are refused (the rule errs, the others run)."""
    import pyarrow as pa
    from openglue_runtime.quality import evaluate as ev
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    target = tmp_path / "out.csv"
    backend = ev.DuckDBBackend(pa.table({"x": [1, 2]}))
    rules = [f"CustomSql \"select count(*) from read_csv('{secret}')\" = 1",
             f"RowCount > 0 where \"x in (select a from read_csv('{secret}'))\"",
             "CustomSql \"select count(*) from primary\" = 2"]
    got = {o.rule: o for o in ev.evaluate(backend, "Rules = [ " + ", ".join(rules) + " ]")[0].outcomes}
    assert got[rules[0]].outcome == "Error" and "Permission Error" in got[rules[0]].failure_reason
    assert got[rules[1]].outcome == "Error"
    assert got[rules[2]].outcome == "Passed"
    with pytest.raises(Exception):
        backend.rows(f"COPY (SELECT 1) TO '{target}'")
    with pytest.raises(Exception):
        backend.rows("SET enable_external_access = true")
    assert not target.exists()
