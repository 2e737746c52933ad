"""The Job object of a Glue script: init() at the start, commit() at the end.

    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    ...
    job.commit()

Job bookmarks (issue 9) live here on the runtime side:
- `init()` loads the job's bookmark once, in a job run (`OPENGLUE_JOB_RUN_ID` set) whose
  `--job-bookmark-option` is enable or pause: GetJobBookmark with the run's own credentials
  (EntityNotFoundException: no state yet, everything is new); with `--job-bookmark-from A
  --job-bookmark-to B` (pause only) the states as of runs A and B (GetJobBookmark RunId=...).
- every source read with a `transformation_ctx` asks `select_new(ctx, files, options)` which of
  the files it listed to read (S3 and local sources: `openglue_runtime.bookmarks.s3_select` with the
  source's `maxBand`, `maxFilesInBand`, `boundedFiles`, `boundedSize`), then reports what it read
  with `register_source(ctx, info)` (JDBC sources pass their new state as `info["state"]`).
- `commit()` with enable sends the new states of the contexts read in this run
  (OpenGlueCommitJobBookmark, signed by the run's credentials); pause and disable send nothing.
  A commit the server refuses makes commit() raise, so the run fails: its input is read again
  by the next run (at-least-once). commit() also records the run's sources in the run's working
  folder (`openglue-job.json`) and prints one line into the run's log.
Outside a job run nothing is loaded or sent: every input counts as new.

The sources' hooks find the job through `openglue_runtime.run_state.current_job()` (re-exported
here): the Job that init() was last called on in this process (Glue scripts have one).
"""
import copy
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from openglue_runtime import bookmarks, run_state
from openglue_runtime.run_state import current_job  # noqa: F401  (the running Job)
from awsglue.utils import (BOOKMARK_CHOICES, BOOKMARK_DISABLE, BOOKMARK_ENABLE, BOOKMARK_FROM,
                           BOOKMARK_OPTION, BOOKMARK_PAUSE, BOOKMARK_TO, GlueArgumentError)
from awsglue.utils import _parse as _parse_args

# The file commit() writes in the run's working folder (a job run's current directory).
STATE_FILE = "openglue-job.json"

# Makes the object that talks to the server's bookmark operations (tests replace it).
service_factory = bookmarks.BookmarkService

# The source info keys kept in an S3 ctx's state (what `openglue bookmarks plan` replays). A
# catalog source keeps its table, location and predicates, not its partitions' folders (the
# state must not grow with the table).
_STATE_KEYS = ("paths", "format", "database", "table", "location", "push_down_predicate",
               "catalogPartitionPredicate")


def _in_job_run() -> bool:
    """Whether this process is a job run started by an OpenGlue server (not a unit test)."""
    return bool(os.environ.get("OPENGLUE_JOB_RUN_ID"))


