"""Evaluates a DQDL ruleset over a frame's rows: the metrics, each rule's outcome, row-level
outcomes.

How: every metric a ruleset needs is an SQL aggregate over the frame (`count(*) FILTER (WHERE
...)`, `avg`, `stddev_pop`, `corr`, `min(length(..))`, ...). All the plain aggregates of a
ruleset go into ONE query, so the rows are scanned once however many rules there are; the
metrics that need value frequencies (uniqueness, distinct values, entropy) add one grouped query
per column set. The SQL runs where the rows are:

- on the embedded engine, in DuckDB over the frame's Arrow table (zero-copy; DuckDB's vectorised
  C++ executes the aggregates);
- on the Spark engine, in Spark SQL over the frame's DataFrame (a temporary view), so the work
  runs on the executors.

The two dialects differ in a handful of functions (`_Dialect`); everything else is shared, so
both engines give the same outcomes by construction. Rules referring to other data sets
(ReferentialIntegrity, DatasetMatch, RowCountMatch, SchemaMatch, AggregateMatch) see them as
tables named by their alias; `CustomSql` sees the frame as `primary`.

Outcomes follow AWS Glue Data Quality: `Passed` / `Failed` / `Error`, a failure reason
"Value: <metric> does not meet the constraint requirement!", the metrics as
`Dataset.*.RowCount`, `Column.<name>.Completeness`, ..., and the score = passed / evaluated.
"""
import datetime as _dt
import math
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from openglue_runtime.quality import dqdl
from openglue_runtime.quality.dqdl import (Bin, Composite, Condition, DateExpr, Duration, Func,
                                           Keyword, Num, Rule, Size, Str)

__all__ = ["RuleOutcome", "Evaluation", "evaluate", "DuckDBBackend", "SparkBackend",
           "ROW_LEVEL_RULES"]

PASSED, FAILED, ERROR = "Passed", "Failed", "Error"
# Rules with a per-row meaning: their outcome per row goes to rowLevelOutcomes. The others are
# dataset-level (their outcome is the same for every row) and are listed as skipped per row.
ROW_LEVEL_RULES = {"IsComplete", "Completeness", "ColumnValues", "ColumnLength",
                   "ColumnDataType", "DataFreshness", "IsUnique", "IsPrimaryKey", "Uniqueness"}


class RuleError(Exception):
    """A rule that cannot be evaluated over this data (a missing column, a bad where clause):
    the rule's outcome is Error with this message; the other rules still run."""


@dataclass
class RuleOutcome:
    rule: str
    outcome: str
    failure_reason: Optional[str]
    metrics: Dict[str, float]
    labels: Dict[str, str] = field(default_factory=dict)
    rule_type: str = ""

    @property
    def result(self) -> str:          # the API's Result enum
        return {PASSED: "PASS", FAILED: "FAIL"}.get(self.outcome, "ERROR")


@dataclass
class Evaluation:
    outcomes: List[RuleOutcome]
    analyzer_metrics: Dict[str, float]
    started: _dt.datetime
    completed: _dt.datetime
    row_count: int = 0

    @property
    def score(self) -> float:
        return (sum(o.outcome == PASSED for o in self.outcomes) / len(self.outcomes)
                if self.outcomes else 1.0)


# ---------------------------------------------------------------------------------- backends

class _Dialect:
    """The SQL that differs between DuckDB and Spark."""
    name = ""

    def quote(self, ident: str) -> str:
        raise NotImplementedError

    def full_match(self, expr: str, pattern: str) -> str:
        raise NotImplementedError

    def length(self, expr: str) -> str:
        return f"length(CAST({expr} AS VARCHAR))" if self.name == "duckdb" else f"length(CAST({expr} AS STRING))"

    def try_cast(self, expr: str, sql_type: str) -> str:
        raise NotImplementedError

    def seconds_since(self, expr: str, now: _dt.datetime) -> str:
        raise NotImplementedError

    def filter_nonnull(self, array_sql: str) -> str:
        raise NotImplementedError

    def string_type(self) -> str:
        return "VARCHAR" if self.name == "duckdb" else "STRING"


def _lit(value: str) -> str:
    """A DuckDB string literal (no backslash escapes in DuckDB's SQL)."""
    return "'" + value.replace("'", "''") + "'"


class _DuckDialect(_Dialect):
    name = "duckdb"

    def quote(self, ident):
        return '"' + ident.replace('"', '""') + '"'

    def full_match(self, expr, pattern):
        return f"regexp_full_match(CAST({expr} AS VARCHAR), {_lit(pattern)})"

    def try_cast(self, expr, sql_type):
        return f"TRY_CAST({expr} AS {sql_type})"

    def seconds_since(self, expr, now):
        return (f"epoch(TIMESTAMP {_lit(now.strftime('%Y-%m-%d %H:%M:%S'))}) - "
                f"epoch(TRY_CAST({expr} AS TIMESTAMP))")

    def filter_nonnull(self, array_sql):
        return f"list_filter({array_sql}, lambda x: x IS NOT NULL)"


class _SparkDialect(_Dialect):
    name = "spark"

    def quote(self, ident):
        return "`" + ident.replace("`", "``") + "`"

    def full_match(self, expr, pattern):
        return f"(CAST({expr} AS STRING) RLIKE {_spark_lit('^(?:' + pattern + ')$')})"

    def try_cast(self, expr, sql_type):
        # Spark's CAST (ANSI mode off, its default) gives NULL for text that does not convert.
        return f"CAST({expr} AS {sql_type})"

    def seconds_since(self, expr, now):
        return (f"(unix_timestamp(TIMESTAMP {_spark_lit(now.strftime('%Y-%m-%d %H:%M:%S'))}) - "
                f"unix_timestamp(CAST({expr} AS TIMESTAMP)))")

    def filter_nonnull(self, array_sql):
        return f"filter({array_sql}, x -> x IS NOT NULL)"


