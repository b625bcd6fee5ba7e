"""NanoAOD-like generator and RNTuple copy: schema and values of the real file, errors named."""
from __future__ import annotations

import shutil
import subprocess
import sys

import awkward as ak
import numpy as np
import pandas as pd
import pytest
import requests
import uproot

from throughput import configuration
from throughput.setup import config
from throughput.inputs import datasets
from throughput.core import harness

SECTION = configuration.validate({}, check_resources=False)["datasets"]
SOURCE = datasets.source_path(SECTION)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("nanoaod") / "part0.root"
    record = datasets.make_nanoaod_like(path, 400, "ZLIB", SECTION, progress=False)
    return path, record


def test_generated_file_has_the_real_files_branches_and_types(generated):
    path, record = generated
    with uproot.open(SOURCE) as source, uproot.open(path) as made:
        real, new = source["Events"], made["Events"]
        assert new.num_entries == 400 == record["events"]
        assert {b.name: b.typename for b in new.branches} == {b.name: b.typename for b in real.branches}
        assert made.file.fCompress == 101  # ZLIB level 1


def test_multiplicities_are_resampled_from_the_real_events(generated):
    path, _ = generated
    real = uproot.open(SOURCE)["Events"].arrays(["nJet", "nMuon", "Jet_pt"])
    new = uproot.open(path)["Events"].arrays(["nJet", "nMuon", "Jet_pt"])
    assert set(np.unique(new["nJet"])) <= set(np.unique(real["nJet"]))
    assert ak.all(ak.num(new["Jet_pt"]) == new["nJet"])
    # Floats are smeared by ~1%: close to, but not copies of, the real values.
    assert not np.isin(ak.flatten(new["Jet_pt"]).to_numpy(), ak.flatten(real["Jet_pt"]).to_numpy()).all()
    ratio = np.mean(ak.flatten(new["Jet_pt"])) / np.mean(ak.flatten(real["Jet_pt"]))
    assert 0.8 < ratio < 1.2


@pytest.fixture(scope="module")
def same_events(tmp_path_factory):
    """The real file's events in their order, generated once (so only what the generator does to
    the values differs from the real file)."""
    real_events = uproot.open(SOURCE)["Events"].num_entries
    path = tmp_path_factory.mktemp("same_events") / "same_events.root"
    record = datasets.make_nanoaod_like(path, real_events, "ZLIB", SECTION, progress=False, resample=False)
    return path, record


@pytest.mark.parametrize("compression", datasets.COMPARED_COMPRESSIONS)
def test_floats_keep_the_real_files_precision_and_compress_as_it_does(same_events, compression):
    """Each float branch keeps its real counterpart's zero low mantissa bits (NanoAOD's reduced
    precision) and compresses within 10% of it by each compressor of ROOT's baskets (ZLIB, LZ4,
    LZMA at level 1), on the real file's events (the factor measured the same way on both sides:
    datasets.float_compression_against_real)."""
    path, record = same_events
    branches = datasets.float_compression_against_real(path, SOURCE, compression=compression)
    assert record["float_branches"] == len(branches) > 100
    reduced = branches["zero_bits_real"] > 0
    assert record["reduced_precision_branches"] == int(reduced.sum()) and 0 < reduced.sum() < len(branches)
    lost = branches[branches["zero_bits_generated"] < branches["zero_bits_real"]]
    assert lost.empty, f"precision lost in {lost['branch'].tolist()}"
    compared = branches[branches["compared"]]
    off = compared[(compared["ratio"] - 1).abs() > 0.10]
    assert len(compared) > 100 and off.empty, (
        f"{len(off)} of {len(compared)} float branches compress unlike the real file's:\n{off.to_string()}")


def test_an_unknown_compressor_is_named(same_events):
    with pytest.raises(ValueError, match="'ZSTD': one of ZLIB, LZ4, LZMA"):
        datasets.float_compression_against_real(same_events[0], SOURCE, compression="ZSTD")


def test_the_precision_of_float_words_is_their_fewest_zero_low_bits():
    words = np.array([1.0, 1.5, 1.25, 0.0, -3.0], dtype=">f4")  # mantissas 0, 2^22, 2^21, 0, 2^22
    assert datasets.zero_low_mantissa_bits(words) == 21
    assert datasets.zero_low_mantissa_bits(np.array([1.0, 0.0], dtype=">f4")) == 23
    assert datasets.zero_low_mantissa_bits(np.array([1 + 2 ** -23], dtype=">f4")) == 0
    # the same values in the other byte order: the same precision
    assert datasets.zero_low_mantissa_bits(words.astype("<f4")) == 21


