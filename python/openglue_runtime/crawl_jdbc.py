"""Schema discovery for OpenGlue's JDBC crawler targets: the server runs
`python -m openglue_runtime.crawl_jdbc` once per JDBC target of a crawl (docs/crawlers.md).

Reads one JSON request on stdin:
    {"url": "jdbc:postgresql://host:port/db", "user": ..., "password": ...,
     "path": "db/schema/%" (PostgreSQL) or "db/%" (MySQL), "exclusions": ["db/schema/tmp_*", ...]}
and writes one JSON answer on stdout:
    {"vendor": "postgresql", "tables": [{"database": ..., "schema": ..., "name": ...,
      "columns": [{"name": ..., "type": <Hive type>}]}]}
or {"error": "<message>"}. The include path's parts are SQL LIKE patterns (`%`, `_`), as in
Glue; exclusions are globs matched against `database/schema/table` (`database/table` for MySQL).
"""
import fnmatch
import json
import sys

from openglue_runtime import jdbc

_PG_TYPES = {
    "smallint": "smallint", "integer": "int", "bigint": "bigint", "real": "float",
    "double precision": "double", "boolean": "boolean", "date": "date", "bytea": "binary",
    "text": "string", "character varying": "string", "character": "string", "json": "string",
    "jsonb": "string", "uuid": "string",
}
_MYSQL_TYPES = {
    "tinyint": "tinyint", "smallint": "smallint", "mediumint": "int", "int": "int", "integer": "int",
    "bigint": "bigint", "float": "float", "double": "double", "real": "double", "date": "date",
    "datetime": "timestamp", "timestamp": "timestamp", "blob": "binary", "longblob": "binary",
    "mediumblob": "binary", "tinyblob": "binary", "binary": "binary", "varbinary": "binary",
    "bit": "boolean", "boolean": "boolean",
}


def hive_type(vendor, data_type, precision, scale):
    t = (data_type or "").lower()
    if t in ("numeric", "decimal"):
        if precision:
            return "decimal({},{})".format(min(int(precision), 38), int(scale or 0))
        return "decimal(38,18)"
    if t.startswith("timestamp"):
        return "timestamp"
    table = _PG_TYPES if vendor == "postgresql" else _MYSQL_TYPES
    return table.get(t, "string")


def discover(request):
    path = [p for p in (request.get("path") or "").split("/") if p != ""]
    if not path:
        raise jdbc.JdbcError("the JDBC target has no Path (database/schema/% or database/%)")
    database = path[0]
    target = jdbc.resolve("", {"url": request.get("url"), "user": request.get("user"),
                               "password": request.get("password")}, database=database)
    with jdbc.connect(target) as conn:
        cur = conn.cursor()
        if target.vendor == "postgresql":
            schema = path[1] if len(path) > 1 else "%"
            table = path[2] if len(path) > 2 else "%"
            cur.execute(
                "SELECT table_schema, table_name, column_name, data_type, numeric_precision, "
                "numeric_scale FROM information_schema.columns WHERE table_catalog = %s AND "
                "table_schema LIKE %s AND table_name LIKE %s AND table_schema NOT IN "
                "('pg_catalog', 'information_schema') ORDER BY table_schema, table_name, "
                "ordinal_position", (database, schema, table))
        else:
            table = path[1] if len(path) > 1 else "%"
            cur.execute(
                "SELECT table_schema, table_name, column_name, data_type, numeric_precision, "
                "numeric_scale FROM information_schema.columns WHERE table_schema = %s AND "
                "table_name LIKE %s ORDER BY table_name, ordinal_position", (database, table))
        rows = cur.fetchall()
    tables = {}
    for schema_name, table_name, column, data_type, precision, scale in rows:
        key = (schema_name, table_name)
        qualified = "/".join([database, schema_name, table_name] if target.vendor == "postgresql"
                             else [database, table_name])
        if any(fnmatch.fnmatchcase(qualified, g) for g in request.get("exclusions") or []):
            continue
        entry = tables.setdefault(key, {"database": database,
                                        "schema": schema_name if target.vendor == "postgresql" else "",
                                        "name": table_name, "columns": []})
        entry["columns"].append({"name": column,
                                 "type": hive_type(target.vendor, data_type, precision, scale)})
    return {"vendor": target.vendor, "tables": list(tables.values())}


def main():
    try:
        answer = discover(json.loads(sys.stdin.read()))
    except Exception as e:  # noqa: BLE001 - every failure is the crawl's error message
        answer = {"error": str(e).splitlines()[0] if str(e) else type(e).__name__}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
