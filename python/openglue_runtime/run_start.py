"""What a job run does before its script runs, when the server asked for it: the run's bootstrap
(src/jobs/job_launch.cc) calls `start()` when the run has an `--additional-python-modules`
environment (`OPENGLUE_PYTHON_MODULES`), its job a GlueVersion (`OPENGLUE_GLUE_VERSION`), or when
its script is to be generated from the job's CodeGenConfigurationNodes (`OPENGLUE_VISUAL_NODES`).

- The environment's `.pth` files are processed (`openglue_runtime.python_modules.activate`).
- The run's error log gets one line saying which runtime runs the GlueVersion, beside what AWS
  Glue runs for it (docs/engines.md, "Glue versions"):

      [openglue] runtime: GlueVersion 4.0 (AWS Glue 4.0: Spark 3.3.0, Python 3.10) runs on OpenGlue's runtime: Python 3.11.2, Spark 3.5.9

- A visual job's script is generated (openglue_runtime.studio_codegen) from the graph the server
  wrote to the file `OPENGLUE_VISUAL_NODES` names, into the script path the bootstrap runs next
  (sys.argv[0]). A graph that cannot be generated ends the run (exit status 1) with one line
  naming the node, before the script or any data is touched.
"""
import os
import platform
import sys
from typing import Dict, Optional, Tuple

# What AWS Glue runs for each GlueVersion OpenGlue accepts (the developer guide's "AWS Glue
# versions" table): Spark jobs' Spark and Python; Python shell jobs' Python.
AWS_SPARK: Dict[str, Tuple[str, str]] = {
    "2.0": ("2.4.3", "3.7"),
    "3.0": ("3.1.1", "3.7"),
    "4.0": ("3.3.0", "3.10"),
    "5.0": ("3.5.4", "3.11"),
    "5.1": ("3.5.6", "3.11"),
}
AWS_PYTHON_SHELL: Dict[str, str] = {"3.0": "3.9"}
# Versions AWS Glue has ended that OpenGlue still runs, and since when.
ENDED_ON_AWS: Dict[str, str] = {"2.0": "2026-04-01"}


def _spark_version() -> Optional[str]:
    try:
        import importlib.metadata as metadata
        return metadata.version("pyspark")
    except Exception:  # no pyspark, or no metadata: the line just leaves Spark out
        return None


def runtime_line(version: str, engine: str = "") -> str:
    """The runtime line for GlueVersion `version` of a run on `engine` (OPENGLUE_ENGINE)."""
    if engine == "pythonshell":
        aws = f"AWS Glue {version} Python shell: Python {AWS_PYTHON_SHELL[version]}" \
            if version in AWS_PYTHON_SHELL else f"AWS Glue {version} has no Python shell runtime"
        ours = f"Python {platform.python_version()}"
    else:
        spark, python = AWS_SPARK.get(version, ("?", "?"))
        aws = f"AWS Glue {version}: Spark {spark}, Python {python}"
        ours = f"Python {platform.python_version()}"
        spark_here = _spark_version()
        if spark_here:
            ours += f", Spark {spark_here}"
    line = f"[openglue] runtime: GlueVersion {version} ({aws}) runs on OpenGlue's runtime: {ours}"
    if version in ENDED_ON_AWS:
        line += f" (AWS Glue ended {version} on {ENDED_ON_AWS[version]}; OpenGlue still runs it)"
    return line


def generate_visual_script() -> None:
    """Writes the run's script from the job's CodeGenConfigurationNodes (OPENGLUE_VISUAL_NODES);
    exits the run with the reason when the graph cannot be generated."""
    from openglue_runtime import studio_codegen
    try:
        studio_codegen.generate_for_run(os.environ["OPENGLUE_VISUAL_NODES"], sys.argv[0],
                                        os.environ.get("OPENGLUE_VISUAL_SCRIPT_LOCATION", ""))
    except (studio_codegen.VisualJobError, OSError, ValueError) as error:
        # The run's ErrorMessage is this line (the last of the error log).
        print(f"VisualJobError: {error}", file=sys.stderr, flush=True)
        sys.exit(1)


def start() -> None:
    from openglue_runtime import python_modules
    python_modules.activate()
    if os.environ.get("OPENGLUE_VISUAL_NODES"):
        generate_visual_script()
    version = os.environ.get("OPENGLUE_GLUE_VERSION")
    if version:
        print(runtime_line(version, os.environ.get("OPENGLUE_ENGINE", "")), file=sys.stderr,
              flush=True)
