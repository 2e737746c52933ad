"""Job bookmarks for S3 and local sources: which objects a run reads, and the state it leaves.

Everything here is a pure function of its arguments except the two service helpers at the end
(`BookmarkService`, `signed_call`), so `openglue bookmarks plan` computes exactly what a run
would read by calling the very same `s3_select` against a fresh listing.

## The model

An object *version* is identified by its uri and its last-modified time in milliseconds
(`mtime`): an object rewritten in place gets a newer mtime and is a new version, read again.
A bookmark state says which versions are *done* (read by a committed run):

    done(uri, mtime)  <=>  mtime <= floor   or   [uri, mtime] in band

`floor` is a time below which everything is done; `band` lists the done versions newer than the
floor one by one. A run whose listing starts at `now_ms` (the run's start time, `Job.init`):

1. candidates = the listed versions that are not done and whose mtime <= horizon, where
   horizon = max(now_ms, the previous state's `high`). A version newer than the horizon (still
   being written when the run started, or stamped by a clock ahead of ours) is left for a later
   run: deferring never loses anything, it only delays.
2. candidates are ordered oldest first (mtime, then uri); `boundedFiles` / `boundedSize` take a
   prefix of that order (see "bounds"); the cap on the band (`maxFilesInBand`) may shorten it
   further (see "the cap"). The prefix is what the run reads; the rest waits.
3. the new state: `high` = horizon; `floor` = max(old floor, min(horizon - maxBand,
   mtime of the oldest candidate left unread - 1)); `band` = every done version (the old band's
   and the ones read now) with mtime > the new floor.

Why the floor is horizon - maxBand and not the horizon itself: a listing does not show an object
the moment its mtime says. S3's last-modified is when the upload *started* (a multipart upload
of a large object is listed only once complete, minutes later), listings of other stores lag,
and a writer's clock may run behind. `maxBand` (default 900000 ms, Glue's 15 minutes) is how late
an object may appear in a listing relative to its mtime. Every version with mtime <= horizon -
maxBand is assumed to be listed by now, so it was either read now or before: the floor may move
there. A version with mtime in (horizon - maxBand, horizon] may still appear later, so the floor
stays below it and the versions already read in that band are remembered one by one: a late one
is then neither lost (it is above the floor and not in the band) nor read twice (the ones
already read are in the band). Choosing the floor from the run's *start* time rather than from
the newest mtime seen keeps this right when the store's clock and ours differ, and an object
being written while the run lists (mtime close to now) is either above the horizon (deferred) or
inside the band (picked up when it appears).
The floor also stays below the oldest candidate left unread (bounds, cap), so what waits is
never skipped, and it never moves back.

Invariant, by induction over committed runs (with the listing assumption above): every version
with mtime <= floor has been read exactly once; a version above the floor has been read exactly
once if it is in the band, and not at all otherwise. Hence every object version is read exactly
once, whatever the order in which versions appear in listings, as long as each appears within
maxBand of its mtime. The property tests in python/tests/test_bookmarks_select.py check it.

**State size**: the band holds only versions with mtime in (floor, horizon]; after a run that read
everything it was offered, that is (horizon - maxBand, horizon]: the objects modified in the
last maxBand before the run, never the total number processed. The cap bounds it in any case.

**Bounds** (`boundedFiles`, `boundedSize`: Glue's options): a run takes the oldest candidates
first, at most `boundedFiles` objects and at most `boundedSize` bytes in total, but always at
least one object when there is any (an object larger than boundedSize alone is read alone, so a
run always makes progress). The rest waits for the next run; the floor stays below the oldest
object left (step 3), so nothing waiting is skipped.

**The cap** (`maxFilesInBand`, default 1000): the band may hold at most that many versions. When
taking every candidate allowed by the bounds would remember more, the run takes the longest
oldest-first prefix that fits, and the newer objects inside the band wait for a later run (as
Glue documents: "extra files are skipped and only processed in the next job run"). Objects older
than horizon - maxBand never need remembering, so they are never held back by the cap: whatever
waits is read at the latest by the first run that starts maxBand after its mtime. When the
versions already remembered exceed a cap that was lowered between runs, they are kept (nothing
is forgotten, which could read them twice or lose a late one) and only objects that add nothing
to the band are read until they age out. One exception keeps runs making progress: when the
bounds cut through a group of objects sharing one mtime that is already older than the band
(so the floor cannot pass it yet) and the band is full, the run still takes that group's objects
(within the bounds) and the band exceeds the cap by them until the group is done.

**Pause windows**: `s3_select(files, start_state, end_state)` with an end state reads the listed
versions that are not done in `start_state` but are done in `end_state` (what the runs after
the start state's run up to the end state's run read), oldest first within the bounds; the cap
does not apply (nothing is remembered). The returned state is `end_state` unchanged (a pause run
commits nothing). An empty end state (`{}`: that ctx had no state then) makes an empty window;
`None` means no end.

**Pitfalls** (for docs/bookmarks.md): a version whose mtime is at or below the floor when it first
appears is never read: files copied with their old times preserved (`cp -p`, `rsync -a`,
`tar x`, `os.utime` into the past) into a bookmarked local path, or objects that appear more than
maxBand after their mtime; raise maxBand for stores whose listings lag more. The state belongs to
the transformation_ctx, not to the paths: pointing a ctx at another prefix keeps the floor, so
that prefix's older objects are skipped (rename the ctx, or reset, to read them). An object
deleted and re-created with the same mtime (in the same millisecond) is the same version.

## The state object (one per transformation_ctx inside the JobBookmark document)

    {"type": "s3", "v": 1,
     "paths": [...], "format": "csv",            # what the source read (from_catalog adds
     "database": "db", "table": "t",             #   database and table)
     "options": {"maxBand": 900000, ...},        # the source options used (plan replays them:
                                                 #   maxBand maxFilesInBand boundedFiles
                                                 #   boundedSize recurse exclusions)
     "high": 1764567000000,                      # the run's horizon (informational)
     "floor": 1764566100000,                     # done: every version with mtime <= floor
     "maxBand": 900000,                          # the band width the state was made with
     "band": [["s3://b/k/f1.csv", 1764566900000], ...]}   # done versions above the floor,
                                                 #   oldest first

A `None` or `{}` start state means nothing is done (a first run reads everything listed up to
its horizon). Unknown keys are kept as they are.

## For tools (`openglue bookmarks plan`)

What the next run of a ctx reads is `s3_select(listing, state, now_ms=<the run's start>,
**source_options(state.get("options")))` where `listing` is the engine's `list_files(paths,
{recurse, exclusions from state["options"]})` of `state["paths"]` (from_options), or of the
table's partitions (from_catalog: `state["database"]`, `state["table"]`, `state["location"]`,
`state["push_down_predicate"]`, `state["catalogPartitionPredicate"]` resolved with
`openglue_runtime.catalog.resolve_source`). A plan made at time P with `now_ms=P` predicts exactly what a
run starting at P would read; objects landing (or whose mtime falls) between P and the run's start
are read too by the run. Listing `s3://` must give the same mtimes as a run's listing (the
embedded store's files, millisecond times; the S3 API rounds LastModified to seconds). The
options recorded are the source's own (strings as the script gave them, e.g. "5");
`source_options` parses them. `is_done(state, uri, mtime)` answers for one version.

## Read summaries (OpenGlueCommitJobBookmark's `Reads`)

`reads_summary(selected, new_state)`: `{"type": "s3", "objects": n, "bytes": n, "high": horizon,
"floor": new floor, "first": [up to 3 uris]}`.
"""
import bisect
import json
import os
import urllib.error
import urllib.request
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

