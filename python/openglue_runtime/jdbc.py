"""JDBC sources and sinks of the embedded engine: PostgreSQL and MySQL/MariaDB.

Glue scripts name a JDBC database by a `jdbc:` URL (or a Glue connection); OpenGlue talks to it
with Python drivers from PyPI (psycopg 3 for PostgreSQL, PyMySQL for MySQL/MariaDB), so no JVM
and no JDBC driver are involved. Rows land in Arrow tables and become DynamicFrames through the
engine's `from_arrow`.

- `resolve(connection_type, options)`: the database to talk to (`JdbcTarget`) from Glue's
  connection options: `url`, `user`, `password`, `dbtable`, or `connectionName` (a Glue
  connection: GetConnection HidePassword=False with the run's credentials; the options given
  next to it win). `customJdbcDriverS3Path` / `customJdbcDriverClassName` are accepted and
  ignored (no JVM: the Python driver of the vendor is used).
- `read(target, options, transformation_ctx)`: a pyarrow Table; parallel reads with
  `hashfield` / `hashexpression` / `hashpartitions`; `sampleQuery`; job bookmarks by
  `jobBookmarkKeys` / `jobBookmarkKeysSortOrder`.
- `write(target, table, options)`: creates the table when missing, appends (COPY for
  PostgreSQL, multi-row INSERT for MySQL), or merges on `mergeKeys` (an OpenGlue option) with
  INSERT .. ON CONFLICT DO UPDATE / ON DUPLICATE KEY UPDATE; one transaction per write.
- `extract_jdbc_conf(name)`: the dict `glueContext.extract_jdbc_conf` returns.

Type map (database -> Glue type), see docs/runtime.md "JDBC".
"""
import datetime
import decimal
import json
import re
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

__all__ = ["JdbcTarget", "JdbcError", "parse_url", "resolve", "read", "write",
           "extract_jdbc_conf", "get_connection", "JDBC_CONNECTION_TYPES"]

# connection_type values that mean a JDBC database -> vendor of the driver used.
JDBC_CONNECTION_TYPES = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql",
                         "jdbc": ""}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
DEFAULT_HASH_PARTITIONS = 7
FETCH_ROWS = 10000
MAX_PARTITIONS = 64


class JdbcError(RuntimeError):
    """A JDBC source or sink cannot be used as asked (bad options, unreachable database, ...)."""


@dataclass
class JdbcTarget:
    vendor: str                # postgresql | mysql
    host: str
    port: int
    database: str
    user: str = ""
    password: str = field(default="", repr=False)
    dbtable: str = ""
    connection_name: str = ""
    params: Dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The JDBC URL (never with the password)."""
        return "jdbc:{}://{}:{}/{}".format(self.vendor, self.host, self.port, self.database)

    @property
    def label(self) -> str:
        """How the bookmark state names the database: the connection's name, else the URL."""
        return self.connection_name or self.url


# ---------------------------------------------------------------------------------------------
# URLs and connections

_URL = re.compile(r"^jdbc:(?P<vendor>postgresql|mysql|mariadb)://(?P<host>\[[^\]]+\]|[^:/?;]+)"
                  r"(?::(?P<port>\d+))?(?:/(?P<db>[^?;]*))?(?:[?;](?P<params>.*))?$", re.I)


def parse_url(url: str) -> Tuple[str, str, int, str, Dict[str, str]]:
    """(vendor, host, port, database, params) of jdbc:postgresql://host:port/db,
    jdbc:mysql://host:port/db or jdbc:mariadb://... (vendor mysql); port defaults per vendor."""
    m = _URL.match((url or "").strip())
    if not m:
        raise JdbcError("unsupported JDBC URL {!r}: expected jdbc:postgresql://host:port/database "
                        "or jdbc:mysql://host:port/database (or jdbc:mariadb://)".format(url))
    vendor = m.group("vendor").lower()
    vendor = "mysql" if vendor == "mariadb" else vendor
    host = m.group("host").strip("[]")
    port = int(m.group("port") or DEFAULT_PORTS[vendor])
    params = {}
    for part in re.split(r"[&;]", m.group("params") or ""):
        if "=" in part:
            k, v = part.split("=", 1)
            params[k] = v
    return vendor, host, port, m.group("db") or "", params


def get_connection(name: str, catalog_id: Optional[str] = None) -> Dict[str, Any]:
    """GetConnection(Name, HidePassword=False)'s Connection, with the run's credentials."""
    from openglue_runtime.catalog import _call, _catalog_kwargs, glue_client, CatalogError
    try:
        response = _call("connection {}".format(name), glue_client().get_connection,
                         Name=name, HidePassword=False, **_catalog_kwargs(catalog_id))
    except CatalogError as e:
        raise JdbcError(str(e)) from None
    return response["Connection"]