class Job:
    """A job run as seen from its script."""

    def __init__(self, glue_context=None):
        self._context = glue_context
        self.name: Optional[str] = None
        self.args: Dict[str, str] = {}
        self.committed = False
        self._sources: Dict[str, Dict[str, Any]] = {}
        self._source_lock = threading.Lock()
        self._started_ms: Optional[int] = None
        self._loaded: Dict[str, Any] = {}  # ctx -> state when the run started (or as of --from)
        self._loaded_end: Optional[Dict[str, Any]] = None  # ctx -> state as of --to (pause)
        self._listed: Dict[str, List[Tuple[str, int, int]]] = {}  # ctx -> files listed
        self._new_states: Dict[str, Dict[str, Any]] = {}  # ctx -> state for the commit
        self._reads: Dict[str, Dict[str, Any]] = {}  # ctx -> read summary for the commit

    # -- Glue's API ------------------------------------------------------------------------------

    def init(self, job_name: str, args: Optional[Dict[str, str]] = None) -> None:
        """Starts the job's work: `job_name` is the job (args["JOB_NAME"]), `args` the resolved
        arguments. Validates the bookmark options found in `args` (GlueArgumentError)."""
        if not job_name:
            raise ValueError("Job.init() needs the job's name (args['JOB_NAME'])")
        args = dict(args or {})
        # Scripts pass getResolvedOptions(sys.argv, ["JOB_NAME"]), which holds only what they
        # asked for: as in Glue, the bookmark options come from the run's command line too.
        if BOOKMARK_OPTION not in args:
            command_line = _parse_args(sys.argv)
            for key in (BOOKMARK_OPTION, BOOKMARK_FROM, BOOKMARK_TO):
                if key not in args and command_line.get(key) is not None:
                    args[key] = command_line[key]
        option = args.get(BOOKMARK_OPTION, BOOKMARK_DISABLE)
        if option not in BOOKMARK_CHOICES:
            raise GlueArgumentError(
                f"argument --{BOOKMARK_OPTION}: invalid choice: '{option}'")
        if (BOOKMARK_FROM in args or BOOKMARK_TO in args) and option != BOOKMARK_PAUSE:
            raise GlueArgumentError(
                f"--{BOOKMARK_FROM} and --{BOOKMARK_TO} can only be used with "
                f"--{BOOKMARK_OPTION} {BOOKMARK_PAUSE}")
        self.name = str(job_name)
        self.args = args
        self.committed = False
        self._started_ms = int(time.time() * 1000)
        with self._source_lock:
            self._sources, self._listed, self._new_states, self._reads = {}, {}, {}, {}
        self._loaded, self._loaded_end = {}, None
        if _in_job_run() and option != BOOKMARK_DISABLE:
            self._load_bookmark(option)
        run_state.set_current_job(self)

    def _load_bookmark(self, option: str) -> None:
        """Loads the job's bookmark state(s) from the server (see the module's docstring)."""
        service = service_factory()
        start_run, end_run = self.args.get(BOOKMARK_FROM), self.args.get(BOOKMARK_TO)
        try:
            if option == BOOKMARK_PAUSE and (start_run or end_run):
                self._loaded = self._load_as_of(service, BOOKMARK_FROM, start_run)
                self._loaded_end = self._load_as_of(service, BOOKMARK_TO, end_run)
            else:
                self._loaded = service.get(self.name) or {}
        except bookmarks.BookmarkServiceError as e:
            raise RuntimeError(f"job.init(): cannot load the job bookmark of {self.name}: "
                               f"{e}") from None
        except bookmarks.BookmarkStateError as e:
            raise RuntimeError(f"job.init(): {e}") from None
        contexts = ", ".join(sorted(self._loaded)) or "none"
        window = (f" (window --{BOOKMARK_FROM} {start_run} --{BOOKMARK_TO} {end_run})"
                  if self._loaded_end is not None else "")
        print(f"[openglue] job.init(): job {self.name} bookmark {option}{window}; "
              f"contexts with state: {contexts}", flush=True)

    def _load_as_of(self, service, what: str, run_id: Optional[str]) -> Dict[str, Any]:
        if not run_id:
            raise GlueArgumentError(f"--{BOOKMARK_FROM} and --{BOOKMARK_TO} must be given together")
        try:
            state = service.get(self.name, run_id=run_id)
        except bookmarks.BookmarkServiceError as e:
            raise bookmarks.BookmarkServiceError(e.code, f"--{what} {run_id}: {e.message}",
                                                 e.status) from None
        if state is None:
            raise bookmarks.BookmarkServiceError(
                "EntityNotFoundException",
                f"--{what} {run_id}: the job has no bookmark state as of that run")
        return state

    def commit(self) -> None:
        """Marks the successful end of the script's work. With `job-bookmark-enable` in a job
        run, the new bookmark states of the contexts read are sent to the server; if it refuses
        (or cannot be reached), this raises RuntimeError and the run fails. Also records the
        run's sources (see the module's docstring). A second call does nothing more."""
        if self.name is None:
            raise RuntimeError("Job.commit() called before Job.init()")
        if self.committed:
            print(f"[openglue] job.commit(): job {self.name} was already committed in this run; "
                  "nothing more is sent", flush=True)
            return
        record = self._record()
        states, reads = self.bookmark_update()
        sent = ""
        if _in_job_run():
            try:
                tmp = STATE_FILE + ".tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(record, f, indent=1, sort_keys=True)
                os.replace(tmp, STATE_FILE)
            except OSError as e:
                print(f"[openglue] job.commit(): could not write {STATE_FILE}: {e}",
                      file=sys.stderr)
            if self.bookmark_option == BOOKMARK_ENABLE:
                try:
                    entry = service_factory().commit(self.name, record["run_id"], states, reads)
                except bookmarks.BookmarkServiceError as e:
                    raise RuntimeError(
                        f"job.commit(): the job bookmark of {self.name} was not saved ({e}); "
                        "the next run will read this run's input again") from None
                sent = (f"; bookmark saved (version {entry.get('Version', '?')}, "
                        f"run {entry.get('Run', '?')})")
        self.committed = True
        summary = ", ".join(f"{ctx} ({_describe(info)})" for ctx, info in record["sources"].items())
        print(f"[openglue] job.commit(): job {self.name} run {record['run_id'] or '-'} committed"
              f" (bookmark option {record['bookmark_option']}); sources: {summary or 'none'}"
              f"{sent}", flush=True)

    # -- bookmark hooks (OpenGlue) ---------------------------------------------------------------

    @property
    def bookmark_option(self) -> str:
        """The run's `--job-bookmark-option` (job-bookmark-disable when not given)."""
        return self.args.get(BOOKMARK_OPTION, BOOKMARK_DISABLE)

    def bookmark_bounds(self, transformation_ctx: Optional[str]
                        ) -> Tuple[Optional[Dict[str, Any]], Optional[Dict[str, Any]]]:
        """(start state, end state) of `transformation_ctx` for this run:
        disable or no ctx: (None, None), read everything; enable, or pause without a window:
        (the ctx's state when the run started, or None when it has none, None): read what is
        new; pause with --job-bookmark-from A --job-bookmark-to B: (the ctx's state as of run A
        or None, its state as of run B or {} when it had none then): read what is new after A
        and not after B ({} as the end: an empty window)."""
        if not transformation_ctx or self.bookmark_option == BOOKMARK_DISABLE:
            return None, None
        start = copy.deepcopy(self._loaded.get(transformation_ctx))
        if self._loaded_end is None:
            return start, None
        return start, copy.deepcopy(self._loaded_end.get(transformation_ctx) or {})

    def select_new(self, transformation_ctx: Optional[str],
                   files: Sequence[Tuple[str, int, int]],
                   options: Optional[Dict[str, Any]] = None) -> List[Tuple[str, int, int]]:
        """The subset of `files` (uri, size, mtime_ms) that a storage source with
        `transformation_ctx` reads in this run, in listing order. `options`: the source's info
        and options (paths, format, database, table; maxBand, maxFilesInBand, boundedFiles,
        boundedSize, recurse, exclusions as Glue spells them). Every file with bookmarks disabled
        or without a ctx; else `openglue_runtime.bookmarks.s3_select` against the ctx's bounds, and the
        ctx's new state is kept for the commit. A ctx listed twice in one run is selected over
        the union of its listings."""
        files = [(str(u), int(s), int(m)) for u, s, m in files]
        if not transformation_ctx or self.bookmark_option == BOOKMARK_DISABLE:
            return files
        options = dict(options or {})
        kwargs = bookmarks.source_options(options)
        start, end = self.bookmark_bounds(transformation_ctx)
        now_ms = self._started_ms if self._started_ms is not None else int(time.time() * 1000)
        with self._source_lock:
            listed = self._listed.setdefault(transformation_ctx, [])
            known = set(listed)
            listed.extend(f for f in files if f not in known)
            union = list(listed)
        try:
            selected, state = bookmarks.s3_select(union, start, end, now_ms=now_ms, **kwargs)
        except bookmarks.BookmarkStateError as e:
            raise RuntimeError(f"source {transformation_ctx!r}: {e}") from None
        if end is None:
            for key in _STATE_KEYS:
                if options.get(key) is not None and not (key == "paths" and "table" in options):
                    state[key] = copy.deepcopy(options[key])
            used = {k: options[k] for k in bookmarks.SELECT_OPTIONS + bookmarks.LISTING_OPTIONS
                    if options.get(k) is not None}
            if used:
                state["options"] = json.loads(json.dumps(used, default=str))
            else:
                state.pop("options", None)
        keep = {(u, m) for u, _, m in selected}
        with self._source_lock:
            self._new_states[transformation_ctx] = state
            self._reads[transformation_ctx] = bookmarks.reads_summary(selected, state)
        return [f for f in files if (f[0], f[2]) in keep]

    def register_source(self, transformation_ctx: Optional[str],
                        source_info: Dict[str, Any]) -> None:
        """Records what a source read in this run, for the bookmark commit.

        `source_info` is a JSON-able dict. For storage sources:
        `{"type": "s3", "paths": [...], "files": [[uri, size, mtime_ms], ...], "format": "csv"}`
        (from_catalog adds "database" and "table"); for JDBC sources (issue 9):
        `{"type": "jdbc", "table": .., "keys": [..], "sort_order": "asc", "low": [..],
        "high": [..], "rows": n, "state": {...}}`. `info["state"]`, when given, is the ctx's
        new bookmark state for the commit (a source that computes its own, e.g. JDBC; its read
        summary is made of "type", "rows", "objects", "bytes", "high", "first"); storage
        sources get theirs from select_new. A source without a transformation_ctx takes no part
        in bookmarks (as in Glue) and is not recorded. Registering the same ctx again extends
        its record (the files are added, other keys replaced).
        """
        if not transformation_ctx:
            return
        info = copy.deepcopy(dict(source_info))
        state = info.pop("state", None)
        with self._source_lock:
            if state is not None:  # a source that computes its own state (JDBC)
                self._new_states[transformation_ctx] = copy.deepcopy(state)
                self._reads[transformation_ctx] = _jdbc_summary(info)
            previous = self._sources.get(transformation_ctx)
            if previous is not None and "files" in previous and "files" in info:
                known = {tuple(f) for f in previous["files"]}
                info["files"] = list(previous["files"]) + [
                    f for f in info["files"] if tuple(f) not in known]
            self._sources[transformation_ctx] = info

    def bookmark_update(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(ctx -> new state, ctx -> read summary) of the contexts read in this run: what
        commit() sends with enable (a copy)."""
        with self._source_lock:
            return copy.deepcopy(self._new_states), copy.deepcopy(self._reads)

    def sources(self) -> Dict[str, Dict[str, Any]]:
        """What each transformation_ctx read in this run (a copy)."""
        with self._source_lock:
            return copy.deepcopy(self._sources)

    def _record(self) -> Dict[str, Any]:
        return {
            "job_name": self.name,
            "run_id": os.environ.get("OPENGLUE_JOB_RUN_ID") or self.args.get("JOB_RUN_ID", ""),
            "bookmark_option": self.bookmark_option,
            "started_ms": self._started_ms,
            "committed_ms": int(time.time() * 1000),
            "sources": self.sources(),
        }


def _jdbc_summary(info: Dict[str, Any]) -> Dict[str, Any]:
    """The read summary of a source that passed its own state (JDBC): its type, rows, high."""
    summary = {"type": info.get("type", "jdbc")}
    for key in ("rows", "objects", "bytes", "high", "first"):
        if info.get(key) is not None:
            summary[key] = copy.deepcopy(info[key])
    return summary


def _describe(info: Dict[str, Any]) -> str:
    if "files" in info:
        files = info["files"]
        return f"{len(files)} objects, {sum(int(f[1]) for f in files)} bytes"
    if "rows" in info:
        return f"{info['rows']} rows"
    return info.get("type", "source")
