"""Spark's API on the embedded engine: stand-ins that fail clearly when used.

Glue scripts begin with Spark's entry points even when they only use the Glue API:

    from pyspark.context import SparkContext
    from awsglue.context import GlueContext
    sc = SparkContext.getOrCreate()
    glueContext = GlueContext(sc)
    spark = glueContext.spark_session

The embedded engine has no JVM and needs no pyspark, so these names are stand-ins: creating a
SparkContext or a SparkSession, setting configuration, importing `pyspark.sql.functions` or
building `pyspark.sql.types` all work, and nothing happens. The moment a script actually uses
Spark (a DataFrame, `spark.sql`, `toDF()`, `fromDF`, a column function, an RDD) it gets
`SparkApiUnavailable`, a RuntimeError whose message names what was used and the engine that runs
it — never an ImportError or AttributeError from a missing pyspark.

The objects live here, in the awsglue package; the `pyspark` stand-in package
(python/shims/pyspark, put on a job's path only when the embedded engine runs it, and found by a
last-resort import hook when awsglue is pip-installed without a real pyspark) re-exports them.
A real pyspark is never shadowed.
"""
import threading
from typing import Any, Dict, Iterable, Optional, Tuple

from openglue_runtime.engine_select import FUNCTION_NAMES, find_spark_api_uses  # noqa: F401

# How the message ends.
ENGINE_HINT = ("Run the job with --engine spark, or --engine auto (the default), which sends "
               "scripts that use Spark's API to Spark (docs/engines.md)")


class SparkApiUnavailable(RuntimeError):
    """A script used Spark's own API on the embedded engine, which runs only the Glue API."""

    def __init__(self, what: str):
        self.what = what
        super().__init__(message(what))


def message(what: str) -> str:
    """The error text for a use of Spark's API `what` (e.g. "DynamicFrame.toDF()")."""
    return (f"{what} is Spark's API (pyspark); this run uses the embedded engine, which runs "
            f"only the Glue API. {ENGINE_HINT}")


def unavailable(what: str) -> SparkApiUnavailable:
    """The exception to raise for a use of `what`: `raise unavailable("spark.sql()")`."""
    return SparkApiUnavailable(what)


_announced = False


def announce_engine() -> None:
    """Prints once per process, into the run's error stream (the driver's log, as Glue's
    driver logs go there), which engine runs the job and why: the server passes both as
    OPENGLUE_ENGINE / OPENGLUE_ENGINE_REASON. Nothing outside a job run. Called when a script
    imports the pyspark stand-in; GlueContext may call it too."""
    global _announced
    import os
    import sys
    engine = os.environ.get("OPENGLUE_ENGINE", "")
    if _announced or not engine or not os.environ.get("OPENGLUE_JOB_RUN_ID"):
        return
    _announced = True
    reason = os.environ.get("OPENGLUE_ENGINE_REASON", "")
    if engine == "embedded" and "auto" in reason.split(":")[0] and "Spark's API" not in reason:
        reason += _spark_uses_of_script(sys.argv[0] if sys.argv else "")
    print(f"[openglue] engine: {engine}" + (f" ({reason})" if reason else ""), file=sys.stderr,
          flush=True)


def _spark_uses_of_script(path: str) -> str:
    """"; the script uses Spark's API (line 12: toDF(), ...)" for the running script, or ""
    (no such use, not a readable .py file, over 4 MB). Never raises."""
    try:
        import os
        if not path.endswith(".py") or os.path.getsize(path) > 4 << 20:
            return ""
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        uses = find_spark_api_uses(source)
    except Exception:  # a scan that fails must not stop the job
        return ""
    if not uses:
        return ""
    listed = ", ".join(f"line {line}: {what}" for line, what in uses[:5])
    more = f" and {len(uses) - 5} more" if len(uses) > 5 else ""
    return f"; the script uses Spark's API ({listed}{more}) and will stop at the first use"


def is_standin(obj: Any) -> bool:
    """Whether `obj` is one of these stand-ins (a GlueContext built on one runs embedded)."""
    return isinstance(obj, (StandIn, SparkContext, SparkSession, SQLContext, SparkConf))


