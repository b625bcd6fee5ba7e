"""The seeds' published figures (../shared/seeds/), as data: the one place they are typed.

The experiments' "seed" columns and the paper's seed macros (`macros`, written to
paper/generated/study.tex by the workflow's rule study_macros) both read them from
here. Every figure is registered with `_cite`: the seed, where in it (table, slide or
section), and the text it was read from, as it stands in the seed file.
tests/unit/test_paper.py finds each quote in its seed file and each number of the figure,
in order, among the numbers of its quote (divided by `scale` where the quote says
"513M" or "10 billion").
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..setup import paths

SEEDS_DIR = paths.SHARED / "seeds"
FILES = {
    "000": "000_32b6575e248172a1.txt",  # DIANA-HEP, throughput studies for data analysis applications
    "001": "001_03b2756c29124afd.txt",  # CMS, thread scaling of different output methods
    "002": "002_55ebd3f9c35ec21c.txt",  # RDataFrame thread scaling optimizations
    "003": "003_f32b87b4b32dc8a8.txt",  # ROOT team, TBufferMerger performance benchmarks revisited
    "004": "004_3382e02672dc0930.txt",  # CERN, ROOT I/O performance with PROOF-Lite
}


@dataclass(frozen=True)
class Citation:
    """Where one published figure (or table row) comes from."""

    value: Any
    seed: str     # key of FILES, or "code" for the seed's own benchmark code (not its text)
    where: str    # table, slide or section of the seed
    quote: str    # the text the figure was read from, verbatim (whitespace aside)
    scale: float = 1.0  # value = number in the quote * scale


CITATIONS: list[Citation] = []


def _cite(value: Any, seed: str, where: str, quote: str, scale: float = 1.0) -> Any:
    CITATIONS.append(Citation(value, seed, where, quote, scale))
    return value


def seconds(text: str) -> float:
    """'8m45s' -> 525.0 (the seeds' notation for wall times)."""
    minutes, secs = text.rstrip("s").split("m")
    return 60 * int(minutes) + float(secs)


# ---- seed 000: reader comparison (Table 1, Figure 1) ------------------------------------------

_T1 = "Table 1"
# particle, particles per event, attributes, CMSSW kHz, TTree::Draw kHz, FemtoCode kHz
READER_TABLE1 = pd.DataFrame([
    _cite(("photon", 2.9, 205, 1.14, 435.0, 769.0), "000", _T1, "| photon | 2.9 | 205 | 1.14 kHz | 435 kHz | 769 kHz |"),
    _cite(("electron", 2.5, 231, 1.02, 417.0, 833.0), "000", _T1, "| electron | 2.5 | 231 | 1.02 | 417 | 833 |"),
    _cite(("muon", 2.7, 192, 1.02, 16.5, 770.0), "000", _T1, "| muon | 2.7 | 192 | 1.02 | 16.5 | 770 |"),
    _cite(("tau", 6.3, 88, 1.55, 244.0, 417.0), "000", _T1, "| tau | 6.3 | 88 | 1.55 | 244 | 417 |"),
    _cite(("jet", 16.7, 95, 1.15, 123.0, 182.0), "000", _T1, "| jet | 16.7 | 95 | 1.15 | 123 | 182 |"),
    _cite(("AK8 jet", 1.8, 95, 2.10, 556.0, 1000.0), "000", _T1, "| AK8 jet | 1.8 | 95 | 2.10 | 556 | 1000 |"),
], columns=["particle", "per_event", "attributes", "cmssw", "draw", "femtocode"],
    index=pd.Index(["Photon", "Electron", "Muon", "Tau", "Jet", "FatJet"], name="collection"))
READER_JAVA_SLOWDOWN = _cite(4.0, "000", "ROOT file reading: Java vs optimized C++",
                             "the asymptotic speed of `root4j`, which is all that matters for large files and large "
                             "datasets, is about 4 times slower than C++")
READER_ROOT_VERSION = _cite("6.08/04", "000", "ROOT file reading: Java vs optimized C++",
                            "The C++ ROOT version is 6.08/04")
READER_NUMPY_SHORTFALL = _cite(0.05, "000", "ROOT file reading: CMSSW vs optimized C++",
                               "The FemtoCode ROOT reader was only 5% slower than reading the equivalent data from "
                               "Numpy files", scale=0.01)
# The seed's Table 1 input was MiniAOD PAT objects: its analyzer (femtoCode-metrics
# cmssw/Demo/CraptasticAnalyzer) reads slimmedPhotons ... slimmedJetsAK8 from the file whose
# TTree::Print is cmssw/branches.txt, and times each product alone over the file's events; the
# beam spot (one small object per event) is its per-event floor.
READER_TREE_COMPRESSION = _cite(6.07, "code", "femtoCode-metrics cmssw/branches.txt",
                                "*        :          : Tree compression factor =   6.07                       *")
READER_FLOOR_EVENTS, READER_FLOOR_S = _cite(
    (48131, 5.14639), "code", "femtoCode-metrics cmssw/Demo/CraptasticAnalyzer/src/CraptasticAnalyzer.cc",
    '// : tag01(edm::InputTag("offlineBeamSpot")), token01(consumes<reco::BeamSpot>(tag01))'
    "                         //    48131   5.14639  5.24505")
READER_FLOOR_MS = 1e3 * READER_FLOOR_S / READER_FLOOR_EVENTS  # per event, the faster of its two runs

# ---- seed 000: memory bandwidth -----------------------------------------------------------------

_MBW = "Memory bandwidth: conventional vs GPU vs KNL"
MBW_VALUES = _cite(10**10, "000", _MBW, "a simple addition by a constant on 10 billion double-precision floating "
                   "point numbers", scale=1e9)
# Single thread, MBW_VALUES doubles: seconds per pass at -O0..-O3.
MBW_SECONDS = pd.DataFrame(
    [_cite((87.8, 27.2, 27.1, 25.6), "000", _MBW, "| in-place | 87.8 sec | 27.2 sec | 27.1 sec | 25.6 sec |"),
     _cite((91.2, 38.7, 39.2, 39.2), "000", _MBW, "| immutable | 91.2 sec | 38.7 sec | 39.2 sec | 39.2 sec |")],
    columns=["O0", "O1", "O2", "O3"], index=pd.Index(["inplace", "immutable"], name="mode"))
MBW_SINGLE_GHZ = dict(zip(("inplace", "immutable"), _cite(
    (0.39, 0.26), "000", _MBW, "the single-threaded CPU rates are 0.39 GHz (in-place) and 0.26 GHz (immutable)")))
MBW_PLATEAU_GHZ = _cite(2.0, "000", _MBW, "we hit a limit of about 2 GHz")
KNL_GHZ = _cite(8.0, "000", _MBW, "scaling on a single KNL machine reaches 8 GHz with 128 processes")

# ---- seed 000: GPUs (Table 2) ------------------------------------------------------------------

GPU_NAMES = ("GeForce GTX 660M", "GRID K520 (AWS)", "Tesla K20m (Princeton)", "Tesla K40c (CERN)",
             "Tesla K20Xm (CERN)", "Tesla P100-SXM2 (CERN)")
_cite(GPU_NAMES, "000", "Table 2", "| | GeForce GTX 660M | GRID K520 (AWS) | Tesla K20m (Princeton) | "
      "Tesla K40c (CERN) | Tesla K20Xm (CERN) | Tesla P100-SXM2 (CERN) |")
GPU_SHORT = ("GTX 660M", "K520", "K20m", "K40c", "K20Xm", "P100")
# Rates in GHz: 10^9 values per second of 32-bit floats (its caption: "billions of 32-bit
# floating point values per second"). Its "unified" rows are, by the same caption, memory
# "also known as pinned": host memory the GPU addresses (gpu_bandwidth.cases maps them).
_T2 = "Table 2"
GPU_TABLE2 = {
    "DRAM to CPU": _cite((1.8, 1.5, 0.82, 0.77, 0.77, 3.5), "000", _T2,
                         "| DRAM to <i>CPU</i> | 1.8 | 1.5 | 0.82 | 0.77 | 0.77 | 3.5 |"),
    "DRAM to GPU": _cite((1.7, 1.0, 0.87, 0.82, 0.51, 3.4), "000", _T2,
                         "| DRAM to GPU | 1.7 | 1.0 | 0.87 | 0.82 | 0.51 | 3.4 |"),
    "GPU to DRAM": _cite((1.7, 1.0, 0.51, 0.49, 0.76, 1.8), "000", _T2,
                         "| GPU to DRAM | 1.7 | 1.0 | 0.51 | 0.49 | 0.76 | 1.8 |"),
    "CPU write unified": _cite((2.3, 1.5, 0.87, 0.82, 0.50, 3.6), "000", _T2,
                               "| CPU write unified | 2.3 | 1.5 | 0.87 | 0.82 | 0.50 | 3.6 |"),
    "CPU read unified": _cite((2.3, 1.5, 0.50, 0.48, 0.46, 2.1), "000", _T2,
                              "| CPU read unified | 2.3 | 1.5 | 0.50 | 0.48 | 0.46 | 2.1 |"),
    "within GPU": _cite((7.0, 15.2, 18.9, 23.6, 23.6, 56.9), "000", _T2,
                        "| within GPU | 7.0 | 15.2 | 18.9 | 23.6 | 23.6 | 56.9 |"),
    "in-place global": _cite((4.0, 13.7, 16.9, 21.4, 21.1, 56.9), "000", _T2,
                             "| in-place global | 4.0 | 13.7 | 16.9 | 21.4 | 21.1 | 56.9 |"),
    "immutable global": _cite((4.1, 14.3, 16.9, 21.5, 21.2, 56.9), "000", _T2,
                              "| immutable global | 4.1 | 14.3 | 16.9 | 21.5 | 21.2 | 56.9 |"),
    "in-place unified": _cite((2.6, 2.2, 1.4, 2.6, 1.6, 7.1), "000", _T2,
                              "| in-place unified | 2.6 | 2.2 | 1.4 | 2.6 | 1.6 | 7.1 |"),
    "immutable unified": _cite((2.9, 2.4, 1.5, 2.9, 2.9, 8.3), "000", _T2,
                               "| immutable unified | 2.9 | 2.4 | 1.5 | 2.9 | 2.9 | 8.3 |"),
}
# Not in the seed's text: its benchmark code (github.com/diana-hep/femtoCode-metrics,
# gputest/testsuite.cu, the repository its footnote 4 names) allocates 33554432 floats per array.
GPU_ARRAY_MIB = _cite(33554432, "code", "femtoCode-metrics gputest/testsuite.cu",
                      "#define NUM_POINTS 33554432 // 1 GB of 32-bit floats") * 4 // 2**20

# ---- seed 001: output methods (CMS) -------------------------------------------------------------

WRITE_CPU = _cite("AMD Opteron(tm) Processor 6128", "001", "Measurements", "AMD Opteron(tm) Processor 6128")
WRITE_CORES = math.prod(_cite((4, 8), "001", "Measurements", "4 CPUs with 8 Cores per CPU"))
_FASTER = {
    "RECO": _cite((2.4, 1, 40.0, 32), "001", "RECO: Simple Data Format", "2.4x faster than ROOT format at 1 thread "
                  "- 40x faster than ROOT format at 32 threads"),
    "AOD": _cite((2.6, 1, 58.0, 32), "001", "AOD: Simple Data Format", "2.6x faster than ROOT format at 1 thread "
                 "- 58x faster than ROOT format at 32 threads"),
    "MiniAOD": _cite((5.0, 1, 45.0, 32), "001", "MiniAOD: Simple Data Format", "5x faster than ROOT format at 1 "
                     "thread - 45x faster than ROOT format at 32 threads"),
}
(WRITE_THREADS,) = {v[3] for v in _FASTER.values()}  # the "N threads" of every format
_SIZES = "ROOT to Simple Format Comparison (continued)"
WRITE_SIZE_EVENTS = _cite(100, "001", _SIZES, "Create CMS files with 100 events")
_root_mb = _cite((4.490, 0.646, 0.105), "001", _SIZES, "ROOT 4.490 0.646 0.105")
_simple_mb = _cite((12.370, 2.869, 0.494), "001", _SIZES, "Simple 12.370 2.869 0.494")
_size_ratio = _cite((2.76, 4.44, 4.70), "001", _SIZES, "Size Ratio 2.76 4.44 4.70")
# How many times faster the simple format was than ROOT (LZ4 + IMT), at 1 and at
# WRITE_THREADS threads, and how many times larger its files were.
WRITE_SEED001 = pd.DataFrame({
    "format": list(_FASTER),
    "faster_1": [v[0] for v in _FASTER.values()],
    "faster_32": [v[2] for v in _FASTER.values()],
    "size_ratio": list(_size_ratio),
    "root_mb_per_event": list(_root_mb),
    "simple_mb_per_event": list(_simple_mb),
})

# ---- seed 003: TBufferMerger ----------------------------------------------------------------------

_TBM = "TBufferMerger Performance Benchmark"
WRITE_RANDOM_GB = _cite(1, "003", _TBM, "Create ~1GB of data")
WRITE_TBM_CPU = _cite(("i7-7820X", 8), "003", _TBM, "i7-7820X Processor (8 cores")
WRITE_TBM_ROOT = _cite(("6.12", "6.14"), "003", _TBM, "Compare ROOT 6.12 (light colors) and 6.14 (dark colors)")

# ---- seed 002: RDataFrame --------------------------------------------------------------------------

_BENCH = "Benchmark: Fill Histograms from NANOAD"
RDF_BENCH_HISTOGRAMS = _cite(9, "002", _BENCH, "fill 9 TH3D")
RDF_BENCH_EVENTS = _cite(513e6, "002", _BENCH, "from 513M Monte Carlo events in NANOAD format", scale=1e6)
RDF_STORAGE = pd.DataFrame([
    _cite(("2 x Xeon (32C/64T)", "Local SSD (2xSATA)", 0.92, "8m45s"), "002", _BENCH,
          "2 x Xeon (32C/64T) Local SSD (2xSATA) 0.92 8m45s"),
    _cite(("2 x Xeon (32C/64T)", "eos/xrootd (10gbps)", 0.67, "10m36s"), "002", _BENCH,
          "2 x Xeon (32C/64T) eos/xrootd (10gbps) 0.67 10m36s"),
    _cite(("2 x Xeon (32C/64T)", "CephFS HDD (10gbps)", 0.83, "9m27s"), "002", _BENCH,
          "2 x Xeon (32C/64T) CephFS HDD (10gbps) 0.83 9m27s"),
    _cite(("2 x Xeon (32C/64T)", "CephFS SSD (10gbps)", 0.88, "9m07s"), "002", _BENCH,
          "2 x Xeon (32C/64T) CephFS SSD (10gbps) 0.88 9m07s"),
    _cite(("2 x EPYC (128C/256T)", "Page Cache", 0.77, "2m58s"), "002", _BENCH,
          "2 x EPYC (128C/256T) Page Cache 0.77 2m58s"),
], columns=["cpu", "storage", "cpu_eff", "time"]).assign(
    threads=lambda d: d["cpu"].str.extract(r"/(\d+)T")[0].astype(int),
    wall_s=lambda d: d["time"].map(seconds))
# Compression: total size and size of the branches read (GB), and the benchmark on the local SSD
# (64 threads) and in the page cache (256 threads).
_COMP = "Benchmark 1: Compression Algorithms and IO vs CPU Limits"
RDF_COMPRESSION = pd.DataFrame([
    (*_cite(("LZMA", 9, 477, 63), "002", _COMP, "LZMA (9) 477 63"),
     *_cite((0.92, "8m45s"), "002", _COMP, "Local SSD (2xSATA) LZMA 0.92 8m45s"),
     *_cite((0.77, "2m58s"), "002", _COMP, "Page Cache* LZMA 0.77 2m58s")),
    (*_cite(("ZSTD", 5, 680, 86), "002", _COMP, "ZSTD (5) 680 86"),
     *_cite((0.75, "7m11s"), "002", _COMP, "Local SSD (2xSATA) ZSTD 0.75 7m11s"),
     *_cite((0.74, "2m26s"), "002", _COMP, "Page Cache* ZSTD 0.74 2m26s")),
    (*_cite(("LZ4", 4, 967, 116), "002", _COMP, "LZ4 (4) 967 116"),
     *_cite((0.70, "7m17s"), "002", _COMP, "Local SSD (2xSATA) LZ4 0.70 7m17s"),
     *_cite((0.75, "2m22s"), "002", _COMP, "Page Cache* LZ4 0.75 2m22s")),
], columns=["compression", "level", "total_gb", "read_gb", "ssd_eff", "ssd_time", "cache_eff", "cache_time"])
# Number of histograms (one Define each), LZMA, 32C/64T.
_NHIST = "Filling Histograms from NANO AOD: Scaling with number of Histograms"
RDF_NHIST_EVENTS = _cite(1.37e9, "002", _NHIST, "Filling histograms from 1.37B W Monte Carlo Events", scale=1e9)
RDF_NHIST_THREADS = _cite(64, "002", _NHIST, "Number of Histograms Wall Time CPU Efficiency (32C/64T)")
RDF_NHIST = pd.DataFrame([
    _cite((1, "7m04s", 0.82), "002", _NHIST, "1 7m04s 0.82"),
    _cite((51, "11m55s", 0.92), "002", _NHIST, "51 11m55s 0.92"),
    _cite((81, "16m18s", 0.94), "002", _NHIST, "81 16m18s 0.94"),
    _cite((101, "19m02s", 0.94), "002", _NHIST, "101 19m02s 0.94"),
], columns=["histograms", "time", "cpu_eff"]).assign(wall_s=lambda d: d["time"].map(seconds))
# PDF weights: one Define + Histo2D per weight against the Histo3D trick.
_PDF = "the slide on PDF/alpha_S weights and the Histo3D trick"
RDF_PDF_WEIGHTS = _cite(103, "002", _PDF, "PDF/ α_S uncertainties in the form of 103 alternate event weights")
RDF_PDF_EVENTS = _cite(119e6, "002", _PDF, "in a simple test with 119M DY events", scale=1e6)
_pdf_times = _cite(("1m38s", "7m55s"), "002", _PDF, "this is about 5x faster (1m38s vs 7m55s)")
RDF_PDF = {"histo3d": seconds(_pdf_times[0]), "defines": seconds(_pdf_times[1])}

# ---- seed 004: PROOF-Lite -----------------------------------------------------------------------------

RDF_RDEC_MB_S = _cite((20, 30), "004", "Decompression", "($\\sim 20\\div 30$ MB/s effective rate)")


# ---- the paper's seed macros ----------------------------------------------------------------------------

def _sci(value: float) -> str:
    """A large count as siunitx's mantissa-exponent (1e10 -> \\num{1e10}, 5.13e8 -> \\num{5.13e8})."""
    mantissa, exponent = f"{value:.2e}".split("e")
    return rf"\num{{{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}}}"


def _range(values) -> tuple[float, float]:
    values = [float(v) for v in values]
    return min(values), max(values)


def macros() -> dict[str, str]:
    r"""Every seed figure the paper's text quotes, as \newcommand name -> LaTeX (prefix Seed)."""
    # here: paper imports the intervals and scipy, which the seeds' tables (the GPU cases import
    # them on the node, before numba.cuda is patched) must not pull in
    from . import paper

    n = paper.number
    t1 = READER_TABLE1
    femto_over_cmssw = t1["femtocode"] / t1["cmssw"]
    femto_over_draw = t1["femtocode"] / t1["draw"]
    threads = sorted(set(RDF_STORAGE["threads"]))
    nhist = RDF_NHIST.set_index("histograms")["wall_s"]
    return {
        # seed 000, reader comparison
        "SeedRcRootVersion": paper.escape(READER_ROOT_VERSION),
        "SeedRcJavaSlowdown": n(READER_JAVA_SLOWDOWN),
        "SeedRcCmsswKHzMin": n(_range(t1["cmssw"])[0]), "SeedRcCmsswKHzMax": n(_range(t1["cmssw"])[1]),
        "SeedRcAttributesMin": n(_range(t1["attributes"])[0]), "SeedRcAttributesMax": n(_range(t1["attributes"])[1]),
        "SeedRcFemtoKHzMin": n(_range(t1["femtocode"])[0], 4), "SeedRcFemtoKHzMax": n(_range(t1["femtocode"])[1], 4),
        "SeedRcNumpyShortfallPercent": n(100 * READER_NUMPY_SHORTFALL),
        "SeedRcCmsswVsFemtoMin": n(femto_over_cmssw.min(), 2), "SeedRcCmsswVsFemtoMax": n(femto_over_cmssw.max(), 2),
        "SeedRcDrawVsFemtoMax": n(femto_over_draw.drop("Muon").max(), 2),
        "SeedRcDrawVsFemtoMuon": n(femto_over_draw["Muon"], 2),
        "SeedRcTreeCompression": n(READER_TREE_COMPRESSION), "SeedRcFloorMs": n(READER_FLOOR_MS, 2),
        # seed 000, memory bandwidth and GPUs
        "SeedMbwValues": _sci(MBW_VALUES),
        "SeedMbwInplaceGHz": n(MBW_SINGLE_GHZ["inplace"]), "SeedMbwImmutableGHz": n(MBW_SINGLE_GHZ["immutable"]),
        "SeedMbwPlateauGHz": n(MBW_PLATEAU_GHZ), "SeedKnlGHz": n(KNL_GHZ),
        "SeedGpuCount": n(len(GPU_NAMES)),
        "SeedGpuNames": paper.escape(", ".join(GPU_NAMES[:-1]) + " and " + GPU_NAMES[-1]),
        # seed 001
        "SeedWrtCmsCpu": paper.escape(WRITE_CPU), "SeedWrtCmsCores": n(WRITE_CORES),
        "SeedWrtFasterOneMin": n(WRITE_SEED001["faster_1"].min()), "SeedWrtFasterOneMax": n(WRITE_SEED001["faster_1"].max()),
        "SeedWrtFasterNMin": n(WRITE_SEED001["faster_32"].min()), "SeedWrtFasterNMax": n(WRITE_SEED001["faster_32"].max()),
        "SeedWrtThreads": n(WRITE_THREADS),
        "SeedWrtSizeRatioMin": n(WRITE_SEED001["size_ratio"].min()),
        "SeedWrtSizeRatioMax": n(WRITE_SEED001["size_ratio"].max()),
        "SeedWrtSizeEvents": n(WRITE_SIZE_EVENTS),
        # seed 003
        "SeedWrtRandomGB": n(WRITE_RANDOM_GB), "SeedWrtTbmCpu": paper.escape(WRITE_TBM_CPU[0]),
        "SeedWrtTbmCores": n(WRITE_TBM_CPU[1]), "SeedWrtTbmRoot": paper.escape(" and ".join(WRITE_TBM_ROOT)),
        # seeds 002 and 004
        "SeedRdfThreadsSmall": n(threads[0]), "SeedRdfThreadsLarge": n(threads[-1]),
        "SeedRdfNhistMin": n(nhist.index.min()), "SeedRdfNhistMax": n(nhist.index.max()),
        "SeedRdfNhistRatio": n(nhist[nhist.index.max()] / nhist[nhist.index.min()], 2),
        "SeedRdfNhistEvents": _sci(RDF_NHIST_EVENTS), "SeedRdfNhistThreads": n(RDF_NHIST_THREADS),
        "SeedRdfPdfWeights": n(RDF_PDF_WEIGHTS), "SeedRdfPdfEvents": _sci(RDF_PDF_EVENTS),
        "SeedRdfTrickSpeedup": n(RDF_PDF["defines"] / RDF_PDF["histo3d"], 2),
        "SeedRdfBenchHistograms": n(RDF_BENCH_HISTOGRAMS), "SeedRdfBenchEvents": _sci(RDF_BENCH_EVENTS),
        "SeedRdfRdecMin": n(RDF_RDEC_MB_S[0]), "SeedRdfRdecMax": n(RDF_RDEC_MB_S[1]),
    }


def numbers(text: str) -> list[float]:
    """The decimal numbers written in `text`, in order ('AK8' gives 8, '8m45s' gives 8 and 45)."""
    return [float(m) for m in re.findall(r"\d+(?:\.\d+)?", text)]
