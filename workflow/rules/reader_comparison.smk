# Reader comparison (seed 000, Table 1 and Figure 1): notebooks/reader_comparison.ipynb
# reads one attribute of every particle collection with every reader (C++
# methods, uproot, Java/laurelin, RNTuple, a Numpy file, rootreadspeed) and
# writes Table 1's analogue, the rate-vs-values figure and the ratio tables. Its
# notebook rule comes from its spec (rules/notebooks.smk); here its inputs: the shared
# NanoAOD-like and MiniAOD-like files with their RNTuple and Numpy copies, and the copies of
# the real files (all made by rules/datasets.smk), and here the Java reader.
from throughput.experiments.reader_comparison import spec as rc_spec

RC = STUDY["reader_comparison"]
RC_COMPRESSION = STUDY["datasets"]["compression"]
RC_JAVA = "build/java/reader_comparison/laurelin-reader.jar"
RC_WANTS_JAVA = "laurelin" in RC["readers"] and rc_spec.java_available() is None


def rc_inputs():
    """Every input set of the notebook, {set: {role, layout, compression, root, rntuple, numpy}}, as
    the reader comparison's spec names them (the standalone notebook takes the same, under its own
    data folder); rules/datasets.smk makes each file."""
    return rc_spec.input_sets(RC, STUDY["datasets"]["events_per_file"], RC_COMPRESSION, REAL_FILES)


RC_INPUTS = rc_inputs()


def rc_inputs_absolute():
    """The same, with absolute paths (the notebook runs in notebooks/)."""
    return {name: {key: [str(Path(p).resolve()) for p in value] if isinstance(value, list) else value
                   for key, value in spec.items()} for name, spec in RC_INPUTS.items()}


rule reader_comparison_java:
    input:
        [str(p) for p in rc_spec.source_files(rc_spec.LAURELIN_SOURCES)],
    output:
        RC_JAVA,
    shell:
        # Maven (the parent kernels/reader_comparison/java/pom.xml, -pl laurelin -am): offline
        # from the local repository under $XDG_CACHE_HOME/m2 when it has everything, else
        # from Maven Central (laurelin 1.0.1 and the build plugins).
        "python -m throughput.experiments.reader_comparison build-java build/java/reader_comparison"


EXPERIMENT_INPUTS["reader_comparison"] = [
    *(path for spec in RC_INPUTS.values() for key in ("root", "rntuple", "numpy") for path in spec.get(key, [])),
    *([RC_JAVA] if RC_WANTS_JAVA else []),
]
EXPERIMENT_PARAMETERS["reader_comparison"] = {"compression": RC_COMPRESSION, "inputs": rc_inputs_absolute()}
