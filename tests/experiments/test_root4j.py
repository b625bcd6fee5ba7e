"""root4j, the second Java reader: built from source with our patch, it reads flat and
jagged float branches of ROOT 6 files (ZLIB, LZ4, ZSTD), of the project's NanoAOD-like
files, of the real CMS NanoAOD file and of an older file, and its items and checksums
equal uproot's, computed here from the same files. Both Java readers (root4j and
laurelin) read every numeric leaf type, flat and jagged, and the members of split object
collections, as uproot does."""
from __future__ import annotations

import json
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import uproot

from throughput import configuration
from throughput.inputs import datasets
from throughput.core import harness
from throughput.experiments import reader_comparison as rc

SECTION = configuration.validate({}, check_resources=False)["datasets"]
KERNELS_USED = ("page_cache", "make_nanoaod_like", "make_aod_like")  # checked by conftest's built_kernels

# ROOT's compression settings (algorithm * 100 + level) of the files written here.
COMPRESSIONS = {"ZLIB": 101, "LZ4": 404, "ZSTD": 505}

# A flat float branch "x" and a jagged one "v[n]/F" (the layout of NanoAOD's X_pt[nX]/F),
# in several baskets, with values whose bits matter: -0, denormals, infinities, NaN.
WRITE = """
import array, sys, ROOT
path, setting = sys.argv[1], int(sys.argv[2])
f = ROOT.TFile.Open(path, "RECREATE", "", setting)
t = ROOT.TTree("Events", "root4j test")
x = array.array("f", [0.0]); n = array.array("i", [0]); v = array.array("f", [0.0] * 16)
t.Branch("x", x, "x/F"); t.Branch("n", n, "n/I"); t.Branch("v", v, "v[n]/F")
pair = array.array("f", [0.0, 0.0]); t.Branch("pair", pair, "a/F:b/F")  # two leaves: no reader's branch
t.SetAutoFlush(1000)
special = [0.0, -0.0, 1e-45, -3e-39, float("inf"), -float("inf"), float("nan"), 3.4e38]
r = ROOT.TRandom3(7)
for i in range(5000):
    x[0] = special[i % len(special)] if i % 97 == 0 else r.Gaus(0, 50)
    n[0] = (i * 7) % 11
    for j in range(n[0]):
        v[j] = special[j % len(special)] if i % 89 == 0 else r.Exp(30.0)
    t.Fill()
t.Write(); f.Close()
"""


def _built(build):
    """A Java reader's jar, built now if needed; the test is skipped where Java cannot build it."""
    reason = rc.java_available()
    if reason:
        pytest.skip(reason)
    return build()


@pytest.fixture(scope="module")
def jar():
    return _built(rc.build_root4j_reader)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One file per compression, written by ROOT (PyROOT, in a process of its own)."""
    folder = tmp_path_factory.mktemp("root4j")
    paths = {}
    for name, setting in COMPRESSIONS.items():
        path = folder / f"{name.lower()}.root"
        subprocess.run([sys.executable, "-c", WRITE, str(path), str(setting)], check=True, capture_output=True)
        assert rc.file_compression(path) == name
        paths[name] = str(path)
    return paths


def _expected(path: str, tree: str, branch: str) -> tuple[int, int, str]:
    """Events, items and checksum computed with uproot, independently of the Java readers:
    each value's bit pattern in the branch's own type."""
    array = uproot.open(path)[tree][branch].array()
    values = np.asarray(ak.flatten(array, axis=None))
    return len(array), len(values), rc.hex_checksum(rc.checksum(values))


def _read(jar, path: str, tree: str, branches: list[str], method: str = "root4j",
          **extra) -> dict[str, tuple[int, int, str]]:
    args = {"files": path, "tree": tree, "branches": ",".join(branches), "reps": 2, "warmup": 1,
            "cache": "warm", "sample-every": 1000, "page-cache-tool": str(harness.kernel_path("page_cache")),
            **extra}
    argv = ["java", "-jar", str(jar)] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
    records = rc.run_json_process(argv, f"{method}_reader", timeout_s=300)
    timing = records["timing"]
    assert len(timing) == 3 * len(branches) and {r["method"] for r in timing} == {method}
    assert {r["kernel"] for r in timing} == {f"{method}_reader"}
    return {r["branch"]: (r["events"], r["items"], r["checksum"]) for r in records["result"]}


def _check(jar, path: str, tree: str, branches: list[str], method: str = "root4j") -> None:
    got = _read(jar, path, tree, branches, method)
    for branch in branches:
        expected = _expected(path, tree, branch)
        assert expected[1] > 0
        assert got[branch] == expected, (path, branch)


@pytest.mark.parametrize("compression", list(COMPRESSIONS))
def test_root4j_reads_flat_and_jagged_floats_as_uproot(jar, written, compression):
    _check(jar, written[compression], "Events", ["x", "v"])


def test_root4j_reads_the_nanoaod_like_files(jar, tmp_path):
    """The generator's files (LZ4, ROOT >= 6.12 TTree with TIOFeatures): counter nX plus X_pt[nX]/F."""
    path = tmp_path / "nano.root"
    datasets.make_nanoaod_like(path, 300, "LZ4", SECTION, progress=False)
    _check(jar, str(path), "Events", ["Jet_pt", "Muon_pt"])