def _connection_props(name: str, catalog_id: Optional[str] = None) -> Dict[str, str]:
    conn = get_connection(name, catalog_id)
    props = dict(conn.get("ConnectionProperties") or {})
    if not props.get("JDBC_CONNECTION_URL"):
        raise JdbcError("connection {} has no JDBC_CONNECTION_URL (type {})".format(
            name, conn.get("ConnectionType", "?")))
    return props


def extract_jdbc_conf(connection_name: str, catalog_id: Optional[str] = None) -> Dict[str, str]:
    """What Glue's `glueContext.extract_jdbc_conf` returns for a JDBC connection: `url` (without
    the database, as Glue gives it), `fullUrl` (with it), `user`, `password`, `vendor`, and the
    SSL fields (`enforceSSL`, `customJDBCCert`, `customJDBCCertString`,
    `skipCustomJDBCCertValidation`)."""
    props = _connection_props(connection_name, catalog_id)
    full = props["JDBC_CONNECTION_URL"]
    vendor, host, port, _db, _params = parse_url(full)
    m = re.match(r"^(jdbc:[^:]+://[^/?;]+)", full)
    return {
        "url": m.group(1) if m else full,
        "fullUrl": full,
        "user": props.get("USERNAME", ""),
        "password": props.get("PASSWORD", ""),
        "vendor": vendor,
        "enforceSSL": props.get("JDBC_ENFORCE_SSL", "false"),
        "customJDBCCert": props.get("CUSTOM_JDBC_CERT", ""),
        "customJDBCCertString": props.get("CUSTOM_JDBC_CERT_STRING", ""),
        "skipCustomJDBCCertValidation": props.get("SKIP_CUSTOM_JDBC_CERT_VALIDATION", "false"),
    }


def resolve(connection_type: str, options: Dict[str, Any], catalog_id: Optional[str] = None,
            connection_name: Optional[str] = None, database: Optional[str] = None) -> JdbcTarget:
    """The database and table Glue's connection options name (see the module's docstring)."""
    options = dict(options or {})
    name = connection_name or options.get("connectionName") or ""
    url, user, password = options.get("url"), options.get("user"), options.get("password")
    if name:
        props = _connection_props(name, catalog_id)
        url = url or props["JDBC_CONNECTION_URL"]
        user = user if user is not None else props.get("USERNAME", "")
        password = password if password is not None else props.get("PASSWORD", "")
    if not url:
        raise JdbcError("a JDBC source or sink needs connection_options \"url\" (with \"user\" and "
                        "\"password\") or \"connectionName\" (a Glue connection)")
    if options.get("customJdbcDriverS3Path") or options.get("customJdbcDriverClassName"):
        _warn("customJdbcDriverS3Path/customJdbcDriverClassName are ignored: OpenGlue talks to "
              "the database with its own Python driver (psycopg for PostgreSQL, PyMySQL for MySQL)")
    vendor, host, port, db, params = parse_url(url)
    # credentials given in the URL's parameters (jdbc:...?user=u&password=p) count too
    user = user or params.pop("user", "")
    password = password or params.pop("password", "")
    params.pop("user", None)
    params.pop("password", None)
    wanted = JDBC_CONNECTION_TYPES.get((connection_type or "").lower(), "")
    if wanted and wanted != vendor:
        raise JdbcError("connection_type {} does not match the URL {} ({})".format(
            connection_type, url, vendor))
    db = database or options.get("database") or db
    if not db:
        raise JdbcError("the JDBC URL {} names no database".format(url))
    return JdbcTarget(vendor=vendor, host=host, port=port, database=db, user=user or "",
                      password=password or "", dbtable=options.get("dbtable") or "",
                      connection_name=name, params=params)


def connect(target: JdbcTarget, autocommit: bool = True):
    """A DB-API connection to the target (psycopg 3 / PyMySQL)."""
    try:
        if target.vendor == "postgresql":
            import psycopg
            kw = {}
            if target.params.get("sslmode"):
                kw["sslmode"] = target.params["sslmode"]
            return psycopg.connect(host=target.host, port=target.port, dbname=target.database,
                                   user=target.user, password=target.password,
                                   autocommit=autocommit, connect_timeout=30, **kw)
        import pymysql
        return pymysql.connect(host=target.host, port=target.port, database=target.database,
                               user=target.user, password=target.password,
                               autocommit=autocommit, connect_timeout=30, charset="utf8mb4")
    except ImportError as e:
        raise JdbcError("the database driver is not installed ({}); pip install -r "
                        "requirements.txt".format(e)) from None
    except Exception as e:  # noqa: BLE001 - the drivers' own error classes
        raise JdbcError("cannot connect to {} as {}: {}".format(target.url, target.user or "-",
                                                                _one_line(e))) from None


# ---------------------------------------------------------------------------------------------
# SQL helpers

def quote_ident(vendor: str, name: str) -> str:
    q = '"' if vendor == "postgresql" else "`"
    return q + name.replace(q, q + q) + q


def quote_table(vendor: str, dbtable: str) -> str:
    """`schema.table` / `table` as a quoted identifier (a part already quoted is kept)."""
    parts = [p for p in _split_name(dbtable)]
    if not parts:
        raise JdbcError("dbtable is empty")
    return ".".join(p if p[:1] in ('"', "`") else quote_ident(vendor, p) for p in parts)


