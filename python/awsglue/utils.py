"""Argument handling for job scripts, as in AWS Glue."""
from typing import Dict, List, Sequence


class GlueArgumentError(ValueError):
    """A required job argument is missing or malformed."""


def getResolvedOptions(args: Sequence[str], options: List[str]) -> Dict[str, str]:
    """Returns the values of the named `options` from a job's command line.

    A job run receives its arguments as `--name value` pairs (the job's DefaultArguments, the
    run's Arguments, NonOverridableArguments, plus --JOB_NAME, --JOB_ID and --JOB_RUN_ID).
    `options` names them without the leading dashes. Every named option must be present, else
    GlueArgumentError names the missing ones. `--name=value` is accepted too.
    """
    values: Dict[str, str] = {}
    i = 1 if args and not str(args[0]).startswith("--") else 0
    while i < len(args):
        token = str(args[i])
        if token.startswith("--"):
            name = token[2:]
            if "=" in name:
                name, value = name.split("=", 1)
                values[name] = value
                i += 1
                continue
            if i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
                values[name] = str(args[i + 1])
                i += 2
                continue
            values[name] = ""
        i += 1
    missing = [o for o in options if o not in values]
    if missing:
        raise GlueArgumentError(
            "the following arguments are required: " + ", ".join("--" + m for m in missing))
    return {o: values[o] for o in options}