DEFAULT_MAX_BAND_MS = 900000
DEFAULT_MAX_FILES_IN_BAND = 1000
STATE_VERSION = 1

# The source options that matter to S3 bookmarks, as Glue spells them (connection_options of
# from_options, additional_options of from_catalog), and the listing options plan needs.
SELECT_OPTIONS = ("maxBand", "maxFilesInBand", "boundedFiles", "boundedSize")
LISTING_OPTIONS = ("recurse", "exclusions")

File = Tuple[str, int, int]  # (uri, size in bytes, mtime in ms)


class BookmarkStateError(ValueError):
    """A bookmark state object is not an S3 state this module can use."""


class _State:
    """A parsed S3 state: floor (None: nothing below a floor is done), band set, high."""

    def __init__(self, obj: Optional[Dict[str, Any]], what: str = "bookmark state"):
        self.obj: Dict[str, Any] = dict(obj or {})
        self.floor: Optional[int] = None
        self.high: Optional[int] = None
        self.entries: List[Tuple[int, str]] = []  # (mtime, uri), sorted
        if not self.obj:
            return
        kind = self.obj.get("type", "s3")
        if kind not in ("s3", "file", "local"):
            raise BookmarkStateError(
                f"{what} is a {kind!r} state, not an S3 one: the transformation_ctx was used for "
                "another kind of source (rename the ctx or reset the job's bookmark)")
        try:
            if self.obj.get("floor") is not None:
                self.floor = int(self.obj["floor"])
            if self.obj.get("high") is not None:
                self.high = int(self.obj["high"])
            band = self.obj.get("band") or []
            entries = set()
            for item in band:
                uri, mtime = item[0], item[1]
                if not isinstance(uri, str):
                    raise TypeError("uri")
                entries.add((int(mtime), uri))
        except (TypeError, ValueError, IndexError, KeyError):
            raise BookmarkStateError(f"{what} is damaged (floor, high or band unreadable): "
                                     "reset the job's bookmark") from None
        self.entries = sorted(entries)
        self._set = {(u, m) for m, u in self.entries}

    def done(self, uri: str, mtime: int) -> bool:
        if self.floor is not None and mtime <= self.floor:
            return True
        return bool(self.entries) and (uri, mtime) in self._set