def _split_name(name: str) -> List[str]:
    out, cur, quote = [], "", None
    for ch in (name or "").strip():
        if quote:
            cur += ch
            if ch == quote:
                quote = None
        elif ch in ('"', "`"):
            quote = ch
            cur += ch
        elif ch == ".":
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return [p.strip() for p in out if p.strip()]


def _unquote(part: str) -> str:
    return part[1:-1] if len(part) >= 2 and part[0] in ('"', "`") and part[-1] == part[0] else part


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:500]


def _warn(msg: str) -> None:
    print("WARN openglue_runtime.jdbc: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Types: database column -> Arrow (Glue) type

_PG_TYPES = {
    16: pa.bool_(), 20: pa.int64(), 21: pa.int16(), 23: pa.int32(), 26: pa.int64(),
    700: pa.float32(), 701: pa.float64(), 25: pa.string(), 1043: pa.string(), 1042: pa.string(),
    18: pa.string(), 19: pa.string(), 1082: pa.date32(), 1114: pa.timestamp("us"),
    1184: pa.timestamp("us"), 17: pa.binary(), 2950: pa.string(), 114: pa.string(),
    3802: pa.string(), 1083: pa.string(), 1266: pa.string(), 1186: pa.string(),
    790: pa.string(), 869: pa.string(), 650: pa.string(), 829: pa.string(),
}
# PyMySQL FIELD_TYPE codes
_MY_TYPES = {
    1: pa.int8(), 2: pa.int16(), 3: pa.int32(), 9: pa.int32(), 8: pa.int64(), 13: pa.int16(),
    4: pa.float32(), 5: pa.float64(), 10: pa.date32(), 14: pa.date32(), 7: pa.timestamp("us"),
    12: pa.timestamp("us"), 11: pa.string(), 245: pa.string(), 247: pa.string(), 248: pa.string(),
    15: pa.string(), 253: pa.string(), 254: pa.string(), 16: pa.int64(),
    249: pa.string(), 250: pa.string(), 251: pa.string(), 252: pa.string(), 255: pa.binary(),
}
_MY_DECIMALS = (0, 246)
_PG_NUMERIC = 1700


def _column_types(vendor: str, description, rows: Sequence[Sequence[Any]]) -> List[pa.DataType]:
    types = []
    for i, d in enumerate(description):
        code = d[1]
        if vendor == "postgresql":
            if code == _PG_NUMERIC:
                p, s = getattr(d, "precision", None), getattr(d, "scale", None)
                t = pa.decimal128(p, s) if p and 0 < p <= 38 else pa.decimal128(38, 18)
            elif code in (16,) or code in _PG_TYPES:
                t = _PG_TYPES[code]
            else:
                t = pa.string()
        else:
            if code in _MY_DECIMALS:
                length, scale = d[3] or 0, d[5] or 0
                p = length - (1 if scale > 0 else 0) - 1
                p = p if scale <= p <= 38 and p > 0 else 38
                t = pa.decimal128(max(p, scale, 1), scale)
            elif code == 1 and (d[3] or 0) == 1:
                t = pa.bool_()  # TINYINT(1): a boolean, as Connector/J reads it
            else:
                t = _MY_TYPES.get(code, pa.string())
            if pa.types.is_string(t):
                # BLOB/VARBINARY come back as bytes: binary columns.
                if any(isinstance(r[i], (bytes, bytearray)) for r in rows):
                    t = pa.binary()
        types.append(t)
    return types


def _convert(value: Any, t: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_string(t):
        if isinstance(value, str):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, default=str)
        if isinstance(value, set):
            return ",".join(sorted(value))
        if isinstance(value, datetime.timedelta):
            total = int(value.total_seconds())
            sign = "-" if total < 0 else ""
            total = abs(total)
            return "{}{:02d}:{:02d}:{:02d}".format(sign, total // 3600, total % 3600 // 60,
                                                   total % 60)
        return str(value)
    if pa.types.is_timestamp(t):
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value
    if pa.types.is_binary(t):
        return bytes(value)
    if pa.types.is_boolean(t):
        return bool(value)
    if pa.types.is_integer(t) and isinstance(value, (bytes, bytearray)):  # BIT(n)
        return int.from_bytes(value, "big")
    return value


def rows_to_table(vendor: str, description, rows: List[Sequence[Any]]) -> pa.Table:
    names = [d[0] for d in description]
    types = _column_types(vendor, description, rows)
    arrays = []
    for i, t in enumerate(types):
        values = [_convert(r[i], t) for r in rows]
        try:
            arrays.append(pa.array(values, type=t))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            arrays.append(pa.array([None if v is None else str(v) for v in values],
                                   type=pa.string()))
    return pa.Table.from_arrays(arrays, names=_unique_names(names))


def _unique_names(names: List[str]) -> List[str]:
    seen: Dict[str, int] = {}
    out = []
    for n in names:
        if n in seen:
            seen[n] += 1
            out.append("{}_{}".format(n, seen[n]))
        else:
            seen[n] = 0
            out.append(n)
    return out


# ---------------------------------------------------------------------------------------------
# Bookmark keys

def primary_key(conn, target: JdbcTarget) -> List[str]:
    """The table's primary key columns in key order (empty when it has none)."""
    parts = [_unquote(p) for p in _split_name(target.dbtable)]
    cur = conn.cursor()
    try:
        if target.vendor == "postgresql":
            cur.execute(
                "SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY "
                "AS k(attnum, n) ON true JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                "a.attnum = k.attnum WHERE i.indrelid = to_regclass(%s) AND i.indisprimary "
                "ORDER BY k.n", (quote_table("postgresql", target.dbtable),))
        else:
            schema = parts[0] if len(parts) > 1 else target.database
            cur.execute(
                "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE "
                "TABLE_SCHEMA = %s AND TABLE_NAME = %s AND CONSTRAINT_NAME = 'PRIMARY' "
                "ORDER BY ORDINAL_POSITION", (schema, parts[-1]))
        return [r[0] for r in cur.fetchall()]
    finally:
        cur.close()


def _json_value(v: Any) -> Any:
    """A key value as the bookmark state stores it (JSON): numbers stay numbers, the rest text
    the database parses back (ISO dates and timestamps, decimals as text)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    return str(v)


def _key_condition(vendor: str, keys: List[str], op: str, values: List[Any]) -> Tuple[str, list]:
    """(k1, k2, ..) <op> (v1, v2, ..): a row-value (tuple) comparison, lexicographic."""
    cols = ", ".join(_pct(quote_ident(vendor, k)) for k in keys)
    marks = ", ".join("%s" for _ in keys)
    if len(keys) == 1:
        return "{} {} {}".format(cols, op, marks), list(values)
    return "({}) {} ({})".format(cols, op, marks), list(values)


# ---------------------------------------------------------------------------------------------
# Reading

def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1", "yes")


def _base_query(target: JdbcTarget, options: Dict[str, Any]) -> Tuple[str, bool]:
    """(FROM-able SQL, partitioning appends to it): the table, or sampleQuery."""
    sample = options.get("sampleQuery")
    if sample:
        return (_pct(str(sample).strip().rstrip(";")),
                _truthy(options.get("enablePartitioningForSampleQuery")))
    if not target.dbtable:
        raise JdbcError("a JDBC source needs connection_options \"dbtable\"")
    return _pct(quote_table(target.vendor, target.dbtable)), False


def _pct(sql: str) -> str:
    """SQL text given by the user, made safe for the drivers' %s parameter style (every read
    query is sent with a parameter list, so a literal % is written %%)."""
    return sql.replace("%", "%%")


def _hash_conditions(target: JdbcTarget, options: Dict[str, Any], select_from: str,
                     extra_where: str, extra_params: list) -> List[Tuple[str, list]]:
    """One (condition, params) per parallel read; [("", [])] for a single read."""
    n = int(options.get("hashpartitions") or DEFAULT_HASH_PARTITIONS)
    n = max(1, min(n, MAX_PARTITIONS))
    field_ = options.get("hashfield")
    expr = options.get("hashexpression")
    if not field_ and not expr:
        return [("", [])]
    if n == 1:
        return [("", [])]
    if field_:
        col = _pct(quote_ident(target.vendor, str(field_)))
        if target.vendor == "postgresql":
            h = "mod(mod(coalesce(hashtext(CAST({} AS text)), 0)::bigint, {n}) + {n}, {n})".format(
                col, n=n)
        else:
            h = "MOD(COALESCE(CRC32(CAST({} AS CHAR)), 0), {})".format(col, n)
        return [("{} = {}".format(h, i), []) for i in range(n)]
    # hashexpression: a numeric SQL expression; range partitioning between its MIN and MAX.
    expr = _pct(str(expr))
    conn = connect(target)
    try:
        cur = conn.cursor()
        where = " WHERE " + extra_where if extra_where else ""
        cur.execute("SELECT MIN({e}), MAX({e}) FROM {f} og_src{w}".format(
            e=expr, f=select_from, w=where), extra_params)
        lo, hi = cur.fetchone()
        cur.close()
    except Exception as e:  # noqa: BLE001
        raise JdbcError("hashexpression {!r}: {}".format(expr, _one_line(e))) from None
    finally:
        conn.close()
    if lo is None or hi is None:
        return [("", [])]
    lo_f, hi_f = float(lo), float(hi)
    if hi_f - lo_f < n:
        n = max(1, int(hi_f - lo_f) + 1)
    if n == 1:
        return [("", [])]
    step = (hi_f - lo_f) / n
    bounds = [lo_f + step * i for i in range(1, n)]
    conds = [("({e}) < %s OR ({e}) IS NULL".format(e=expr), [bounds[0]])]
    for i in range(1, n - 1):
        conds.append(("({e}) >= %s AND ({e}) < %s".format(e=expr), [bounds[i - 1], bounds[i]]))
    conds.append(("({e}) >= %s".format(e=expr), [bounds[-1]]))
    return conds


def _fetch(target: JdbcTarget, sql: str, params: list):
    conn = connect(target)
    try:
        cur = conn.cursor()
        try:
            cur.execute(sql, list(params or []))
        except Exception as e:  # noqa: BLE001
            raise JdbcError("query on {} failed: {} ({})".format(target.url, _one_line(e),
                                                                 sql[:300])) from None
        description = cur.description
        rows: List[Sequence[Any]] = []
        while True:
            chunk = cur.fetchmany(FETCH_ROWS)
            if not chunk:
                break
            rows.extend(chunk)
        cur.close()
        return description, rows
    finally:
        conn.close()


def _bookmark_bounds(transformation_ctx: str):
    """(job, start_state, end_state) of the running Job for this ctx (contract section 3)."""
    if not transformation_ctx:
        return None, None, None
    from openglue_runtime.run_state import current_job
    job = current_job()
    if job is None:
        return None, None, None
    bounds = getattr(job, "bookmark_bounds", None)
    if not callable(bounds):
        return job, None, None
    start, end = bounds(transformation_ctx)
    return job, start, end


def _state_matches(state: Optional[dict], label: str, table: str, keys: List[str],
                   order: str) -> bool:
    if not state:
        return False
    if state.get("type") != "jdbc" or list(state.get("keys") or []) != keys \
            or (state.get("sort_order") or "asc") != order or state.get("high") is None:
        _warn("the bookmark state of this transformation_ctx was made with other keys, sort "
              "order or source ({}); it is ignored and the table is read from the start"
              .format({k: state.get(k) for k in ("table", "keys", "sort_order")}))
        return False
    return True


class PlannedRead:
    """A JDBC source's queries (one per hash partition), fixed with the run's bookmark bounds,
    and `register(rows)`, which tells the running job what was read once the rows are in."""

    def __init__(self, queries: List[Tuple[str, list]], register):
        self.queries = queries
        self.register = register


def read(target: JdbcTarget, options: Dict[str, Any], transformation_ctx: str = "") -> pa.Table:
    """Reads the source into an Arrow table (see the module's docstring); registers the source
    with the running job when it has a transformation_ctx."""
    planned = plan_read(target, options, transformation_ctx)
    queries = planned.queries
    if len(queries) == 1:
        results = [_fetch(target, *queries[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(len(queries), 8),
                                thread_name_prefix="og-jdbc") as pool:
            results = list(pool.map(lambda q: _fetch(target, *q), queries))
    description = results[0][0]
    rows = [r for _, part_rows in results for r in part_rows]
    table = rows_to_table(target.vendor, description, rows)
    planned.register(table.num_rows)
    return table


def fetch_table(target: JdbcTarget, sql: str, params: list) -> pa.Table:
    """One query's rows as a table (a Spark task's share of a source, openglue_runtime/engines/spark/frames.py)."""
    description, rows = _fetch(target, sql, params)
    return rows_to_table(target.vendor, description, rows)


def merge_part_types(types: List[pa.DataType]) -> pa.DataType:
    """The type of a column read in parts, as reading it whole would give: the parts' types
    differ only where the rows decide (bytes in a MySQL text column make it binary; values
    that do not convert make it string)."""
    distinct = list(dict.fromkeys(types))
    if len(distinct) == 1:
        return distinct[0]
    if all(pa.types.is_string(t) or pa.types.is_binary(t) for t in distinct):
        return pa.binary()
    return pa.string()


def conform_part(column: pa.Array, t: pa.DataType) -> pa.Array:
    """A part's column as the merged type `t` (merge_part_types)."""
    if column.type == t:
        return column
    if pa.types.is_binary(t):
        return column.cast(t)
    return pa.array([None if v is None else str(v) for v in column.to_pylist()], type=pa.string())


