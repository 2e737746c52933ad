#!/usr/bin/env python3
"""Checks that no source under src/<module>/ includes a header of a module it may not depend on.

Every module library has src/ on its include path, so the link rules alone would let catalog
include a jobs header. The layering is DESIGN.md's:

    common <- store, storage, logs <- resource <- catalog <- bookmarks, jobs, crawler
           <- schedule, quality <- api, hms <- main
    engine <- storage stands beside the chain (the engine reads objects through storage)

A module may include its own headers and those of every module below it. Modules that do not
exist yet are simply absent. A folder under src/ that is not in LAYERS is an error: adding a
module means placing it in LAYERS (one line) and in DESIGN.md.

Usage: check_includes.py SRC_DIR        exit 1 and one line per violation
       check_includes.py --self-test    checks the checker on generated trees
"""
import os
import re
import sys
import tempfile

# Each line is one layer; a module may include every module of the layers above its own line
# (listed earlier). `main` is src/main.cc (a file, not a folder) and may include everything.
LAYERS = [
    ["common"],
    ["store", "storage", "logs"],
    ["resource"],
    ["catalog"],
    ["bookmarks", "jobs", "crawler"],
    ["schedule", "quality"],
    ["api", "hms"],
    ["main"],
]
# Beside the chain: module -> the modules it may include (besides itself).
BESIDE = {
    "engine": {"common", "storage"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([A-Za-z0-9_]+)/[^>"]+[>"]')
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".inc")


def allowed_map():
    allowed = {}
    below = set()
    for layer in LAYERS:
        for module in layer:
            allowed[module] = set(below) | {module}
        below |= set(layer)
    for module, deps in BESIDE.items():
        allowed[module] = set(deps) | {module}
    # The server's main wires everything, the engine included.
    allowed["main"] |= set(BESIDE)
    return allowed


def check(src_dir):
    """Returns a list of violation messages for the tree under src_dir."""
    allowed = allowed_map()
    problems = []
    modules = {name for name in os.listdir(src_dir) if os.path.isdir(os.path.join(src_dir, name))}
    for module in sorted(modules - set(allowed)):
        problems.append(f"src/{module}/: module not in the layering table (tools/check_includes.py "
                        f"LAYERS/BESIDE and DESIGN.md)")
    files = []
    for module in sorted(modules & set(allowed)):
        for root, _, names in os.walk(os.path.join(src_dir, module)):
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    files.append((module, os.path.join(root, name)))
    for name in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, name)
        if os.path.isfile(path) and name.endswith(SOURCE_SUFFIXES):
            files.append(("main", path))
    for module, path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                # Only headers of our own modules matter (not <arrow/...>, <gtest/...>).
                if target not in modules or target in allowed[module]:
                    continue
                rel = os.path.relpath(path, os.path.dirname(src_dir.rstrip("/")) or ".")
                problems.append(f"{rel}:{number}: module '{module}' may not include "
                                f"'{target}/' (allowed: {', '.join(sorted(allowed[module]))})")
    return problems


def self_test():
    """Builds small trees and checks the verdicts; returns the number of failed expectations."""
    cases = [
        # (files {path: text}, expected number of violations, description)
        ({"common/a.h": '#include "common/b.h"\n', "catalog/c.cc": '#include "store/s.h"\n'
          '#include "common/a.h"\n#include <arrow/api.h>\n#include "catalog/c.h"\n'},
         0, "allowed includes pass"),
        ({"catalog/c.cc": '#include "jobs/job_service.h"\n', "jobs/j.h": ""},
         1, "catalog including jobs fails"),
        ({"store/s.cc": '#  include <catalog/catalog.h>\n', "catalog/c.h": ""},
         1, "angle-bracket include of a higher module fails"),
        ({"common/x.h": '#include "store/s.h"\n#include "api/r.h"\n', "store/s.h": "",
          "api/r.h": ""}, 2, "common including anything fails, once per line"),
        ({"jobs/j.cc": '#include "api/router.h"\n', "api/router.h": ""},
         1, "jobs including api fails"),
        ({"main.cc": '#include "api/router.h"\n#include "engine/e.h"\n', "api/router.h": "",
          "engine/e.h": ""}, 0, "main may include everything"),
        ({"catalog/c.cc": '#include "engine/e.h"\n', "engine/e.h": ""},
         1, "the chain may not include the engine"),
        ({"engine/e.cc": '#include "storage/o.h"\n#include "common/s.h"\n', "storage/o.h": "",
          "common/s.h": ""}, 0, "the engine may use storage and common"),
        ({"engine/e.cc": '#include "catalog/c.h"\n', "catalog/c.h": ""},
         1, "the engine may not include catalog"),
        ({"bookmarks/b.cc": '#include "jobs/job_service.h"\n#include "resource/paging.h"\n',
          "jobs/job_service.h": "", "resource/paging.h": ""},
         1, "bookmarks stands beside jobs: it may not include jobs, only what is below"),
        ({"api/a.cc": '#include "bookmarks/b.h"\n#include "jobs/j.h"\n', "bookmarks/b.h": "",
          "jobs/j.h": ""}, 0, "api may include bookmarks and jobs"),
        ({"mystery/m.cc": ""}, 1, "a folder not in the table fails"),
        ({"api/a.cc": '// #include "x.h"\n#include "nonexistent/y.h"\n'}, 0,
         "includes of folders that are not modules are ignored"),
    ]
    failed = 0
    for files, expected, description in cases:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            for rel, text in files.items():
                path = os.path.join(src, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            got = check(src)
            ok = len(got) == expected
            print(f"{'ok  ' if ok else 'FAIL'} {description}: {len(got)} violation(s)"
                  + ("" if ok else f", expected {expected}: {got}"))
            failed += not ok
    return failed


def main(argv):
    if argv[1:] == ["--self-test"]:
        return 1 if self_test() else 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against DESIGN.md's layering", file=sys.stderr)
        return 1
    print("include rules: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
