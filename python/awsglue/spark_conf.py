"""The Spark configuration of a job run on the Spark engine (issue 10).

`session_conf(args)` gives the Spark settings (key -> value) a run's SparkContext/SparkSession is
built with, from the run's resolved job arguments (`--enable-spark-ui`, `--enable-glue-datacatalog`,
`--spark-master`, ...) and the environment the server gives the run:

    OPENGLUE_SPARK_MASTER       where Spark runs (default local[*])
    OPENGLUE_RUN_DIR            the run's folder (event logs go under it)
    OPENGLUE_HMS_URI            thrift://host:port of the server's Hive Metastore front end, if on
    OPENGLUE_WORKER_TYPE, OPENGLUE_NUMBER_OF_WORKERS   the job's WorkerType / NumberOfWorkers
    AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION   S3A's endpoint

This first version sets only the master; the rest (S3A, jars, event logs, the metastore, worker
sizes) is filled in beside it.
"""
import os
from typing import Dict, Mapping, Optional


def session_conf(args: Mapping[str, str], environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Spark settings for this run's session."""
    env = os.environ if environ is None else environ
    master = args.get("--spark-master") or args.get("spark-master") or env.get("OPENGLUE_SPARK_MASTER") or "local[*]"
    return {"spark.master": master, "spark.app.name": env.get("OPENGLUE_JOB_NAME", "openglue")}