def plan_read(target: JdbcTarget, options: Dict[str, Any],
              transformation_ctx: str = "") -> PlannedRead:
    """The queries of a read and how to register it (see `read`)."""
    options = dict(options or {})
    select_from, append_mode = _base_query(target, options)
    if append_mode:
        # sampleQuery with enablePartitioningForSampleQuery: the query ends in WHERE or AND
        # and the partition condition is appended to it (as Glue does).
        from_sql = None
    else:
        from_sql = select_from if not options.get("sampleQuery") else "({})".format(select_from)

    job, start, end = _bookmark_bounds(transformation_ctx)
    order = str(options.get("jobBookmarkKeysSortOrder") or "asc").lower()
    if order not in ("asc", "desc"):
        raise JdbcError("jobBookmarkKeysSortOrder must be asc or desc, not {!r}".format(order))
    keys = options.get("jobBookmarkKeys")
    if isinstance(keys, str):
        keys = [k.strip() for k in keys.strip("[]").replace('"', "").split(",") if k.strip()]
    keys = list(keys or [])
    option = getattr(job, "bookmark_option", "job-bookmark-disable") if job is not None else ""
    # bookmarks take part only when enabled or paused (disable: read everything, as Glue)
    bookmarked = bool(transformation_ctx) and job is not None and option in (
        "job-bookmark-enable", "job-bookmark-pause")
    table_label = target.dbtable or "sampleQuery"
    if bookmarked and not keys:
        if not target.dbtable:
            raise JdbcError("job bookmarks on a sampleQuery need jobBookmarkKeys")
        conn = connect(target)
        try:
            keys = primary_key(conn, target)
        finally:
            conn.close()
        if not keys:
            raise JdbcError("job bookmarks on {} need jobBookmarkKeys: the table has no primary "
                            "key".format(target.dbtable))

    where: List[str] = []
    params: list = []
    low = None
    upper = None
    if bookmarked:
        gt_op, le_op = (">", "<=") if order == "asc" else ("<", ">=")
        if _state_matches(start, target.label, table_label, keys, order):
            low = list(start["high"])
            c, p = _key_condition(target.vendor, keys, gt_op, low)
            where.append(c)
            params += p
        empty_window = False
        if end is not None:
            # pause with --job-bookmark-from/--to: the window ends at the mark as of the "to"
            # run; a ctx without state then ({}) is an empty window.
            if end and _state_matches(end, target.label, table_label, keys, order):
                upper = list(end["high"])
            else:
                empty_window = True
        else:
            # The run's upper bound, fixed before the reads so every parallel read agrees.
            cols = ", ".join(_pct(quote_ident(target.vendor, k)) for k in keys)
            direction = "DESC" if order == "asc" else "ASC"
            notnull = " AND ".join("{} IS NOT NULL".format(_pct(quote_ident(target.vendor, k)))
                                   for k in keys)
            cond = " AND ".join(where + [notnull])
            sql = "SELECT {c} FROM {f} og_src WHERE {w} ORDER BY {o} LIMIT 1".format(
                c=cols, f=_from_clause(select_from, append_mode), w=cond,
                o=", ".join("{} {}".format(_pct(quote_ident(target.vendor, k)), direction)
                            for k in keys))
            _desc, rows = _fetch(target, sql, params)
            upper = [_json_value(v) for v in rows[0]] if rows else None
        if upper is not None:
            c, p = _key_condition(target.vendor, keys, le_op, upper)
            where.append(c)
            params += p
        elif low is not None or empty_window:
            where.append("1 = 0")  # nothing above the high-water mark / an empty window
    where_sql = " AND ".join("({})".format(w) for w in where)
    parts = _hash_conditions(target, options, _from_clause(select_from, append_mode),
                             where_sql, params)
    sample_size = options.get("sampleSize")
    limit = " LIMIT {}".format(int(sample_size)) if sample_size else ""

    def query(cond: str, cparams: list) -> Tuple[str, list]:
        conds = ([where_sql] if where_sql else []) + (["({})".format(cond)] if cond else [])
        if append_mode:
            # sampleQuery ending in WHERE/AND: the conditions are appended to its text.
            text = select_from + " " + (" AND ".join(conds) if conds else "1 = 1")
            return text + limit, params + cparams
        w = " WHERE " + " AND ".join(conds) if conds else ""
        if from_sql.startswith("("):
            return "SELECT * FROM {} og_src{}{}".format(from_sql, w, limit), params + cparams
        return "SELECT * FROM {}{}{}".format(from_sql, w, limit), params + cparams

    queries = [query(c, p) for c, p in parts]

    def register_read(num_rows: int) -> None:
        if not bookmarked:
            return
        high = upper if upper is not None else low
        state = {"type": "jdbc", "connection": target.label, "table": table_label,
                 "keys": keys, "sort_order": order, "high": high}
        info = {"type": "jdbc", "connection": target.label, "table": table_label, "keys": keys,
                "sort_order": order, "low": low, "high": high, "rows": num_rows,
                "state": state}
        register = getattr(job, "register_source", None)
        if callable(register):
            register(transformation_ctx, info)
    return PlannedRead(queries, register_read)


