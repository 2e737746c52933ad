"""`push_down_predicate`: a Spark SQL boolean expression over a table's partition columns,
evaluated on the partition list before any file is listed, as Glue does.

AWS documents the argument as "a Spark SQL predicate" filtering the catalog's partitions (its
examples: `"(product_category == 'Video')"`, `"(year == '2019' and month == '08' and day ==
'02')"`); the server-side `catalogPartitionPredicate` is GetPartitions' own Expression grammar
instead. This module parses the Spark SQL subset that partition predicates use and evaluates it
per partition with Spark's rules:

- operators: `=`/`==`, `!=`/`<>`, `<`, `<=`, `>`, `>=`, `<=>` (null-safe equality), `AND`/`&&`,
  `OR`/`||`, `NOT`/`!`, `IN (...)`, `BETWEEN ... AND ...`, `LIKE`, `RLIKE`/`REGEXP`,
  `IS [NOT] NULL`, `+ - * / %`, parentheses; keywords are case-insensitive;
- values: 'single' or "double" quoted strings, numbers, `true`/`false`/`null`, `DATE '...'`,
  `TIMESTAMP '...'`; columns by name (case-insensitive, `backticks` allowed), typed as the
  table's partition keys declare (string, int, bigint, date, ...);
- functions: `cast(x AS type)`, `to_date(x[, fmt])`, `lower`, `upper`, `trim`, `ltrim`, `rtrim`,
  `length`, `concat`, `substring`/`substr`, `coalesce`, `year`, `month`, `day`/`dayofmonth`,
  `date_format(x, fmt)` (the common Java date patterns);
- comparison of a string with a number or a date casts the string (Spark's implicit casts); a
  comparison with null is null, and only partitions for which the predicate is true are read.

An expression outside this subset raises `PredicateError` naming the position, before anything
is read.
"""
import datetime
import decimal
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


class PredicateError(ValueError):
    """A push_down_predicate that cannot be parsed or does not apply to the table."""


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?[LlDd]?)
  | (?P<str>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<bq>`(?:[^`]|``)*`)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=>|==|!=|<>|<=|>=|&&|\|\||[=<>!+\-*/%(),])
""", re.VERBOSE)

_KEYWORDS = {"and", "or", "not", "in", "between", "like", "rlike", "regexp", "is", "null",
             "true", "false", "as", "date", "timestamp", "cast"}


def _unquote(text: str) -> str:
    quote, body = text[0], text[1:-1]
    body = body.replace(quote * 2, quote)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(
        m.group(1), m.group(1)), body)


def _tokens(text: str) -> List[Tuple[str, Any, int]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise PredicateError(f"push_down_predicate: unexpected character {text[pos]!r} at "
                                 f"position {pos + 1} of {text!r}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "str":
            out.append(("lit", _unquote(value), pos))
        elif kind == "num":
            raw = value.rstrip("LlDd")
            if value[-1:] in "Dd" or any(c in raw for c in ".eE"):
                out.append(("lit", decimal.Decimal(raw) if value[-1:] not in "Dd" and "e" not in
                            raw.lower() else float(raw), pos))
            else:
                out.append(("lit", int(raw), pos))
        elif kind == "bq":
            out.append(("col", value[1:-1].replace("``", "`"), pos))
        elif kind == "name":
            lower = value.lower()
            out.append(("kw", lower, pos) if lower in _KEYWORDS else ("name", value, pos))
        elif kind == "op":
            out.append(("op", value, pos))
        pos = m.end()
    out.append(("end", None, len(text)))
    return out


# The parsed expression is a tree of tuples: ("lit", value), ("col", name), ("call", name,
# [args]), ("cast", expr, type), ("not", e), ("and"/"or", a, b), ("cmp", op, a, b),
# ("in", e, [items], negated), ("between", e, lo, hi, negated), ("like"/"rlike", e, pattern,
# negated), ("isnull", e, negated), ("arith", op, a, b), ("neg", e).

