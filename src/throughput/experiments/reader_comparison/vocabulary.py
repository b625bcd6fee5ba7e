"""The study's vocabulary: particle collections, readers and their labels,
layouts, compressions, size estimates, the seed's figures and our target, and
the names of a layout's tree and branches."""
from __future__ import annotations

from dataclasses import dataclass

COLLECTIONS = ("Photon", "Electron", "Muon", "Tau", "Jet", "FatJet")
HZZ_COLLECTIONS = ("Jet", "Muon", "Electron", "Photon")


@dataclass(frozen=True)
class Reader:
    """One reader of the comparison. Declared once here: the tuples, labels and
    colours below are derived from READER_TABLE, so a new reader is one line."""

    name: str       # what the kernel's --methods, the raw results and the runs call it
    label: str      # tables and legends
    colour: str     # figures (matplotlib colour)
    language: str   # "cpp" (kernel read_branch), "python" (readers.read), "java", "tool"
    format: str     # what it reads: "ttree", "rntuple", "numpy" or "memory" (no file)


READER_TABLE = (
    Reader("columnar", "C++ columnar", "tab:blue", "cpp", "ttree"),
    Reader("bulk", "C++ bulk I/O", "tab:cyan", "cpp", "ttree"),
    Reader("ttreereader", "TTreeReader", "tab:green", "cpp", "ttree"),
    Reader("draw", "TTree::Draw", "tab:olive", "cpp", "ttree"),
    Reader("rdataframe", "RDataFrame (1 thread)", "tab:purple", "cpp", "ttree"),
    Reader("members", "C++ all attributes, no objects", "peru", "cpp", "ttree"),  # the object file's split
    Reader("cmssw", "CMSSW-like (all attributes, objects)", "tab:brown", "cpp", "ttree"),
    Reader("rntuple", "RNTupleReader", "tab:pink", "cpp", "rntuple"),
    Reader("uproot", "uproot", "tab:orange", "python", "ttree"),
    Reader("laurelin", "Java (laurelin)", "tab:red", "java", "ttree"),
    Reader("root4j", "Java (root4j, patched)", "darkred", "java", "ttree"),  # the seed's own Java reader
    # not a reader an analysis uses: ROOT reads and decompresses the baskets, no per-entry call
    # (what any reader of the branch must do at least; the columnar reader's time above it)
    Reader("baskets", "C++ baskets only (limit)", "slategray", "cpp", "ttree"),
    # not a file reader: the values held in memory (read once by the columnar method, untimed), the
    # columnar reader's per-entry loop and checksum over them; its rate over the columnar reader's
    # is what loading from the files costs (seed 000's pass over cached data; warm runs only)
    Reader("memory", "C++ from memory (no file)", "gold", "cpp", "memory"),
    Reader("numpy", "Numpy file", "tab:gray", "python", "numpy"),
    Reader("rootreadspeed", "rootreadspeed", "black", "tool", "ttree"),  # ROOT's reference tool
)
READER_BY_NAME = {r.name: r for r in READER_TABLE}
CPP_METHODS = tuple(r.name for r in READER_TABLE if r.language == "cpp")
LIMIT_METHODS = ("baskets",)  # what a reader works against, not a reader an analysis uses
# rootreadspeed's peers: the C++ readers of the TTree
TREE_CPP_METHODS = tuple(r.name for r in READER_TABLE
                         if r.language == "cpp" and r.format == "ttree" and r.name not in LIMIT_METHODS)
PYTHON_READERS = tuple(r.name for r in READER_TABLE if r.language == "python")
JAVA_READERS = tuple(r.name for r in READER_TABLE if r.language == "java")
READERS = tuple(r.name for r in READER_TABLE if r.language != "tool")  # the measured readers, in table order
LABELS = {r.name: r.label for r in READER_TABLE}
COLORS = {r.name: r.colour for r in READER_TABLE}
# Figure 1's analogue: the columnar C++ reader, uproot and the Java readers (the seed's root4j among them).
TIMELINE_READERS = ("columnar", "uproot", *JAVA_READERS)
COMPRESSIONS = ("none", "ZLIB", "LZ4", "ZSTD", "LZMA")
LAYOUTS = {
    # layout: (tree, value attribute, collections)
    "nanoaod": ("Events", "pt", COLLECTIONS),
    "aod": ("Events", "pt", COLLECTIONS),
    "hzz": ("events", "Px", HZZ_COLLECTIONS),
    # the same MiniAOD-like values as std::vector<aod::Type> of generated PAT-like classes, split one
    # sub-branch per member as CMSSW stores its products (make_aod_like --layout objects): branches "Photon.p4.pt"
    # (the pT member is throughput.inputs.datasets.OBJECT_PT_MEMBER, not imported: this module stays cheap)
    "aod_objects": ("Events", "p4.pt", COLLECTIONS),
}
# The C++ methods on the object file, where the time of a CMSSW-like read goes: the member's
# baskets and count decompressed (baskets), the member read per entry (columnar), every member into
# flat buffers (members), every member streamed into objects (cmssw); and the other C++ readers
# on a split member (bulk: where ROOT refuses it; rntuple: the RNTuple copy, whose importer keeps
# the classes).
OBJECT_METHODS = ("columnar", "members", "cmssw", "baskets", "bulk", "ttreereader", "draw", "rdataframe", "rntuple")

# Seed 000's figures (Table 1, root4j's slowdown) are throughput.report.seeds' READER_*, which the
# package re-exports as SEED_*; not imported here: the `read` command (and the fork server its rounds
# come from) imports this module for the readers' names, and the seed's tables are pandas frames.
NUMPY_TARGET = 0.95           # our target: columnar >= 95% of the Numpy baseline's rate per value


def branch_name(layout: str, collection: str) -> str:
    separator = "." if layout == "aod_objects" else "_"  # a split member is named <collection>.<member>
    return f"{collection}{separator}{LAYOUTS[layout][1]}"


def tree_name(layout: str) -> str:
    return LAYOUTS[layout][0]


def set_tree(spec: dict) -> str:
    """The tree of an input set: its own "tree" (a user's file, throughput.readers), else its layout's."""
    return spec.get("tree") or tree_name(spec["layout"])


def collection_of(branch: str) -> str:
    return branch.replace(".", "_").split("_", 1)[0]
