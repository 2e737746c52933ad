"""The one adapter between the Python layer and the C++ extension `openglue_runtime.engines.embedded._engine`.

Everything the DynamicFrame layer needs from the engine goes through the functions here, so a
change of the extension's interface touches this file only. When the extension is absent
(a source checkout without a build), reads and writes raise EngineUnavailable naming the build
step; transforms on frames built from Arrow tables still work (casts then use the pyarrow
fallback in cast.py).
"""
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

try:  # the engine helper's module; absent until the C++ build has run
    from openglue_runtime.engines.embedded import _engine as _ext  # type: ignore
    _IMPORT_ERROR: Optional[BaseException] = None
except ImportError as e:  # pragma: no cover - depends on the build
    _ext = None
    _IMPORT_ERROR = e


class EngineUnavailable(RuntimeError):
    """The embedded engine's extension module is not built."""


def available() -> bool:
    return _ext is not None


def _shipped_extension():
    """On a Spark executor whose awsglue came without the extension (the py-files archive holds
    sources only): the extension the driver shipped with the application's files
    (openglue_runtime/engines/spark/frames.py), loaded under its own name. pyarrow, imported above, has already
    loaded the Arrow libraries it links to."""
    try:
        from pyspark import SparkFiles
        if not getattr(SparkFiles, "_is_running_on_worker", False):
            return None
        root = SparkFiles.getRootDirectory()
        names = [n for n in os.listdir(root) if n.startswith("_engine.") and n.endswith(".so")]
    except (ImportError, OSError, TypeError, AttributeError):
        return None
    if not names:
        return None
    import importlib.machinery
    import importlib.util
    path = os.path.join(root, sorted(names)[0])
    loader = importlib.machinery.ExtensionFileLoader(__package__ + "._engine",
                                                     path)
    spec = importlib.util.spec_from_file_location(loader.name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


if _ext is None:  # pragma: no cover - a Spark executor's Python worker
    _ext = _shipped_extension()


def _require():
    global _ext
    if _ext is None:
        _ext = _shipped_extension()
    if _ext is None:
        raise EngineUnavailable(
            "the embedded engine (openglue_runtime.engines.embedded._engine) is not built: run `make build` in the OpenGlue "
            "checkout (import error: {})".format(_IMPORT_ERROR))
    return _ext


def engine_error_types() -> Tuple[type, ...]:
    if _ext is not None and hasattr(_ext, "EngineError"):
        return (_ext.EngineError,)
    return ()


_storage_override: Optional[Dict[str, str]] = None


def use_storage(settings: Optional[Dict[str, str]]) -> None:
    """Where s3:// goes in this process from now on: the driver's `storage()`, given to a Spark
    task (openglue_runtime/engines/spark/frames.py), whose Python worker may not have the run's environment."""
    global _storage_override
    _storage_override = dict(settings) if settings is not None else None


def storage() -> Dict[str, str]:
    """Where s3:// goes, from the environment (runtime helper's openglue_runtime.storage when present)."""
    if _storage_override is not None:
        return dict(_storage_override)
    try:
        from openglue_runtime.storage import storage_options  # type: ignore
        return dict(storage_options())
    except ImportError:
        pass
    root = os.environ.get("OPENGLUE_S3_ROOT")
    if root:
        return {"s3_root": root}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    out: Dict[str, str] = {}
    if endpoint:
        out["endpoint"] = endpoint
        for key, env in (("access_key", "AWS_ACCESS_KEY_ID"), ("secret_key", "AWS_SECRET_ACCESS_KEY"),
                         ("session_token", "AWS_SESSION_TOKEN"), ("region", "AWS_REGION")):
            if os.environ.get(env):
                out[key] = os.environ[env]
        if "region" not in out and os.environ.get("AWS_DEFAULT_REGION"):
            out["region"] = os.environ["AWS_DEFAULT_REGION"]
    return out


# Format option names as the engine knows them. Glue matches them whatever their case (Glue
# Studio writes `"multiline": False` for JSON sources), so any spelling is accepted.
_OPTION_NAMES = {name.lower(): name for name in (
    "separator", "quoteChar", "escaper", "withHeader", "skipFirst", "multiLine", "jsonPath",
    "compressionType", "writeHeader", "compression")}


def str_options(options: Optional[dict]) -> Dict[str, str]:
    """Glue option values (bools, ints, lists) -> the engine's string form; the known format
    option names in any case -> their canonical spelling (the canonical one wins when both
    are given)."""
    out: Dict[str, str] = {}
    items = list((options or {}).items())
    given = {k for k, _ in items}
    for k, v in items:
        canonical = _OPTION_NAMES.get(str(k).lower(), k)
        if canonical != k:
            if canonical in given:
                continue
            k = canonical
        if v is None:
            continue
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (list, tuple, dict)):
            out[k] = json.dumps(v)
        else:
            out[k] = str(v)
    return out


def list_files(paths: Sequence[str], options: dict) -> List[Tuple[str, int, int]]:
    ext = _require()
    return [(str(u), int(s), int(m)) for u, s, m in
            ext.list_files(list(paths), str_options(options), storage())]


class Scan:
    """An engine scan over some files."""

    def __init__(self, files: Sequence[str], fmt: str, options: dict):
        self._scan = _require().scan(list(files), fmt, str_options(options), storage())

    def schema(self) -> pa.Schema:
        return pa.schema(self._scan.schema())

    def raw_schema(self) -> pa.Schema:
        """CSV: every column a string, in first-appearance order over the files."""
        return pa.schema(self._scan.raw_schema())

    def stream(self, schema: Optional[pa.Schema] = None) -> pa.RecordBatchReader:
        obj = self._scan.stream(schema) if schema is not None else self._scan.stream()
        return pa.RecordBatchReader.from_stream(obj)

    def text_losses(self, schema: pa.Schema) -> List[str]:
        """CSV: the non-string fields of `schema` (named as the files' columns) holding a cell
        their type cannot take (a catalog CSV table's per-value typing)."""
        return [str(n) for n in self._scan.text_losses(schema)]

    def bad_records(self) -> List[dict]:
        """The JSON records the streams skipped ({source, line, message, input}), when the scan
        was made with the option "openglue.badRecords" "collect"."""
        fn = getattr(self._scan, "bad_records", None)
        return list(fn()) if fn is not None else []


def write(reader: pa.RecordBatchReader, path: str, fmt: str, options: dict,
          partition_keys: Sequence[str]) -> List[str]:
    ext = _require()
    return [str(u) for u in ext.write(reader, path, fmt, str_options(options),
                                      list(partition_keys or []), storage())]


def read_bytes(uri: str) -> bytes:
    """A whole file or object (the formats read in Python: openglue_runtime.engines.embedded.pyformats)."""
    return _require().read_bytes(uri, storage())


def write_bytes(uri: str, data: bytes) -> None:
    """A whole file or object, written under a hidden name and published when complete."""
    _require().write_bytes(uri, data, storage())


def delete_prefix(path: str, older_than_ms: Optional[int], exclusions: Optional[list]) -> List[str]:
    ext = _require()
    return [str(u) for u in ext.delete_prefix(path, storage(), older_than_ms, exclusions)]


def glue_cast(arr: pa.Array, target: pa.DataType) -> Optional[pa.Array]:
    """The engine's cast kernel, or None when the engine is absent (caller falls back)."""
    if _ext is None or not hasattr(_ext, "glue_cast"):
        return None
    out = _ext.glue_cast(arr, target)
    if isinstance(out, pa.Array):
        return out
    if isinstance(out, pa.ChunkedArray):
        return out.combine_chunks()
    return pa.array(out)
