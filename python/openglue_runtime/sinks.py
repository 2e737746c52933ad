"""What the Glue API's sinks share (GlueContext's write_* methods and getSink's DataSink): the
file write with Glue's overwrite modes and the catalog columns a write records.
"""
from typing import Dict, List

from openglue_runtime import types as gt

FILE_CONNECTIONS = {"s3", "file", "local"}
JDBC_CONNECTIONS = {"postgresql", "mysql", "mariadb"}


def partition_names(keys) -> List[str]:
    return [k[0] if isinstance(k, (tuple, list)) else str(k) for k in (keys or [])]


_OVERWRITE_MODES = ("append", "dynamic")


def glob_literal(text: str) -> str:
    """`text` as a Glue glob that matches exactly itself."""
    return "".join("\\" + c if c in "\\*?[]{},!" else c for c in text)


def write_files(engine, frame, path: str, fmt: str, format_options: dict,
                partition_keys: List[str], options: dict) -> List[str]:
    """Writes `frame` under `path` and returns the files written. With the connection option
    `partitionOverwriteMode` "dynamic" (Spark's name for it; the default "append" adds files),
    each partition folder this write puts files in keeps only this write's files: the folder's
    earlier files are deleted once the new ones are written. A run repeated after failing before
    `job.commit()` then replaces its partitions instead of adding duplicates; partitions it does
    not write are left alone."""
    mode = str(options.get("partitionOverwriteMode") or "append").lower()
    if mode not in _OVERWRITE_MODES:
        raise ValueError("partitionOverwriteMode must be one of {} (got {!r})".format(
            ", ".join(_OVERWRITE_MODES), options.get("partitionOverwriteMode")))
    if mode == "dynamic" and not partition_keys:
        raise ValueError("partitionOverwriteMode \"dynamic\" needs partitionKeys: it replaces "
                         "the partition folders a write puts files in")
    format_options = dict(format_options or {})
    codec = options.get("compression") or options.get("compressionType")
    if codec and (fmt or "").lower() in ("csv", "json") and not any(
            str(k).lower() == "compression" for k in format_options):
        # Glue takes a text sink's codec in connection_options too ("bzip" is its bzip2).
        codec = str(codec).lower()
        format_options["compression"] = "bzip2" if codec == "bzip" else codec
    uris = engine.write(frame._plan, path, fmt, format_options, partition_keys)
    if mode == "dynamic":
        folders: Dict[str, List[str]] = {}
        for uri in uris:
            folders.setdefault(uri.rsplit("/", 1)[0], []).append(glob_literal(uri))
        for folder, keep in sorted(folders.items()):
            engine.purge(folder, None, keep)
    return uris


def glue_type_string(dt: gt.DataType) -> str:
    """A Glue type as the type name a catalog update takes (`long`, `decimal(10,2)`,
    `array<struct<a:int>>`); an unresolved choice is written as a struct of its members and a
    field that is null everywhere as a string."""
    if isinstance(dt, (gt.NullType, gt.UnknownType)):
        return "string"
    if isinstance(dt, gt.DecimalType):
        return "decimal({},{})".format(dt.precision, dt.scale)
    if isinstance(dt, gt.ArrayType):
        return "array<{}>".format(glue_type_string(dt.elementType))
    if isinstance(dt, gt.MapType):
        return "map<{},{}>".format(glue_type_string(dt.keyType), glue_type_string(dt.valueType))
    if isinstance(dt, gt.StructType):
        return "struct<{}>".format(",".join("{}:{}".format(f.name, glue_type_string(f.dataType))
                                            for f in dt.fields))
    if isinstance(dt, gt.ChoiceType):
        return "struct<{}>".format(",".join("{}:{}".format(n, glue_type_string(t))
                                            for n, t in dt.choices.items()))
    if isinstance(dt, gt.EnumType):
        return "string"
    return dt.typeName()


def catalog_columns(schema: gt.StructType, pkeys: List[str]):
    """(data columns, partition keys) as (name, Glue type) pairs for catalog.update_after_write."""
    types = {f.name: glue_type_string(f.dataType) for f in schema.fields}
    columns = [(f.name, types[f.name]) for f in schema.fields if f.name not in pkeys]
    keys = [(k, types.get(k, "string")) for k in pkeys]
    return columns, keys


def jdbc():
    """openglue_runtime.jdbc, imported on first use (its database drivers are heavy)."""
    from openglue_runtime import jdbc as module
    return module


def catalog():
    """openglue_runtime.catalog, imported on first use."""
    from openglue_runtime import catalog as module
    return module
