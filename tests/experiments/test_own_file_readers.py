"""Every reader on a user's own file (``python -m throughput.readers``): any numeric
leaf type, flat or jagged, read by every reader in its own type, checked against a
checksum recomputed here in plain Python; the command's table on files made here
and on the real files of ../shared/data; and bad requests named before any work."""
from __future__ import annotations

import subprocess
import sys

import awkward as ak
import numpy as np
import pandas as pd
import pytest
import uproot

from throughput import harness, paths
from throughput.experiments import reader_comparison as rc

KERNELS_USED = ("read_branch", "page_cache", "tree_to_rntuple")  # checked by conftest's built_kernels

EVENTS = 400
FLAT = {"f": np.float32, "d": np.float64, "i": np.int32, "u8": np.uint8, "i64": np.int64, "b": np.bool_}
JAGGED = {"pt": np.float32, "d": np.float64, "q": np.int16, "u": np.uint32, "b": np.bool_}


def _values(rng, dtype, size):
    if dtype == np.bool_:
        return rng.integers(0, 2, size).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    return rng.normal(size=size).astype(dtype)


@pytest.fixture(scope="module")
def typed_file(tmp_path_factory):
    """A TTree of every kind of numeric branch: one value per event and a collection (Jet_*)."""
    path = tmp_path_factory.mktemp("own") / "typed.root"
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 6, EVENTS)
    data = {name: _values(rng, dtype, EVENTS) for name, dtype in FLAT.items()}
    data["Jet"] = ak.zip({name: ak.unflatten(_values(rng, dtype, counts.sum()), counts)
                          for name, dtype in JAGGED.items()})
    with uproot.recreate(path) as f:
        tree = f.mktree("t", {k: (v.type if isinstance(v, ak.Array) else v.dtype) for k, v in data.items()})
        tree.extend(data)
    return path


def _reference(path, tree: str, branch: str) -> tuple[int, str]:
    """Items and checksum recomputed in plain Python from the values' bytes (pass.hpp's definition)."""
    values = np.asarray(ak.flatten(uproot.open(path)[tree][branch].array(), axis=None))
    total = 0
    for value in values.tolist() if values.dtype == np.bool_ else values:
        bits = int(value) if isinstance(value, bool) else int.from_bytes(np.asarray(value).tobytes(), "little")
        h = ((bits + 1) * rc.GOLDEN) % 2**64
        total = (total + (h ^ (h >> 32))) % 2**64
    return len(values), f"{total:016x}"


def _readers(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "throughput.readers", "--no-progress", *argv],
                          capture_output=True, text=True, env=harness.pinned_env(), timeout=900)


TREE_METHODS = [m for m in rc.CPP_METHODS if m != "rntuple"]  # rntuple reads a copy: below


@pytest.mark.parametrize("branch", [*FLAT, *(f"Jet_{name}" for name in JAGGED)])
def test_every_cpp_method_reads_every_leaf_type_exactly(typed_file, branch):
    argv = [str(harness.kernel_path("read_branch")), "--files", str(typed_file), "--tree", "t", "--branches", branch,
            "--methods", ",".join(TREE_METHODS), "--reps", "1", "--warmup", "0"]
    records = rc.run_json_process(argv, "read_branch")
    items, checksum = _reference(typed_file, "t", branch)
    timed = {r["method"]: (r["items"], r["checksum"]) for r in records["timing"]}
    refused = {r["method"]: r["message"] for r in records.get("cannot_read", [])}
    assert set(timed) | set(refused) == set(TREE_METHODS)
    assert set(timed.values()) == {(items, checksum)}, timed
    expected_refusals = ({"members", "cmssw"} if not branch.startswith("Jet_") else set()) | (
        {"draw"} if branch == "i64" else set())
    assert set(refused) == expected_refusals
    if "draw" in refused:
        assert "Long64_t" in refused["draw"]
    # the Python checksum (numba) and the Numpy copy agree with the recomputation
    values = np.asarray(ak.flatten(uproot.open(typed_file)["t"][branch].array(), axis=None))
    assert rc.hex_checksum(rc.checksum(values)) == checksum