def _as_int(value: Any, name: str, minimum: int) -> Optional[int]:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {number}")
    return number


def source_options(options: Optional[Dict[str, Any]]) -> Dict[str, Optional[int]]:
    """The keyword arguments of s3_select from a source's options as Glue reads them
    (`maxBand`, `maxFilesInBand`, `boundedFiles`, `boundedSize`: numbers or their text).
    Raises ValueError naming a malformed one."""
    options = options or {}
    max_band = _as_int(options.get("maxBand"), "maxBand", 0)
    return {
        "max_band_ms": DEFAULT_MAX_BAND_MS if max_band is None else max_band,
        "max_files_in_band": _as_int(options.get("maxFilesInBand"), "maxFilesInBand", 0),
        "bounded_files": _as_int(options.get("boundedFiles"), "boundedFiles", 1),
        "bounded_size": _as_int(options.get("boundedSize"), "boundedSize", 1),
    }


def _dedupe(files: Iterable[Sequence[Any]]) -> List[File]:
    seen = set()
    out: List[File] = []
    for f in files:
        uri, size, mtime = str(f[0]), int(f[1]), int(f[2])
        if (uri, mtime) in seen:
            continue
        seen.add((uri, mtime))
        out.append((uri, size, mtime))
    return out


def _bounded_prefix(candidates: List[File], bounded_files: Optional[int],
                    bounded_size: Optional[int]) -> int:
    """How many of `candidates` (oldest first) the bounds allow; at least one when any."""
    k = len(candidates)
    if bounded_files is not None:
        k = min(k, bounded_files)
    if bounded_size is not None:
        total = 0
        for i in range(k):
            total += candidates[i][1]
            if total > bounded_size and i > 0:
                k = i
                break
    return k


