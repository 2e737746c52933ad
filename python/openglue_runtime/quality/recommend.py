"""Rule recommendation: profile a frame's rows and propose a DQDL ruleset that holds on them, as
StartDataQualityRuleRecommendationRun does.

One profiling pass (SQL aggregates through the same backends as the evaluator: DuckDB on the
embedded engine, Spark SQL on Spark) gives per column the completeness, the distinct and
unique counts, the minimum and maximum (numbers, dates), the shortest and longest text and, for
columns with few distinct values, the values themselves. From them:

- `RowCount between <n/2> and <2n>` (the bounds are exclusive in DQDL, so n always passes);
- `IsComplete "c"` for a column without nulls, else `Completeness "c" >= <share, rounded down>`;
- `IsUnique "c"` when every value occurs once, `Uniqueness "c" > 0.95` when nearly so;
- numbers: `ColumnValues "c" between <min - 1> and <max + 1>` (integers) or `<= max` / `>= min`
  for fractional values (`with threshold >= <share of non-nulls>` where there are nulls, since a
  null fails ColumnValues; the same for the text rules);
- text with at most 10 distinct values: `ColumnValues "c" in [...]`; other text:
  `ColumnLength "c" between <shortest - 1> and <longest + 1>`.

The result holds on the profiled rows by construction (python/tests/test_data_quality.py
evaluates it back). The choices are OpenGlue's; AWS does not document its recommender's rules.
"""
import json
import math
from typing import List

from openglue_runtime.quality import evaluate as ev

__all__ = ["recommend"]

_INTEGERS = {"SHORT", "INTEGER", "LONG"}
_NUMBERS = _INTEGERS | {"FLOAT", "DOUBLE", "DECIMAL"}
MAX_SET = 10


def _q(s: str) -> str:
    return json.dumps(s)


def recommend(backend) -> str:
    """The recommended DQDL ruleset for the backend's rows (text, one rule per line)."""
    d = backend.dialect
    cols = list(backend.columns)
    aggs = ["count(*)"]
    for c in cols:
        q = d.quote(c)
        t = backend.types.get(c, "STRING")
        aggs.append(f"count({q})")
        if t in _NUMBERS:
            aggs += [f"min({q})", f"max({q})"]
        elif t == "STRING":
            aggs += [f"min({d.length(q)})", f"max({d.length(q)})"]
        else:
            aggs += ["NULL", "NULL"]
    row = backend.rows(f"SELECT {', '.join(aggs)} FROM {backend.primary}")[0]
    n = row[0] or 0
    rules: List[str] = [f"RowCount between {n // 2} and {max(2 * n, 1) + 1}" if n else "RowCount >= 0"]
    for i, c in enumerate(cols):
        nonnull, lo, hi = row[1 + 3 * i], row[2 + 3 * i], row[3 + 3 * i]
        t = backend.types.get(c, "STRING")
        q = d.quote(c)
        if n:
            if nonnull == n:
                rules.append(f"IsComplete {_q(c)}")
            elif nonnull:
                share = math.floor(nonnull / n * 100) / 100
                rules.append(f"Completeness {_q(c)} >= {share}")
        if not nonnull or t not in _NUMBERS | {"STRING"}:
            continue
        distinct, singles = backend.rows(
            f"SELECT count(*), sum(CASE WHEN k = 1 THEN 1 ELSE 0 END) FROM (SELECT {q}, "
            f"count(*) AS k FROM {backend.primary} WHERE {q} IS NOT NULL GROUP BY {q}) g")[0]
        # a null fails ColumnValues and ColumnLength: with nulls, the share of values must hold
        suffix = f" with threshold >= {math.floor(nonnull / n * 100) / 100}" if nonnull < n else ""
        if nonnull == n and singles == n:
            rules.append(f"IsUnique {_q(c)}")
        elif n and (singles or 0) / n > 0.95:
            rules.append(f"Uniqueness {_q(c)} > 0.95")
        if t in _INTEGERS:
            rules.append(f"ColumnValues {_q(c)} between {int(lo) - 1} and {int(hi) + 1}{suffix}")
        elif t in _NUMBERS:
            rules.append(f"ColumnValues {_q(c)} <= {float(hi)!r}{suffix}")
            rules.append(f"ColumnValues {_q(c)} >= {float(lo)!r}{suffix}")
        elif distinct <= MAX_SET:
            values = [r[0] for r in backend.rows(
                f"SELECT DISTINCT {q} FROM {backend.primary} WHERE {q} IS NOT NULL ORDER BY 1")]
            listed = ", ".join(_q(str(v)) for v in values)
            rules.append(f"ColumnValues {_q(c)} in [{listed}]{suffix}")
        else:
            rules.append(f"ColumnLength {_q(c)} between {int(lo) - 1} and {int(hi) + 1}{suffix}")
    return "Rules = [\n    " + ",\n    ".join(rules) + "\n]"