def _from_clause(select_from: str, append_mode: bool) -> str:
    if append_mode:
        # a sampleQuery ending in WHERE/AND: strip the dangling keyword to use it as a subquery
        text = re.sub(r"\s+(where|and)\s*$", "", select_from, flags=re.I)
        return "({})".format(text)
    if select_from.lstrip().lower().startswith("select"):
        return "({})".format(select_from)
    return select_from


# ---------------------------------------------------------------------------------------------
# Writing

def _sql_type(vendor: str, t: pa.DataType, key: bool = False) -> str:
    pg = vendor == "postgresql"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return "SMALLINT"
    if pa.types.is_int32(t):
        return "INTEGER"
    if pa.types.is_integer(t):
        return "BIGINT"
    if pa.types.is_float32(t):
        return "REAL"
    if pa.types.is_floating(t):
        return "DOUBLE PRECISION" if pg else "DOUBLE"
    if pa.types.is_decimal(t):
        return "NUMERIC({},{})".format(t.precision, t.scale) if pg else \
            "DECIMAL({},{})".format(min(t.precision, 65), min(t.scale, 30))
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if pg else "DATETIME(6)"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BYTEA" if pg else ("VARBINARY(255)" if key else "LONGBLOB")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "TEXT" if pg else ("VARCHAR(255)" if key else "LONGTEXT")
    # nested values are written as JSON text
    return "TEXT" if pg else "LONGTEXT"


