"""Defect #7 (issue 6): s3:// paths must never escape the embedded object store.

A ScriptLocation, an --extra-py-files or an --extra-files entry is an S3 location. In the
embedded store `..`, `.` and empty segments are characters of a key, never path steps; links
inside the store are never followed; bucket names follow S3's rules. Each trick below names a
file outside `<data_dir>/s3` that, if it ever ran or were imported, would write a marker file.

OpenGlue's choice (as Glue, which does not look at the script when a job is created): CreateJob
and StartJobRun accept the location; the run ends FAILED with an ErrorMessage naming the
location and the reason, and the outside file is never read, run or imported.
"""
import os
import textwrap

import pytest

from jobkit import JobKit, kit, unique, write_script  # noqa: F401


def outside_dir(server):
    path = os.path.join(server.data_dir, "outside")
    os.makedirs(path, exist_ok=True)
    return path


def plant(server, name, body):
    """Writes `body` to <data_dir>/outside/<name> (outside the store); returns its path."""
    path = os.path.join(outside_dir(server), name)
    with open(path, "w") as f:
        f.write(textwrap.dedent(body).lstrip("\n"))
    return path


def evil_script(server):
    """A script outside the store that writes a marker when run; returns (path, marker)."""
    marker = os.path.join(outside_dir(server), unique("ran") + ".marker")
    path = plant(server, unique("evil") + ".py", f"""
        with open({marker!r}, "w") as f:
            f.write("the outside script ran")
    """)
    return path, marker


def evil_module(server):
    """A module outside the store that writes a marker when imported; returns (name, marker)."""
    marker = os.path.join(outside_dir(server), unique("imported") + ".marker")
    name = unique("evilmod")
    plant(server, name + ".py", f"""
        with open({marker!r}, "w") as f:
            f.write("the outside module was imported")
    """)
    return name, marker


def s3_tricks(server, target):
    """Locations that would name `target` (a file in <data_dir>/outside) if s3:// paths were
    joined onto <data_dir>/s3 as paths, plus link tricks set up inside the store."""
    name = os.path.basename(target)
    absolute = os.path.abspath(target)
    s3 = os.path.join(server.data_dir, "s3")
    os.makedirs(os.path.join(s3, "scripts"), exist_ok=True)
    # Links placed inside the store, pointing out of it.
    link_file = unique("link") + ".py"
    os.symlink(absolute, os.path.join(s3, "scripts", link_file))
    link_dir = unique("linkdir")
    os.symlink(os.path.dirname(absolute), os.path.join(s3, "scripts", link_dir))
    link_bucket = unique("linkbucket").replace("_", "-")
    os.symlink(os.path.dirname(absolute), os.path.join(s3, link_bucket))
    return {
        "bucket-dotdot": f"s3://../outside/{name}",
        "bucket-dotdot-deeper": f"s3://../../{os.path.basename(server.data_dir)}/outside/{name}",
        "key-dotdot": f"s3://scripts/../../outside/{name}",
        "key-dot-dotdot": f"s3://scripts/./../../outside/{name}",
        "s3a-key-dotdot": f"s3a://scripts/../../outside/{name}",
        "key-trailing-dotdot": f"s3://scripts/x/../../../outside/{name}",
        "url-encoded": f"s3://scripts/%2e%2e/%2e%2e/outside/{name}",
        "url-encoded-slash": f"s3://scripts/..%2f..%2foutside%2f{name}",
        "absolute-key": f"s3://scripts/{absolute}",
        "empty-bucket-absolute": f"s3://{absolute}",
        "bucket-dot": f"s3://./../outside/{name}",
        "link-in-store": f"s3://scripts/{link_file}",
        "link-dir-in-store": f"s3://scripts/{link_dir}/{name}",
        "link-bucket": f"s3://{link_bucket}/{name}",
    }


TRICKS = ["bucket-dotdot", "bucket-dotdot-deeper", "key-dotdot", "key-dot-dotdot",
          "s3a-key-dotdot", "key-trailing-dotdot", "url-encoded", "url-encoded-slash",
          "absolute-key", "empty-bucket-absolute", "bucket-dot", "link-in-store",
          "link-dir-in-store", "link-bucket"]


def assert_refused(run, location, flag=None):
    assert run["JobRunState"] == "FAILED", run
    message = run.get("ErrorMessage", "")
    assert location in message, message
    if flag:
        assert flag in message, message