def s3_select(files: Iterable[Sequence[Any]], start_state: Optional[Dict[str, Any]],
              end_state: Optional[Dict[str, Any]] = None, *, now_ms: int,
              max_band_ms: int = DEFAULT_MAX_BAND_MS, max_files_in_band: Optional[int] = None,
              bounded_files: Optional[int] = None, bounded_size: Optional[int] = None
              ) -> Tuple[List[File], Dict[str, Any]]:
    """What a run reads from `files` ([(uri, size, mtime_ms)], one listing) and the state it
    leaves (see the module's docstring for the model).

    `start_state`: the ctx's state when the run started (None or {}: nothing done).
    `end_state`: for a pause window (`--job-bookmark-from/--job-bookmark-to`), the ctx's state as
    of the window's end; None otherwise. `now_ms`: the run's start. `max_files_in_band`: None is
    the default cap (DEFAULT_MAX_FILES_IN_BAND). Returns (the selected files in listing order,
    the new state: a fresh dict holding start_state's other keys, e.g. paths and format).
    """
    band = max(0, int(max_band_ms))
    cap = DEFAULT_MAX_FILES_IN_BAND if max_files_in_band is None else max(0, int(max_files_in_band))
    start = _State(start_state, "the start state")
    listing = _dedupe(files)
    now_ms = int(now_ms)

    if end_state is not None:
        end = _State(end_state, "the end state")
        window = sorted((f for f in listing if not start.done(f[0], f[2]) and end.done(f[0], f[2])),
                        key=lambda f: (f[2], f[0]))
        taken = window[:_bounded_prefix(window, bounded_files, bounded_size)]
        keep = {(u, m) for u, _, m in taken}
        return ([f for f in listing if (f[0], f[2]) in keep],
                json.loads(json.dumps(end_state)) if end_state else {})

    horizon = now_ms if start.high is None else max(now_ms, start.high)
    candidates = sorted((f for f in listing if f[2] <= horizon and not start.done(f[0], f[2])),
                        key=lambda f: (f[2], f[0]))
    cand_m = [f[2] for f in candidates]
    old_m = [m for m, _ in start.entries]
    low = start.floor  # None: -infinity

    def floor_for(k: int) -> int:
        limit = horizon - band
        if k < len(candidates):
            limit = min(limit, cand_m[k] - 1)
        return limit if low is None else max(low, limit)

    def remembered(k: int, floor: int) -> int:
        kept_old = len(old_m) - bisect.bisect_right(old_m, floor)
        kept_new = k - bisect.bisect_right(cand_m, floor, 0, k)
        return kept_old + max(0, kept_new)

    bounded = k = _bounded_prefix(candidates, bounded_files, bounded_size)
    allowed = max(cap, remembered(0, floor_for(0)))
    while k > 0 and remembered(k, floor_for(k)) > allowed:
        k -= 1
    if k == 0 and bounded > 0 and cand_m[0] <= horizon - band:
        # The oldest candidate needs no remembering by its age, only because the bounds cut
        # through the objects sharing its mtime: waiting would not help, so take (within the
        # bounds) from that group and let the band exceed the cap for it.
        k = min(bounded, bisect.bisect_right(cand_m, cand_m[0]))
    floor = floor_for(k)
    taken = candidates[:k]

    band_entries = sorted({(m, u) for m, u in start.entries if m > floor}
                          | {(m, u) for u, _, m in taken if m > floor})
    state = {key: value for key, value in start.obj.items()
             if key not in ("type", "v", "high", "floor", "maxBand", "band")}
    state.update({"type": "s3", "v": STATE_VERSION, "high": horizon, "floor": floor,
                  "maxBand": band, "band": [[u, m] for m, u in band_entries]})
    keep = {(u, m) for u, _, m in taken}
    return [f for f in listing if (f[0], f[2]) in keep], state


def is_done(state: Optional[Dict[str, Any]], uri: str, mtime_ms: int) -> bool:
    """Whether the version (uri, mtime_ms) is done (read by a committed run) in `state`."""
    return _State(state).done(uri, int(mtime_ms))


