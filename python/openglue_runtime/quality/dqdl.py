"""DQDL, AWS Glue's Data Quality Definition Language: a tokenizer and a recursive-descent parser
that turn a ruleset's text into the objects of this module.

The grammar is AWS's (the DQDL reference of the Glue developer guide, and awslabs/dqdl's
published ANTLR grammar read as its specification):

    document   := [Metadata = {...}] [DataSources = {...}] {name = value}
                  [DefaultLabels = [...]] (Rules = [rules] [Analyzers = [...]] | Analyzers = [...])
    rule       := RuleType {["of"|"and"] parameter} [condition] [where "sql"]
                  [labels = ["k" = "v", ...]] {with <tag> condition}
    toplevel   := rule | "(" toplevel ")" [labels] | toplevel and toplevel | toplevel or toplevel
    condition  := [not] between x and y | > x | >= x | < x | <= x | [!]= x | [not] in [...]
                  | [not] matches "regex"
    x          := number (with + - * / and function calls: avg(last(3)) * 0.9) | "string" | NULL
                  | EMPTY | WHITESPACES_ONLY | $variable | date ("2024-01-31", now(),
                  (now() - 3 days)) | duration (24 hours) | size (10 MB)

A `#` starts a comment that runs to the end of the line. Errors raise `DQDLSyntaxError` (a
ValueError) naming the line and column and what was expected there.
"""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

__all__ = ["DQDLSyntaxError", "Ruleset", "Rule", "Composite", "Condition", "Num", "Func", "Bin",
           "Str", "Keyword", "DateExpr", "Duration", "Size", "parse", "RULE_TYPES"]

# The rule types of the DQDL reference, with the number of parameters each takes (a range; None:
# any number) and whether it takes a condition.
RULE_TYPES: Dict[str, Tuple[int, Optional[int], bool]] = {
    "RowCount": (0, 0, True), "RowCountMatch": (1, 1, True), "ColumnCount": (0, 0, True),
    "ColumnExists": (1, 1, False), "ColumnDataType": (1, 1, True),
    "ColumnNamesMatchPattern": (1, 1, False), "ColumnValues": (1, 1, True),
    "ColumnLength": (1, 1, True), "IsComplete": (1, 1, False), "Completeness": (1, 1, True),
    "IsUnique": (1, None, False), "Uniqueness": (1, None, True),
    "UniqueValueRatio": (1, 1, True), "IsPrimaryKey": (1, None, False),
    "DistinctValuesCount": (1, 1, True), "Mean": (1, 1, True), "Sum": (1, 1, True),
    "StandardDeviation": (1, 1, True), "Variance": (1, 1, True), "Entropy": (1, 1, True),
    "ColumnCorrelation": (2, 2, True), "DataFreshness": (1, 1, True), "CustomSql": (1, 1, True),
    "ReferentialIntegrity": (2, 2, True), "DatasetMatch": (2, 3, True), "SchemaMatch": (1, 1, True),
    "AggregateMatch": (2, 2, True), "DetectAnomalies": (1, None, False),
}
ANALYZER_TYPES = {"RowCount", "ColumnCount", "Completeness", "Uniqueness", "Mean", "Sum",
                  "StandardDeviation", "Variance", "Entropy", "DistinctValuesCount",
                  "UniqueValueRatio", "ColumnLength", "ColumnCorrelation", "CustomSql",
                  "AllStatistics"}
KEYWORD_VALUES = {"NULL": "NULL", "null": "NULL", "EMPTY": "EMPTY", "empty": "EMPTY",
                  "WHITESPACES_ONLY": "WHITESPACES_ONLY", "whitespaces_only": "WHITESPACES_ONLY"}
DURATION_UNITS = {"days": 86400.0, "hours": 3600.0, "minutes": 60.0}
SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