class _OtherAttributesRaise:
    """Mixin of the stand-in classes: an attribute the class does not define raises
    SparkApiUnavailable naming `<_og_api>.<attr>`; dunder lookups raise AttributeError so that
    Python's own probes (hasattr, copy, pickle, inspect) behave."""

    _og_api = "Spark"

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise SparkApiUnavailable(f"{self._og_api}.{attr}")


class StandIn:
    """Any Spark object: every use (call, attribute, item, iteration) raises
    SparkApiUnavailable naming it. Dunder lookups raise AttributeError so that Python's own
    probes (hasattr(x, '__len__'), copy, pickle, inspect) behave."""

    def __init__(self, name: str):
        object.__setattr__(self, "_og_name", name)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise SparkApiUnavailable(f"{self._og_name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise SparkApiUnavailable(f"{self._og_name}()")

    def __getitem__(self, key):
        raise SparkApiUnavailable(f"{self._og_name}[...]")

    def __iter__(self):
        raise SparkApiUnavailable(f"iterating {self._og_name}")

    def __repr__(self) -> str:
        return f"<Spark API stand-in {self._og_name} (embedded engine)>"


class _NoSpark:
    """A class standing for a Spark class: `isinstance(x, DataFrame)` and type hints work;
    creating one raises SparkApiUnavailable."""
    _og_name = "pyspark"

    def __init__(self, *args, **kwargs):
        raise SparkApiUnavailable(f"{self._og_name}()")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)


def _spark_class(name: str, qualname: str) -> type:
    return type(name, (_NoSpark,), {"_og_name": qualname, "__module__": qualname.rsplit(".", 1)[0]})


# ---------------------------------------------------------------------------------------------
# Configuration: works (a script's settings are kept, and ignored by the embedded engine).

class SparkConf(_OtherAttributesRaise):
    """pyspark.SparkConf: settings are kept and readable; the embedded engine ignores them."""

    def __init__(self, loadDefaults: bool = True, _jvm=None, _jconf=None):
        self._settings: Dict[str, str] = {}

    def set(self, key: str, value: Any) -> "SparkConf":
        self._settings[str(key)] = str(value)
        return self

    def setIfMissing(self, key: str, value: Any) -> "SparkConf":
        self._settings.setdefault(str(key), str(value))
        return self

    def setAll(self, pairs: Iterable[Tuple[str, Any]]) -> "SparkConf":
        for k, v in pairs:
            self.set(k, v)
        return self

    def setAppName(self, value: str) -> "SparkConf":
        return self.set("spark.app.name", value)

    def setMaster(self, value: str) -> "SparkConf":
        return self.set("spark.master", value)

    def get(self, key: str, defaultValue: Optional[str] = None) -> Optional[str]:
        return self._settings.get(key, defaultValue)

    def getAll(self):
        return list(self._settings.items())

    def contains(self, key: str) -> bool:
        return key in self._settings

    _og_api = "SparkConf"


class RuntimeConfig(_OtherAttributesRaise):
    """spark.conf: set/get/unset work on a dict; the embedded engine ignores the values."""

    def __init__(self, settings: Dict[str, str]):
        self._settings = settings

    def set(self, key: str, value: Any) -> None:
        self._settings[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)

    def get(self, key: str, default: Any = None):
        return self._settings.get(key, default)

    def unset(self, key: str) -> None:
        self._settings.pop(key, None)

    def isModifiable(self, key: str) -> bool:
        return True

    _og_api = "spark.conf"


_lock = threading.Lock()
_context: Optional["SparkContext"] = None
_session: Optional["SparkSession"] = None