def test_own_file_command_compares_every_reader_on_double_and_integer_branches(typed_file, tmp_path):
    out = tmp_path / "table.csv"
    proc = _readers([str(typed_file), "--branch", "Jet_d,i,b", "--readers",
                     "columnar,bulk,ttreereader,draw,rdataframe,cmssw,rntuple,uproot,numpy,root4j",
                     "--repetitions", "1", "--warmup", "0", "--work", str(tmp_path / "work"), "--csv", str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pd.read_csv(out)
    for branch in ("Jet_d", "i", "b"):
        rows = table[table["branch"] == branch].set_index("reader")
        measured = rows[rows["result"] == "measured"]
        items, checksum = _reference(typed_file, "t", branch)
        assert set(measured.index) >= {"columnar", "bulk", "ttreereader", "draw", "rdataframe", "rntuple", "uproot",
                                       "numpy", "root4j"}
        assert (measured["checksum"] == checksum).all() and (measured["items"] == items).all()
        assert measured["agrees"].all() and (measured["khz"] > 0).all()
        assert measured["of_fastest"].max() == pytest.approx(1.0)
    assert table.set_index(["branch", "reader"]).loc[("i", "cmssw"), "result"].startswith("cannot read")
    printed = proc.stdout
    assert "Jet_d (float64) in tree t" in printed and "i (int32)" in printed and "Load seen" in printed


REAL = [("nanoAOD_2015_CMS_Open_Data_ttbar.root", "Jet_pt,nJet,event,Electron_convVeto"),
        ("uproot-HZZ.root", "Jet_Px,NJet")]


@pytest.mark.parametrize("name,branches", REAL)
def test_own_file_command_on_the_real_files(name, branches, tmp_path):
    path = paths.SHARED / "data" / name
    if not path.is_file():
        pytest.skip(f"{path} not there (../shared beside the clone)")
    out = tmp_path / "table.csv"
    proc = _readers([str(path), "--branch", branches, "--readers", "columnar,ttreereader,rdataframe,uproot,numpy,root4j",
                     "--repetitions", "1", "--warmup", "0", "--csv", str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pd.read_csv(out)
    tree = uproot.open(path).keys(cycle=False)[0]
    for branch in branches.split(","):
        rows = table[table["branch"] == branch]
        assert (rows["result"] == "measured").all() and len(rows) == 6, rows
        items, checksum = _reference(path, tree, branch)
        assert set(rows["checksum"]) == {checksum} and set(rows["items"]) == {items}


def test_bad_requests_are_named_before_any_work(typed_file, tmp_path):
    cases = [([str(tmp_path / "missing.root"), "--branch", "f"], "no such file: " + str(tmp_path / "missing.root")),
             ([str(typed_file), "--branch", "nope"], "no branch 'nope'"),
             ([str(typed_file), "--branch", "f", "--tree", "T"], "no tree 'T' (its trees: t)"),
             ([str(typed_file), "--branch", "f", "--readers", "columnar,fortran"], "unknown reader fortran"),
             ([str(typed_file), "--branch", "f", "--repetitions", "0"], "--repetitions must be >= 1")]
    for argv, words in cases:
        proc = _readers([*argv, "--work", str(tmp_path / "work")])
        assert proc.returncode == 2 and words in proc.stderr, (argv, proc.stderr)
    assert not (tmp_path / "work").exists()  # nothing made before the request was checked
    two_trees = tmp_path / "two.root"
    with uproot.recreate(two_trees) as f:
        for name in ("a", "b"):
            f.mktree(name, {"x": np.float32}).extend({"x": np.zeros(3, np.float32)})
    proc = _readers([str(two_trees), "--branch", "x"])
    assert proc.returncode == 2 and "name the tree with --tree (it has 2: a, b)" in proc.stderr
