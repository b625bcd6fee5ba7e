"""Every reader on a user's own file (``python -m throughput.readers``): any numeric
leaf type, flat or jagged, read by every reader in its own type, checked against a
checksum recomputed here in plain Python; the command's table on files made here
and on the real files of ../shared/data; bad requests named before any work; damaged
baskets without a checksum said unverified, or caught by a registered reference; a
reader that aborts (a class without a dictionary) a row of its own; the measurement lock."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import awkward as ak
import numpy as np
import pandas as pd
import pytest
import uproot

from throughput.core import harness, measurement_lock
from throughput.setup import paths
from throughput.inputs import references
from throughput.experiments import reader_comparison as rc
from throughput.experiments.reader_comparison.processes import process_error

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


# --- values that no checksum protects -------------------------------------------------------------

def _damage(source, target, branch: str = "Jet_Px") -> None:
    """Copy `source` to `target` with 4 bytes flipped inside `branch`'s first basket: past the 9-byte
    compression header at a place where the ZSTD frame still decompresses (found by trying), or
    among the values of an uncompressed basket, so every reader reads other values without error."""
    with uproot.open(source) as f:
        key = f["events"][branch].basket_key(0)
    compressed = key.fNbytes - key.fKeylen != key.fObjlen
    start = key.fSeekKey + key.fKeylen + (9 + 291 if compressed else 40)
    data = bytearray(Path(source).read_bytes())
    for i in range(start, start + 4):
        data[i] ^= 0xFF
    Path(target).write_bytes(bytes(data))


@pytest.mark.parametrize("compression", ["uncompressed", "zstd"])
def test_damaged_baskets_without_checksum_are_unverified_and_fail_on_a_registered_reference(compression, tmp_path):
    source = paths.SHARED / "data" / f"uproot-HZZ-{compression}.root"
    if not source.is_file():
        pytest.skip(f"{source} not there (../shared beside the clone)")
    intact, damaged = tmp_path / "intact" / "own-hzz.root", tmp_path / "damaged" / "own-hzz.root"
    intact.parent.mkdir(), damaged.parent.mkdir()
    shutil.copyfile(source, intact)
    _damage(source, damaged)
    good = np.asarray(ak.flatten(uproot.open(intact)["events"]["Jet_Px"].array()))
    bad = np.asarray(ak.flatten(uproot.open(damaged)["events"]["Jet_Px"].array()))  # reads without error
    assert len(bad) == len(good) and (bad != good).sum() > 0
    argv = ["--branch", "Jet_Px", "--readers", "columnar,ttreereader,uproot", "--repetitions", "1", "--warmup", "0"]

    # no reference: every reader agrees on the damaged values, and the output says they are unverified
    proc = _readers([str(damaged), *argv])
    assert proc.returncode == 0, proc.stderr[-3000:]
    kind = {"uncompressed": "uncompressed", "zstd": "ZSTD"}[compression]
    assert "Values unverified (C++ columnar, TTreeReader, uproot): no reference values registered for" in proc.stdout
    assert f"carry no checksum (2 {kind}: ROOT writes none in uncompressed and ZSTD baskets)" in proc.stdout
    assert "references.register(" in proc.stdout
    assert "from a copy known to be intact" in proc.stdout  # never from the copy just read

    # the intact file's reference, registered beside it: the intact file is checked ...
    references.record(intact, "events", ["Jet_Px"])
    want = references.load(intact)["branches"]["Jet_Px"]
    assert want["type"] == "float32"
    proc = _readers([str(intact), *argv])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Values checked: every reader found the reference values of {intact}.reference.json" in proc.stdout
    # ... and the damaged copy (same name, same size) fails naming branch and both checksums
    shutil.copyfile(references.reference_path(intact), references.reference_path(damaged))
    proc = _readers([str(damaged), *argv])
    found = rc.hex_checksum(rc.checksum(bad))
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (f"file {damaged}, branch Jet_Px: the readers (C++ columnar, TTreeReader, uproot) found {len(bad)} values "
            f"in 2421 events, checksum {found}; the reference ({damaged}.reference.json) expects {len(good)} values "
            f"in 2421 events, checksum {want['checksum']}: the file is damaged") in proc.stderr


@pytest.mark.parametrize("compression", ["zlib", "lz4", "lzma"])
def test_a_damaged_basket_with_a_checksum_is_a_row_with_its_cause_for_every_reader(compression, tmp_path):
    # ROOT prints "file probably overwritten" to stdout among a reader's JSON lines, and TTreeReader
    # and RDataFrame went on with the garbage a basket left (a segmentation fault): each reader is
    # now a row naming the file, the branch and ROOT's error, and the command says none could read
    source = paths.SHARED / "data" / f"uproot-HZZ-{compression}.root"
    if not source.is_file():
        pytest.skip(f"{source} not there (../shared beside the clone)")
    damaged = tmp_path / f"own-{compression}.root"
    _damage(source, damaged)
    readers = ["columnar", "bulk", "ttreereader", "draw", "rdataframe", "baskets", "uproot", "rootreadspeed"]
    proc = _readers([str(damaged), "--branch", "Jet_Px", "--readers", ",".join(readers), "--repetitions", "1",
                     "--warmup", "0"])
    assert proc.returncode == 4, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "no reader could read Jet_Px" in proc.stderr
    rows = [line for line in proc.stdout.splitlines() if " failed: " in line]
    assert len(rows) == len(readers), proc.stdout
    for row in rows:
        assert str(damaged) in row and "Jet_Px" in row, row
        assert "ROOT" in row or "uproot failed" in row or "damaged" in row, row
    assert "SIG" not in proc.stdout


def test_a_reference_is_of_the_values_in_their_own_type(typed_file):
    """A reference checksums each value in its branch's type, as the readers do (not cast to float32)."""
    stored = references.compute(typed_file, "t", ["i", "d", "Jet_q"])["branches"]
    for branch in ("i", "d", "Jet_q"):
        items, checksum = _reference(typed_file, "t", branch)
        assert (stored[branch]["items"], stored[branch]["checksum"]) == (items, checksum)
    assert (stored["i"]["type"], stored["d"]["type"], stored["Jet_q"]["type"]) == ("int32", "float64", "int16")


