"""openglue_runtime.python_modules: how --additional-python-modules is read and what its cache
key is made of (pure Python; tests/test_job_python_modules.py installs sets through real runs)."""
import json

import pytest

from openglue_runtime.python_modules import (ModulesError, cache_key, load_spec, normalise_spec,
                                             parse_options, requirement_set, split_entries)


def test_entries_are_comma_separated_and_a_specifier_list_stays_whole():
    assert split_entries(" a==1 ,b>=1,<2, s3://x/y-1.0-py3-none-any.whl ,,c[x]~=2.1,!=2.1.3") == [
        "a==1", "b>=1,<2", "s3://x/y-1.0-py3-none-any.whl", "c[x]~=2.1,!=2.1.3"]
    assert split_entries("") == []


def test_specs_are_normalised():
    assert normalise_spec("Pandas >= 1.5, <3") == normalise_spec("pandas<3,>=1.5") == "pandas<3,>=1.5"
    assert normalise_spec("Requests[Socks,security]==2.31") == "requests[security,socks]==2.31"
    assert normalise_spec("My_Pkg.Name") == "my-pkg-name"
    assert normalise_spec('x ; python_version >= "3.8"') == 'x ; python_version >= "3.8"'
    assert normalise_spec("not a  requirement!") == "not a requirement!"  # kept; pip refuses it


def test_installer_options():
    assert parse_options("--upgrade --index-url 'https://mirror.example/simple'") == (
        ["--upgrade", "--index-url", "https://mirror.example/simple"], False)
    assert parse_options("-r") == ([], True)
    for refused in ("--target /x", "-t /x", "--prefix=/x", "--user", "-e .", "--root /"):
        with pytest.raises(ModulesError, match="is not supported"):
            parse_options(refused)
    with pytest.raises(ModulesError, match="takes no file here"):
        parse_options("-r requirements.txt")
    with pytest.raises(ModulesError, match="cannot be read"):
        parse_options("--index-url 'unclosed")


def spec_file(tmp_path, value, options="", objects=None, name="spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"value": value, "objects": objects or {}, "installer_options": options}))
    return load_spec(str(path))


def key(tmp_path, *args, **kwargs):
    return cache_key(requirement_set(spec_file(tmp_path, *args, **kwargs)))


def test_the_key_is_the_set_not_its_spelling(tmp_path):
    base = key(tmp_path, "pandas>=1.5,<3,requests==2.31")
    assert key(tmp_path, " Requests == 2.31 , pandas<3,>=1.5, requests==2.31") == base  # order, case, duplicates
    assert key(tmp_path, "pandas>=1.5,<3,requests==2.32") != base
    # Options count, in their order.
    assert key(tmp_path, "pandas>=1.5,<3,requests==2.31", "--upgrade") != base
    assert key(tmp_path, "x", "--pre --upgrade") != key(tmp_path, "x", "--upgrade --pre")


def test_a_file_counts_by_its_name_and_content(tmp_path):
    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    wheel.write_bytes(b"one")
    objects = {"s3://b/w-1.0-py3-none-any.whl": str(wheel)}
    first = key(tmp_path, "s3://b/w-1.0-py3-none-any.whl", objects=objects)
    # The same object elsewhere in the store: the same set.
    assert key(tmp_path, "s3://other/w-1.0-py3-none-any.whl",
               objects={"s3://other/w-1.0-py3-none-any.whl": str(wheel)}) == first
    wheel.write_bytes(b"two")
    assert key(tmp_path, "s3://b/w-1.0-py3-none-any.whl", objects=objects) != first
    with pytest.raises(ModulesError, match="cannot read /nowhere/x.whl"):
        key(tmp_path, "/nowhere/x.whl")


def test_a_spec_names_at_least_one_module(tmp_path):
    with pytest.raises(ModulesError, match="names no module"):
        spec_file(tmp_path, " , ")
