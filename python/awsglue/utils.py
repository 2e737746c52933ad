"""Argument handling for job scripts, as in AWS Glue.

A job run receives its arguments on the command line as `--name value` pairs: the job's
DefaultArguments, the run's Arguments (which override them), NonOverridableArguments, plus the
ones Glue adds itself (`--JOB_NAME`, `--JOB_ID`, `--JOB_RUN_ID`, `--TempDir`). A script reads
the ones it needs with `getResolvedOptions(sys.argv, [...names without dashes...])`.

The rules implemented here are Glue's documented ones (see docs/runtime.md):
- `--name value` and `--name=value` are both accepted; when a name is given twice the last one
  wins; arguments the script does not ask for are ignored (whatever they look like).
- every asked-for name must be present with a value, else GlueArgumentError names them all in
  argparse's words ("the following arguments are required: --a, --b"); a name followed by
  another `--option` (no value) is "expected one argument".
- `job-bookmark-option` can always be asked for: it defaults to `job-bookmark-disable` and must be
  one of job-bookmark-enable / -disable / -pause. `job-bookmark-from` and `job-bookmark-to` go
  together, and only with `job-bookmark-pause`.
- the names Glue reserves for itself (`--conf`, `--debug`, `--mode`) cannot be asked for.
GlueArgumentError is raised (not a SystemExit as argparse would): a script that wants to may
catch it, and an uncaught one fails the run with its message in the run's ErrorMessage.
"""
from typing import Dict, List, Optional, Sequence

BOOKMARK_OPTION = "job-bookmark-option"
BOOKMARK_FROM = "job-bookmark-from"
BOOKMARK_TO = "job-bookmark-to"
BOOKMARK_ENABLE = "job-bookmark-enable"
BOOKMARK_DISABLE = "job-bookmark-disable"
BOOKMARK_PAUSE = "job-bookmark-pause"
BOOKMARK_CHOICES = (BOOKMARK_ENABLE, BOOKMARK_DISABLE, BOOKMARK_PAUSE)

# Glue documents these as used internally: a job must never set them, and a script cannot read
# them as its own parameters.
RESERVED_NAMES = frozenset({"conf", "debug", "mode"})

# Names a run always has, whether or not the job set them (the server passes the first three and
# --TempDir on every run; the bookmark option has a default).
ALWAYS_PRESENT = ("JOB_NAME", "JOB_ID", "JOB_RUN_ID", "TempDir", BOOKMARK_OPTION)


class GlueArgumentError(ValueError):
    """A job argument the script asked for is missing, malformed or reserved.

    Raised by getResolvedOptions; the message uses argparse's wording, as Glue's does.
    """


def _parse(args: Sequence[str]) -> Dict[str, Optional[str]]:
    """Every `--name value` / `--name=value` pair of `args`; a name with no value maps to None."""
    values: Dict[str, Optional[str]] = {}
    tokens = [str(a) for a in args]
    # argv[0] is the script's path when the script passes sys.argv.
    i = 1 if tokens and not tokens[0].startswith("--") else 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--") or token == "--":
            continue  # a stray value: ignored, like any argument nobody asked for
        name = token[2:]
        if "=" in name:
            name, value = name.split("=", 1)
            values[name] = value
            continue
        if i < len(tokens) and not tokens[i].startswith("--"):
            values[name] = tokens[i]
            i += 1
        else:
            values[name] = None
    return values


def getResolvedOptions(args: Sequence[str], options: List[str]) -> Dict[str, str]:
    """Returns the values of the named `options` (names without the leading dashes) found in a
    job's command line `args` (usually `sys.argv`), as a dict name -> string.

    Raises GlueArgumentError when an option is missing or has no value, when a reserved name is
    asked for, or when the bookmark options are invalid (see the module's docstring).
    """
    if isinstance(options, str):
        raise GlueArgumentError("options must be a list of argument names, not a string")
    wanted = []
    for option in options:
        name = str(option)
        if name.startswith("--"):
            name = name[2:]
        if name in RESERVED_NAMES:
            raise GlueArgumentError(
                f"argument --{name} is reserved by AWS Glue for its own use and cannot be a job "
                "argument")
        if name not in wanted:
            wanted.append(name)
    values = _parse(args)

    for name in wanted:
        if name in values and values[name] is None:
            raise GlueArgumentError(f"argument --{name}: expected one argument")

    # The bookmark options are validated whether or not the script asks for them: a run with an
    # invalid one must not start reading.
    option = values.get(BOOKMARK_OPTION)
    if option is None:
        option = BOOKMARK_DISABLE
        values[BOOKMARK_OPTION] = option
    if option not in BOOKMARK_CHOICES:
        raise GlueArgumentError(
            f"argument --{BOOKMARK_OPTION}: invalid choice: '{option}' (choose from "
            + ", ".join(f"'{c}'" for c in BOOKMARK_CHOICES) + ")")
    has_from = values.get(BOOKMARK_FROM) is not None
    has_to = values.get(BOOKMARK_TO) is not None
    if has_from or has_to:
        if option != BOOKMARK_PAUSE:
            raise GlueArgumentError(
                f"--{BOOKMARK_FROM} and --{BOOKMARK_TO} can only be used with "
                f"--{BOOKMARK_OPTION} {BOOKMARK_PAUSE}")
        if has_from != has_to:
            raise GlueArgumentError(
                f"--{BOOKMARK_FROM} and --{BOOKMARK_TO} must be given together")

    missing = [n for n in wanted if values.get(n) is None]
    if missing:
        raise GlueArgumentError(
            "the following arguments are required: " + ", ".join("--" + m for m in missing))
    return {n: values[n] for n in wanted}