class SparkContext(_OtherAttributesRaise):
    """pyspark.SparkContext on the embedded engine: creating it (`SparkContext()`,
    `SparkContext.getOrCreate()`) and the housekeeping calls (setLogLevel, stop, getConf,
    appName) work; anything that computes raises SparkApiUnavailable."""

    _og_name = "SparkContext"

    def __init__(self, master: Optional[str] = None, appName: Optional[str] = None,
                 sparkHome=None, pyFiles=None, environment=None, batchSize=0, serializer=None,
                 conf: Optional[SparkConf] = None, gateway=None, jsc=None, profiler_cls=None,
                 **kwargs):
        global _context
        self._conf = conf if isinstance(conf, SparkConf) else SparkConf()
        if master:
            self._conf.setMaster(master)
        if appName:
            self._conf.setAppName(appName)
        with _lock:
            if _context is None:
                _context = self

    @classmethod
    def getOrCreate(cls, conf: Optional[SparkConf] = None) -> "SparkContext":
        with _lock:
            existing = _context
        return existing if existing is not None else cls(conf=conf)

    @property
    def appName(self) -> str:
        return self._conf.get("spark.app.name", "openglue")

    @property
    def master(self) -> str:
        return self._conf.get("spark.master", "embedded")

    def getConf(self) -> SparkConf:
        return self._conf

    def setLogLevel(self, logLevel: str) -> None:
        pass

    def setJobGroup(self, *args, **kwargs) -> None:
        pass

    def setJobDescription(self, value: str) -> None:
        pass

    def setLocalProperty(self, key: str, value: str) -> None:
        pass

    def stop(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    _og_api = "SparkContext"


class _Builder(_OtherAttributesRaise):
    """SparkSession.builder: appName/master/config/enableHiveSupport chain; getOrCreate()
    returns the session stand-in."""

    def __init__(self):
        self._settings: Dict[str, str] = {}

    def appName(self, name: str) -> "_Builder":
        self._settings["spark.app.name"] = str(name)
        return self

    def master(self, master: str) -> "_Builder":
        self._settings["spark.master"] = str(master)
        return self

    def config(self, key=None, value=None, conf: Optional[SparkConf] = None, map=None):
        if isinstance(key, SparkConf):
            conf = key
        elif isinstance(key, dict):
            map = key
        elif key is not None:
            self._settings[str(key)] = str(value)
        if conf is not None:
            self._settings.update(conf.getAll())
        if map:
            self._settings.update({str(k): str(v) for k, v in map.items()})
        return self

    def enableHiveSupport(self) -> "_Builder":
        return self

    def getOrCreate(self) -> "SparkSession":
        session = get_spark_session()
        session._settings.update(self._settings)
        return session

    _og_api = "SparkSession.builder"


class _BuilderDescriptor:
    def __get__(self, instance, owner):
        return _Builder()


class SparkSession(_OtherAttributesRaise):
    """pyspark.sql.SparkSession on the embedded engine: `builder...getOrCreate()`,
    `glueContext.spark_session`, `spark.conf`, `spark.sparkContext` and `stop()` work; reading,
    SQL and DataFrames raise SparkApiUnavailable."""

    builder = _BuilderDescriptor()
    _og_name = "SparkSession"

    def __init__(self, sparkContext: Optional[SparkContext] = None, jsparkSession=None, **kwargs):
        self._sc = sparkContext
        self._settings: Dict[str, str] = {}
        self.conf = RuntimeConfig(self._settings)

    @classmethod
    def getActiveSession(cls) -> Optional["SparkSession"]:
        with _lock:
            return _session

    @property
    def sparkContext(self) -> SparkContext:
        if self._sc is None:
            self._sc = SparkContext.getOrCreate()
        return self._sc

    def stop(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def sql(self, *args, **kwargs):
        raise SparkApiUnavailable("spark.sql()")

    def table(self, *args, **kwargs):
        raise SparkApiUnavailable("spark.table()")

    def createDataFrame(self, *args, **kwargs):
        raise SparkApiUnavailable("spark.createDataFrame()")

    def range(self, *args, **kwargs):
        raise SparkApiUnavailable("spark.range()")

    @property
    def read(self):
        raise SparkApiUnavailable("spark.read")

    @property
    def readStream(self):
        raise SparkApiUnavailable("spark.readStream")

    @property
    def catalog(self):
        raise SparkApiUnavailable("spark.catalog")

    @property
    def udf(self):
        raise SparkApiUnavailable("spark.udf")

    _og_api = "SparkSession"


def get_spark_session(spark_context: Optional[SparkContext] = None) -> SparkSession:
    """The process's SparkSession stand-in (what `glueContext.spark_session` returns on the
    embedded engine)."""
    global _session
    with _lock:
        if _session is None:
            _session = SparkSession(spark_context)
        return _session


class SQLContext(_OtherAttributesRaise):
    """pyspark.sql.SQLContext (older Glue scripts): creating it works, using it raises. A
    GlueContext on the embedded engine is an instance of it."""

    _instantiatedContext: Optional["SQLContext"] = None

    def __init__(self, sparkContext=None, sparkSession=None, jsqlContext=None):
        self._sc = sparkContext

    @classmethod
    def getOrCreate(cls, sc=None) -> "SQLContext":
        return cls(sc)

    _og_api = "SQLContext"


# Classes of pyspark.sql that hold data: real classes (for isinstance and type hints) that
# cannot be created here.
DataFrame = _spark_class("DataFrame", "pyspark.sql.DataFrame")
Column = _spark_class("Column", "pyspark.sql.Column")
Row = _spark_class("Row", "pyspark.sql.Row")
GroupedData = _spark_class("GroupedData", "pyspark.sql.GroupedData")
DataFrameReader = _spark_class("DataFrameReader", "pyspark.sql.DataFrameReader")
DataFrameWriter = _spark_class("DataFrameWriter", "pyspark.sql.DataFrameWriter")
RDD = _spark_class("RDD", "pyspark.RDD")


class AnalysisException(Exception):
    """pyspark.sql.utils.AnalysisException: a real exception class so `except` clauses work
    (it is never raised on the embedded engine)."""


# ---------------------------------------------------------------------------------------------
# pyspark.sql.types: the type objects can be built (scripts build schemas at module level);
# they describe, they do not compute.

class DataType:
    """A pyspark.sql.types stand-in: keeps its constructor arguments, compares by them."""

    def __init__(self, *args, **kwargs):
        self._args = args
        self._kwargs = kwargs

    def simpleString(self) -> str:
        return type(self).__name__.replace("Type", "").lower()

    def typeName(self) -> str:
        return self.simpleString()

    def __eq__(self, other) -> bool:
        return (type(self) is type(other) and self._args == other._args
                and self._kwargs == other._kwargs)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        args = [repr(a) for a in self._args] + [f"{k}={v!r}" for k, v in self._kwargs.items()]
        return f"{type(self).__name__}({', '.join(args)})"


class StructField(DataType):
    def __init__(self, name: str, dataType: DataType, nullable: bool = True, metadata=None):
        super().__init__(name, dataType, nullable)
        self.name, self.dataType, self.nullable = name, dataType, nullable
        self.metadata = metadata or {}


class StructType(DataType):
    def __init__(self, fields=None):
        self.fields = list(fields or [])
        super().__init__(self.fields)

    def add(self, field, data_type=None, nullable: bool = True, metadata=None) -> "StructType":
        if isinstance(field, StructField):
            self.fields.append(field)
        else:
            self.fields.append(StructField(field, data_type, nullable, metadata))
        return self

    @property
    def names(self):
        return [f.name for f in self.fields]

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


class ArrayType(DataType):
    def __init__(self, elementType: DataType, containsNull: bool = True):
        super().__init__(elementType, containsNull)
        self.elementType, self.containsNull = elementType, containsNull


class MapType(DataType):
    def __init__(self, keyType: DataType, valueType: DataType, valueContainsNull: bool = True):
        super().__init__(keyType, valueType, valueContainsNull)
        self.keyType, self.valueType = keyType, valueType
        self.valueContainsNull = valueContainsNull


class DecimalType(DataType):
    def __init__(self, precision: int = 10, scale: int = 0):
        super().__init__(precision, scale)
        self.precision, self.scale = precision, scale


SIMPLE_TYPES = ("NullType", "StringType", "BinaryType", "BooleanType", "DateType",
                "TimestampType", "TimestampNTZType", "DoubleType", "FloatType", "ByteType",
                "IntegerType", "LongType", "ShortType", "CharType", "VarcharType",
                "DayTimeIntervalType", "YearMonthIntervalType", "CalendarIntervalType")
TYPE_CLASSES: Dict[str, type] = {name: type(name, (DataType,), {"__module__": "pyspark.sql.types"})
                                 for name in SIMPLE_TYPES}
for _cls in (DataType, StructField, StructType, ArrayType, MapType, DecimalType):
    TYPE_CLASSES[_cls.__name__] = _cls


# ---------------------------------------------------------------------------------------------
# pyspark.sql.functions: importable by any name; calling one raises.



def function(name: str) -> StandIn:
    """The stand-in for pyspark.sql.functions.<name>: calling it raises."""
    return StandIn(f"pyspark.sql.functions.{name}")