def _spark_lit(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class DuckDBBackend:
    """The embedded engine's rows (a pyarrow Table) in an in-memory DuckDB connection."""

    def __init__(self, table, references: Optional[Dict[str, Any]] = None):
        import duckdb
        self.dialect = _DuckDialect()
        self.conn = duckdb.connect(":memory:")
        self.table = table
        self.conn.register("_dq_primary", table)
        self.conn.execute('CREATE VIEW "primary" AS SELECT * FROM _dq_primary')
        self.primary = '"primary"'
        self.references = {}
        for alias, ref in (references or {}).items():
            name = f"_dq_ref_{len(self.references)}"
            self.conn.register(name, ref)
            self.conn.execute(f"CREATE VIEW {self.dialect.quote(alias)} AS SELECT * FROM {name}")
            self.references[alias] = (self.dialect.quote(alias), ref.schema.names, ref)
        # The rows are all in memory: a ruleset's SQL (where clauses, CustomSql) needs no files,
        # network or extensions, so DuckDB is denied them, for good (lock_configuration).
        self.conn.execute("SET enable_external_access = false")
        self.conn.execute("SET lock_configuration = true")
        self.columns = list(table.schema.names)
        self.types = {f.name: _arrow_type_name(f.type) for f in table.schema}

    def rows(self, sql: str) -> List[tuple]:
        return self.conn.execute(sql).fetchall()

    def custom_sql(self, sql: str) -> List[tuple]:
        # AWS's CustomSql names the evaluated data `primary`, a reserved word in DuckDB: quote it
        # where it stands as a name (outside string literals).
        parts = re.split(r"('(?:[^']|'')*')", sql)
        sql = "".join(part if i % 2 else re.sub(r'(?<!["\w])primary(?![\w"])', '"primary"', part,
                                                  flags=re.IGNORECASE)
                      for i, part in enumerate(parts))
        return self.rows(sql)

    def reference_types(self, alias: str) -> Dict[str, str]:
        return {f.name: _arrow_type_name(f.type) for f in self.references[alias][2].schema}

    def select_table(self, sql: str):
        relation = self.conn.sql(sql)
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        return fetch()


class SparkBackend:
    """The Spark engine's rows (a DataFrame) as a temporary view; the SQL runs in Spark."""

    def __init__(self, dataframe, references: Optional[Dict[str, Any]] = None):
        self.dialect = _SparkDialect()
        self.spark = dataframe.sparkSession
        tag = uuid.uuid4().hex[:12]
        self.primary = f"`_dq_primary_{tag}`"
        dataframe.createOrReplaceTempView(f"_dq_primary_{tag}")
        self.dataframe = dataframe
        self.references = {}
        for alias, ref in (references or {}).items():
            ref.createOrReplaceTempView(alias)
            self.references[alias] = (self.dialect.quote(alias), ref.columns, ref)
        self.columns = list(dataframe.columns)
        self.types = {f.name: _spark_type_name(f.dataType) for f in dataframe.schema.fields}
        self._tag = tag

    def rows(self, sql: str) -> List[tuple]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def custom_sql(self, sql: str) -> List[tuple]:
        # AWS's CustomSql names the evaluated data `primary`.
        self.dataframe.createOrReplaceTempView("primary")
        return self.rows(sql)

    def reference_types(self, alias: str) -> Dict[str, str]:
        return {f.name: _spark_type_name(f.dataType) for f in self.references[alias][2].schema.fields}

    def select_table(self, sql: str):
        return self.spark.sql(sql)


def _arrow_type_name(t) -> str:
    import pyarrow as pa
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return "SHORT"
    if pa.types.is_int32(t):
        return "INTEGER"
    if pa.types.is_int64(t):
        return "LONG"
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_decimal(t):
        return "DECIMAL"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "STRING"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP"
    return str(t).upper()


def _spark_type_name(t) -> str:
    name = type(t).__name__.replace("Type", "").upper()
    return {"INTEGER": "INTEGER", "LONG": "LONG", "SHORT": "SHORT", "BYTE": "SHORT",
            "TIMESTAMPNTZ": "TIMESTAMP"}.get(name, name)


# ---------------------------------------------------------------------------------- helpers

_NUMERIC = {"SHORT", "INTEGER", "LONG", "FLOAT", "DOUBLE", "DECIMAL"}
_TYPE_ALIASES = {"INT": "INTEGER", "INTEGER": "INTEGER", "LONG": "LONG", "BIGINT": "LONG",
                 "SHORT": "SHORT", "SMALLINT": "SHORT", "BOOLEAN": "BOOLEAN", "BOOL": "BOOLEAN",
                 "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "DECIMAL": "DECIMAL", "STRING": "STRING",
                 "DATE": "DATE", "TIMESTAMP": "TIMESTAMP"}
_CAST_TYPES = {"INTEGER": "INTEGER", "LONG": "BIGINT", "SHORT": "SMALLINT", "BOOLEAN": "BOOLEAN",
               "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "DECIMAL": "DECIMAL(38,10)",
               "DATE": "DATE", "TIMESTAMP": "TIMESTAMP"}


def _is_date_text(s: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", s))


class _Context:
    """One evaluation: the backend, the moment it runs (now()), the history for dynamic rules,
    the variables of the ruleset, the aggregate expressions collected for the one scan."""

    def __init__(self, backend, ruleset, now, history):
        self.b = backend
        self.d = backend.dialect
        self.rs = ruleset
        self.now = now
        self.history = history or {}
        self.aggregates: Dict[str, str] = {}      # sql -> alias
        self.values: Dict[str, Any] = {}          # alias -> value
        self.grouped: Dict[tuple, Dict[str, float]] = {}
        self.rows_alias: Dict[str, str] = {}      # where clause -> alias of its row count

    def count_rows(self, rule: Rule) -> None:
        """Adds the rule's row count (within its where clause) to the one scan."""
        w = self.where(rule)
        self.rows_alias[w] = self.agg(f"count(*) FILTER (WHERE {w})")

    def v(self, alias: str):
        """The value of an aggregate of the scan (raises the RuleError of one that failed)."""
        value = self.values[alias]
        if isinstance(value, RuleError):
            raise value
        return value

    def col(self, name: str) -> str:
        if name not in self.b.columns:
            raise RuleError(f'Column "{name}" does not exist in the data'
                            f" (columns: {', '.join(self.b.columns)})")
        return self.d.quote(name)

    def agg(self, sql: str) -> str:
        if sql not in self.aggregates:
            self.aggregates[sql] = f"m{len(self.aggregates)}"
        return self.aggregates[sql]

    def where(self, rule: Rule) -> str:
        return f"({rule.where})" if rule.where else "TRUE"

    def variable(self, ref):
        name = ref[1]
        if name not in self.rs.variables:
            raise RuleError(f"${name} is not declared in the ruleset")
        return self.rs.variables[name]


# --- number expressions (dynamic rules)

def _number(ctx: _Context, expr, rule: Rule) -> Optional[float]:
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Keyword) and expr.name == "NULL":
        return None
    if isinstance(expr, Bin):
        left, right = _number(ctx, expr.left, rule), _number(ctx, expr.right, rule)
        if left is None or right is None:
            return None
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        if right == 0:
            raise RuleError("division by zero in the rule's expression")
        return left / right
    if isinstance(expr, Func):
        value = _function(ctx, expr, rule)
        if isinstance(value, list):         # last(k) where a number is wanted
            if not value:
                raise RuleError(f"{expr.name}(): there is no history of this rule's metric yet "
                                "(dynamic rules compare with earlier runs of the same "
                                "evaluation context)")
            if len(value) > 1:
                raise RuleError(f"{expr.name}() gives {len(value)} values here: wrap it in avg(), "
                                "min(), max(), sum(), median() or std()")
            return value[0]
        return value
    if isinstance(expr, Str):
        try:
            return float(expr.value)
        except ValueError:
            raise RuleError(f'"{expr.value}" is not a number') from None
    raise RuleError(f"expected a number, got {expr!r}")


def _function(ctx: _Context, f: Func, rule: Rule):
    name = f.name
    if name == "last":
        k = int(_number(ctx, f.args[0], rule)) if f.args else 1
        series = ctx.history.get(_history_key(rule), [])
        return series[:k]
    if name in ("avg", "min", "max", "std", "stddev", "sum", "median"):
        values = _series(ctx, f.args[0], rule) if f.args else []
        if not values:
            raise RuleError(f"{name}(): there is no history of this rule's metric yet (dynamic "
                            "rules compare with earlier runs of the same evaluation context)")
        if name == "avg":
            return sum(values) / len(values)
        if name == "min":
            return min(values)
        if name == "max":
            return max(values)
        if name == "sum":
            return sum(values)
        if name == "median":
            s = sorted(values)
            mid = len(s) // 2
            return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
        mean = sum(values) / len(values)
        return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if name == "abs":
        v = _number(ctx, f.args[0], rule)
        return None if v is None else abs(v)
    raise RuleError(f"unknown function {name}()")


def _series(ctx, expr, rule) -> List[float]:
    if isinstance(expr, Func) and expr.name == "last":
        return _function(ctx, expr, rule)
    v = _number(ctx, expr, rule)
    return [] if v is None else [v]


def _history_key(rule: Rule) -> str:
    return rule.text


# --- conditions over a metric value

def _value_for_compare(ctx, v, rule):
    if isinstance(v, DateExpr):
        return _date_value(ctx, v).timestamp()
    if isinstance(v, Duration):
        return v.seconds
    if isinstance(v, Size):
        return float(v.size_bytes)
    if isinstance(v, Str) and _is_date_text(v.value):
        return _dt.datetime.strptime(v.value, "%Y-%m-%d").replace(tzinfo=_dt.timezone.utc).timestamp()
    return _number(ctx, v, rule)


def _holds(ctx: _Context, cond: Condition, metric: Optional[float], rule: Rule) -> bool:
    if metric is None or (isinstance(metric, float) and math.isnan(metric)):
        return False
    values = cond.values
    if cond.op == "in":
        if values and isinstance(values[0], tuple):
            values = ctx.variable(values[0])
        nums = [_value_for_compare(ctx, v, rule) for v in values]
        ok = any(n is not None and math.isclose(metric, n, rel_tol=1e-9, abs_tol=1e-12) for n in nums)
        return ok != cond.negated
    if cond.op == "between":
        lo, hi = (_value_for_compare(ctx, v, rule) for v in values)
        ok = lo is not None and hi is not None and lo < metric < hi
        return ok != cond.negated
    if cond.op == "matches":
        ok = re.fullmatch(values[0].value, str(metric)) is not None
        return ok != cond.negated
    target = _value_for_compare(ctx, values[0], rule)
    if target is None:
        return False
    if cond.op == "=":
        return math.isclose(metric, target, rel_tol=1e-9, abs_tol=1e-12)
    if cond.op == "!=":
        return not math.isclose(metric, target, rel_tol=1e-9, abs_tol=1e-12)
    return {">": metric > target, ">=": metric >= target, "<": metric < target,
            "<=": metric <= target}[cond.op]


def _date_value(ctx, v: DateExpr) -> _dt.datetime:
    if v.literal:
        return _dt.datetime.strptime(v.literal, "%Y-%m-%d").replace(tzinfo=_dt.timezone.utc)
    return ctx.now + _dt.timedelta(seconds=v.offset_seconds)


# --- conditions as row predicates (ColumnValues, ColumnLength, DataFreshness)

def _sql_value(ctx, v, col_type: str, rule) -> str:
    if isinstance(v, Str):
        if col_type in ("DATE", "TIMESTAMP") and _is_date_text(v.value):
            return f"CAST({_lit(v.value)} AS {col_type})"
        if col_type in _NUMERIC:
            try:
                float(v.value)
                return v.value
            except ValueError:
                pass
        return _lit(v.value) if ctx.d.name == "duckdb" else _spark_lit(v.value)
    if isinstance(v, DateExpr):
        when = _date_value(ctx, v).astimezone(_dt.timezone.utc).replace(tzinfo=None)
        text = when.strftime("%Y-%m-%d %H:%M:%S")
        target = "TIMESTAMP" if col_type != "DATE" or v.offset_seconds % 86400 else "DATE"
        return f"CAST({_lit(text)} AS TIMESTAMP)" if target == "TIMESTAMP" else f"CAST({_lit(text[:10])} AS DATE)"
    if isinstance(v, Duration):
        return repr(v.seconds)
    if isinstance(v, Size):
        return repr(float(v.size_bytes))
    n = _number(ctx, v, rule)
    if n is None:
        return "NULL"
    return repr(n)


def _predicate(ctx: _Context, expr: str, cond: Condition, col_type: str, rule: Rule) -> str:
    """The SQL that is TRUE for a value satisfying the condition (NULL counts as failing unless
    the condition lists NULL)."""
    vals = cond.values
    if col_type not in ("DATE", "TIMESTAMP") and any(isinstance(v, DateExpr) for v in vals):
        # now() against text dates: compare the text as timestamps (a value that is no date fails)
        expr, col_type = ctx.d.try_cast(expr, "TIMESTAMP"), "TIMESTAMP"
    if cond.op == "in":
        if vals and isinstance(vals[0], tuple):
            vals = ctx.variable(vals[0])
            vals = vals if isinstance(vals, list) else [vals]
        parts, plain = [], []
        for v in vals:
            if isinstance(v, Keyword):
                if v.name == "NULL":
                    parts.append(f"{expr} IS NULL")
                elif v.name == "EMPTY":
                    parts.append(f"CAST({expr} AS {ctx.d.string_type()}) = ''")
                else:
                    parts.append(f"(length(CAST({expr} AS {ctx.d.string_type()})) > 0 AND "
                                 f"trim(CAST({expr} AS {ctx.d.string_type()})) = '')")
            else:
                plain.append(_sql_value(ctx, v, col_type, rule))
        if plain:
            parts.append(f"{expr} IN ({', '.join(plain)})")
        p = "(" + " OR ".join(parts) + ")"
    elif cond.op == "between":
        lo, hi = (_sql_value(ctx, v, col_type, rule) for v in vals)
        p = f"({expr} > {lo} AND {expr} < {hi})"
    elif cond.op == "matches":
        p = ctx.d.full_match(expr, vals[0].value)
    else:
        v = vals[0]
        if isinstance(v, Keyword):
            if v.name == "NULL":
                p = f"({expr} IS NULL)" if cond.op == "=" else f"({expr} IS NOT NULL)"
                return p
            text = (f"CAST({expr} AS {ctx.d.string_type()}) = ''" if v.name == "EMPTY" else
                    f"(length(CAST({expr} AS {ctx.d.string_type()})) > 0 AND "
                    f"trim(CAST({expr} AS {ctx.d.string_type()})) = '')")
            return text if cond.op == "=" else f"NOT ({text})"
        op = "<>" if cond.op == "!=" else cond.op
        p = f"({expr} {op} {_sql_value(ctx, v, col_type, rule)})"
    if cond.negated:
        p = f"(NOT {p})"
    return f"COALESCE({p}, FALSE)"


# ---------------------------------------------------------------------------------- rules

@dataclass
class _Plan:
    """A rule's plan: the aggregates it needs, and how to turn them into metrics and an outcome."""
    rule: Rule
    finish: Callable[[], Tuple[Dict[str, float], Optional[float], Optional[Condition]]]
    row_predicate: Optional[str] = None     # SQL TRUE when a row passes (row-level rules)


def _compliance_plan(ctx, rule: Rule, pred: str, metric_name: str, extra=None) -> _Plan:
    w = ctx.where(rule)
    passing = ctx.agg(f"count(*) FILTER (WHERE {w} AND {pred})")
    total = ctx.agg(f"count(*) FILTER (WHERE {w})")
    extra = extra or {}

    def finish():
        n = ctx.v(total) or 0
        comp = (ctx.v(passing) / n) if n else 1.0
        metrics = {metric_name: comp}
        for name, alias in extra.items():
            if ctx.v(alias) is not None:
                metrics[name] = float(ctx.v(alias))
        thr = rule.threshold
        if thr is None:
            return metrics, comp, Condition("=", [Num(1.0, "1.0")])
        return metrics, comp, thr
    return _Plan(rule, finish, pred)


def _metric_plan(ctx, rule: Rule, sql: str, metric_name: str) -> _Plan:
    alias = ctx.agg(sql)

    def finish():
        v = ctx.v(alias)
        v = None if v is None else float(v)
        return ({metric_name: v} if v is not None else {}), v, rule.condition
    return _Plan(rule, finish)


def _grouped(ctx, rule: Rule, cols: List[str]) -> Dict[str, float]:
    """distinct, singles (values seen once), total non-null rows and entropy of the value
    frequencies of `cols` (one grouped query)."""
    quoted = ", ".join(ctx.col(c) for c in cols)
    notnull = " AND ".join(f"{ctx.col(c)} IS NOT NULL" for c in cols)
    w = ctx.where(rule)
    key = (tuple(cols), w)
    if key in ctx.grouped:              # IsUnique and Uniqueness of one column: one query
        return ctx.grouped[key]
    sql = (f"SELECT count(*), sum(CASE WHEN c = 1 THEN 1 ELSE 0 END), sum(c), "
           f"sum(c * ln(c)) FROM (SELECT {quoted}, count(*) AS c FROM {ctx.b.primary} "
           f"WHERE {w} AND {notnull} GROUP BY {quoted}) g")
    distinct, singles, total, clnc = ctx.b.rows(sql)[0]
    rows = ctx.v(ctx.rows_alias[w])       # counted by the one scan
    total = total or 0
    entropy = (math.log(total) - (clnc or 0) / total) if total else 0.0
    ctx.grouped[key] = {"distinct": float(distinct or 0), "singles": float(singles or 0),
                        "total": float(total), "rows": float(rows or 0), "entropy": entropy}
    return ctx.grouped[key]


def _plan_rule(ctx: _Context, rule: Rule) -> _Plan:
    t, p = rule.rule_type, rule.parameters
    p = [ctx.variable(x).value if isinstance(x, tuple) else x for x in p]
    w = ctx.where(rule)
    if t == "RowCount":
        return _metric_plan(ctx, rule, f"count(*) FILTER (WHERE {w})", "Dataset.*.RowCount")
    if t == "ColumnCount":
        n = float(len(ctx.b.columns))
        return _Plan(rule, lambda: ({"Dataset.*.ColumnCount": n}, n, rule.condition))
    if t == "ColumnExists":
        ok = 1.0 if p[0] in ctx.b.columns else 0.0
        return _Plan(rule, lambda: ({}, ok, Condition("=", [Num(1.0)])))
    if t == "ColumnNamesMatchPattern":
        pattern = p[0]
        bad = [c for c in ctx.b.columns if not re.fullmatch(pattern, c)]
        ratio = 1.0 - len(bad) / len(ctx.b.columns) if ctx.b.columns else 1.0
        return _Plan(rule, lambda: ({"Dataset.*.ColumnNamesPatternMatchRatio": ratio}, ratio,
                                    Condition("=", [Num(1.0)])))
    if t in ("IsComplete", "Completeness"):
        c = ctx.col(p[0])
        plan = _compliance_plan(ctx, rule, f"{c} IS NOT NULL", f"Column.{p[0]}.Completeness")
        if t == "Completeness":
            base = plan.finish
            def finish(base=base):
                metrics, value, _ = base()
                return metrics, value, rule.condition
            plan.finish = finish
        return plan
    if t in ("ColumnValues", "ColumnLength", "DataFreshness", "ColumnDataType"):
        c = ctx.col(p[0])
        col_type = ctx.b.types.get(p[0], "STRING")
        if t == "ColumnValues":
            pred = _predicate(ctx, c, rule.condition, col_type, rule)
            extra = {}
            if col_type in _NUMERIC:
                extra = {f"Column.{p[0]}.Maximum": ctx.agg(f"max({c}) FILTER (WHERE {w})"),
                         f"Column.{p[0]}.Minimum": ctx.agg(f"min({c}) FILTER (WHERE {w})")}
            return _compliance_plan(ctx, rule, pred, f"Column.{p[0]}.ColumnValues.Compliance", extra)
        if t == "ColumnLength":
            length = ctx.d.length(c)
            pred = _predicate(ctx, length, rule.condition, "LONG", rule)
            extra = {f"Column.{p[0]}.MaximumLength": ctx.agg(f"max({length}) FILTER (WHERE {w})"),
                     f"Column.{p[0]}.MinimumLength": ctx.agg(f"min({length}) FILTER (WHERE {w})")}
            return _compliance_plan(ctx, rule, pred, f"Column.{p[0]}.ColumnLength.Compliance", extra)
        if t == "DataFreshness":
            age = ctx.d.seconds_since(c, ctx.now)
            pred = _predicate(ctx, age, rule.condition, "DOUBLE", rule)
            return _compliance_plan(ctx, rule, pred, f"Column.{p[0]}.DataFreshness.Compliance")
        # ColumnDataType "x" = "INTEGER": the column is of that type, or its text values cast to it.
        cond = rule.condition
        wanted_values = cond.values if cond.op == "in" else cond.values[:1]
        wanted = []
        for v in wanted_values:
            name = _TYPE_ALIASES.get(str(getattr(v, "value", "")).upper())
            if not name:
                raise RuleError(f"ColumnDataType: unknown type {getattr(v, 'value', v)!r} "
                                f"(known: {', '.join(sorted(set(_TYPE_ALIASES.values())))})")
            wanted.append(name)
        if col_type != "STRING":
            ok = (col_type in wanted) != (cond.negated or cond.op == "!=")
            plan = _compliance_plan(ctx, rule, "TRUE" if ok else "FALSE",
                                    f"Column.{p[0]}.ColumnDataType.Compliance")
            return plan
        casts = " OR ".join(f"{ctx.d.try_cast(c, _CAST_TYPES[x])} IS NOT NULL" for x in wanted
                            if x != "STRING") or "TRUE"
        pred = f"COALESCE(({casts}), FALSE)"
        if cond.negated or cond.op == "!=":
            pred = f"NOT {pred}"
        return _compliance_plan(ctx, rule, pred, f"Column.{p[0]}.ColumnDataType.Compliance")
    if t in ("Mean", "Sum", "StandardDeviation", "Variance"):
        c = ctx.col(p[0])
        fn = {"Mean": "avg", "Sum": "sum", "StandardDeviation": "stddev_pop",
              "Variance": "var_pop"}[t]
        return _metric_plan(ctx, rule, f"{fn}(CAST({c} AS DOUBLE)) FILTER (WHERE {w})",
                            f"Column.{p[0]}.{t}")
    if t == "ColumnCorrelation":
        a, b = ctx.col(p[0]), ctx.col(p[1])
        return _metric_plan(ctx, rule, f"corr(CAST({a} AS DOUBLE), CAST({b} AS DOUBLE)) FILTER (WHERE {w})",
                            f"Multicolumn.{p[0]},{p[1]}.ColumnCorrelation")
    if t in ("IsUnique", "Uniqueness", "IsPrimaryKey", "DistinctValuesCount", "UniqueValueRatio",
             "Entropy"):
        for c in p:
            ctx.col(c)
        cols = list(p)
        name = ",".join(cols)
        ctx.count_rows(rule)
        scope = "Column" if len(cols) == 1 else "Multicolumn"
        null_alias = None
        if t == "IsPrimaryKey":
            notnull = " AND ".join(f"{ctx.col(c)} IS NOT NULL" for c in cols)
            null_alias = ctx.agg(f"count(*) FILTER (WHERE {w} AND NOT ({notnull}))")

        def finish():
            g = _grouped(ctx, rule, cols)
            uniq = g["singles"] / g["rows"] if g["rows"] else 1.0
            if t in ("IsUnique", "Uniqueness"):
                cond = rule.condition if t == "Uniqueness" else Condition("=", [Num(1.0)])
                return {f"{scope}.{name}.Uniqueness": uniq}, uniq, cond
            if t == "IsPrimaryKey":
                complete = 1.0 - (ctx.v(null_alias) / g["rows"] if g["rows"] else 0.0)
                ok = 1.0 if complete == 1.0 and uniq == 1.0 else 0.0
                return ({f"{scope}.{name}.Completeness": complete,
                         f"{scope}.{name}.Uniqueness": uniq}, ok, Condition("=", [Num(1.0)]))
            if t == "DistinctValuesCount":
                return {f"{scope}.{name}.DistinctValuesCount": g["distinct"]}, g["distinct"], rule.condition
            if t == "UniqueValueRatio":
                r = g["singles"] / g["distinct"] if g["distinct"] else 0.0
                return {f"{scope}.{name}.UniqueValueRatio": r}, r, rule.condition
            return {f"{scope}.{name}.Entropy": g["entropy"]}, g["entropy"], rule.condition
        pred = None
        if t in ("IsUnique", "IsPrimaryKey", "Uniqueness"):
            quoted = ", ".join(ctx.col(c) for c in cols)
            pred = (f"COALESCE((count(*) OVER (PARTITION BY {quoted})) = 1"
                    + "".join(f" AND {ctx.col(c)} IS NOT NULL" for c in cols) + ", FALSE)")
        return _Plan(rule, finish, pred)
    if t == "CustomSql":
        def finish():
            try:
                rows = ctx.b.custom_sql(p[0])
            except Exception as e:  # the user's SQL: its own error is the message
                raise RuleError(f"CustomSql: the statement failed: {str(e).splitlines()[0][:300]}")
            if len(rows) == 1 and len(rows[0]) == 1:
                v = rows[0][0]
                v = float(v) if v is not None else None
                return {"Dataset.*.CustomSQL": v} if v is not None else {}, v, rule.condition
            raise RuleError("CustomSql: the statement must return one value (one row, one "
                            f"column); it returned {len(rows)} row(s)")
        return _Plan(rule, finish)
    if t in ("RowCountMatch", "SchemaMatch", "ReferentialIntegrity", "DatasetMatch",
             "AggregateMatch"):
        return _reference_plan(ctx, rule, p)
    if t == "DetectAnomalies":
        return _anomaly_plan(ctx, rule, p)
    raise RuleError(f"{t} is not supported")


def _reference(ctx, alias: str):
    if alias not in ctx.b.references:
        known = ", ".join(sorted(ctx.b.references)) or "none"
        raise RuleError(f'the reference data set "{alias}" was not given (additional_data_sources: {known})')
    return ctx.b.references[alias]


def _reference_plan(ctx, rule: Rule, p: List[str]) -> _Plan:
    t = rule.rule_type
    q = ctx.d.quote
    if t == "RowCountMatch":
        ref = _reference(ctx, p[0])

        def finish():
            n = ctx.b.rows(f"SELECT count(*) FROM {ctx.b.primary}")[0][0]
            m = ctx.b.rows(f"SELECT count(*) FROM {ref[0]}")[0][0]
            r = (n / m) if m else (1.0 if n == 0 else 0.0)
            return {f"Dataset.{p[0]}.RowCountMatch": r}, r, rule.condition
        return _Plan(rule, finish)
    if t == "SchemaMatch":
        ref = _reference(ctx, p[0])

        def finish():
            mine, theirs = ctx.b.types, ctx.b.reference_types(p[0])
            names = set(mine) | set(theirs)
            same = sum(1 for n in names if mine.get(n) == theirs.get(n))
            r = same / len(names) if names else 1.0
            return {f"Dataset.{p[0]}.SchemaMatch": r}, r, rule.condition
        return _Plan(rule, finish)
    if t == "ReferentialIntegrity":
        mine = [c.strip() for c in p[0].split(",")]
        alias, _, rest = p[1].partition(".")
        ref = _reference(ctx, alias)
        theirs = [c.strip() for c in rest.strip("{}").split(",")]
        if len(mine) != len(theirs):
            raise RuleError("ReferentialIntegrity: the two column lists differ in length")
        for c in mine:
            ctx.col(c)

        def finish():
            on = " AND ".join(f"p.{q(a)} = r.{q(b)}" for a, b in zip(mine, theirs))
            notnull = " AND ".join(f"p.{q(a)} IS NOT NULL" for a in mine)
            sql = (f"SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {ref[0]} r "
                   f"WHERE {on})) FROM {ctx.b.primary} p WHERE {notnull}")
            total, found = ctx.b.rows(sql)[0]
            r = found / total if total else 1.0
            return {f"Column.{alias}.ReferentialIntegrity": r}, r, rule.condition
        return _Plan(rule, finish)
    if t == "DatasetMatch":
        alias = p[0]
        ref = _reference(ctx, alias)
        keys = [tuple(x.strip() for x in (k.split("->") if "->" in k else (k, k)))
                for k in p[1].split(",")]
        matched = ([tuple(x.strip() for x in (k.split("->") if "->" in k else (k, k)))
                    for k in p[2].split(",")] if len(p) > 2 else
                   [(c, c) for c in ctx.b.columns
                    if c not in {a for a, _ in keys} and c in set(ref[1])])

        def finish():
            on = " AND ".join(f"p.{q(a)} = r.{q(b)}" for a, b in keys)
            same = " AND ".join(f"(p.{q(a)} = r.{q(b)} OR (p.{q(a)} IS NULL AND r.{q(b)} IS NULL))"
                                for a, b in matched) or "TRUE"
            sql = (f"SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {ref[0]} r "
                   f"WHERE {on} AND {same})) FROM {ctx.b.primary} p")
            total, found = ctx.b.rows(sql)[0]
            r = found / total if total else 1.0
            return {f"Dataset.{alias}.DatasetMatch": r}, r, rule.condition
        return _Plan(rule, finish)
    # AggregateMatch "sum(x)" "sum(ref.x)": each expression over its data set.

    def value(expr: str):
        m = re.fullmatch(r"\s*(\w+)\s*\(\s*(?:([A-Za-z_][\w]*)\.)?([^)]*?)\s*\)\s*", expr)
        if not m:
            raise RuleError(f'AggregateMatch: "{expr}" is not an aggregate such as sum(col) or '
                            "avg(reference.col)")
        fn, alias, column = m.group(1).lower(), m.group(2), m.group(3)
        if fn not in ("sum", "avg", "count", "min", "max"):
            raise RuleError(f"AggregateMatch: {fn}() is not one of sum, avg, count, min, max")
        if alias and alias in ctx.b.references:
            src = _reference(ctx, alias)[0]
        else:
            src = ctx.b.primary
            if alias:
                column = f"{alias}.{column}"
            if column != "*":
                ctx.col(column)
        arg = "*" if column == "*" else q(column)
        return ctx.b.rows(f"SELECT {fn}({arg}) FROM {src}")[0][0]

    def finish():
        a, b = value(p[0]), value(p[1])
        a, b = float(a or 0), float(b or 0)
        r = 1.0 if a == b else (min(a, b) / max(a, b) if max(a, b) > 0 and min(a, b) >= 0 else 0.0)
        return {"Dataset.*.AggregateMatch": r}, r, rule.condition
    return _Plan(rule, finish)


def _anomaly_plan(ctx, rule: Rule, p: List[str]) -> _Plan:
    """DetectAnomalies "RowCount" / "Completeness" "col" ...: the metric of the named rule type
    against its history: anomalous when it lies more than three standard deviations from the
    mean of the earlier values (at least three needed; with fewer, it passes and is recorded)."""
    metric_rule = Rule(p[0], p[1:], Condition(">=", [Num(float("-inf"))]), rule.where,
                       text=f"{p[0]} " + " ".join(f'"{x}"' for x in p[1:]))
    if p[0] not in dqdl.RULE_TYPES:
        raise RuleError(f"DetectAnomalies: unknown metric {p[0]!r}")
    inner = _plan_rule(ctx, metric_rule)

    def finish():
        metrics, value, _ = inner.finish()
        history = ctx.history.get(_history_key(rule), [])
        if value is None or len(history) < 3:
            return metrics, 1.0, Condition("=", [Num(1.0)])
        mean = sum(history) / len(history)
        std = math.sqrt(sum((h - mean) ** 2 for h in history) / len(history))
        ok = abs(value - mean) <= 3 * std if std > 0 else math.isclose(value, mean)
        return metrics, 1.0 if ok else 0.0, Condition("=", [Num(1.0)])
    return _Plan(rule, finish)


# ---------------------------------------------------------------------------------- driver

def _leaves(node) -> List[Rule]:
    if isinstance(node, Rule):
        return [node]
    out = []
    for child in node.children:
        out.extend(_leaves(child))
    return out


def _fmt_metric(v: float) -> str:
    return repr(float(v))


def evaluate(backend, ruleset, now: Optional[_dt.datetime] = None,
             history: Optional[Dict[str, List[float]]] = None) -> Tuple[Evaluation, List[tuple]]:
    """Evaluates `ruleset` (text or a parsed dqdl.Ruleset) over the backend's rows. Returns the
    evaluation and, per top-level rule, (outcome, row predicate or None) for row-level results.
    A syntax error raises DQDLSyntaxError before anything is read."""
    rs = dqdl.parse(ruleset) if isinstance(ruleset, str) else ruleset
    started = now or _dt.datetime.now(_dt.timezone.utc)
    ctx = _Context(backend, rs, started, history)

    plans: Dict[int, Any] = {}
    for top in rs.rules:
        for leaf in _leaves(top):
            try:
                plans[id(leaf)] = _plan_rule(ctx, leaf)
            except RuleError as e:
                plans[id(leaf)] = e
    analyzer_plans = []
    for an in rs.analyzers:
        try:
            analyzer_plans.append(_analyzer_plan(ctx, an))
        except RuleError:
            pass
    row_count_alias = ctx.agg("count(*)")
    # The one scan: every aggregate of every rule.
    items = list(ctx.aggregates.items())
    select = ", ".join(f"{sql} AS {alias}" for sql, alias in items)
    try:
        row = backend.rows(f"SELECT {select} FROM {backend.primary}")[0]
        for (sql, alias), v in zip(items, row):
            ctx.values[alias] = v
    except Exception as e:
        # One rule's bad where clause would fail the whole scan: retry each aggregate alone so
        # only the rules that use a failing expression get an Error.
        for sql, alias in items:
            try:
                ctx.values[alias] = backend.rows(f"SELECT {sql} FROM {backend.primary}")[0][0]
            except Exception as inner:
                ctx.values[alias] = RuleError(f"the rule's SQL failed: {str(inner).splitlines()[0][:300]}")

    def leaf_outcome(leaf: Rule):
        plan = plans[id(leaf)]
        if isinstance(plan, RuleError):
            return ERROR, str(plan), {}
        try:
            metrics, value, cond = plan.finish()
        except RuleError as e:
            return ERROR, str(e), {}
        except Exception as e:  # a failing engine query: this rule errs, the others go on
            return ERROR, f"{type(e).__name__}: {str(e).splitlines()[0][:300]}", {}
        try:
            ok = _holds(ctx, cond, value, leaf) if cond is not None else bool(value)
        except RuleError as e:
            # The metric was measured, only the condition could not be decided (a dynamic rule
            # without history yet): the metric is kept, so it becomes the next run's history.
            return ERROR, str(e), metrics
        except Exception as e:
            return ERROR, f"{type(e).__name__}: {str(e).splitlines()[0][:300]}", {}
        if ok:
            return PASSED, None, metrics
        shown = "null" if value is None else _fmt_metric(value)
        return FAILED, f"Value: {shown} does not meet the constraint requirement!", metrics

    outcomes, row_rules = [], []
    for top in rs.rules:
        labels = {**rs.default_labels, **_labels(top)}
        if isinstance(top, Rule):
            outcome, reason, metrics = leaf_outcome(top)
            plan = plans[id(top)]
            pred = plan.row_predicate if isinstance(plan, _Plan) else None
        else:
            results = [(leaf, *leaf_outcome(leaf)) for leaf in top.children if isinstance(leaf, Rule)]
            nested = [c for c in top.children if not isinstance(c, Rule)]
            results += [(c, *_composite(c, leaf_outcome)) for c in nested]
            metrics = {}
            for _, _, _, m in results:
                metrics.update(m)
            states = [r[1] for r in results]
            if ERROR in states:
                outcome = ERROR
            elif top.op == "and":
                outcome = PASSED if all(s == PASSED for s in states) else FAILED
            else:
                outcome = PASSED if any(s == PASSED for s in states) else FAILED
            reason = None
            if outcome != PASSED:
                reason = " ".join(f"[{r[0].text if hasattr(r[0], 'text') else ''}] {r[2]}"
                                  for r in results if r[1] != PASSED and r[2])
            pred = None
        outcomes.append(RuleOutcome(top.text, outcome, reason, metrics, labels,
                                    top.rule_type if isinstance(top, Rule) else top.op))
        row_rules.append((top, outcome, pred))
    analyzer_metrics = {}
    for finish in analyzer_plans:
        try:
            analyzer_metrics.update(finish())
        except Exception:
            pass
    n = ctx.values.get(row_count_alias)
    return (Evaluation(outcomes, analyzer_metrics, started, _dt.datetime.now(_dt.timezone.utc),
                       int(n) if isinstance(n, (int, float)) else 0), row_rules)


def _labels(node) -> Dict[str, str]:
    """A top-level rule's labels: its own and those of the rules it combines."""
    out = {}
    for child in getattr(node, "children", []):
        out.update(_labels(child))
    out.update(node.labels)
    return out


def _composite(node, leaf_outcome):
    results = []
    for c in node.children:
        results.append(leaf_outcome(c) if isinstance(c, Rule) else _composite(c, leaf_outcome))
    states = [r[0] for r in results]
    metrics = {}
    for r in results:
        metrics.update(r[2])
    if ERROR in states:
        return ERROR, "; ".join(r[1] for r in results if r[1]), metrics
    ok = all(s == PASSED for s in states) if node.op == "and" else any(s == PASSED for s in states)
    return (PASSED, None, metrics) if ok else (FAILED, "; ".join(r[1] for r in results if r[1]), metrics)


def _analyzer_plan(ctx, an: Rule):
    t, p = an.rule_type, an.parameters
    if t == "AllStatistics":
        c = ctx.col(p[0])
        numeric = ctx.b.types.get(p[0]) in _NUMERIC
        aliases = {f"Column.{p[0]}.Completeness": ctx.agg(f"avg(CASE WHEN {c} IS NULL THEN 0.0 ELSE 1.0 END)")}
        if numeric:
            for name, fn in (("Mean", "avg"), ("Sum", "sum"), ("StandardDeviation", "stddev_pop"),
                             ("Minimum", "min"), ("Maximum", "max")):
                aliases[f"Column.{p[0]}.{name}"] = ctx.agg(f"{fn}(CAST({c} AS DOUBLE))")

        ctx.count_rows(Rule(t, p))

        def finish():
            out = {k: float(ctx.v(a)) for k, a in aliases.items() if ctx.values.get(a) is not None}
            g = _grouped(ctx, Rule(t, p), [p[0]])
            out[f"Column.{p[0]}.DistinctValuesCount"] = g["distinct"]
            out[f"Column.{p[0]}.Uniqueness"] = g["singles"] / g["rows"] if g["rows"] else 1.0
            out[f"Column.{p[0]}.Entropy"] = g["entropy"]
            return out
        return finish
    cond = Condition(">=", [Num(float("-inf"))])
    plan = _plan_rule(ctx, Rule(t, p, cond if dqdl.RULE_TYPES.get(t, (0, 0, False))[2] else None,
                                text=an.text))
    return lambda: plan.finish()[0]


def row_level_sql(backend, row_rules, original_columns: Sequence[str]) -> str:
    """SELECT over the primary rows adding AWS's row-level columns: DataQualityRulesPass,
    DataQualityRulesFail, DataQualityRulesSkip (arrays of rule texts) and
    DataQualityEvaluationResult ("Passed" when no rule failed on the row)."""
    d = backend.dialect
    lit = _lit if d.name == "duckdb" else _spark_lit
    passes, fails, skips = [], [], []
    for top, outcome, pred in row_rules:
        text = lit(top.text)
        if pred is not None and outcome != ERROR:
            where = f"({top.where})" if getattr(top, "where", None) else "TRUE"
            passes.append(f"CASE WHEN {where} AND {pred} THEN {text} END")
            fails.append(f"CASE WHEN {where} AND NOT ({pred}) THEN {text} END")
            skips.append(f"CASE WHEN NOT {where} THEN {text} END")
        else:
            skips.append(text)
    none = f"CAST(NULL AS {d.string_type()})"

    def arr(items):
        return d.filter_nonnull(f"array({', '.join(items or [none])})" if d.name == "spark"
                                else f"[{', '.join(items or [none])}]")
    cols = ", ".join(d.quote(c) for c in original_columns)
    fail_arr = arr(fails)
    size = "size" if d.name == "spark" else "len"
    select = (f"SELECT {cols}, {arr(passes)} AS DataQualityRulesPass, {fail_arr} AS "
              f"DataQualityRulesFail, {arr(skips)} AS DataQualityRulesSkip, CASE WHEN "
              f"{size}({fail_arr}) = 0 THEN 'Passed' ELSE 'Failed' END AS "
              f"DataQualityEvaluationResult")
    if d.name == "duckdb":
        # Window functions (uniqueness) reorder DuckDB's rows: keep the frame's order.
        return (f"{select} FROM (SELECT *, row_number() OVER () AS _dq_row FROM "
                f"{backend.primary}) ORDER BY _dq_row")
    return f"{select} FROM {backend.primary}"
