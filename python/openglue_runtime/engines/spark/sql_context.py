"""GlueContext as a pyspark.sql.SQLContext, as AWS's GlueContext is (it subclasses SQLContext).

- `SQLContext`: the SQLContext class of the pyspark this process imports, which
  awsglue.context.GlueContext subclasses: the real one on the Spark engine (and outside job
  runs where pyspark is installed), the stand-in's on the embedded engine
  (openglue_runtime/engines/embedded/spark_api.py), `object` where no pyspark can be imported.
  So `isinstance(glueContext, pyspark.sql.SQLContext)` holds on both engines, for the pyspark
  the script sees.
- `init(ctx, sc, session)`: SQLContext's own set-up of a GlueContext on Spark (its `_sc`,
  `_jsc`, `_jvm`, `sparkSession` and `_jsqlContext`; `SQLContext._instantiatedContext` when it
  is the process's first).
- `install_members(cls, spark_enabled)`: gives `cls` SQLContext's public members
  (engine_select.SQL_CONTEXT_MEMBERS: `sql`, `table`, `read`, `createDataFrame`, `udf`, ...)
  so that on a context where `spark_enabled(ctx)` is true they are SQLContext's own, and on the
  embedded engine each raises SparkApiUnavailable naming `glueContext.<member>`, as Spark's API
  does there; `setConf`/`getConf` there set and read the stand-in session's settings, as
  `spark.conf` does. `newSession()` gives a plain SQLContext on a new SparkSession (a
  GlueContext has one session).
"""
import functools
import inspect

from openglue_runtime.engine_select import SQL_CONTEXT_MEMBERS
from openglue_runtime.engines.embedded.spark_api import unavailable

try:
    from pyspark.sql import SQLContext
except ImportError:  # no pyspark at all, not even the stand-in: nothing to be an instance of
    SQLContext = object

_NO_DEFAULT = object()


def is_real() -> bool:
    """Whether SQLContext is the real pyspark's."""
    return getattr(SQLContext, "_get_or_create", None) is not None


def init(ctx, spark_context, spark_session) -> None:
    """Runs SQLContext.__init__ on `ctx` (the real pyspark's only)."""
    if is_real():
        SQLContext.__init__(ctx, spark_context, spark_session)


def _guarded(name: str, spark_enabled):
    real = inspect.getattr_static(SQLContext, name, None) if is_real() else None
    if isinstance(real, property):
        def get(self):
            if not spark_enabled(self):
                raise unavailable("glueContext.{}".format(name))
            return real.fget(self)
        return property(get, doc=real.__doc__)

    def call(self, *args, **kwargs):
        if not spark_enabled(self) or real is None:
            raise unavailable("glueContext.{}()".format(name))
        return real(self, *args, **kwargs)
    if real is not None:
        call = functools.wraps(real)(call)
    else:
        call.__name__ = name
    return call


def install_members(cls, spark_enabled) -> None:
    """Sets SQLContext's members on `cls` (see the module's doc), except those `cls` defines."""
    for name in SQL_CONTEXT_MEMBERS:
        if name in cls.__dict__ or name in ("setConf", "getConf", "newSession"):
            continue
        setattr(cls, name, _guarded(name, spark_enabled))

    def setConf(self, key, value):
        """Sets a Spark SQL setting (on the embedded engine: the stand-in session's, ignored)."""
        if spark_enabled(self) and is_real():
            return SQLContext.setConf(self, key, value)
        self.spark_session.conf.set(key, value)

    def getConf(self, key, defaultValue=_NO_DEFAULT):
        """A Spark SQL setting (on the embedded engine: what setConf set)."""
        if spark_enabled(self) and is_real():
            if defaultValue is _NO_DEFAULT:
                return SQLContext.getConf(self, key)
            return SQLContext.getConf(self, key, defaultValue)
        return self.spark_session.conf.get(key, None if defaultValue is _NO_DEFAULT
                                           else defaultValue)

    def newSession(self):
        """A SQLContext on a new SparkSession of this SparkContext (the Spark engine)."""
        if not spark_enabled(self) or not is_real():
            raise unavailable("glueContext.newSession()")
        return SQLContext(self._sc, self.sparkSession.newSession())

    for fn in (setConf, getConf, newSession):
        if fn.__name__ not in cls.__dict__:
            setattr(cls, fn.__name__, fn)
    if "__getattr__" not in cls.__dict__:
        # The stand-in's SQLContext raises SparkApiUnavailable for any unknown attribute; a
        # GlueContext's unknown attributes are plain AttributeErrors (hasattr, getattr(x, n, d)).
        def __getattr__(self, attr):
            raise AttributeError("{!r} object has no attribute {!r}".format(
                type(self).__name__, attr))
        cls.__getattr__ = __getattr__