def _table_exists(cur, target: JdbcTarget, dbtable: str) -> bool:
    parts = [_unquote(p) for p in _split_name(dbtable)]
    if target.vendor == "postgresql":
        cur.execute("SELECT to_regclass(%s) IS NOT NULL", (quote_table("postgresql", dbtable),))
        return bool(cur.fetchone()[0])
    schema = parts[0] if len(parts) > 1 else target.database
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND "
                "TABLE_NAME = %s", (schema, parts[-1]))
    return cur.fetchone()[0] > 0


def _unique_key_sets(cur, target: JdbcTarget, dbtable: str) -> List[set]:
    parts = [_unquote(p) for p in _split_name(dbtable)]
    if target.vendor == "postgresql":
        cur.execute(
            "SELECT array_agg(a.attname::text) FROM pg_index i JOIN pg_attribute a ON "
            "a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = "
            "to_regclass(%s) AND i.indisunique AND i.indpred IS NULL GROUP BY i.indexrelid",
            (quote_table("postgresql", dbtable),))
        return [set(r[0]) for r in cur.fetchall()]
    schema = parts[0] if len(parts) > 1 else target.database
    cur.execute("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE "
                "TABLE_SCHEMA = %s AND TABLE_NAME = %s AND NON_UNIQUE = 0", (schema, parts[-1]))
    sets: Dict[str, set] = {}
    for index, column in cur.fetchall():
        sets.setdefault(index, set()).add(column)
    return list(sets.values())