def test_same_seed_same_file_other_index_other_events(tmp_path):
    a, b, c = (tmp_path / f"{n}.root" for n in "abc")
    datasets.make_nanoaod_like(a, 50, "LZ4", SECTION, index=0, progress=False)
    datasets.make_nanoaod_like(b, 50, "LZ4", SECTION, index=0, progress=False)
    datasets.make_nanoaod_like(c, 50, "LZ4", SECTION, index=1, progress=False)
    read = lambda p: uproot.open(p)["Events"]["Jet_pt"].array()  # noqa: E731
    assert ak.all(ak.flatten(read(a)) == ak.flatten(read(b)))
    assert not (ak.num(read(a)).to_list() == ak.num(read(c)).to_list() and
                ak.all(ak.flatten(read(a)) == ak.flatten(read(c))))


def test_rntuple_copy_has_every_event(generated, tmp_path):
    path, _ = generated
    record = datasets.to_rntuple(path, tmp_path / "part0.ntuple.root", "ZLIB", SECTION)
    assert record["events"] == 400


def test_rntuple_copy_on_a_full_disk_names_the_cause_and_leaves_no_file(generated, small_tmpfs):  # noqa: F811
    path, _ = generated
    output = small_tmpfs / "part1.ntuple.root"
    with pytest.raises(harness.KernelError) as error:
        datasets.to_rntuple(path, output, "none", SECTION)  # about 1.8 MB uncompressed: does not fit
    message = str(error.value)
    assert f"writing {output}" in message and "No space left on device" in message, message
    assert "no RNTuple" not in message, message
    assert not list(small_tmpfs.iterdir()), "a partial copy (or its temporary) was left behind"


def test_rntuple_copy_over_the_file_size_limit_names_it_and_leaves_no_file(generated, tmp_path):
    path, _ = generated
    output = tmp_path / "part1.ntuple.root"
    with pytest.raises(harness.KernelError) as error:
        harness.run_kernel("tree_to_rntuple", {"source": path, "output": output, "compression": "none",
                                               "level": 0, "max-file-bytes": 300000})
    message = str(error.value)
    assert f"writing {output}" in message and "File too large" in message, message
    assert "file size limit 300000 bytes" in message, message
    assert not list(tmp_path.iterdir())


# A jagged small array, Jet_a[nJet][3], as one leaf and as one branch per element (the
# flat AOD-like layout's Jet_a014_0.._2), written by ROOT itself.
_SMALL_ARRAY_TREE = """
import array, sys
import ROOT
f = ROOT.TFile.Open(sys.argv[1], "RECREATE")
t = ROOT.TTree("Events", "")
n = array.array("i", [0])
t.Branch("nJet", n, "nJet/I")
one_leaf = sys.argv[2] == "leaf"
values = [array.array("f", [0.0] * 30) for _ in range(1 if one_leaf else 3)]
if one_leaf:
    t.Branch("Jet_a", values[0], "Jet_a[nJet][3]/F")
else:
    for k, v in enumerate(values):
        t.Branch(f"Jet_a_{k}", v, f"Jet_a_{k}[nJet]/F")
for event in range(20):
    n[0] = event % 4
    for j in range(n[0]):
        for k in range(3):
            if one_leaf:
                values[0][3 * j + k] = event + j + k / 10
            else:
                values[k][j] = event + j + k / 10
    t.Fill()
f.Write()
f.Close()
"""