def reads_summary(selected: Sequence[Sequence[Any]],
                  new_state: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The small summary of an S3 read kept in the bookmark history (`Reads`)."""
    summary: Dict[str, Any] = {
        "type": "s3", "objects": len(selected),
        "bytes": sum(int(f[1]) for f in selected),
        "first": [str(f[0]) for f in sorted(selected, key=lambda f: (int(f[2]), str(f[0])))[:3]],
    }
    if new_state:
        if new_state.get("high") is not None:
            summary["high"] = new_state["high"]
        if new_state.get("floor") is not None:
            summary["floor"] = new_state["floor"]
    return summary


# ---------------------------------------------------------------------------------------------
# Talking to the server: GetJobBookmark (boto3) and the OpenGlue extension operations (a SigV4
# signed POST: they are not in botocore's service model).

class BookmarkServiceError(RuntimeError):
    """A bookmark call failed: `code` is the Glue error name (or a transport error's name)."""

    def __init__(self, code: str, message: str, status: int = 0):
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message
        self.status = status


def _endpoint(environ=None) -> str:
    env = os.environ if environ is None else environ
    return env.get("AWS_ENDPOINT_URL_GLUE") or env.get("AWS_ENDPOINT_URL") or ""


def _region(environ=None) -> str:
    env = os.environ if environ is None else environ
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"


def signed_call(operation: str, body: Dict[str, Any], *, endpoint: Optional[str] = None,
                region: Optional[str] = None, credentials=None,
                timeout: float = 30.0) -> Dict[str, Any]:
    """POSTs `body` as Glue operation `operation` (X-Amz-Target AWSGlue.<operation>, JSON 1.1)
    to `endpoint` (default: AWS_ENDPOINT_URL_GLUE, else AWS_ENDPOINT_URL), signed with SigV4 for
    service "glue" in `region` with `credentials` (a botocore Credentials; default: what botocore
    finds in the environment, e.g. a job run's own keys). Returns the response object; raises
    BookmarkServiceError with the Glue error name of an error response, or with the transport
    error. Used for the extension operations (OpenGlueCommitJobBookmark,
    OpenGlueGetJobBookmarkHistory); `openglue bookmarks` reuses it."""
    import botocore.session
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    endpoint = endpoint or _endpoint()
    if not endpoint:
        raise BookmarkServiceError("NoEndpoint", "no Glue endpoint: set AWS_ENDPOINT_URL_GLUE")
    if credentials is None:
        credentials = botocore.session.get_session().get_credentials()
        if credentials is None:
            raise BookmarkServiceError("NoCredentials", "no AWS credentials in the environment")
    url = endpoint.rstrip("/") + "/"
    data = json.dumps(body, separators=(",", ":")).encode("utf-8")
    request = AWSRequest(method="POST", url=url, data=data, headers={
        "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": f"AWSGlue.{operation}"})
    SigV4Auth(credentials, "glue", region or _region()).add_auth(request)
    prepared = request.prepare()
    http = urllib.request.Request(prepared.url, data=data, method="POST",
                                  headers={k: v for k, v in prepared.headers.items()})
    try:
        with urllib.request.urlopen(http, timeout=timeout) as response:
            text = response.read()
    except urllib.error.HTTPError as e:
        raw = e.read()
        code, message = "", raw.decode("utf-8", "replace")[:500]
        try:
            err = json.loads(raw)
            code = str(err.get("__type", "")).rsplit("#", 1)[-1]
            message = str(err.get("message") or err.get("Message") or message)
        except ValueError:
            pass
        raise BookmarkServiceError(code or f"HTTP{e.code}", message, e.code) from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise BookmarkServiceError("ConnectionError", f"{url}: {reason}") from None
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        raise BookmarkServiceError("InvalidResponse",
                                   f"{operation}: the response is not JSON") from None


def parse_job_bookmark(entry: Dict[str, Any]) -> Dict[str, Any]:
    """The ctx -> state object of a JobBookmarkEntry (its `JobBookmark` is a JSON string)."""
    text = (entry or {}).get("JobBookmark") or "{}"
    try:
        doc = json.loads(text) if isinstance(text, str) else dict(text)
    except ValueError:
        raise BookmarkStateError("the job's bookmark is not a JSON object: reset it") from None
    if not isinstance(doc, dict):
        raise BookmarkStateError("the job's bookmark is not a JSON object: reset it")
    return doc


class BookmarkService:
    """The run's side of the server's bookmark operations, with the environment's credentials."""

    def __init__(self, glue_client=None, endpoint: Optional[str] = None,
                 region: Optional[str] = None, credentials=None):
        self._client = glue_client
        self._endpoint = endpoint
        self._region = region
        self._credentials = credentials

    def _glue(self):
        if self._client is None:
            from openglue_runtime.catalog import glue_client
            self._client = glue_client()
        return self._client

    def get(self, job_name: str, run_id: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The job's bookmark (ctx -> state) now, or as of `run_id`; None when the server has
        none (EntityNotFoundException). Other errors: BookmarkServiceError."""
        import botocore.exceptions
        kwargs = {"JobName": job_name}
        if run_id:
            kwargs["RunId"] = run_id
        try:
            response = self._glue().get_job_bookmark(**kwargs)
        except botocore.exceptions.ClientError as e:
            error = e.response.get("Error", {})
            code = error.get("Code", "")
            if code == "EntityNotFoundException":
                return None
            raise BookmarkServiceError(code, error.get("Message", str(e))) from None
        except botocore.exceptions.BotoCoreError as e:
            raise BookmarkServiceError("ConnectionError", str(e)) from None
        return parse_job_bookmark(response.get("JobBookmarkEntry") or {})

    def commit(self, job_name: str, run_id: str, states: Dict[str, Any],
               reads: Dict[str, Any]) -> Dict[str, Any]:
        """OpenGlueCommitJobBookmark: the new states of the contexts this run read. Returns the
        JobBookmarkEntry; raises BookmarkServiceError."""
        body = {"JobName": job_name, "RunId": run_id,
                "JobBookmark": json.dumps(states, separators=(",", ":"), sort_keys=True),
                "Reads": reads}
        response = signed_call("OpenGlueCommitJobBookmark", body, endpoint=self._endpoint,
                               region=self._region, credentials=self._credentials)
        return response.get("JobBookmarkEntry") or {}
