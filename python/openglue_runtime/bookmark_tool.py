"""`openglue bookmarks`: what a job's bookmark holds, what each run read, what the next run reads.

    openglue bookmarks show JOB                 the state per transformation_ctx, the counters
    openglue bookmarks history JOB              one line per commit or reset
    openglue bookmarks diff JOB RUN_A RUN_B     what changed between the states after two runs
    openglue bookmarks plan JOB                 what the next run would read, without running it

The `openglue` binary hands `bookmarks ...` to this module (`python -m openglue_runtime.bookmark_tool`).
It is a client like any other: it talks to the server's Glue endpoint (`--endpoint-url`, else
AWS_ENDPOINT_URL_GLUE, OPENGLUE_ENDPOINT, http://127.0.0.1:4690) with the caller's credentials
from the usual AWS environment and config files, using GetJob, GetJobBookmark, GetConnection and
the extension operation OpenGlueGetJobBookmarkHistory (docs/bookmarks.md).

`plan` computes the next run's input with the runtime's own pieces: the engine's listing
(`openglue_runtime.engines.embedded.native.list_files`, the call the sources make) and the selection function
`openglue_runtime.bookmarks.s3_select`: the prediction and the run cannot disagree about the rule.

Exit status: 0 on success, 1 when the job (or a run) does not exist or the server refuses,
2 on a usage error.
"""
import argparse
import datetime
import json
import os
import sys
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence, Tuple

DEFAULT_ENDPOINT = "http://127.0.0.1:4690"
DEFAULT_BAND_MS = 900000
# How many objects `plan` and `history` print per source in text output (--json has them all).
TEXT_OBJECT_LIMIT = 20


class ToolError(Exception):
    """A failure to report on stderr as `openglue bookmarks: <message>` with exit status 1."""


# ------------------------------------------------------------------------------------------------
# Talking to the server