@pytest.mark.parametrize("trick", TRICKS)
def test_script_location_cannot_leave_the_store(kit, server, trick):
    path, marker = evil_script(server)
    location = s3_tricks(server, path)[trick]
    job = kit.job(script=location)
    run = kit.run(job)
    assert_refused(run, location)
    assert not os.path.exists(marker), f"{location} ran {path}"


@pytest.mark.parametrize("trick", TRICKS)
def test_extra_py_files_cannot_leave_the_store(kit, server, tmp_path, trick):
    module, marker = evil_module(server)
    location = s3_tricks(server, os.path.join(outside_dir(server), module + ".py"))[trick]
    script_marker = tmp_path / "script-ran"
    job = kit.job(f"""
        try:
            import {module}
        finally:
            open({str(script_marker)!r}, "w").write("ran")
    """, DefaultArguments={"--extra-py-files": location})
    run = kit.run(job)
    assert_refused(run, location, "--extra-py-files")
    assert not os.path.exists(marker), f"{location} imported {module}"
    assert not script_marker.exists()  # refused before the script started


@pytest.mark.parametrize("trick", ["key-dotdot", "bucket-dotdot", "absolute-key", "link-in-store",
                                   "link-dir-in-store"])
def test_extra_files_cannot_leave_the_store(kit, server, tmp_path, trick):
    secret = plant(server, unique("secret") + ".txt", "outside secret\n")
    location = s3_tricks(server, secret)[trick]
    seen = tmp_path / "seen"
    job = kit.job(f"""
        import os
        with open({str(seen)!r}, "w") as f:
            f.write(repr(sorted(os.listdir("."))))
    """, DefaultArguments={"--extra-files": location})
    run = kit.run(job)
    assert_refused(run, location, "--extra-files")
    assert not seen.exists()


# --- Controls: the same files, placed inside the store, do run, import and copy ---------------
# (so each test above would fail if the store let the trick through).

def test_control_script_inside_the_store_runs(kit, server):
    path, marker = evil_script(server)
    location = write_script(server, open(path).read())
    run = kit.run(kit.job(script=location))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert os.path.exists(marker)


def test_control_extra_py_file_inside_the_store_is_imported(kit, server):
    module, marker = evil_module(server)
    body = open(os.path.join(outside_dir(server), module + ".py")).read()
    location = write_script(server, body, bucket="libs", name=module)
    job = kit.job(f"import {module}\n", DefaultArguments={"--extra-py-files": location})
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert os.path.exists(marker)


def test_control_extra_file_inside_the_store_is_copied_next_to_the_script(kit, server, tmp_path):
    name = unique("conf")
    location = write_script(server, "setting = 1\n", bucket="conf", name=name)
    seen = tmp_path / "seen"
    job = kit.job(f"""
        with open({name + ".py"!r}) as src, open({str(seen)!r}, "w") as out:
            out.write(src.read())
    """, DefaultArguments={"--extra-files": location})
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert seen.read_text() == "setting = 1\n"


def test_keys_with_dots_that_are_not_path_steps_still_work(kit, server, tmp_path):
    out = tmp_path / "out"
    s3 = os.path.join(server.data_dir, "s3", "scripts", "v1..2", "...")
    os.makedirs(s3, exist_ok=True)
    with open(os.path.join(s3, "job.py"), "w") as f:
        f.write(f"open({str(out)!r}, 'w').write('dots ok')\n")
    run = kit.run(kit.job(script="s3://scripts/v1..2/.../job.py"))
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert out.read_text() == "dots ok"


# --- Local paths (file:// and plain) are the run's own: opened by the run, not copied ---------

def test_local_extra_py_file_is_importable_and_a_missing_one_is_named(kit, server, tmp_path):
    module = unique("localmod")
    (tmp_path / (module + ".py")).write_text("VALUE = 'local'\n")
    out = tmp_path / "out"
    job = kit.job(f"""
        import {module}
        open({str(out)!r}, "w").write({module}.VALUE)
    """, DefaultArguments={"--extra-py-files": "file://" + str(tmp_path / (module + ".py"))})
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert out.read_text() == "local"
    missing = str(tmp_path / "absent.py")
    run = kit.run(kit.job("print('never')\n", DefaultArguments={"--extra-py-files": missing}))
    assert run["JobRunState"] == "FAILED"
    assert missing in run["ErrorMessage"] and "--extra-py-files" in run["ErrorMessage"]