def _table_columns(cur, target: JdbcTarget, dbtable: str) -> List[str]:
    cur.execute("SELECT * FROM {} WHERE 1 = 0".format(quote_table(target.vendor, dbtable)))
    names = [d[0] for d in cur.description]
    cur.fetchall()
    return names


def _python_rows(table: pa.Table) -> List[tuple]:
    nested = [i for i, f in enumerate(table.schema)
              if pa.types.is_nested(f.type) or pa.types.is_union(f.type)]
    rows = []
    for batch in table.to_batches():
        cols = [c.to_pylist() for c in batch.columns]
        for i in nested:
            cols[i] = [None if v is None else json.dumps(v, ensure_ascii=False, default=str)
                       for v in cols[i]]
        rows.extend(zip(*cols))
    return rows


def _merge_keys(options: Dict[str, Any]) -> List[str]:
    keys = options.get("mergeKeys") or options.get("merge_keys")
    if not keys:
        return []
    if isinstance(keys, str):
        keys = [k.strip() for k in keys.strip("[]").replace('"', "").split(",") if k.strip()]
    return [str(k) for k in keys]


def write(target: JdbcTarget, table: pa.Table, options: Dict[str, Any]) -> int:
    """Writes `table` into options["dbtable"] (created when missing); returns the rows written.
    Appends, or with `mergeKeys` upserts on those columns. All rows in one transaction."""
    options = dict(options or {})
    dbtable = options.get("dbtable") or target.dbtable
    if not dbtable:
        raise JdbcError("a JDBC sink needs connection_options \"dbtable\"")
    keys = _merge_keys(options)
    names = list(table.schema.names)
    missing = [k for k in keys if k not in names]
    if missing:
        raise JdbcError("mergeKeys {} are not columns of the frame ({})".format(missing, names))
    v = target.vendor
    qtable = quote_table(v, dbtable)
    conn = connect(target, autocommit=False)
    try:
        cur = conn.cursor()
        if not _table_exists(cur, target, dbtable):
            cols = ["{} {}".format(quote_ident(v, f.name), _sql_type(v, f.type, f.name in keys))
                    for f in table.schema]
            if keys:
                cols.append("PRIMARY KEY ({})".format(", ".join(quote_ident(v, k) for k in keys)))
            if not cols:
                raise JdbcError("cannot create {}: the frame has no columns".format(dbtable))
            cur.execute("CREATE TABLE {} ({})".format(qtable, ", ".join(cols)))
        else:
            existing = _table_columns(cur, target, dbtable)
            lower = {c.lower(): c for c in existing}
            extra = [n for n in names if n not in existing and n.lower() not in lower]
            if extra:
                raise JdbcError("the frame's columns {} are not in table {} (columns: {})"
                                .format(extra, dbtable, existing))
            names = [n if n in existing else lower[n.lower()] for n in names]
            if keys:
                key_set = {lower.get(k.lower(), k) for k in keys}
                if not any(s == key_set for s in _unique_key_sets(cur, target, dbtable)):
                    raise JdbcError("mergeKeys {} need a primary key or unique index on exactly "
                                    "those columns of {}".format(keys, dbtable))
                keys = [lower.get(k.lower(), k) for k in keys]
        rows = _python_rows(table)
        if rows:
            _insert(cur, v, qtable, names, keys, rows)
        cur.close()
        conn.commit()
        return len(rows)
    except JdbcError:
        _rollback(conn)
        raise
    except Exception as e:  # noqa: BLE001
        _rollback(conn)
        raise JdbcError("writing into {} on {} failed: {}".format(dbtable, target.url,
                                                                   _one_line(e))) from None
    finally:
        conn.close()


