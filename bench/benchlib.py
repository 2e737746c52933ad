"""What the benchmarks share: bench/catalog/run.py and bench/jobs/run.py import this module.

Logging, the machine's and a process's CPU use (from /proc), the OpenGlue server process (start on
a free port, stop, version), percentiles and the number formats of the reports, the command-line
options both take, and the rewrite of one benchmark's marked section of docs/benchmarks.md.
Standard library only. The scripts run as `python3 bench/<name>/run.py`, so each puts bench/ on
sys.path before importing this.
"""
import contextlib
import datetime
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DOC = os.path.join(ROOT, "docs", "benchmarks.md")
ACCESS_KEY = "test"
SECRET_KEY = "test"
REGION = "us-east-1"
HOST = "127.0.0.1"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Machine

def cpu_seconds(pid):
    """User + system CPU seconds of a process (not its children), from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy_seconds():
    """CPU-seconds all processes of the machine spent busy so far (/proc/stat), or None."""
    try:
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError):
        return None


def machine_info(wrk=False):
    """nproc, CPU model, memory, kernel and Python version; with wrk=True also wrk's version."""
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = [l for l in open("/proc/meminfo") if l.startswith("MemTotal")][0].split()[1]
        mem_gb = f"{int(mem) / 1024 / 1024:.0f} GB"
    except (OSError, IndexError):
        mem_gb = "?"
    info = {"nproc": os.cpu_count(), "cpu": model, "memory": mem_gb, "kernel": platform.release(),
            "python": platform.python_version()}
    if wrk:
        info["wrk"] = "?"
        if shutil.which("wrk"):
            out = subprocess.run(["wrk", "--version"], capture_output=True, text=True)
            info["wrk"] = (out.stdout + out.stderr).split("[")[0].replace("wrk", "").strip() or "?"
    return info


def machine_text(info):
    """The report's `Machine: ...` sentence (with wrk's version when info has it)."""
    return (f"Machine: `nproc` = {info['nproc']}, CPU model `{info['cpu']}` (/proc/cpuinfo), "
            f"{info['memory']} RAM, Linux {info['kernel']}, Python {info['python']}"
            + (f", wrk {info['wrk']}" if "wrk" in info else "") + ".")


def begin_run(wrk=False):
    """(start time `YYYY-MM-DD HH:MM` UTC, machine_info), after logging the machine."""
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = machine_info(wrk=wrk)
    log(f"machine: {info['nproc']} CPUs, {info['cpu']}; load average {loadavg()}")
    return started, info