class DQDLSyntaxError(ValueError):
    """A ruleset that is not DQDL: the message names the line, the column and what is wrong."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column, self.reason = line, column, message


# ---------------------------------------------------------------------------------- values

@dataclass
class Num:
    value: float
    text: str = ""


@dataclass
class Func:
    name: str
    args: List[Any]


@dataclass
class Bin:
    op: str
    left: Any
    right: Any


@dataclass
class Str:
    value: str


@dataclass
class Keyword:
    """NULL, EMPTY or WHITESPACES_ONLY."""
    name: str


@dataclass
class DateExpr:
    """A date: `literal` ("2024-01-31") or now() shifted by `offset_seconds`."""
    literal: Optional[str] = None
    offset_seconds: float = 0.0


@dataclass
class Duration:
    seconds: float
    text: str


@dataclass
class Size:
    size_bytes: int
    text: str


@dataclass
class Condition:
    """`op` is one of = != > >= < <= between in matches; `negated` for not between / not in /
    not matches (`!=` is its own op); `values` holds one value, two for between, a list for in."""
    op: str
    values: List[Any]
    negated: bool = False
    text: str = ""


@dataclass
class Rule:
    rule_type: str
    parameters: List[str]
    condition: Optional[Condition] = None
    where: Optional[str] = None
    labels: Dict[str, str] = field(default_factory=dict)
    tags: Dict[str, Condition] = field(default_factory=dict)
    text: str = ""

    @property
    def threshold(self) -> Optional[Condition]:
        return self.tags.get("threshold")


@dataclass
class Composite:
    op: str                       # "and" | "or"
    children: List[Any]
    labels: Dict[str, str] = field(default_factory=dict)
    text: str = ""


@dataclass
class Ruleset:
    rules: List[Union[Rule, Composite]]
    analyzers: List[Rule] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    data_sources: Dict[str, Any] = field(default_factory=dict)
    variables: Dict[str, Any] = field(default_factory=dict)
    default_labels: Dict[str, str] = field(default_factory=dict)
    text: str = ""


# ---------------------------------------------------------------------------------- tokens

@dataclass
class _Token:
    kind: str        # STRING NUMBER IDENT OP EOF
    value: str
    line: int
    column: int
    start: int
    end: int


_OPS = (">=", "<=", "!=", "=", ">", "<", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*",
        "/", "$")


def _tokenize(text: str) -> List[_Token]:
    tokens, i, line, line_start = [], 0, 1, 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            line, line_start = line + 1, i
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        col = i - line_start + 1
        if c == '"':
            j, out = i + 1, []
            while True:
                if j >= n:
                    raise DQDLSyntaxError("a quoted string is not closed", line, col)
                ch = text[j]
                if ch == "\\" and j + 1 < n and text[j + 1] in '"\\':
                    out.append(text[j + 1])
                    j += 2
                    continue
                if ch == '"':
                    break
                if ch == "\n":
                    line, line_start = line + 1, j + 1
                out.append(ch)
                j += 1
            tokens.append(_Token("STRING", "".join(out), line, col, i, j + 1))
            i = j + 1
            continue
        if c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j + 1 < n and text[j] == "." and text[j + 1].isdigit():
                j += 1
                while j < n and text[j].isdigit():
                    j += 1
            if j < n and (text[j].isalpha() or text[j] == "_"):
                # an identifier that starts with digits (IDENTIFIER is [a-zA-Z0-9_.]+)
                while j < n and (text[j].isalnum() or text[j] in "_."):
                    j += 1
                tokens.append(_Token("IDENT", text[i:j], line, col, i, j))
            else:
                tokens.append(_Token("NUMBER", text[i:j], line, col, i, j))
            i = j
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_."):
                j += 1
            tokens.append(_Token("IDENT", text[i:j], line, col, i, j))
            i = j
            continue
        for op in _OPS:
            if text.startswith(op, i):
                tokens.append(_Token("OP", op, line, col, i, i + len(op)))
                i += len(op)
                break
        else:
            raise DQDLSyntaxError(f"unexpected character {c!r}", line, col)
    tokens.append(_Token("EOF", "", line, i - line_start + 1, n, n))
    return tokens


# ---------------------------------------------------------------------------------- parser

class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    # -- helpers
    @property
    def tok(self) -> _Token:
        return self.tokens[self.pos]

    def peek(self, k: int = 1) -> _Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def error(self, message: str, tok: Optional[_Token] = None):
        tok = tok or self.tok
        found = "the end of the ruleset" if tok.kind == "EOF" else repr(tok.value if tok.kind != "STRING" else f'"{tok.value}"')
        raise DQDLSyntaxError(f"{message}, found {found}", tok.line, tok.column)

    def is_op(self, value: str) -> bool:
        return self.tok.kind == "OP" and self.tok.value == value

    def is_word(self, *words: str) -> bool:
        return self.tok.kind == "IDENT" and self.tok.value in words

    def expect_op(self, value: str, what: str = "") -> _Token:
        if not self.is_op(value):
            self.error(f"expected '{value}'{' ' + what if what else ''}")
        t = self.tok
        self.pos += 1
        return t

    def expect_word(self, word: str) -> _Token:
        if not self.is_word(word):
            self.error(f"expected '{word}'")
        t = self.tok
        self.pos += 1
        return t

    def span(self, start_tok: _Token) -> str:
        end = self.tokens[self.pos - 1].end
        return self.text[start_tok.start:end]

    # -- document
    def document(self) -> Ruleset:
        rs = Ruleset(rules=[], text=self.text)
        seen_rules = seen_analyzers = False
        while self.tok.kind != "EOF":
            if not self.tok.kind == "IDENT":
                self.error("expected a section (Rules = [ ... ])")
            name_tok = self.tok
            name = name_tok.value
            self.pos += 1
            self.expect_op("=", f"after {name}")
            if name == "Rules":
                if seen_rules:
                    self.error("a second Rules section", name_tok)
                rs.rules = self.rule_list()
                seen_rules = True
            elif name == "Analyzers":
                rs.analyzers = self.analyzer_list()
                seen_analyzers = True
            elif name == "Metadata":
                rs.metadata = self.dictionary()
            elif name == "DataSources":
                rs.data_sources = self.dictionary()
            elif name == "DefaultLabels":
                rs.default_labels = self.label_list()
            elif seen_rules or seen_analyzers:
                self.error("expected the end of the ruleset after the Rules section", name_tok)
            else:
                rs.variables[name] = self.variable_value()
        if not seen_rules and not seen_analyzers:
            raise DQDLSyntaxError("a ruleset needs a section 'Rules = [ ... ]'", 1, 1)
        return rs

    def dictionary(self) -> Dict[str, Any]:
        out = {}
        self.expect_op("{")
        while True:
            if self.tok.kind != "STRING":
                self.error("expected a quoted key")
            key = self.tok.value
            self.pos += 1
            self.expect_op(":")
            if self.tok.kind == "STRING":
                out[key] = self.tok.value
                self.pos += 1
            elif self.is_op("["):
                self.pos += 1
                items = []
                while True:
                    if self.tok.kind != "STRING":
                        self.error("expected a quoted string")
                    items.append(self.tok.value)
                    self.pos += 1
                    if self.is_op(","):
                        self.pos += 1
                        continue
                    break
                self.expect_op("]")
                out[key] = items
            else:
                self.error("expected a quoted string or a list of them")
            if self.is_op(","):
                self.pos += 1
                continue
            break
        self.expect_op("}")
        return out

    def variable_value(self):
        if self.is_op("["):
            self.pos += 1
            values = [self.string_value()]
            while self.is_op(","):
                self.pos += 1
                values.append(self.string_value())
            self.expect_op("]")
            return values
        return self.string_value()

    def string_value(self):
        t = self.tok
        if t.kind == "STRING":
            self.pos += 1
            return Str(t.value)
        if t.kind == "IDENT" and t.value in KEYWORD_VALUES:
            self.pos += 1
            return Keyword(KEYWORD_VALUES[t.value])
        self.error("expected a quoted string, NULL, EMPTY or WHITESPACES_ONLY")

    def label_list(self) -> Dict[str, str]:
        labels = {}
        self.expect_op("[")
        if self.is_op("]"):
            self.pos += 1
            return labels
        while True:
            if self.tok.kind != "STRING":
                self.error('expected a label "key" = "value"')
            key = self.tok.value
            self.pos += 1
            self.expect_op("=", "in a label")
            if self.tok.kind != "STRING":
                self.error("expected the label's quoted value")
            labels[key] = self.tok.value
            self.pos += 1
            if self.is_op(","):
                self.pos += 1
                continue
            break
        self.expect_op("]", "closing the labels")
        return labels

    def rule_list(self) -> List[Union[Rule, Composite]]:
        self.expect_op("[", "opening the rules")
        rules = []
        if self.is_op("]"):
            self.pos += 1
            return rules
        while True:
            rules.append(self.top_level())
            if self.is_op(","):
                self.pos += 1
                continue
            if self.is_op("]"):
                self.pos += 1
                return rules
            self.error("expected ',' between rules or ']' closing the rules")

    def analyzer_list(self) -> List[Rule]:
        self.expect_op("[", "opening the analyzers")
        out = []
        if self.is_op("]"):
            self.pos += 1
            return out
        while True:
            start = self.tok
            if start.kind != "IDENT":
                self.error("expected an analyzer type")
            if start.value not in ANALYZER_TYPES:
                self.error(f"unknown analyzer type {start.value!r} (known: "
                           f"{', '.join(sorted(ANALYZER_TYPES))})", start)
            self.pos += 1
            params = self.parameters()
            out.append(Rule(start.value, params, text=self.span(start)))
            if self.is_op(","):
                self.pos += 1
                continue
            self.expect_op("]", "closing the analyzers")
            return out

    # -- rules
    def top_level(self):
        start = self.tok
        node = self.primary()
        op = None
        children = [node]
        while self.is_word("and", "AND", "or", "OR"):
            this = self.tok.value.lower()
            if op and this != op:
                self.error("and and or cannot be mixed at one level: put parentheses around "
                           "one side")
            op = this
            self.pos += 1
            children.append(self.primary())
        if op is None:
            return node
        return Composite(op, children, text=self.span(start))

    def primary(self):
        start = self.tok
        if self.is_op("("):
            self.pos += 1
            inner = self.top_level()
            self.expect_op(")", "closing the parenthesis")
            if self.is_word("labels"):
                inner.labels = {**inner.labels, **self.labels_clause()}
            if isinstance(inner, Composite):
                inner.text = self.span(start)
            return inner
        return self.rule()

    def labels_clause(self) -> Dict[str, str]:
        self.expect_word("labels")
        self.expect_op("=")
        return self.label_list()

    def parameters(self) -> List[str]:
        params = []
        while True:
            if self.is_word("of") or (self.is_word("and", "AND") and self.peek().kind == "STRING"):
                self.pos += 1
                continue
            if self.tok.kind == "STRING":
                params.append(self.tok.value)
                self.pos += 1
            elif self.is_op("$") and self.peek().kind == "IDENT":
                self.pos += 2
                params.append(("$", self.tokens[self.pos - 1].value))
            else:
                return params

    def rule(self) -> Rule:
        start = self.tok
        if start.kind != "IDENT":
            self.error("expected a rule type (such as RowCount or IsComplete)")
        rule_type = start.value
        if rule_type not in RULE_TYPES:
            raise DQDLSyntaxError(f"unknown rule type {rule_type!r}", start.line, start.column)
        self.pos += 1
        params = self.parameters()
        lo, hi, takes_condition = RULE_TYPES[rule_type]
        if len(params) < lo or (hi is not None and len(params) > hi):
            want = str(lo) if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise DQDLSyntaxError(f"{rule_type} takes {want} quoted parameter(s), got "
                                  f"{len(params)}", start.line, start.column)
        condition = None
        if self.at_condition():
            if not takes_condition:
                self.error(f"{rule_type} takes no condition")
            condition = self.condition()
        elif takes_condition:
            self.error(f"expected a condition for {rule_type} (such as > 0 or between 1 and 10)")
        where = None
        if self.is_word("where"):
            self.pos += 1
            if self.tok.kind != "STRING":
                self.error('expected a quoted SQL condition after where')
            where = self.tok.value
            self.pos += 1
        labels = self.labels_clause() if self.is_word("labels") else {}
        tags = {}
        while self.is_word("with"):
            self.pos += 1
            if self.tok.kind != "IDENT":
                self.error("expected a tag name after with (such as threshold)")
            tag = self.tok.value
            self.pos += 1
            if not self.at_condition():
                self.error(f"expected a condition after with {tag}")
            tags[tag] = self.condition()
        if "threshold" in tags and rule_type not in ("ColumnValues", "ColumnDataType",
                                                      "ColumnLength", "DataFreshness",
                                                      "CustomSql"):
            raise DQDLSyntaxError(f"{rule_type} does not take 'with threshold'", start.line,
                                  start.column)
        return Rule(rule_type, params, condition, where, labels, tags, self.span(start))

    # -- conditions
    def at_condition(self) -> bool:
        t = self.tok
        if t.kind == "OP" and t.value in ("=", "!=", ">", ">=", "<", "<="):
            return True
        return t.kind == "IDENT" and t.value in ("between", "in", "not", "matches")

    def condition(self) -> Condition:
        start = self.tok
        negated = False
        if self.is_word("not"):
            negated = True
            self.pos += 1
            if not self.is_word("between", "in", "matches"):
                self.error("expected between, in or matches after not")
        t = self.tok
        if t.kind == "IDENT" and t.value == "between":
            self.pos += 1
            lo = self.value()
            self.expect_word("and")
            hi = self.value()
            return Condition("between", [lo, hi], negated, self.span(start))
        if t.kind == "IDENT" and t.value == "in":
            self.pos += 1
            if self.is_op("$"):
                self.pos += 1
                name = self.tok.value
                self.pos += 1
                return Condition("in", [("$", name)], negated, self.span(start))
            self.expect_op("[", "opening the list after in")
            values = [self.value()]
            while self.is_op(","):
                self.pos += 1
                values.append(self.value())
            self.expect_op("]", "closing the list")
            return Condition("in", values, negated, self.span(start))
        if t.kind == "IDENT" and t.value == "matches":
            self.pos += 1
            if self.tok.kind != "STRING":
                self.error("expected a quoted regular expression after matches")
            pattern = self.tok.value
            self.pos += 1
            return Condition("matches", [Str(pattern)], negated, self.span(start))
        op = t.value
        self.pos += 1
        return Condition(op, [self.value()], False, self.span(start))

    def value(self):
        """A number expression, a string, a keyword, a date, a duration or a size."""
        t = self.tok
        if t.kind == "STRING":
            self.pos += 1
            return Str(t.value)
        if t.kind == "IDENT" and t.value in KEYWORD_VALUES:
            self.pos += 1
            return Keyword(KEYWORD_VALUES[t.value])
        if self.is_op("$") and self.peek().kind == "IDENT":
            self.pos += 2
            return ("$", self.tokens[self.pos - 1].value)
        if t.kind == "IDENT" and t.value == "now" and self.peek().kind == "OP" and self.peek().value == "(":
            self.pos += 1
            self.expect_op("(")
            self.expect_op(")")
            return DateExpr()
        if self.is_op("(") and self.peek().kind == "IDENT" and self.peek().value == "now":
            self.pos += 1
            now = self.value()
            if self.is_op("-") or self.is_op("+"):
                sign = -1 if self.tok.value == "-" else 1
                self.pos += 1
                dur = self.value()
                if not isinstance(dur, Duration):
                    self.error("expected a duration such as 3 days after now() -")
                now.offset_seconds = sign * dur.seconds
            self.expect_op(")")
            return now
        expr = self.sum_expr()
        if isinstance(expr, Num) and self.tok.kind == "IDENT":
            if self.tok.value in DURATION_UNITS:
                unit = self.tok.value
                self.pos += 1
                return Duration(expr.value * DURATION_UNITS[unit], f"{expr.text} {unit}")
            if self.tok.value in SIZE_UNITS:
                unit = self.tok.value
                self.pos += 1
                return Size(int(expr.value * SIZE_UNITS[unit]), f"{expr.text} {unit}")
        return expr

    def sum_expr(self):
        left = self.product()
        while self.is_op("+") or self.is_op("-"):
            op = self.tok.value
            self.pos += 1
            left = Bin(op, left, self.product())
        return left

    def product(self):
        left = self.atom()
        while self.is_op("*") or self.is_op("/"):
            op = self.tok.value
            self.pos += 1
            left = Bin(op, left, self.atom())
        return left

    def atom(self):
        t = self.tok
        if self.is_op("-"):
            self.pos += 1
            inner = self.atom()
            if isinstance(inner, Num):
                return Num(-inner.value, "-" + inner.text)
            return Bin("-", Num(0.0, "0"), inner)
        if t.kind == "NUMBER":
            self.pos += 1
            return Num(float(t.value), t.value)
        if self.is_op("("):
            self.pos += 1
            inner = self.sum_expr()
            self.expect_op(")")
            return inner
        if t.kind == "IDENT" and t.value in KEYWORD_VALUES:
            self.pos += 1
            return Keyword(KEYWORD_VALUES[t.value])
        if t.kind == "IDENT" and self.peek().kind == "OP" and self.peek().value == "(":
            name = t.value
            self.pos += 2
            args = []
            if not self.is_op(")"):
                args.append(self.sum_expr())
                while self.is_op(","):
                    self.pos += 1
                    args.append(self.sum_expr())
            self.expect_op(")", f"closing {name}(")
            return Func(name, args)
        self.error("expected a number, a quoted string or a function such as avg(last(3))")


def parse(text: str) -> Ruleset:
    """Parses a DQDL ruleset. Raises DQDLSyntaxError (line, column, reason) when it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise DQDLSyntaxError("the ruleset is empty: write 'Rules = [ ... ]'", 1, 1)
    return _Parser(text).document()