def _rollback(conn) -> None:
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001
        pass


def _insert(cur, vendor: str, qtable: str, names: List[str], keys: List[str],
            rows: List[tuple]) -> None:
    cols = ", ".join(quote_ident(vendor, n) for n in names)
    others = [n for n in names if n not in keys]
    if vendor == "postgresql":
        if not keys:
            with cur.copy("COPY {} ({}) FROM STDIN".format(qtable, cols)) as copy:
                for r in rows:
                    copy.write_row(r)
            return
        # merge: COPY into a temporary table, then one INSERT .. ON CONFLICT DO UPDATE.
        cur.execute("CREATE TEMPORARY TABLE og_merge ON COMMIT DROP AS SELECT {} FROM {} "
                    "WHERE false".format(cols, qtable))
        with cur.copy("COPY og_merge ({}) FROM STDIN".format(cols)) as copy:
            for r in rows:
                copy.write_row(r)
        kcols = ", ".join(quote_ident(vendor, k) for k in keys)
        update = ", ".join("{c} = EXCLUDED.{c}".format(c=quote_ident(vendor, n)) for n in others)
        action = "DO UPDATE SET " + update if others else "DO NOTHING"
        # DISTINCT ON keeps the last row of a key given twice in one write
        cur.execute("INSERT INTO {t} ({c}) SELECT DISTINCT ON ({k}) {c} FROM (SELECT *, "
                    "row_number() OVER () AS og_n FROM og_merge) s ORDER BY {k}, og_n DESC "
                    "ON CONFLICT ({k}) {a}".format(t=qtable, c=cols, k=kcols, a=action))
        return
    marks = ", ".join("%s" for _ in names)
    sql = "INSERT INTO {} ({}) VALUES ({})".format(qtable, cols, marks)
    if keys:
        if others:
            sql += " ON DUPLICATE KEY UPDATE " + ", ".join(
                "{c} = VALUES({c})".format(c=quote_ident(vendor, n)) for n in others)
        else:
            sql = sql.replace("INSERT INTO", "INSERT IGNORE INTO", 1)
    for i in range(0, len(rows), 1000):
        cur.executemany(sql, rows[i:i + 1000])


# ---------------------------------------------------------------------------------------------
# Catalog tables (as Glue's JDBC crawler creates them)

def catalog_target(table: Dict[str, Any], additional_options: Dict[str, Any],
                   catalog_id: Optional[str] = None) -> Tuple[JdbcTarget, Dict[str, Any]]:
    """The JdbcTarget and read options of a JDBC catalog table: Parameters `connectionName`
    (and `classification` postgresql/mysql), StorageDescriptor.Location `db.schema.table`
    (PostgreSQL) or `db.table` (MySQL); the table's Parameters may carry hashfield,
    hashexpression, hashpartitions (as in Glue), additional_options win."""
    params = dict(table.get("Parameters") or {})
    sd = table.get("StorageDescriptor") or {}
    name = params.get("connectionName") or params.get("connectionname") or ""
    if not name:
        raise JdbcError("catalog table {} has no connectionName parameter".format(
            table.get("Name", "?")))
    location = (sd.get("Location") or "").strip()
    parts = _split_name(location)
    if len(parts) < 2:
        raise JdbcError("catalog table {}: Location {!r} is not database.schema.table or "
                        "database.table".format(table.get("Name", "?"), location))
    options: Dict[str, Any] = {}
    for k in ("hashfield", "hashexpression", "hashpartitions", "jobBookmarkKeys",
              "jobBookmarkKeysSortOrder", "sampleQuery", "enablePartitioningForSampleQuery",
              "sampleSize"):
        if k in params:
            options[k] = params[k]
    options.update(additional_options or {})
    options["dbtable"] = ".".join(parts[1:])
    target = resolve(params.get("classification") or "", options, catalog_id=catalog_id,
                     connection_name=name, database=_unquote(parts[0]))
    return target, options


def is_jdbc_table(table: Dict[str, Any]) -> bool:
    params = {k.lower(): (v or "") for k, v in (table.get("Parameters") or {}).items()}
    return bool(params.get("connectionname")) and (params.get("classification") or "").lower() \
        in ("postgresql", "mysql", "mariadb", "jdbc", "")

