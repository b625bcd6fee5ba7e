"""provenance: what is stored with every raw result."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from throughput.core import provenance

KEYS = ("date_utc", "git_commit", "git_dirty", "cpu_model", "logical_cores", "memory_bytes", "os_kernel",
        "packages", "compiler", "cxx_flags", "cache_state", "config")
CONFIG = {"repetitions": 2, "warmup": 1, "memory_bandwidth": {"n_values": 1000, "opt_levels": ["O3"]}}


@pytest.fixture(scope="module")
def captured():
    return provenance.capture(CONFIG, cache_state="n/a (in-memory)")


def test_capture_has_all_keys(captured):
    missing = [k for k in KEYS if k not in captured]
    assert not missing


def test_capture_values_sensible(captured):
    assert isinstance(captured["logical_cores"], int) and captured["logical_cores"] >= 1
    assert isinstance(captured["memory_bytes"], int) and captured["memory_bytes"] > 0
    assert isinstance(captured["cpu_model"], str) and captured["cpu_model"]
    assert isinstance(captured["os_kernel"], str) and captured["os_kernel"]
    assert isinstance(captured["git_commit"], str) and captured["git_commit"]
    assert captured["git_dirty"] in (True, False, None)
    if re.fullmatch(r"[0-9a-f]{40}", captured["git_commit"]):
        assert isinstance(captured["git_dirty"], bool)
    assert captured["cache_state"] == "n/a (in-memory)"
    assert captured["config"] == CONFIG
    assert captured["compiler"] == "n/a (Python)"
    assert captured["cxx_flags"] == "n/a (Python)"


def test_capture_date_is_utc_now(captured):
    date = dt.datetime.fromisoformat(captured["date_utc"])
    assert date.utcoffset() == dt.timedelta(0)
    assert abs((dt.datetime.now(dt.timezone.utc) - date).total_seconds()) < 600


def test_capture_packages(captured):
    packages = captured["packages"]
    assert set(packages) == set(provenance.PACKAGES)
    assert re.match(r"^\d+\.\d+", packages["numpy"])
    import numpy
    assert packages["numpy"] == numpy.__version__
    assert all(isinstance(v, str) and v for v in packages.values())


def test_capture_is_json_serialisable(captured):
    text = json.dumps(captured)  # no default=: every value must be plain JSON
    assert json.loads(text) == captured


def test_capture_with_build_info():
    info = {"record": "build_info", "compiler": "GNU 99", "cxx_flags": "-O3 -fopenmp", "opt": "O3"}
    captured = provenance.capture({}, cache_state="warm", build_info=info)
    assert captured["compiler"] == "GNU 99"
    assert captured["cxx_flags"] == "-O3 -fopenmp"
    assert captured["cache_state"] == "warm"
    json.dumps(captured)


def test_package_not_installed(monkeypatch):
    monkeypatch.setattr(provenance, "PACKAGES", ("numpy", "surely-not-a-real-package-xyz"))
    versions = provenance.package_versions()
    assert versions["surely-not-a-real-package-xyz"] == "not installed"
    assert versions["numpy"] != "not installed"


def test_git_state_outside_git(monkeypatch, tmp_path):
    monkeypatch.setattr(provenance, "REPO", tmp_path)
    state = provenance.git_state()
    assert state["git_dirty"] is None
    assert "unknown" in state["git_commit"]


def test_run_missing_program_returns_none():
    assert provenance._run(["surely-not-a-real-program-xyz"]) is None
    assert provenance._run(["false"]) is None
    assert provenance._run(["echo", " hi "]) == "hi"


def test_machine_counts():
    info = provenance.machine()
    assert 1 <= info["usable_cores"] <= info["logical_cores"]
    assert info["numa_nodes"] >= 1
