"""GlueContext's storage-class and ingestion-time helpers: `transition_s3_path`,
`transition_table` and `add_ingestion_time_columns` (AWS Glue developer guide, GlueContext class).

S3 storage classes do not exist in the embedded store, nor through an S3-compatible endpoint in
general: a transition validates its arguments as AWS documents them (a known storage class, the
mandatory `accountId` and `roleArn`), selects the files AWS would transition (older than
`retentionPeriod` hours, default 168, as purge_s3_path selects them) and changes nothing in
them; with `manifestFilePath` it writes the manifest AWS writes, `Success.csv` listing those files
and an empty `Failed.csv`. Scripts that tier their output run unchanged.
"""
import time
from typing import List, Optional

from openglue_runtime.engines.embedded import native

STORAGE_CLASSES = ("STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA",
                   "INTELLIGENT_TIERING", "GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR")
DEFAULT_RETENTION_HOURS = 168
GRANULARITIES = ("day", "hour", "minute")


def check_transition(transition_to: str, options: dict) -> None:
    """ValueError naming what AWS's transition transform would refuse."""
    if str(transition_to or "").upper() not in STORAGE_CLASSES:
        raise ValueError("transition_to must be an S3 storage class ({}), not {!r}".format(
            ", ".join(STORAGE_CLASSES), transition_to))
    for name in ("accountId", "roleArn"):
        if not options.get(name):
            raise ValueError("the option {} is mandatory for the transition transform".format(name))


def transition(engine, locations: List[str], transition_to: str, options: dict) -> List[str]:
    """The files under `locations` that a transition to `transition_to` selects (see the module
    doc); writes the manifest when `manifestFilePath` is given. Returns their URIs."""
    options = dict(options or {})
    check_transition(transition_to, options)
    hours = float(options.get("retentionPeriod", DEFAULT_RETENTION_HOURS))
    cutoff_ms = int(time.time() * 1000 - hours * 3600 * 1000)
    excluded = {str(c).upper() for c in options.get("excludeStorageClasses") or []}
    selected: List[str] = []
    if "STANDARD" not in excluded:  # every object of the store is in STANDARD
        for location in locations:
            listing = engine.list_files([location], {"recurse": True})
            selected.extend(uri for uri, _, mtime_ms in listing if mtime_ms <= cutoff_ms)
    manifest = options.get("manifestFilePath")
    if manifest:
        base = str(manifest).rstrip("/")
        native.write_bytes(base + "/Success.csv", "".join(u + "\n" for u in selected).encode())
        native.write_bytes(base + "/Failed.csv", b"")
    return selected


def add_ingestion_time_columns(data_frame, time_granularity: Optional[str] = ""):
    """`data_frame` (a Spark DataFrame) with ingest_year, ingest_month, ingest_day and, as far as
    `time_granularity` says ("day", "hour" or "minute"; empty: "minute"), ingest_hour and
    ingest_minute: the time of the query, as zero-padded strings (the values partition folders
    such as ingest_year=2024/ingest_month=06/ show)."""
    granularity = (time_granularity or "minute").lower()
    if granularity not in GRANULARITIES:
        raise ValueError("timeGranularity must be one of day, hour, minute, not {!r}".format(
            time_granularity))
    from pyspark.sql import functions as F
    now = F.current_timestamp()
    columns = [("ingest_year", "yyyy"), ("ingest_month", "MM"), ("ingest_day", "dd")]
    if granularity in ("hour", "minute"):
        columns.append(("ingest_hour", "HH"))
    if granularity == "minute":
        columns.append(("ingest_minute", "mm"))
    for name, pattern in columns:
        data_frame = data_frame.withColumn(name, F.date_format(now, pattern))
    return data_frame