def test_root4j_reads_the_real_cms_nanoaod_file(jar):
    """Its last baskets are kept inside the TTree (fWriteBasket): laurelin fails on this file."""
    path = str(datasets.real_file(datasets.NANOAOD_SOURCE, SECTION))
    _check(jar, path, "Events", ["Jet_pt", "MET_pt", "LHEPdfWeight"])


def test_root4j_reads_an_older_file(jar):
    """uproot-HZZ.root, written by an older ROOT (no TIOFeatures): jagged Muon_Px, flat MET_px."""
    path = str(datasets.real_file("uproot-HZZ.root", SECTION))
    _check(jar, path, "events", ["Muon_Px", "MET_px"])


def test_a_wrong_root4j_is_caught(jar, written):
    """--corrupt-for-test flips a checksum bit: the comparison above would fail."""
    path = written["ZLIB"]
    got = _read(jar, path, "Events", ["x"], **{"corrupt-for-test": 1})
    assert got["x"] != _expected(path, "Events", "x")


def test_root4j_errors_name_file_and_branch(jar, written):
    path = written["ZSTD"]
    for branch, words in (("nope", "no such branch"), ("pair", "not a single numeric leaf (2 leaves")):
        with pytest.raises(rc.ReaderFailed) as failure:
            _read(jar, path, "Events", [branch])
        assert f"file {path}" in failure.value.error and f"branch {branch}" in failure.value.error
        assert words in failure.value.error and "exited with 2" in str(failure.value)


# Every numeric leaf type of ROOT (flat, and jagged as a leaf list with counter n), with its
# array.array type code: signed and unsigned integers of each size, floats, Bool_t.
TYPED_LEAVES = {"D": "d", "B": "b", "b": "B", "S": "h", "s": "H", "I": "i", "i": "I", "L": "q", "l": "Q", "O": "B"}
WRITE_TYPED = """
import array, json, sys, ROOT
leaves = json.loads(sys.argv[2])
f = ROOT.TFile.Open(sys.argv[1], "RECREATE", "", 404)
t = ROOT.TTree("Events", "every numeric leaf type")
n = array.array("i", [0]); t.Branch("n", n, "n/I")
flat, jagged = {}, {}
for leaf, code in leaves.items():
    flat[leaf] = array.array(code, [0]); t.Branch(f"x{leaf}", flat[leaf], f"x{leaf}/{leaf}")
    jagged[leaf] = array.array(code, [0] * 8); t.Branch(f"v{leaf}", jagged[leaf], f"v{leaf}[n]/{leaf}")
t.SetAutoFlush(700)
r = ROOT.TRandom3(11)
def value(leaf, code):
    if leaf == "O":
        return int(r.Rndm() < 0.5)
    if code == "d":
        return r.Gaus(0, 1e6)
    bits = array.array(code).itemsize * 8
    low, high = (0, 2**bits - 1) if code.isupper() else (-(2**(bits - 1)), 2**(bits - 1) - 1)
    return min(high, max(low, int(low + r.Rndm() * (high - low + 1))))
for i in range(3000):
    n[0] = i % 9
    for leaf, code in leaves.items():
        flat[leaf][0] = value(leaf, code)
        for j in range(n[0]):
            jagged[leaf][j] = value(leaf, code)
    t.Fill()
t.Write(); f.Close()
"""


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "typed.root"
    subprocess.run([sys.executable, "-c", WRITE_TYPED, str(path), json.dumps(TYPED_LEAVES)], check=True,
                   capture_output=True)
    return str(path)


JAVA_READERS = [("root4j", rc.build_root4j_reader), ("laurelin", rc.build_java_reader)]


@pytest.mark.parametrize("method,build", JAVA_READERS)
def test_java_readers_read_every_numeric_leaf_type_as_uproot(method, build, typed):
    jar = _built(build)
    branches = [f"{kind}{leaf}" for leaf in TYPED_LEAVES for kind in ("x", "v")]
    types = {str(uproot.open(typed)["Events"][b].array().layout.form.type) for b in branches}
    assert {"float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"} <= {
        t.split("* ")[-1] for t in types}  # the file holds what the test is about
    _check(jar, typed, "Events", branches, method)


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    """The project's split-object file: each collection a std::vector<aod::Type>, one sub-branch per member."""
    path = tmp_path_factory.mktemp("objects") / "objects.root"
    rc.make_aod_like(path, 200, "LZ4", 4, 3, progress=False, objects=True)
    return str(path)


@pytest.mark.parametrize("method,build", JAVA_READERS)
def test_java_readers_read_split_object_members_as_uproot(method, build, objects):
    """Table 1 on the split-object file: a member's sub-branch (float, int and bool members;
    "Jet.p4.pt" of std::vector<aod::Jet>, in its PAT-like base's Lorentz vector); the collection's
    own branch is refused, named."""
    jar = _built(build)
    branches = ["Jet.p4.pt", "Muon.p4.pt", "Jet.charge", "Jet.a005"]
    assert {str(uproot.open(objects)["Events"][b].interpretation.content.from_dtype) for b in branches} == {
        ">f4", ">i4", "bool"}  # the file holds what the test is about
    _check(jar, objects, "Events", branches, method)
    with pytest.raises(rc.ReaderFailed) as failure:
        _read(jar, objects, "Events", ["Jet"], method)
    assert f"file {objects}" in failure.value.error and "branch Jet" in failure.value.error