# --- a reader that aborts is a row of its own ----------------------------------------------------

NO_DICTIONARY = """
import sys
import ROOT
ROOT.gInterpreter.Declare("struct Thing { float x = 0; bool good = false; ROOT::RVec<bool> flags; };")
f = ROOT.TFile(sys.argv[1], "RECREATE")
t = ROOT.TTree("Events", "")
things = ROOT.std.vector("Thing")()
t.Branch("things", things, 32000, 99)
for i in range(500):
    things.clear()
    for j in range(i % 5):
        thing = ROOT.Thing()
        thing.x, thing.good = i + 0.5 * j, j % 2 == 0
        for k in range(j + 1):
            thing.flags.push_back(k % 2 == 0)
        things.push_back(thing)
    t.Fill()
t.Write()
f.Close()
"""


@pytest.fixture(scope="module")
def no_dictionary_file(tmp_path_factory):
    """A split std::vector<Thing> whose Thing (it holds an RVec<bool>) has its dictionary only
    in the process that writes it (cling's, made here): the readers have none."""
    path = tmp_path_factory.mktemp("nodict") / "things.root"
    subprocess.run([sys.executable, "-c", NO_DICTIONARY, str(path)], check=True, capture_output=True, timeout=300)
    return path


def test_a_method_that_aborts_is_its_own_row_with_its_cause(no_dictionary_file, tmp_path):
    read_branch = [str(harness.kernel_path("read_branch")), "--files", str(no_dictionary_file), "--tree", "Events",
                   "--branches", "things.x", "--reps", "1", "--warmup", "0", "--methods"]
    # by hand first: TTreeReader aborts on the class without a dictionary, taking columnar down with it
    alone = subprocess.run([*read_branch, "ttreereader"], capture_output=True, text=True, env=harness.pinned_env())
    both = subprocess.run([*read_branch, "columnar,ttreereader"], capture_output=True, text=True,
                          env=harness.pinned_env())
    assert alone.returncode == both.returncode == -signal.SIGABRT
    assert alone.stderr.startswith("Warning in <TClass::Init>: no dictionary for class Thing")  # not the cause

    out = tmp_path / "table.csv"
    proc = _readers([str(no_dictionary_file), "--branch", "things.x", "--readers",
                     "columnar,ttreereader,draw,rdataframe,cmssw,baskets,rntuple,uproot,numpy,rootreadspeed",
                     "--repetitions", "1", "--warmup", "0", "--csv", str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pd.read_csv(out).set_index("reader")["result"]
    items, checksum = _reference(no_dictionary_file, "Events", "things.x")
    assert (rows[["columnar", "baskets", "uproot", "numpy"]] == "measured").all(), rows
    for method in ("ttreereader", "draw", "rdataframe"):
        assert rows[method].startswith("failed: killed by SIGABRT: "), rows[method]
        assert "no dictionary" not in rows[method]
    assert rows["cmssw"].startswith("cannot read") and "no compiled class for vector<Thing>" in rows["cmssw"]
    assert rows["rntuple"].startswith("failed: its copy of ") and "unknown type: Thing" in rows["rntuple"]
    assert rows["rootreadspeed"].startswith("failed: killed by SIG"), rows["rootreadspeed"]
    assert checksum in proc.stdout and "killed by SIGABRT" in proc.stdout


def test_an_abort_is_named_by_its_signal_and_roots_fatal_line():
    """The issue's own case: ROOT warns about the missing dictionary, then its Fatal line aborts."""
    stderr = ("Warning in <TClass::Init>: no dictionary for class pat::Muon is available\n"
              "Fatal in <TEmulatedCollectionProxy::WithCont>: Unsupported value type 18 for value class <unknown>\n"
              "aborting\n#5  0x00007f in abort () from /lib/libc.so.6\n")
    error = process_error(-signal.SIGABRT, stderr)
    assert error.splitlines()[0] == ("killed by SIGABRT: Fatal in <TEmulatedCollectionProxy::WithCont>: Unsupported "
                                     "value type 18 for value class <unknown>")
    assert rc.classify_failure("ttreereader", "ZLIB", error) == ("failed", error.splitlines()[0])
    # a process that exits with its own error keeps it first, ROOT's warning before it or not
    assert rc.classify_failure("cpp", "ZLIB", process_error(2, "Warning in <X>: w\nread_branch: error: no branch"))[1] \
        == "no branch"


RNTUPLE = """
import sys
import ROOT
options = ROOT.RDF.RSnapshotOptions()
options.fOutputFormat = ROOT.RDF.ESnapshotOutputFormat.kRNTuple
ROOT.RDataFrame(100).Define("x", "float(rdfentry_)").Snapshot("Events", sys.argv[1], ["x"], options)
"""


def test_an_rntuple_named_as_the_tree_is_refused_saying_what_reads_it(tmp_path):
    path = tmp_path / "ntuple.root"
    subprocess.run([sys.executable, "-c", RNTUPLE, str(path)], check=True, capture_output=True, timeout=300)
    assert uproot.open(path).classnames() == {"Events;1": "ROOT::RNTuple"}
    for argv in ([], ["--tree", "Events"]):
        proc = _readers([str(path), "--branch", "x", *argv, "--work", str(tmp_path / "work")])
        assert proc.returncode == 2, proc.stderr
        assert f"file {path}: 'Events' is an RNTuple, not a TTree" in proc.stderr
        assert "RNTupleReader" in proc.stderr and "uproot" in proc.stderr
    assert not (tmp_path / "work").exists()


def test_the_command_takes_the_measurement_lock(typed_file, tmp_path):
    lock = tmp_path / "measure.lock"
    env = {**harness.pinned_env(), measurement_lock.LOCK_ENV: str(lock)}
    hold = ("import sys, time\nfrom throughput.core import measurement_lock\nwith measurement_lock.held('test holder'):\n"
            "    print('held', flush=True)\n    time.sleep(4)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True, env=env)
    assert holder.stdout.readline().strip() == "held"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "throughput.readers", "--no-progress", str(typed_file), "--branch",
                           "f", "--readers", "columnar", "--repetitions", "1", "--warmup", "0"],
                          capture_output=True, text=True, env=env, timeout=900)
    holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"measurement lock {lock} is held by pid {holder.pid} (test holder" in proc.stderr
    assert f"measurement lock {lock} taken after" in proc.stderr and time.monotonic() - start > 2
