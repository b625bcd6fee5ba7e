"""The study's vocabulary: particle collections, readers and their labels,
layouts, compressions, size estimates, the seed's figures and our target, and
the names of a layout's tree and branches."""
from __future__ import annotations

from ... import seeds

COLLECTIONS = ("Photon", "Electron", "Muon", "Tau", "Jet", "FatJet")
HZZ_COLLECTIONS = ("Jet", "Muon", "Electron", "Photon")
CPP_METHODS = ("columnar", "bulk", "ttreereader", "draw", "rdataframe", "cmssw", "rntuple")
TREE_CPP_METHODS = CPP_METHODS[:-1]  # the C++ readers of the TTree (rootreadspeed's file)
PYTHON_READERS = ("uproot", "numpy")
READERS = CPP_METHODS + ("uproot", "laurelin", "numpy")
LABELS = {
    "columnar": "C++ columnar", "bulk": "C++ bulk I/O", "ttreereader": "TTreeReader", "draw": "TTree::Draw",
    "rdataframe": "RDataFrame (1 thread)", "cmssw": "CMSSW-like (all attributes, objects)",
    "rntuple": "RNTupleReader", "uproot": "uproot", "laurelin": "Java (laurelin)", "numpy": "Numpy file",
    "rootreadspeed": "rootreadspeed",
}
COMPRESSIONS = ("none", "ZLIB", "LZ4", "ZSTD", "LZMA")
LAYOUTS = {
    # layout: (tree, value attribute, collections)
    "nanoaod": ("Events", "pt", COLLECTIONS),
    "aod": ("Events", "pt", COLLECTIONS),
    "hzz": ("events", "Px", HZZ_COLLECTIONS),
}
GOLDEN = 0x9E3779B97F4A7C15
AOD_BYTES_PER_EVENT_ESTIMATE = {"none": 16700, "ZLIB": 11100, "LZ4": 12500, "ZSTD": 10800, "LZMA": 9700}
NANOAOD_BYTES_PER_EVENT_ESTIMATE = {"none": 4550, "ZLIB": 1880, "LZ4": 2370, "ZSTD": 1900, "LZMA": 1590}

# Seed 000 (figures in throughput.seeds): Table 1, events per millisecond per process (kHz),
# and the data it read; root4j's slowdown against C++; the FemtoCode reader against Numpy.
SEED_TABLE1 = seeds.READER_TABLE1
SEED_JAVA_SLOWDOWN = seeds.READER_JAVA_SLOWDOWN
SEED_NUMPY_SHORTFALL = seeds.READER_NUMPY_SHORTFALL
NUMPY_TARGET = 0.95           # our target: columnar >= 95% of the Numpy baseline's rate per value


def branch_name(layout: str, collection: str) -> str:
    return f"{collection}_{LAYOUTS[layout][1]}"


def tree_name(layout: str) -> str:
    return LAYOUTS[layout][0]


def collection_of(branch: str) -> str:
    return branch.split("_", 1)[0]