def test_the_rntuple_importer_aborts_on_a_jagged_small_array_leaf(tmp_path):
    """Why the flat AOD-like file stores each element of a small array as a branch of its
    own (make_aod_like.cpp, README, the paper): ROOT's RNTupleImporter aborts on a
    Jet_a[nJet][3] leaf ("free(): invalid next size" in ROOT 6.40) and copies the same values
    split into three branches. Should a ROOT release copy the leaf, this fails, and the
    sentences that say it does not must change."""
    for form in ("leaf", "branches"):
        subprocess.run([sys.executable, "-c", _SMALL_ARRAY_TREE, str(tmp_path / f"{form}.root"), form],
                       check=True, capture_output=True)
    copied = harness.run_kernel("tree_to_rntuple", {"source": tmp_path / "branches.root",
                                                    "output": tmp_path / "branches.ntuple.root",
                                                    "compression": "ZLIB", "level": 1})
    assert copied.validation["events"] == 20
    with uproot.open(tmp_path / "branches.ntuple.root") as f:  # the values themselves came across
        assert ak.to_list(f["Events"].arrays(["Jet_a_2"])["Jet_a_2"][3]) == pytest.approx([3.2, 4.2, 5.2])
    with pytest.raises(harness.KernelError) as error:
        harness.run_kernel("tree_to_rntuple", {"source": tmp_path / "leaf.root",
                                               "output": tmp_path / "leaf.ntuple.root",
                                               "compression": "ZLIB", "level": 1})
    assert "exited with -" in str(error.value), str(error.value)  # killed by a signal (SIGABRT), not an error it names


@pytest.mark.parametrize("compression", datasets.COMPRESSIONS)
def test_every_compression_is_written(tmp_path, compression):
    record = datasets.make_nanoaod_like(tmp_path / "x.root", 20, compression, SECTION, progress=False)
    assert record["ok"] and record["compression_settings"] == datasets.level(SECTION, compression) + 100 * (
        {"none": 0, "ZLIB": 1, "LZMA": 2, "LZ4": 4, "ZSTD": 5}[compression]) * (compression != "none")


def test_missing_source_names_the_file(tmp_path, monkeypatch):
    """No local copy and no network: the real file and the config key are named, nothing is left."""
    def offline(url, timeout):
        raise requests.ConnectionError("no network here")

    monkeypatch.setattr(requests, "get", offline)
    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "downloads")
    section = {**SECTION, "source": str(tmp_path / "no-copies")}
    with pytest.raises(datasets.RealFileError, match=f"{datasets.NANOAOD_SOURCE}.*datasets.source"):
        datasets.make_nanoaod_like(tmp_path / "x.root", 10, "ZLIB", section, progress=False)
    assert not list(tmp_path.glob("x.root*")), "a partial output was left behind"


def test_source_without_events_tree_names_the_tree(tmp_path):
    copies = tmp_path / "copies"
    copies.mkdir()
    shutil.copyfile(SOURCE.parent / "uproot-HZZ.root", copies / datasets.NANOAOD_SOURCE)  # a file of another kind
    section = {**SECTION, "source": str(copies)}
    with pytest.raises(harness.KernelError, match="no tree 'Events'"):
        datasets.make_nanoaod_like(tmp_path / "x.root", 10, "ZLIB", section, progress=False)


def test_unknown_compression_is_refused_before_running(tmp_path):
    with pytest.raises(ValueError, match="BROTLI"):
        datasets.make_nanoaod_like(tmp_path / "x.root", 10, "BROTLI", SECTION, progress=False)


def test_config_names_an_unknown_compression_and_a_missing_source(tmp_path):
    with pytest.raises(config.ConfigError) as error:
        configuration.validate({"datasets": {"compression": "BROTLI"}}, workdir=tmp_path)
    assert "'datasets.compression' = 'BROTLI'" in str(error.value)
    with pytest.raises(config.ConfigError) as error:  # datasets.source is a folder of copies, not a file
        configuration.validate({"datasets": {"source": str(SOURCE)}}, workdir=tmp_path)
    assert f"'datasets.source' = {str(SOURCE)!r}" in str(error.value)


def test_the_rdataframe_section_states_each_compressors_factor_against_the_real_files():
    from throughput.experiments.rdataframe.report import precision_macros

    def branches(ratios):
        return pd.DataFrame({"ratio": ratios, "compared": [True] * len(ratios), "zero_bits_real": [0] * len(ratios),
                             "zero_bits_generated": [0] * len(ratios)})

    macros = precision_macros({"ZLIB": branches([1.02, 0.97]), "LZ4": branches([1.13, 1.0]),
                               "LZMA": branches([0.95, 1.01])}, 0.01)
    assert macros["RdfFactorWorstPercent"] == r"\num{3}"
    assert macros["RdfFactorOthers"] == r"LZ4 within \num{13}\,\% (median \num{6.5}\,\%), " \
                                        r"LZMA within \num{5}\,\% (median \num{3}\,\%)"