@contextlib.contextmanager
def work_directory(prefix, keep):
    """A fresh temporary directory, removed afterwards unless keep (then its path is logged)."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    try:
        yield workdir
    finally:
        if keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# Servers

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def require_binary(path):
    if not os.access(path, os.X_OK):
        raise SystemExit(f"no OpenGlue binary at {path}: run `make build` or set OPENGLUE_BIN")


class ServerProcess:
    """A server the benchmark starts and stops; its output goes to <workdir>/<log_name>."""
    name = "server"

    def __init__(self, workdir, log_name=None):
        self.workdir = workdir
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, log_name or f"{self.name}.log")

    @property
    def endpoint(self):
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self):
        return self.proc.pid

    def cpu(self):
        return cpu_seconds(self.proc.pid)

    def log_tail(self):
        try:
            return open(self.log_path, errors="replace").read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def _wait_tcp(self, deadline):
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start in time: {self.log_tail()}")


class OpenGlueServer(ServerProcess):
    """`openglue serve` on a free port of 127.0.0.1 (read from --port-file) over <workdir>/data.
    extra_args go at the end of the command line; with copy_binary the binary is first copied to
    <workdir>/openglue and run from there, so a concurrent rebuild cannot swap it mid-run."""
    name = "openglue"

    def __init__(self, workdir, binary, extra_args=(), copy_binary=False, log_name=None):
        super().__init__(workdir, log_name)
        self.source_binary = binary
        self.binary = os.path.join(workdir, "openglue") if copy_binary else binary
        self.extra_args = list(extra_args)
        self.data_dir = os.path.join(workdir, "data")

    def start(self):
        if self.binary != self.source_binary:
            shutil.copy2(self.source_binary, self.binary)
        os.makedirs(self.data_dir, exist_ok=True)
        if os.geteuid() == 0:
            # A server running as root starts job runs as unprivileged users, and refuses to
            # start when they cannot traverse to its data folder: the temporary folders above
            # it (mkdtemp: 0700) get search permission for others (x only, no listing).
            tmp = os.path.realpath(tempfile.gettempdir())
            folder = os.path.realpath(self.data_dir)
            while folder.startswith(tmp + os.sep):
                mode = os.stat(folder).st_mode
                if not mode & 0o001:
                    os.chmod(folder, mode | 0o011)
                folder = os.path.dirname(folder)
        port_file = os.path.join(self.workdir, "port")
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--port", "0", "--host", HOST, "--data-dir", self.data_dir,
                 "--port-file", port_file, "--access-key-id", ACCESS_KEY,
                 "--region", REGION, *self.extra_args],
                # The secret goes through the environment: a command line is public.
                env={**os.environ, "OPENGLUE_SECRET_ACCESS_KEY": SECRET_KEY},
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"openglue exited with {self.proc.returncode}: {self.log_tail()}")
            if os.path.exists(port_file):
                text = open(port_file).read().strip()
                if text:
                    self.port = int(text)
                    self._wait_tcp(deadline)
                    return self
            time.sleep(0.02)
        raise RuntimeError("openglue did not start in 30 s: " + self.log_tail())

    def version(self):
        """`openglue version`, the binary's hash and build time, and the source tree's commit."""
        try:
            text = subprocess.run([self.source_binary, "version"], capture_output=True, text=True,
                                  timeout=10).stdout.strip() or "openglue ?"
        except Exception:  # noqa: BLE001 - informational only
            text = "openglue ?"
        try:
            digest = hashlib.sha256(open(self.source_binary, "rb").read()).hexdigest()[:12]
            built = datetime.datetime.fromtimestamp(os.path.getmtime(self.source_binary),
                                                    datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
            text += f", binary sha256 {digest}… built {built} UTC"
        except OSError:
            pass
        try:
            # Read-only git commands (no index refresh).
            head = subprocess.run(["git", "--no-optional-locks", "-C", ROOT, "rev-parse", "--short",
                                   "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
            dirty = subprocess.run(["git", "--no-optional-locks", "-C", ROOT, "status", "--porcelain",
                                    "--untracked-files=no", "--", "src", "CMakeLists.txt"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            if head:
                text += f", source tree at commit {head}" + (" with uncommitted changes" if dirty else "")
        except Exception:  # noqa: BLE001 - no git, no matter
            pass
        return text


# ----------------------------------------------------------------------------------------------
# Statistics and report cells

def percentile(values, p, empty=None):
    """The p-th percentile (0 to 100, linear between neighbours) of values, None entries skipped;
    `empty` when there are none."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return empty
    k = (len(values) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def fmt(value, digits=0, suffix=""):
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return f"{value:,.{digits}f}{suffix}"


def met(ok):
    return "n/a" if ok is None else ("**yes**" if ok else "**no**")


def load_range(loads):
    """`min–max` of the load averages seen, `?–?` when none."""
    return (f"{fmt(min(loads), 1) if loads else '?'}–"
            f"{fmt(max(loads), 1) if loads else '?'}")


def run_text(started, args, script):
    """The report's `Run: ...` sentence: when, quick or full, and the command line."""
    return (f"Run: {started} UTC, {'quick smoke run' if args.quick else 'full run'}, command "
            f"`python3 {script}{' ' + ' '.join(args.argv) if args.argv else ''}`.")


# ----------------------------------------------------------------------------------------------
# Command line, output

def add_binary_arg(p):
    p.add_argument("--openglue-bin", default=os.environ.get("OPENGLUE_BIN",
                                                            os.path.join(ROOT, "build", "openglue")),
                   help="OpenGlue server binary [$OPENGLUE_BIN, else build/openglue]")


def add_output_args(p, section, kept):
    """--write-doc, --no-write-doc, --json, --keep. section: what --write-doc replaces; kept: what
    the temporary directory holds."""
    p.add_argument("--write-doc", metavar="PATH", default=None,
                   help=f"replace the {section} of this markdown file [docs/benchmarks.md for a full run]")
    p.add_argument("--no-write-doc", action="store_true", help="do not write the markdown file")
    p.add_argument("--json", metavar="PATH", help="also write the raw results as JSON")
    p.add_argument("--keep", action="store_true", help=f"keep the temporary directory ({kept})")


def write_doc(path, section, begin, end, intro="", new_file="# Benchmarks\n"):
    """Replaces the text between the markers `begin` and `end` in the markdown file `path` with
    `section`. Where the markers are missing, appends `intro` and the marked section at the end
    of the file (a file that does not exist yet starts as `new_file`). Nothing else in the file
    is touched; the file is replaced at once (written aside, then renamed)."""
    block = f"{begin}\n{section}{end}\n"
    text = open(path).read() if os.path.exists(path) else new_file
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + intro + block
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-bench-{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def publish(args, report, results, **doc):
    """Prints the report, writes it into args.write_doc (write_doc with the markers etc. in doc)
    when set, and `results` into args.json when set."""
    print()
    print(report)
    if args.write_doc:
        write_doc(args.write_doc, report, **doc)
        log(f"wrote {args.write_doc}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
        log(f"wrote {args.json}")
