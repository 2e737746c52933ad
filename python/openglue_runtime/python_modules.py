"""`--additional-python-modules`: the requirement set of a run, its cache key, its installation
with pip, and the run's use of the installed environment (docs/jobs.md, "Additional Python
modules").

The server's helper (`openglue __python-modules`, src/jobs/python_modules.h) runs this module
twice as the run's own unprivileged user, before the script starts:

    python -I -c <launch> <runtime dir> key SPEC          prints {"key", "summary"} as JSON
    python -I -c <launch> <runtime dir> install SPEC SITE  installs the set into SITE with pip

SPEC is the run's `python-modules/spec.json`, written by the server: the argument as given
(`"value"`), the run's local copy of each `s3://` object it names (`"objects"`), and the
`--python-modules-installer-option` string (`"installer_options"`). The helper locks, verifies, seals and caches the
environment; this module only reads what the run may read and runs pip.

The key is the SHA-256 of: the interpreter (implementation, version, platform), the runtime's
installed distributions (name and version of each), the requirement specs normalised (PEP 508:
canonical names, sorted extras and specifiers; order and duplicates do not matter), the content
and name of each file entry (wheels, requirements files, zips of wheels), and the installer
options in their order. The same set on the same runtime is the same environment, whoever asks.

The environment is a layer over the runtime: a `--target` folder that holds only what the
runtime lacks. pip first resolves the set against the runtime (`--dry-run --report`, so what
the runtime already has, at a satisfying version, is not installed again), then installs exactly
the distributions it chose, each by the URL or file it resolved to, with `--no-deps`. A
distribution of another version than the runtime's (an upgrade the set asks for) goes into the
layer and shadows the runtime's in the run, as on AWS Glue; the log says so.

`activate()` is the run's side: the run's bootstrap calls it when the helper set
`OPENGLUE_PYTHON_MODULES` (the layer, already on PYTHONPATH), so that the layer's `.pth` files
are processed as site-packages' are.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from typing import Dict, List, Optional, Sequence, Tuple

PREFIX = "[openglue] --additional-python-modules: "
KEY_FORMAT = "openglue-python-modules/1"
# Options that would install somewhere else than the environment, or that name files the key
# cannot see: refused, with the reason.
REFUSED_OPTIONS = {
    "-t": "the environment is OpenGlue's own folder", "--target": "the environment is OpenGlue's own folder",
    "--prefix": "the environment is OpenGlue's own folder", "--root": "the environment is OpenGlue's own folder",
    "--user": "the environment is OpenGlue's own folder", "--src": "the environment is OpenGlue's own folder",
    "-e": "editable installs need a source folder the run keeps", "--editable": "editable installs need a source folder the run keeps",
    "--report": "OpenGlue writes pip's report itself", "--dry-run": "the run needs the modules installed",
    "--require-virtualenv": "the runtime is not a virtual environment of the run's",
}
# `-r` / `--requirement` alone (AWS Glue 5.0's way): the `.txt` entries of the argument are
# requirements files. Given with a file name, the file would be one the key cannot see.
REQUIREMENT_FLAGS = ("-r", "--requirement")
_OPERATORS = ("<", ">", "=", "!", "~")


class ModulesError(Exception):
    """A set that cannot be installed, said in one line (the run's ErrorMessage)."""


# ---------------------------------------------------------------------------------- the set

def split_entries(value: str) -> List[str]:
    """The comma-separated `--additional-python-modules` value as entries. A piece starting
    with a comparison operator continues the previous spec (`pandas>=1.5,<3` is one spec)."""
    entries: List[str] = []
    for piece in value.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if entries and piece.startswith(_OPERATORS) and not _is_file(entries[-1]):
            entries[-1] += "," + piece
        else:
            entries.append(piece)
    return entries


def _is_file(text: str) -> bool:
    lowered = text.lower()
    return (lowered.startswith(("s3://", "s3a://", "s3n://", "file://", "/", "./", "../"))
            or lowered.endswith((".whl", ".zip", ".txt", ".tar.gz", ".tgz")))


def _local_path(entry: dict) -> str:
    path = entry.get("path") or entry["text"]
    if path.startswith("file://"):
        path = path[len("file://"):]
    return path


def _requirement_module():
    try:
        from packaging.requirements import InvalidRequirement, Requirement
        from packaging.utils import canonicalize_name
    except ImportError:  # the runtime without packaging: pip's own copy
        from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
        from pip._vendor.packaging.utils import canonicalize_name
    return Requirement, InvalidRequirement, canonicalize_name


def normalise_spec(text: str) -> str:
    """A PEP 508 requirement in one spelling: canonical name, sorted extras, the specifiers
    sorted, the marker as packaging prints it. Text that does not parse is kept as it is (pip
    then refuses it, naming it)."""
    Requirement, InvalidRequirement, canonicalize_name = _requirement_module()
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return " ".join(text.split())
    out = canonicalize_name(req.name)
    if req.extras:
        out += "[" + ",".join(sorted(canonicalize_name(e) for e in req.extras)) + "]"
    if req.url:
        out += " @ " + req.url
    else:
        out += ",".join(sorted(str(s) for s in req.specifier))
    if req.marker:
        out += " ; " + str(req.marker)
    return out


def parse_options(value: str) -> Tuple[List[str], bool]:
    """The installer options as pip arguments, and whether `-r` asked for requirements files.
    ModulesError for an option OpenGlue cannot honour."""
    try:
        tokens = shlex.split(value or "")
    except ValueError as e:
        raise ModulesError(f"--python-modules-installer-option cannot be read: {e}")
    options: List[str] = []
    requirements = False
    for i, token in enumerate(tokens):
        name = token.split("=", 1)[0]
        if name in REFUSED_OPTIONS:
            raise ModulesError(f"--python-modules-installer-option {name} is not supported: "
                               f"{REFUSED_OPTIONS[name]}")
        if token in REQUIREMENT_FLAGS or name in REQUIREMENT_FLAGS:
            if name != token or (i + 1 < len(tokens) and not tokens[i + 1].startswith("-")):
                raise ModulesError(
                    f"--python-modules-installer-option {name} takes no file here: name the "
                    "requirements file (s3://.../requirements.txt) in --additional-python-modules")
            requirements = True
            continue
        options.append(token)
    return options, requirements


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def runtime_fingerprint() -> str:
    """The runtime's installed distributions (name==version, sorted), hashed."""
    import importlib.metadata as metadata
    names = sorted({f"{(d.metadata.get('Name') or '').lower()}=={d.version}"
                    for d in metadata.distributions()})
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def load_spec(path: str) -> dict:
    """The server's spec: {"value": the argument, "objects": {s3 uri: the run's copy},
    "installer_options": ...}, with its `entries` ({"text", "path" for an object's copy})."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    if not isinstance(spec, dict) or not isinstance(spec.get("value"), str):
        raise ModulesError(f"{path} is not a python-modules spec")
    objects = spec.get("objects") or {}
    spec["entries"] = [{"text": text, "path": objects.get(text)} for text in split_entries(spec["value"])]
    if not spec["entries"]:
        raise ModulesError("--additional-python-modules names no module")
    return spec


def requirement_set(spec: dict) -> dict:
    """What the key is made of (see the module's doc). ModulesError for an entry the run cannot
    read."""
    options, _ = parse_options(spec.get("installer_options") or "")
    specs, files = set(), set()
    for entry in spec["entries"]:
        text = entry["text"]
        if entry.get("path") or _is_file(text):
            path = _local_path(entry)
            try:
                files.add((os.path.basename(path), _sha256_file(path)))
            except OSError as e:
                raise ModulesError(f"cannot read {text}: {e.strerror or e}")
        else:
            specs.add(normalise_spec(text))
    return {
        "format": KEY_FORMAT,
        "python": [sys.implementation.name, "%d.%d.%d" % sys.version_info[:3],
                   sysconfig.get_platform(), sys.abiflags],
        "runtime": runtime_fingerprint(),
        "requirements": sorted(specs),
        "files": sorted([name, digest] for name, digest in files),
        "options": options,
    }


def cache_key(material: dict) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def summary(spec: dict) -> str:
    texts = [e["text"] for e in spec["entries"]]
    shown = ", ".join(texts[:6]) + (f" and {len(texts) - 6} more" if len(texts) > 6 else "")
    return shown or "nothing"


# ----------------------------------------------------------------------------- installation

def _pip(arguments: Sequence[str], log_prefix: str = "  ") -> Tuple[int, List[str]]:
    """Runs `python -I -m pip ARGUMENTS`; its output goes into the run's error log indented (so
    that a traceback pip prints is not taken for the run's error); returns (status, lines)."""
    command = [sys.executable, "-I", "-m", "pip", *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
    lines: List[str] = []
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        lines.append(line)
        print(log_prefix + line, file=sys.stderr, flush=True)
    return process.wait(), lines


def _pip_error(lines: Sequence[str]) -> str:
    """pip's own reason: its last `ERROR:` line, else its last line."""
    for line in reversed(lines):
        if line.strip().startswith("ERROR:"):
            return line.strip()[len("ERROR:"):].strip()
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return "pip failed without a message"


def _arguments(spec: dict, scratch: str) -> List[str]:
    """The requirement arguments of pip for the set: specs, file paths, `-r` for requirements
    files, the wheels of a zip of wheels with the zip's folder as `--find-links`."""
    arguments: List[str] = []
    for n, entry in enumerate(spec["entries"]):
        text = entry["text"]
        if not (entry.get("path") or _is_file(text)):
            arguments.append(text)
            continue
        path = _local_path(entry)
        lowered = path.lower()
        if lowered.endswith(".txt"):
            arguments += ["-r", path]
        elif lowered.endswith(".zip"):
            folder = os.path.join(scratch, f"zip-{n}")
            try:
                with zipfile.ZipFile(path) as archive:
                    # The wheels at the zip's top, or in one folder there.
                    wheels = [m for m in archive.namelist()
                              if m.endswith(".whl") and m.strip("/").count("/") <= 1]
                    for member in wheels:
                        target = os.path.join(folder, os.path.basename(member))
                        os.makedirs(folder, exist_ok=True)
                        with archive.open(member) as src, open(target, "wb") as dst:
                            dst.write(src.read())
            except (OSError, zipfile.BadZipFile) as e:
                raise ModulesError(f"{text} is not a zip of wheels: {e}")
            found = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            if not found:
                raise ModulesError(f"{text} holds no wheel (.whl) at its top")
            arguments += ["--find-links", folder] + [os.path.join(folder, w) for w in found]
        else:
            arguments.append(path)
    return arguments


def _exact(item: dict) -> str:
    """What pip resolved an item to, as an exact requirement: its file or URL (with the hash
    pip saw), its commit, or its folder."""
    name = item["metadata"]["name"]
    info = item.get("download_info") or {}
    url = info.get("url", "")
    if "vcs_info" in info:
        vcs = info["vcs_info"]
        return f"{name} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"
    if "archive_info" in info:
        hashes = info["archive_info"].get("hashes") or {}
        sha = hashes.get("sha256")
        if not sha and str(info["archive_info"].get("hash", "")).startswith("sha256="):
            sha = info["archive_info"]["hash"][len("sha256="):]
        if url.startswith("file://"):
            return url[len("file://"):]
        return f"{name} @ {url}" + (f"#sha256={sha}" if sha and "#" not in url else "")
    if url.startswith("file://"):
        return url[len("file://"):]
    return f"{name}=={item['metadata']['version']}"


def _runtime_version(name: str) -> Optional[str]:
    import importlib.metadata as metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def install(spec: dict, site: str) -> int:
    """Installs the set into `site` (which must not exist yet, or be empty). Prints what it
    does; on failure the last line printed is the run's ErrorMessage. Returns the exit status."""
    try:
        options, _ = parse_options(spec.get("installer_options") or "")
        scratch = tempfile.mkdtemp(prefix="openglue-modules-")
        requirements = _arguments(spec, scratch)
    except ModulesError as e:
        print(f"--additional-python-modules could not be installed: {e}", file=sys.stderr)
        return 1
    common = ["--disable-pip-version-check", "--no-input"]
    report = os.path.join(scratch, "report.json")
    started = time.monotonic()
    status, lines = _pip(["install", "--dry-run", "--report", report, *common, *options,
                          *requirements])
    if status == 0:
        try:
            with open(report, encoding="utf-8") as f:
                items = json.load(f).get("install") or []
        except (OSError, ValueError) as e:
            status, lines = 1, [f"ERROR: pip's report cannot be read: {e}"]
    if status != 0:
        print(f"--additional-python-modules could not be installed: {_pip_error(lines)} "
              "(pip's output is in the run's error log; nothing was cached)", file=sys.stderr)
        return 1
    os.makedirs(site, exist_ok=True)
    if not items:
        print(PREFIX + "the runtime already has every requirement: the environment is empty",
              file=sys.stderr, flush=True)
        return 0
    for item in items:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        present = _runtime_version(name)
        if present is not None and present != version:
            print(PREFIX + f"{name} {version} replaces the runtime's {name} {present} in runs "
                  "of this set", file=sys.stderr, flush=True)
    chosen = [_exact(item) for item in items]
    print(PREFIX + "installing " + ", ".join(
        f"{i['metadata']['name']} {i['metadata']['version']}" for i in items),
        file=sys.stderr, flush=True)
    status, lines = _pip(["install", "--no-deps", "--target", site, "--no-warn-script-location",
                          *common, *options, *chosen])
    if status != 0:
        print(f"--additional-python-modules could not be installed: {_pip_error(lines)} "
              "(pip's output is in the run's error log; nothing was cached)", file=sys.stderr)
        return 1
    print(PREFIX + f"pip installed {len(items)} distribution(s) in {time.monotonic() - started:.1f} s",
          file=sys.stderr, flush=True)
    return 0


# ------------------------------------------------------------------------------ the run's side

def activate(environ: Optional[Dict[str, str]] = None) -> Optional[str]:
    """In a run whose helper installed or verified an environment: processes the layer's
    `.pth` files (the layer is on PYTHONPATH already). Returns the layer, None without one."""
    env = os.environ if environ is None else environ
    site_dir = env.get("OPENGLUE_PYTHON_MODULES")
    if not site_dir or not os.path.isdir(site_dir):
        return None
    import site
    site.addsitedir(site_dir)
    return site_dir


def main(argv: Sequence[str]) -> int:
    if len(argv) >= 2 and argv[0] == "key":
        try:
            spec = load_spec(argv[1])
            material = requirement_set(spec)
        except (ModulesError, OSError, ValueError, KeyError) as e:
            print(f"--additional-python-modules could not be installed: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"key": cache_key(material), "summary": summary(spec)}))
        return 0
    if len(argv) >= 3 and argv[0] == "install":
        try:
            spec = load_spec(argv[1])
        except (ModulesError, OSError, ValueError) as e:
            print(f"--additional-python-modules could not be installed: {e}", file=sys.stderr)
            return 1
        return install(spec, argv[2])
    print("usage: python -m openglue_runtime.python_modules key SPEC | install SPEC SITE",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