def endpoint_from(args: argparse.Namespace) -> str:
    return (args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_GLUE")
            or os.environ.get("OPENGLUE_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


class Server:
    """The Glue endpoint, reached with the caller's credentials."""

    def __init__(self, endpoint: str, region: Optional[str], profile: Optional[str]):
        import boto3
        import botocore.config
        self.endpoint = endpoint
        try:
            self.session = boto3.Session(profile_name=profile) if profile else boto3.Session()
        except Exception as e:  # botocore's ProfileNotFound and friends
            raise ToolError(str(e))
        self.region = region or self.session.region_name or "us-east-1"
        self._config = botocore.config.Config(retries={"max_attempts": 2, "mode": "standard"},
                                              connect_timeout=10, read_timeout=60)
        self._glue = None

    def credentials(self):
        creds = self.session.get_credentials()
        if creds is None:
            raise ToolError("no AWS credentials found: set AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY (or a profile in ~/.aws) for the server")
        return creds.get_frozen_credentials()

    @property
    def glue(self):
        if self._glue is None:
            self.credentials()  # a clear message instead of botocore's NoCredentialsError
            self._glue = self.session.client("glue", endpoint_url=self.endpoint,
                                             region_name=self.region, config=self._config)
        return self._glue

    def call(self, operation: str, **params) -> Dict[str, Any]:
        """A Glue operation of the service model; ClientError is turned into ToolError except
        EntityNotFoundException, which the callers tell apart."""
        import botocore.exceptions
        try:
            return getattr(self.glue, operation)(**params)
        except botocore.exceptions.EndpointConnectionError as e:
            raise ToolError(f"cannot reach the server at {self.endpoint}: {e} "
                            "(start it with `openglue serve`, or pass --endpoint-url)")

    def extension(self, operation: str, body: Dict[str, Any]) -> Dict[str, Any]:
        """An OpenGlue extension operation: a JSON 1.1 POST signed with SigV4, through the
        runtime's own helper (openglue_runtime.bookmarks.signed_call) with the caller's credentials."""
        from openglue_runtime.bookmarks import BookmarkServiceError, signed_call
        try:
            return signed_call(operation, body, endpoint=self.endpoint, region=self.region,
                               credentials=self.credentials(), timeout=60)
        except BookmarkServiceError as e:
            if e.code == "ConnectionError":
                raise ToolError(f"cannot reach the server at {self.endpoint}: {e.message} "
                                "(start it with `openglue serve`, or pass --endpoint-url)")
            raise ExtensionError(e.code, e.message)


class ExtensionError(ToolError):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def error_code(error: BaseException) -> str:
    """The Glue error name of a failed call (botocore's ClientError or ExtensionError)."""
    if isinstance(error, ExtensionError):
        return error.code
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def client_errors() -> Tuple[type, ...]:
    import botocore.exceptions
    return (botocore.exceptions.ClientError, ExtensionError)


def get_job(server: Server, job: str) -> Dict[str, Any]:
    try:
        return server.call("get_job", JobName=job)["Job"]
    except client_errors() as e:
        if error_code(e) == "EntityNotFoundException":
            raise ToolError(f"job {job!r} not found on {server.endpoint}")
        raise ToolError(f"GetJob {job}: {e}")


def get_bookmark(server: Server, job: str, run_id: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The JobBookmarkEntry (JobBookmark parsed into `State`), or None when the job has no
    bookmark (never committed, or reset to nothing)."""
    params = {"JobName": job}
    if run_id:
        params["RunId"] = run_id
    try:
        entry = dict(server.call("get_job_bookmark", **params)["JobBookmarkEntry"])
    except client_errors() as e:
        if error_code(e) == "EntityNotFoundException":
            if run_id:
                raise ToolError(f"job {job!r} has no bookmark state for run {run_id!r}: {e}")
            return None
        raise ToolError(f"GetJobBookmark {job}: {e}")
    entry["State"] = parse_state(entry.get("JobBookmark"))
    return entry


def get_history(server: Server, job: str) -> List[Dict[str, Any]]:
    """Every history entry of the job, oldest first, JobBookmark parsed into `State`."""
    out: List[Dict[str, Any]] = []
    token = None
    for _ in range(100000):
        body: Dict[str, Any] = {"JobName": job, "MaxResults": 100}
        if token:
            body["NextToken"] = token
        try:
            page = server.extension("OpenGlueGetJobBookmarkHistory", body)
        except ExtensionError as e:
            if e.code == "EntityNotFoundException":
                raise ToolError(f"job {job!r} not found on {server.endpoint}")
            raise ToolError(f"OpenGlueGetJobBookmarkHistory {job}: {e}")
        for entry in page.get("History", []):
            entry = dict(entry)
            entry["State"] = parse_state(entry.get("JobBookmark"))
            out.append(entry)
        token = page.get("NextToken")
        if not token:
            break
    return out


def parse_state(text: Any) -> Dict[str, Any]:
    if isinstance(text, dict):
        return text
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------------------------------------
# Formatting

def fmt_ms(ms: Any) -> str:
    """An epoch-milliseconds value as UTC time with milliseconds."""
    try:
        value = int(ms)
    except (TypeError, ValueError):
        return str(ms)
    stamp = datetime.datetime.fromtimestamp(value / 1000, datetime.timezone.utc)
    return stamp.strftime("%Y-%m-%d %H:%M:%S.") + f"{value % 1000:03d} UTC"


def fmt_epoch(seconds: Any) -> str:
    if isinstance(seconds, datetime.datetime):
        return seconds.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return str(seconds) if seconds is not None else "-"
    return datetime.datetime.fromtimestamp(value, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC")


def fmt_bytes(n: Any) -> str:
    try:
        value = int(n)
    except (TypeError, ValueError):
        return str(n)
    if value < 1024:
        return f"{value} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024.0
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return str(n)


def is_time_value(key: str, value: Any) -> bool:
    """Whether a state or summary field holds an epoch-milliseconds time (S3's floor / high)."""
    return key in ("floor", "high") and isinstance(value, int) and not isinstance(value, bool)


def band_entries(state: Dict[str, Any]) -> Optional[list]:
    """The remembered band of an S3 state ([[uri, mtime_ms], ...]), None for other states."""
    band = state.get("band")
    return band if isinstance(band, list) else None


def high_water(state: Dict[str, Any]) -> Optional[Any]:
    """An S3 state's floor: every object version modified at or before it is done."""
    return state.get("floor")


def describe_state(state: Dict[str, Any]) -> List[str]:
    """Lines describing one ctx's state (text output of show / plan / diff)."""
    kind = state.get("type", "?")
    if kind == "jdbc":
        return [f"table {state.get('table')} via {state.get('connection') or '-'}; keys "
                f"{json.dumps(state.get('keys'))} {state.get('sort_order', 'asc')}; high-water "
                f"{json.dumps(state.get('high'))}"]
    where = ", ".join(str(p) for p in state.get("paths", []) or [])
    extra = ""
    if state.get("database"):
        extra = f" (table {state.get('database')}.{state.get('table')})"
    lines = [f"paths {where or '-'}{extra}; format {state.get('format') or '-'}"]
    parts = []
    if state.get("floor") is not None:
        parts.append(f"high-water (floor) {fmt_ms(state['floor'])}")
    if state.get("high") is not None:
        parts.append(f"last horizon {fmt_ms(state['high'])}")
    band = band_entries(state)
    if band is not None:
        parts.append(f"band {len(band)} object{'s' if len(band) != 1 else ''}"
                     f" (maxBand {state.get('maxBand', DEFAULT_BAND_MS)} ms)")
    if parts:
        lines.append("; ".join(parts))
    options = {k: v for k, v in (state.get("options") or {}).items() if v not in (None, "")}
    if options:
        lines.append("options " + ", ".join(f"{k}={json.dumps(v)}" for k, v in
                                            sorted(options.items())))
    return lines


def describe_reads(reads: Dict[str, Any]) -> str:
    """One ctx's read summary (the commit's Reads) as text."""
    if not isinstance(reads, dict):
        return json.dumps(reads)
    parts = []
    if "objects" in reads:
        parts.append(f"{reads['objects']} object{'s' if reads['objects'] != 1 else ''}")
    if "rows" in reads:
        parts.append(f"{reads['rows']} row{'s' if reads['rows'] != 1 else ''}")
    if reads.get("bytes") is not None:
        parts.append(fmt_bytes(reads["bytes"]))
    if reads.get("floor") is not None:
        parts.append("high-water (floor) " + (fmt_ms(reads["floor"])
                                             if is_time_value("floor", reads["floor"])
                                             else json.dumps(reads["floor"])))
    if reads.get("high") is not None:
        high = reads["high"]
        if reads.get("type", "s3") == "jdbc" or not is_time_value("high", high):
            parts.append("high " + json.dumps(high))
        else:
            parts.append("horizon " + fmt_ms(high))
    if reads.get("first"):
        first = list(reads["first"])
        parts.append("first " + ", ".join(str(u) for u in first[:3]) +
                     (", ..." if len(first) > 3 else ""))
    return ", ".join(parts) or "nothing"


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")


def json_safe_entry(entry: Dict[str, Any]) -> Dict[str, Any]:
    out = {k: v for k, v in entry.items() if k != "JobBookmark"}
    return out


# ------------------------------------------------------------------------------------------------
# show

def last_setters(history: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """For each ctx of the latest state: the history entry that last changed its state."""
    setters: Dict[str, Dict[str, Any]] = {}
    previous: Dict[str, Any] = {}
    for entry in history:
        state = entry.get("State", {})
        for ctx, value in state.items():
            if ctx not in previous or previous[ctx] != value:
                setters[ctx] = entry
        for ctx in list(setters):
            if ctx not in state:
                del setters[ctx]
        previous = state
    return setters


def setter_summary(entry: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if entry is None:
        return None
    out = {k: entry.get(k) for k in ("Version", "Action", "RunId", "Run", "Attempt", "CommittedOn")}
    if entry.get("ResetToRunId"):
        out["ResetToRunId"] = entry["ResetToRunId"]
    return out


def cmd_show(server: Server, args: argparse.Namespace) -> int:
    job = get_job(server, args.job)
    entry = get_bookmark(server, args.job)
    history = get_history(server, args.job)
    option = (job.get("DefaultArguments") or {}).get("--job-bookmark-option",
                                                      "job-bookmark-disable")
    setters = last_setters(history)
    if args.json:
        out: Dict[str, Any] = {"JobName": args.job, "DefaultBookmarkOption": option,
                               "HistoryEntries": len(history)}
        if entry is None:
            out["Bookmark"] = None
        else:
            out["Bookmark"] = {k: entry.get(k) for k in
                               ("Version", "Run", "Attempt", "RunId", "PreviousRunId")}
            out["Contexts"] = {ctx: {"State": state, "SetBy": setter_summary(setters.get(ctx))}
                               for ctx, state in sorted(entry["State"].items())}
            out["StateBytes"] = len((entry.get("JobBookmark") or "").encode())
        print_json(out)
        return 0
    print(f"job {args.job} (default bookmark option: {option})")
    if entry is None:
        print("  no bookmark: the job never committed one, or it was reset to nothing; "
              "the next enabled run reads everything")
        return 0
    print(f"  version {entry.get('Version')}, run {entry.get('Run')}, attempt "
          f"{entry.get('Attempt')}; last committed by {entry.get('RunId') or '-'}"
          f" (previous {entry.get('PreviousRunId') or '-'}); state "
          f"{len((entry.get('JobBookmark') or '').encode())} bytes")
    if not entry["State"]:
        print("  state is empty (reset): the next enabled run reads every source in full")
    for ctx, state in sorted(entry["State"].items()):
        print(f"  {ctx} ({state.get('type', '?')})")
        for line in describe_state(state):
            print(f"    {line}")
        setter = setters.get(ctx)
        if setter is not None:
            how = (f"reset to run {setter.get('ResetToRunId')}" if setter.get("Action") == "RESET"
                   and setter.get("ResetToRunId") else
                   "reset" if setter.get("Action") == "RESET" else f"run {setter.get('RunId')}")
            print(f"    set by {how} (version {setter.get('Version')}, "
                  f"{fmt_epoch(setter.get('CommittedOn'))})")
    return 0


# ------------------------------------------------------------------------------------------------
# history

def cmd_history(server: Server, args: argparse.Namespace) -> int:
    get_job(server, args.job)
    history = get_history(server, args.job)
    if args.json:
        print_json({"JobName": args.job, "History": [json_safe_entry(e) for e in history]})
        return 0
    if not history:
        print(f"job {args.job}: no bookmark history (no run has committed a bookmark)")
        return 0
    for entry in history:
        head = (f"v{entry.get('Version')} {fmt_epoch(entry.get('CommittedOn'))} "
                f"{entry.get('Action', '?'):<6}")
        if entry.get("Action") == "RESET":
            target = entry.get("ResetToRunId")
            print(f"{head} {'to the state as of run ' + target if target else 'to empty'}"
                  f" ({len(entry.get('State', {}))} contexts)")
            continue
        print(f"{head} {entry.get('RunId')} (run {entry.get('Run')}, attempt "
              f"{entry.get('Attempt')})")
        reads = entry.get("Reads") or {}
        for ctx in sorted(reads):
            line = f"    {ctx}: {describe_reads(reads[ctx])}"
            state = entry.get("State", {}).get(ctx)
            summary = reads[ctx] if isinstance(reads[ctx], dict) else {}
            if isinstance(state, dict) and state.get("type", "s3") != "jdbc" and \
                    high_water(state) is not None and "floor" not in summary:
                line += f", high-water (floor) {fmt_ms(high_water(state))}"
            elif isinstance(state, dict) and state.get("type") == "jdbc" and "high" not in summary:
                line += f", high {json.dumps(state.get('high'))}"
            print(line)
        if not reads:
            print("    (no sources read)")
    return 0


# ------------------------------------------------------------------------------------------------
# diff

def state_diff(before: Optional[Dict[str, Any]], after: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The changes of one ctx's state: {field: [before, after]}; band lists as added/removed."""
    before = before or {}
    after = after or {}
    out: Dict[str, Any] = {}
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if isinstance(a, (list, type(None))) and isinstance(b, (list, type(None))) and \
                key not in ("paths", "keys", "high"):
            old = {json.dumps(x, sort_keys=True) for x in (a or [])}
            new = {json.dumps(x, sort_keys=True) for x in (b or [])}
            out[key] = {"added": [json.loads(x) for x in sorted(new - old)],
                        "removed": [json.loads(x) for x in sorted(old - new)]}
        else:
            out[key] = [a, b]
    return out


def find_entry(history: Sequence[Dict[str, Any]], run_id: str) -> Optional[int]:
    """The index of the run's COMMIT entry (the last one, for safety), or None."""
    found = None
    for i, entry in enumerate(history):
        if entry.get("RunId") == run_id and entry.get("Action", "COMMIT") == "COMMIT":
            found = i
    return found


def cmd_diff(server: Server, args: argparse.Namespace) -> int:
    get_job(server, args.job)
    history = get_history(server, args.job)
    state_a = get_bookmark(server, args.job, args.run_a)
    state_b = get_bookmark(server, args.job, args.run_b)
    a = (state_a or {}).get("State", {})
    b = (state_b or {}).get("State", {})
    ia, ib = find_entry(history, args.run_a), find_entry(history, args.run_b)
    reads = []
    if ia is not None and ib is not None:
        lo, hi = (ia, ib) if ia <= ib else (ib, ia)
        for entry in history[lo + 1:hi + 1]:
            reads.append({"Version": entry.get("Version"), "Action": entry.get("Action"),
                          "RunId": entry.get("RunId"), "ResetToRunId": entry.get("ResetToRunId"),
                          "Reads": entry.get("Reads") or {}})
    elif ib is not None:
        entry = history[ib]
        reads.append({"Version": entry.get("Version"), "Action": entry.get("Action"),
                      "RunId": entry.get("RunId"), "Reads": entry.get("Reads") or {}})
    contexts: Dict[str, Any] = {}
    for ctx in sorted(set(a) | set(b)):
        if ctx not in a:
            contexts[ctx] = {"change": "added", "after": b[ctx]}
        elif ctx not in b:
            contexts[ctx] = {"change": "removed", "before": a[ctx]}
        else:
            changes = state_diff(a[ctx], b[ctx])
            contexts[ctx] = {"change": "changed" if changes else "unchanged", "fields": changes}
    if args.json:
        print_json({"JobName": args.job, "RunA": args.run_a, "RunB": args.run_b,
                    "VersionA": (state_a or {}).get("Version"),
                    "VersionB": (state_b or {}).get("Version"),
                    "Contexts": contexts, "Between": reads})
        return 0
    print(f"job {args.job}: state after {args.run_a} -> state after {args.run_b}")
    if not contexts:
        print("  no contexts in either state")
    for ctx, change in contexts.items():
        kind = change["change"]
        if kind == "added":
            print(f"  + {ctx}: new source")
            for line in describe_state(change["after"]):
                print(f"      {line}")
        elif kind == "removed":
            print(f"  - {ctx}: gone (reset or a renamed transformation_ctx)")
        elif kind == "unchanged":
            print(f"    {ctx}: unchanged")
        else:
            print(f"  ~ {ctx}:")
            for field, value in change["fields"].items():
                if isinstance(value, dict):
                    print(f"      {field}: +{len(value['added'])} -{len(value['removed'])} entries")
                else:
                    old, new = value
                    if is_time_value(field, old) or is_time_value(field, new):
                        old, new = fmt_ms(old) if old is not None else "-", \
                            fmt_ms(new) if new is not None else "-"
                    else:
                        old, new = json.dumps(old), json.dumps(new)
                    print(f"      {field}: {old} -> {new}")
    if reads:
        print("  entries in between (after the first run, up to the second):")
        for r in reads:
            if r.get("Action") == "RESET":
                print(f"    v{r['Version']} RESET"
                      f"{' to run ' + r['ResetToRunId'] if r.get('ResetToRunId') else ''}")
                continue
            print(f"    v{r['Version']} {r['RunId']}: " + ("; ".join(
                f"{ctx} {describe_reads(v)}" for ctx, v in sorted(r["Reads"].items()))
                or "no sources read"))
    return 0


# ------------------------------------------------------------------------------------------------
# plan

def known_sources(entry: Optional[Dict[str, Any]],
                  history: Sequence[Dict[str, Any]]) -> Dict[str, Tuple[Dict[str, Any], bool]]:
    """ctx -> (its most recent recorded state, whether it is in the current state). A ctx that
    a reset dropped is still known from the history (its paths), with no start position."""
    out: Dict[str, Tuple[Dict[str, Any], bool]] = {}
    for h in history:
        for ctx, state in h.get("State", {}).items():
            if isinstance(state, dict):
                out[ctx] = (state, False)
    current = (entry or {}).get("State", {})
    for ctx, state in current.items():
        if isinstance(state, dict):
            out[ctx] = (state, True)
    return out


S3_API_WARNING = ("s3:// listed through the S3 API, whose last-modified times are whole seconds, "
                  "while job runs list the server's embedded store as files (millisecond times): "
                  "objects may look new that are not; give --data-dir (the server's data folder) "
                  "for an exact plan")


def prepare_storage(server: Server, args: argparse.Namespace) -> Dict[str, str]:
    """Where the listing finds `s3://`, set in this process's environment for the runtime's
    rules (openglue_runtime.storage): as job runs list it, the server's embedded store as files
    (`--s3-root`, `--data-dir`/s3, $OPENGLUE_S3_ROOT, $OPENGLUE_DATA_DIR/s3), else an S3 endpoint
    (`--s3-endpoint-url`, $AWS_ENDPOINT_URL_S3, else the server's S3 API at the Glue endpoint's
    port + 1) with the caller's credentials. Returns how s3:// is reached, for the output."""
    # from_catalog sources resolve their table through openglue_runtime.catalog, on this server.
    os.environ["AWS_ENDPOINT_URL_GLUE"] = server.endpoint
    root = (args.s3_root or (os.path.join(args.data_dir, "s3") if args.data_dir else "")
            or os.environ.get("OPENGLUE_S3_ROOT")
            or (os.path.join(os.environ["OPENGLUE_DATA_DIR"], "s3")
                if os.environ.get("OPENGLUE_DATA_DIR") else ""))
    where: Dict[str, str] = {}
    if root:
        os.environ["OPENGLUE_S3_ROOT"] = os.path.abspath(root)
        where["s3_root"] = os.environ["OPENGLUE_S3_ROOT"]
    else:
        s3 = args.s3_endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3")
        if not s3:
            parsed = urllib.parse.urlsplit(server.endpoint)
            if parsed.port:
                s3 = f"{parsed.scheme}://{parsed.hostname}:{parsed.port + 1}"
        if s3:
            os.environ["AWS_ENDPOINT_URL_S3"] = s3
            where["s3_endpoint"] = s3
    try:
        creds = server.credentials()
    except ToolError:
        return where
    # The listing and the catalog read these: the caller's credentials, whichever way
    # (environment, --profile, config files) they were found.
    os.environ["AWS_ACCESS_KEY_ID"] = creds.access_key
    os.environ["AWS_SECRET_ACCESS_KEY"] = creds.secret_key
    if creds.token:
        os.environ["AWS_SESSION_TOKEN"] = creds.token
    else:
        os.environ.pop("AWS_SESSION_TOKEN", None)
    os.environ["AWS_REGION"] = server.region
    return where


def list_storage(paths: Sequence[str], state: Dict[str, Any]) -> List[Tuple[str, int, int]]:
    """The runtime's listing of a source's paths (the engine's list_files, one call per path as
    the sources make it), with the listing options the state recorded."""
    from openglue_runtime.engines.embedded import (EmbeddedEngine)
    from openglue_runtime.bookmarks import LISTING_OPTIONS
    recorded = state.get("options") or {}
    options = {k: recorded[k] for k in LISTING_OPTIONS if recorded.get(k) not in (None, "")}
    engine = EmbeddedEngine()
    if state.get("database") and state.get("table"):
        listing: List[Tuple[str, int, int]] = []
        for path in paths:
            listing.extend(engine.list_files([path], options))
        return listing
    return engine.list_files(list(paths), options)


def catalog_paths(state: Dict[str, Any]) -> List[str]:
    """The folders a from_catalog source reads now: the runtime's own resolution of the table
    (openglue_runtime.catalog.resolve_source, with the predicates the run used), against the server."""
    from openglue_runtime import catalog
    src = catalog.resolve_source(
        str(state["database"]), str(state["table"]),
        push_down_predicate=state.get("push_down_predicate") or "",
        catalog_partition_predicate=state.get("catalogPartitionPredicate") or "",
        additional_options=dict(state.get("options") or {}))
    return [location for location, _ in src.paths]


def plan_s3(ctx: str, state: Dict[str, Any], start: Optional[Dict[str, Any]], option: str,
            now_ms: int, end: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    # The very function (and option parsing) the runtime selects with.
    from openglue_runtime.bookmarks import s3_select, source_options
    paths = [str(p) for p in state.get("paths") or []]
    out: Dict[str, Any] = {"type": "s3", "paths": paths, "format": state.get("format")}
    if state.get("database") and state.get("table"):
        out["table"] = f"{state['database']}.{state['table']}"
        try:
            paths = out["paths"] = catalog_paths(state)
        except Exception as e:  # CatalogError: the table is gone, no access, ...
            out["error"] = f"cannot resolve table {out['table']}: {e}"
            return out
    elif not paths:
        out["error"] = "the recorded state names no paths"
        return out
    started = time.monotonic()
    try:
        listing = list_storage(paths, state)
    except Exception as e:  # the engine's errors: a missing bucket, no access, ...
        out["error"] = f"cannot list {', '.join(paths)}: {e}"
        return out
    out["listing_seconds"] = round(time.monotonic() - started, 3)
    out["listed"] = len(listing)
    if option == "job-bookmark-disable":
        selected, new_state = list(listing), None
    else:
        try:
            kwargs = source_options(state.get("options"))
            selected, new_state = s3_select(listing, start, end, now_ms=now_ms, **kwargs)
        except ValueError as e:  # a malformed recorded option or a damaged state
            out["error"] = str(e)
            return out
    selected = [(str(u), int(s), int(m)) for u, s, m in selected]
    out["objects"] = [u for u, _, _ in selected]
    out["count"] = len(selected)
    out["bytes"] = sum(s for _, s, _ in selected)
    out["files"] = [[u, s, m] for u, s, m in selected]
    if new_state is not None:
        out["new_state"] = new_state
    return out


def jdbc_count(server: Server, state: Dict[str, Any], after: Optional[list],
               upto: Optional[list] = None) -> Dict[str, Any]:
    """The number of rows the next run reads (above the high-water value `after`, or all; with
    `upto`, a pause window's end, not above it), when
    the database is reachable: with the connection's properties (GetConnection with the caller's
    credentials) and the runtime's own driver setup and SQL helpers (openglue_runtime.jdbc)."""
    connection = str(state.get("connection") or "")
    table = state.get("table")
    if not connection:
        return {"count_error": "the state names no connection"}
    if not table or table == "sampleQuery":
        return {"count_error": "the source is a sampleQuery: no table to count"}
    try:
        from openglue_runtime import jdbc as runtime_jdbc
    except ImportError as e:
        return {"count_error": f"the JDBC runtime is not available: {e}"}
    if connection.startswith("jdbc:"):
        props = {"JDBC_CONNECTION_URL": connection}  # no password is ever recorded
    else:
        try:
            conn_def = server.call("get_connection", Name=connection,
                                   HidePassword=False)["Connection"]
        except client_errors() as e:
            return {"count_error": f"GetConnection {connection}: {e}"}
        props = dict(conn_def.get("ConnectionProperties") or {})
    try:
        vendor, host, port, database, params = runtime_jdbc.parse_url(
            props.get("JDBC_CONNECTION_URL", ""))
        target = runtime_jdbc.JdbcTarget(
            vendor=vendor, host=host, port=port, database=database,
            user=props.get("USERNAME", ""), password=props.get("PASSWORD", ""),
            dbtable=str(table), connection_name="" if connection.startswith("jdbc:") else connection,
            params=params)
        sql = "SELECT COUNT(*) FROM " + runtime_jdbc.quote_table(vendor, str(table))
        values: list = []
        keys = list(state.get("keys") or [])
        ascending = (state.get("sort_order") or "asc") == "asc"
        conditions = []
        for bound, op in ((after, ">" if ascending else "<"), (upto, "<=" if ascending else ">=")):
            if bound is not None and keys:
                condition, bound_values = runtime_jdbc._key_condition(vendor, keys, op,
                                                                      list(bound))
                conditions.append(condition)
                values += bound_values
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        db = runtime_jdbc.connect(target)
        try:
            cursor = db.cursor()
            cursor.execute(sql, values or None)
            count = int(cursor.fetchone()[0])
            cursor.close()
        finally:
            db.close()
        return {"rows": count}
    except Exception as e:  # the drivers' errors: unreachable host, refused login, ...
        return {"count_error": f"{type(e).__name__}: {e}"}


def pause_window(server: Server, args: argparse.Namespace, job: Dict[str, Any], option: str
                 ) -> Optional[Tuple[Dict[str, Any], Dict[str, Any], str, str]]:
    """With job-bookmark-pause and a window (--from/--to, else the job's DefaultArguments
    --job-bookmark-from/--job-bookmark-to): (the states as of the from run, as of the to run,
    the two run ids), as the runtime loads them; None without a window."""
    if option != "job-bookmark-pause":
        return None
    defaults = job.get("DefaultArguments") or {}
    start_run = args.from_run or defaults.get("--job-bookmark-from")
    end_run = args.to_run or defaults.get("--job-bookmark-to")
    if not start_run and not end_run:
        return None
    if not start_run or not end_run:
        raise ToolError("--job-bookmark-from and --job-bookmark-to must be given together")
    return (get_bookmark(server, args.job, start_run)["State"],
            get_bookmark(server, args.job, end_run)["State"], start_run, end_run)


def cmd_plan(server: Server, args: argparse.Namespace) -> int:
    job = get_job(server, args.job)
    option = args.bookmark_option or (job.get("DefaultArguments") or {}).get(
        "--job-bookmark-option", "job-bookmark-disable")
    if not option.startswith("job-bookmark-"):
        option = "job-bookmark-" + option
    entry = get_bookmark(server, args.job)
    history = get_history(server, args.job)
    sources = known_sources(entry, history)
    window = pause_window(server, args, job, option)
    if window is not None:  # as the runtime does: the states as of the two runs bound each ctx
        sources = {ctx: (state, ctx in window[0]) for ctx, (state, _) in sources.items()}
    now_ms = int(time.time() * 1000)
    storage = prepare_storage(server, args)
    plans: Dict[str, Any] = {}
    for ctx, (state, current) in sorted(sources.items()):
        if args.ctx and ctx not in args.ctx:
            continue
        start = state if current else None
        end = None
        if window is not None:
            start = window[0].get(ctx)
            end = window[1].get(ctx) or {}
        kind = state.get("type", "s3")
        if kind == "jdbc":
            plan: Dict[str, Any] = {"type": "jdbc", "table": state.get("table"),
                                    "connection": state.get("connection"),
                                    "keys": state.get("keys"),
                                    "sort_order": state.get("sort_order", "asc"),
                                    "after": (start or {}).get("high") if
                                    option != "job-bookmark-disable" else None}
            if end is not None:
                plan["upto"] = end.get("high")
            if not args.no_count and not (end is not None and plan["upto"] is None):
                plan.update(jdbc_count(server, state, plan["after"], plan.get("upto")))
            elif not args.no_count:
                plan["rows"] = 0  # the window's end had no state for it: an empty window
        else:
            plan = plan_s3(ctx, state, start, option, now_ms, end)
        plan["in_current_state"] = current
        plans[ctx] = plan
    s3_via_api = "s3_endpoint" in storage and any(
        p.get("type") == "s3" and any(str(x).startswith("s3://") for x in p.get("paths") or [])
        for p in plans.values())
    if args.json:
        out = {"JobName": args.job, "BookmarkOption": option, "NowMs": now_ms,
               "Window": {"From": window[2], "To": window[3]} if window else None,
               "Version": (entry or {}).get("Version"), "Storage": storage, "Sources": plans}
        if s3_via_api:
            out["Warning"] = S3_API_WARNING
        print_json(out)
        return 0 if all("error" not in p for p in plans.values()) else 1
    print(f"job {args.job}: what the next run reads (bookmark option {option}"
          + (f", window --job-bookmark-from {window[2]} --job-bookmark-to {window[3]})"
             if window else ")"))
    if option == "job-bookmark-disable":
        print("  bookmarks are disabled for this run: every source is read in full "
              "(pass --bookmark-option enable to see what an enabled run would read)")
    if s3_via_api:
        print("  note: " + S3_API_WARNING)
    if not plans:
        print("  no recorded sources: no run of this job has committed a bookmark yet, so "
              "nothing says what it reads (the first enabled run reads everything)")
    failed = False
    for ctx, plan in plans.items():
        note = "" if plan["in_current_state"] else " (not in the current state: read in full)"
        if plan["type"] == "jdbc":
            after = plan.get("after")
            rng = (f"{json.dumps(plan['keys'])} {'>' if plan['sort_order'] == 'asc' else '<'} "
                   f"{json.dumps(after)}" if after is not None else "every row")
            if "upto" in plan:
                rng += (f", up to {json.dumps(plan['upto'])}" if plan["upto"] is not None
                        else ", nothing (the window's end has no state for it)")
            count = (f"{plan['rows']} rows" if "rows" in plan
                     else f"row count unknown ({plan.get('count_error', 'not asked')})")
            print(f"  {ctx} (jdbc {plan.get('table')}){note}: {rng}; {count}")
            continue
        if "error" in plan:
            failed = True
            print(f"  {ctx} (s3): {plan['error']}")
            continue
        where = (f"table {plan['table']}: " if plan.get("table") else "") + ", ".join(plan["paths"])
        print(f"  {ctx} (s3 {where}, {plan.get('format')}){note}: "
              f"{plan['count']} of {plan['listed']} listed objects, {fmt_bytes(plan['bytes'])}")
        shown = plan["objects"] if args.all else plan["objects"][:TEXT_OBJECT_LIMIT]
        for uri in shown:
            print(f"    {uri}")
        if len(shown) < len(plan["objects"]):
            print(f"    ... and {len(plan['objects']) - len(shown)} more (--all lists them)")
        if plan.get("new_state", {}).get("floor") is not None:
            print(f"    afterwards: high-water (floor) {fmt_ms(plan['new_state']['floor'])}, band "
                  f"{len(plan['new_state'].get('band') or [])} objects")
    return 1 if failed else 0


# ------------------------------------------------------------------------------------------------
# Command line

def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--endpoint-url", metavar="URL",
                        help="the OpenGlue server (default: $AWS_ENDPOINT_URL_GLUE, "
                             f"$OPENGLUE_ENDPOINT, {DEFAULT_ENDPOINT})")
    common.add_argument("--region", help="the region to sign for (default: the AWS config's, "
                                         "else us-east-1)")
    common.add_argument("--profile", help="an AWS profile for the credentials (default: the "
                                          "usual environment / ~/.aws chain)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    parser = argparse.ArgumentParser(
        prog="openglue bookmarks",
        description="Inspect a job's bookmark on an OpenGlue server: its state per "
                    "transformation_ctx, the history of commits and resets, the difference "
                    "between two runs, and what the next run would read. See docs/bookmarks.md.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    show = sub.add_parser("show", parents=[common], help="the state per transformation_ctx",
                          description="The job's current bookmark: counters (Version, Run, "
                                      "Attempt, RunId), and per transformation_ctx its state "
                                      "(S3: paths, high-water mark, band size; JDBC: keys and "
                                      "their high-water value) and the run that set it.")
    show.add_argument("job", metavar="JOB")
    hist = sub.add_parser("history", parents=[common], help="one line per commit or reset",
                          description="Every commit and reset of the job's bookmark, oldest "
                                      "first: which run, what each source read (objects or "
                                      "rows, bytes, the high-water marks).")
    hist.add_argument("job", metavar="JOB")
    diff = sub.add_parser("diff", parents=[common], help="state after RUN_A vs after RUN_B",
                          description="What changed per transformation_ctx between the state "
                                      "right after run RUN_A and right after run RUN_B, and what "
                                      "the runs in between read.")
    diff.add_argument("job", metavar="JOB")
    diff.add_argument("run_a", metavar="RUN_A")
    diff.add_argument("run_b", metavar="RUN_B")
    plan = sub.add_parser("plan", parents=[common], help="what the next run would read",
                          description="For each source the job read before (from its recorded "
                                      "state), list the storage now and compute with the "
                                      "runtime's own selection (openglue_runtime.bookmarks.s3_select) "
                                      "which objects the next run reads; for JDBC sources the "
                                      "key range and, when the connection is reachable, the "
                                      "number of rows above the high-water mark. Nothing is "
                                      "run or changed.")
    plan.add_argument("job", metavar="JOB")
    plan.add_argument("--bookmark-option", choices=["enable", "pause", "disable",
                                                    "job-bookmark-enable", "job-bookmark-pause",
                                                    "job-bookmark-disable"],
                      help="plan for this --job-bookmark-option (default: the job's "
                           "DefaultArguments, else disable)")
    plan.add_argument("--from", dest="from_run", metavar="RUN_ID",
                      help="with pause: the window's start, as --job-bookmark-from (default: "
                           "the job's DefaultArguments)")
    plan.add_argument("--to", dest="to_run", metavar="RUN_ID",
                      help="with pause: the window's end, as --job-bookmark-to (default: the "
                           "job's DefaultArguments)")
    plan.add_argument("--ctx", action="append", metavar="NAME",
                      help="only this transformation_ctx (repeatable)")
    plan.add_argument("--data-dir", metavar="DIR",
                      help="the server's data folder: s3:// is listed as its s3/ files, as job "
                           "runs list it (default: $OPENGLUE_DATA_DIR; exact: use it on the "
                           "server's machine)")
    plan.add_argument("--s3-root", metavar="DIR",
                      help="list s3://bucket/key as DIR/bucket/key (default: $OPENGLUE_S3_ROOT)")
    plan.add_argument("--s3-endpoint-url", metavar="URL",
                      help="without a data folder, list s3:// through this S3 endpoint "
                           "(default: $AWS_ENDPOINT_URL_S3, else the server's S3 API at the Glue "
                           "endpoint's port + 1; its times are whole seconds, see --data-dir)")
    plan.add_argument("--all", action="store_true", help="list every object (text output)")
    plan.add_argument("--no-count", action="store_true",
                      help="do not connect to JDBC databases to count rows")
    return parser


COMMANDS = {"show": cmd_show, "history": cmd_history, "diff": cmd_diff, "plan": cmd_plan}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        server = Server(endpoint_from(args), args.region, args.profile)
        return COMMANDS[args.command](server, args)
    except ToolError as e:
        print(f"openglue bookmarks: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