class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, offset=0):
        return self.toks[min(self.i + offset, len(self.toks) - 1)]

    def take(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def error(self, what: str):
        kind, value, pos = self.peek()
        found = "the end" if kind == "end" else repr(self.text[pos:pos + 20])
        raise PredicateError(f"push_down_predicate: {what} at position {pos + 1} (found "
                             f"{found}) in {self.text!r}")

    def accept(self, kind, value=None):
        k, v, _ = self.peek()
        if k == kind and (value is None or v == value):
            self.i += 1
            return True
        return False

    def expect(self, kind, value, what):
        if not self.accept(kind, value):
            self.error(f"expected {what}")

    def parse(self):
        node = self.disjunction()
        if self.peek()[0] != "end":
            self.error("unexpected text")
        return node

    def disjunction(self):
        node = self.conjunction()
        while self.accept("kw", "or") or self.accept("op", "||"):
            node = ("or", node, self.conjunction())
        return node

    def conjunction(self):
        node = self.negation()
        while self.accept("kw", "and") or self.accept("op", "&&"):
            node = ("and", node, self.negation())
        return node

    def negation(self):
        if self.accept("kw", "not") or self.accept("op", "!"):
            return ("not", self.negation())
        return self.predicate()

    def predicate(self):
        left = self.additive()
        kind, value, _ = self.peek()
        if kind == "op" and value in ("=", "==", "!=", "<>", "<", "<=", ">", ">=", "<=>"):
            self.take()
            return ("cmp", value, left, self.additive())
        negated = False
        if kind == "kw" and value == "not" and self.peek(1)[0] == "kw" and \
                self.peek(1)[1] in ("in", "between", "like", "rlike", "regexp"):
            self.take()
            negated = True
            kind, value, _ = self.peek()
        if kind == "kw" and value == "in":
            self.take()
            self.expect("op", "(", "'(' after IN")
            items = [self.additive()]
            while self.accept("op", ","):
                items.append(self.additive())
            self.expect("op", ")", "')' closing the IN list")
            return ("in", left, items, negated)
        if kind == "kw" and value == "between":
            self.take()
            low = self.additive()
            self.expect("kw", "and", "AND in BETWEEN")
            return ("between", left, low, self.additive(), negated)
        if kind == "kw" and value == "like":
            self.take()
            return ("like", left, self.additive(), negated)
        if kind == "kw" and value in ("rlike", "regexp"):
            self.take()
            return ("rlike", left, self.additive(), negated)
        if kind == "kw" and value == "is":
            self.take()
            negated = self.accept("kw", "not")
            self.expect("kw", "null", "NULL after IS")
            return ("isnull", left, negated)
        return left

    def additive(self):
        node = self.term()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            node = ("arith", self.take()[1], node, self.term())
        return node

    def term(self):
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            node = ("arith", self.take()[1], node, self.unary())
        return node

    def unary(self):
        if self.accept("op", "-"):
            return ("neg", self.unary())
        if self.accept("op", "+"):
            return self.unary()
        return self.primary()

    def primary(self):
        kind, value, _ = self.peek()
        if kind == "lit":
            self.take()
            return ("lit", value)
        if kind == "col":
            self.take()
            return ("col", value)
        if kind == "op" and value == "(":
            self.take()
            node = self.disjunction()
            self.expect("op", ")", "')'")
            return node
        if kind == "kw" and value in ("true", "false"):
            self.take()
            return ("lit", value == "true")
        if kind == "kw" and value == "null":
            self.take()
            return ("lit", None)
        if kind == "kw" and value in ("date", "timestamp") and self.peek(1)[0] == "lit" and \
                isinstance(self.peek(1)[1], str):
            self.take()
            text = self.take()[1]
            return ("cast", ("lit", text), value)
        if kind == "kw" and value == "cast":
            self.take()
            self.expect("op", "(", "'(' after CAST")
            inner = self.disjunction()
            self.expect("kw", "as", "AS in CAST")
            target = self.type_name()
            self.expect("op", ")", "')' closing CAST")
            return ("cast", inner, target)
        if kind == "name" or (kind == "kw" and value in ("date", "timestamp")):
            self.take()
            if self.accept("op", "("):
                args = []
                if not self.accept("op", ")"):
                    args.append(self.disjunction())
                    while self.accept("op", ","):
                        args.append(self.disjunction())
                    self.expect("op", ")", "')' closing the function's arguments")
                name = str(value).lower()
                if name not in _FUNCTIONS:
                    raise PredicateError(f"push_down_predicate: function {value}() is not "
                                         f"supported (supported: {', '.join(sorted(_FUNCTIONS))})"
                                         f" in {self.text!r}")
                return ("call", name, args)
            return ("col", value)
        self.error("expected a value, a partition column or '('")

    def type_name(self) -> str:
        kind, value, _ = self.take()
        if kind not in ("name", "kw"):
            self.error("expected a type name")
        name = str(value).lower()
        if self.accept("op", "("):  # decimal(10,2), varchar(20)
            while not self.accept("op", ")"):
                if self.peek()[0] == "end":
                    self.error("expected ')' closing the type")
                self.take()
        return name


def parse(text: str):
    """The parsed predicate (raises PredicateError)."""
    if not str(text or "").strip():
        raise PredicateError("push_down_predicate is empty")
    return _Parser(str(text)).parse()


# ---------------------------------------------------------------------------------------------
# Values and Spark's casts

_INTEGRAL = {"tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long"}
_FRACTIONAL = {"float", "double", "real"}


def _type_kind(glue_type: str) -> str:
    t = (glue_type or "string").strip().lower()
    base = t.split("(", 1)[0]
    if base in _INTEGRAL:
        return "int"
    if base in _FRACTIONAL:
        return "double"
    if base in ("decimal", "numeric"):
        return "decimal"
    if base == "date":
        return "date"
    if base == "timestamp":
        return "timestamp"
    if base == "boolean":
        return "boolean"
    return "string"


def _to_date(v) -> Optional[datetime.date]:
    if v is None:
        return None
    if isinstance(v, datetime.datetime):
        return v.date()
    if isinstance(v, datetime.date):
        return v
    m = re.match(r"^\s*(\d{4})-(\d{1,2})(?:-(\d{1,2}))?", str(v))
    if not m:
        return None
    try:
        return datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError:
        return None


def _to_timestamp(v) -> Optional[datetime.datetime]:
    if v is None:
        return None
    if isinstance(v, datetime.datetime):
        return v
    if isinstance(v, datetime.date):
        return datetime.datetime(v.year, v.month, v.day)
    text = str(v).strip().replace("T", " ")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _cast(v, kind: str):
    """`v` cast to the kind ("int", "double", "decimal", "string", "date", "timestamp",
    "boolean") with Spark's non-ANSI rules: what does not convert is null."""
    if v is None:
        return None
    try:
        if kind == "int":
            if isinstance(v, bool):
                return int(v)
            if isinstance(v, (int, float, decimal.Decimal)):
                return int(v)
            text = str(v).strip()
            return int(decimal.Decimal(text)) if re.match(r"^[+-]?\d+(\.\d*)?$", text) else None
        if kind == "double":
            return float(v) if not isinstance(v, str) else float(v.strip())
        if kind == "decimal":
            return decimal.Decimal(str(v).strip())
        if kind == "boolean":
            if isinstance(v, bool):
                return v
            text = str(v).strip().lower()
            return {"true": True, "t": True, "yes": True, "1": True, "false": False, "f": False,
                    "no": False, "0": False}.get(text)
        if kind == "date":
            return _to_date(v)
        if kind == "timestamp":
            return _to_timestamp(v)
    except (ValueError, ArithmeticError, TypeError):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


def _kind_of(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, decimal.Decimal):
        return "decimal"
    if isinstance(v, datetime.datetime):
        return "timestamp"
    if isinstance(v, datetime.date):
        return "date"
    return "string"


def _coerce(a, b):
    """The two sides of a comparison in one type, as Spark's implicit casts make them."""
    if a is None or b is None:
        return a, b
    ka, kb = _kind_of(a), _kind_of(b)
    if ka == kb:
        return a, b
    order = ("int", "decimal", "double")
    if ka in order and kb in order:
        if "double" in (ka, kb):
            return float(a), float(b)
        return decimal.Decimal(a), decimal.Decimal(b)
    for kind in ("timestamp", "date"):
        if kind in (ka, kb):
            return _cast(a, kind), _cast(b, kind)
    if "string" in (ka, kb):
        other = kb if ka == "string" else ka
        if other in order:  # string vs number: the string is cast to the number's type
            target = "double" if other == "double" else ("decimal" if other == "decimal"
                                                         else "int")
            if target == "int" and re.search(r"[.eE]", str(a if ka == "string" else b)):
                target = "double"
            return _coerce(_cast(a, target), _cast(b, target)) if target != "int" else \
                (_cast(a, "int"), _cast(b, "int"))
        if other == "boolean":
            return _cast(a, "boolean"), _cast(b, "boolean")
    return _cast(a, "string"), _cast(b, "string")


_JAVA_DATE = [("yyyy", "%Y"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"),
              ("mm", "%M"), ("ss", "%S"), ("M", "%m"), ("d", "%d")]


def _java_format(fmt: str) -> str:
    out, i = "", 0
    while i < len(fmt):
        for java, py in _JAVA_DATE:
            if fmt.startswith(java, i):
                out += py
                i += len(java)
                break
        else:
            out += fmt[i].replace("%", "%%")
            i += 1
    return out


def _fn_to_date(v, fmt=None):
    if v is None:
        return None
    if fmt is None:
        return _to_date(v)
    try:
        return datetime.datetime.strptime(str(v), _java_format(str(fmt))).date()
    except ValueError:
        return None


def _fn_date_format(v, fmt):
    ts = _to_timestamp(v)
    return None if ts is None or fmt is None else ts.strftime(_java_format(str(fmt)))


def _fn_substring(v, pos, length=None):
    if v is None or pos is None:
        return None
    text, pos = str(v), int(pos)
    start = pos - 1 if pos > 0 else (len(text) + pos if pos < 0 else 0)
    start = max(start, 0)
    return text[start:] if length is None else text[start:start + max(int(length), 0)]


def _strict(fn):
    """A function of Spark's whose result is null when an argument is null."""
    def call(*args):
        return None if any(a is None for a in args) else fn(*args)
    return call


_FUNCTIONS: Dict[str, Callable] = {
    "to_date": _fn_to_date,
    "date_format": _fn_date_format,
    "lower": _strict(lambda v: str(v).lower()), "lcase": _strict(lambda v: str(v).lower()),
    "upper": _strict(lambda v: str(v).upper()), "ucase": _strict(lambda v: str(v).upper()),
    "trim": _strict(lambda v: str(v).strip()), "ltrim": _strict(lambda v: str(v).lstrip()),
    "rtrim": _strict(lambda v: str(v).rstrip()),
    "length": _strict(lambda v: len(str(v))), "char_length": _strict(lambda v: len(str(v))),
    "concat": _strict(lambda *vs: "".join(_cast(v, "string") for v in vs)),
    "substring": _fn_substring, "substr": _fn_substring,
    "coalesce": lambda *vs: next((v for v in vs if v is not None), None),
    "year": _strict(lambda v: (_to_date(v) or None) and _to_date(v).year),
    "month": _strict(lambda v: (_to_date(v) or None) and _to_date(v).month),
    "day": _strict(lambda v: (_to_date(v) or None) and _to_date(v).day),
    "dayofmonth": _strict(lambda v: (_to_date(v) or None) and _to_date(v).day),
    "int": lambda v: _cast(v, "int"), "string": lambda v: _cast(v, "string"),
    "bigint": lambda v: _cast(v, "int"), "double": lambda v: _cast(v, "double"),
    "date": lambda v: _cast(v, "date"),
}


def _like(value: str, pattern: str) -> bool:
    regex, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            regex += re.escape(pattern[i + 1])
            i += 2
            continue
        regex += ".*" if c == "%" else "." if c == "_" else re.escape(c)
        i += 1
    return re.fullmatch(regex, value, re.S) is not None


def _not(v):
    return None if v is None else not v


class Predicate:
    """A parsed push_down_predicate bound to a table's partition keys [(name, glue type)]."""

    def __init__(self, text: str, partition_keys: Sequence[Tuple[str, str]]):
        self.text = str(text)
        self.tree = parse(self.text)
        self.keys = {name.lower(): (name, _type_kind(t)) for name, t in partition_keys}
        self._check(self.tree)

    def _check(self, node):
        if node[0] == "col" and node[1].lower() not in self.keys:
            raise PredicateError(
                f"push_down_predicate {self.text!r} names {node[1]!r}, which is not a partition "
                f"column of the table (its partition columns: "
                f"{', '.join(n for n, _ in self.keys.values()) or 'none'})")
        for child in node[1:]:
            if isinstance(child, tuple):
                self._check(child)
            elif isinstance(child, list):
                for item in child:
                    self._check(item)

    def matches(self, values: Dict[str, str]) -> bool:
        """Whether the partition with these {key: value} strings is read (the predicate is
        true; false and null are not)."""
        lowered = {k.lower(): v for k, v in values.items()}
        return self._eval(self.tree, lowered) is True

    def _eval(self, node, row):
        op = node[0]
        if op == "lit":
            return node[1]
        if op == "col":
            name, kind = self.keys[node[1].lower()]
            return _cast(row.get(name.lower()), kind)
        if op == "and":
            a, b = self._eval(node[1], row), self._eval(node[2], row)
            if a is False or b is False:
                return False
            return None if a is None or b is None else bool(a and b)
        if op == "or":
            a, b = self._eval(node[1], row), self._eval(node[2], row)
            if a is True or b is True:
                return True
            return None if a is None or b is None else False
        if op == "not":
            v = self._eval(node[1], row)
            return _not(None if v is None else bool(v))
        if op == "cmp":
            return self._compare(node[1], self._eval(node[2], row), self._eval(node[3], row))
        if op == "in":
            v = self._eval(node[1], row)
            seen_null = False
            for item in node[2]:
                r = self._compare("=", v, self._eval(item, row))
                if r is True:
                    return not node[3]
                seen_null |= r is None
            return None if seen_null or v is None else node[3]
        if op == "between":
            v = self._eval(node[1], row)
            lo = self._compare(">=", v, self._eval(node[2], row))
            hi = self._compare("<=", v, self._eval(node[3], row))
            both = None if lo is None or hi is None else (lo and hi)
            if lo is False or hi is False:
                both = False
            return _not(both) if node[4] else both
        if op in ("like", "rlike"):
            v, p = self._eval(node[1], row), self._eval(node[2], row)
            if v is None or p is None:
                return None
            v, p = _cast(v, "string"), _cast(p, "string")
            r = _like(v, p) if op == "like" else re.search(p, v) is not None
            return not r if node[3] else r
        if op == "isnull":
            v = self._eval(node[1], row)
            return (v is not None) if node[2] else (v is None)
        if op == "arith":
            a, b = self._eval(node[2], row), self._eval(node[3], row)
            if a is None or b is None:
                return None
            a, b = _coerce(a, b) if _kind_of(a) != "string" or _kind_of(b) != "string" else \
                (_cast(a, "double"), _cast(b, "double"))
            if a is None or b is None:
                return None
            try:
                if node[1] == "+":
                    return a + b
                if node[1] == "-":
                    return a - b
                if node[1] == "*":
                    return a * b
                if node[1] == "/":
                    return None if b == 0 else float(a) / float(b)
                return None if b == 0 else a % b
            except TypeError:
                return None
        if op == "neg":
            v = self._eval(node[1], row)
            return None if v is None else -v
        if op == "cast":
            return _cast(self._eval(node[1], row), _type_kind(node[2]))
        if op == "call":
            return _FUNCTIONS[node[1]](*[self._eval(a, row) for a in node[2]])
        raise PredicateError(f"push_down_predicate: cannot evaluate {op}")  # pragma: no cover

    @staticmethod
    def _compare(op, a, b):
        if op == "<=>":
            if a is None or b is None:
                return a is None and b is None
            op = "="
        a, b = _coerce(a, b)
        if a is None or b is None:
            return None
        try:
            if op in ("=", "=="):
                return a == b
            if op in ("!=", "<>"):
                return a != b
            if op == "<":
                return a < b
            if op == "<=":
                return a <= b
            if op == ">":
                return a > b
            return a >= b
        except TypeError:
            return None
