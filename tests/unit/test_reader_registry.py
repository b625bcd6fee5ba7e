"""The reader comparison's readers are declared once (vocabulary.READER_TABLE): the
config schema, the labels, the colours, the plan and the C++ kernel agree with it."""
from __future__ import annotations

import matplotlib.colors
import pytest
import yaml

from conftest import REPO
from throughput.experiments import reader_comparison as rc
from throughput.experiments.reader_comparison import vocabulary

SCHEMA = REPO / "workflow" / "schemas" / "sections" / "reader_comparison.schema.yaml"


def test_every_reader_has_a_distinct_label_and_colour():
    table = vocabulary.READER_TABLE
    names = [r.name for r in table]
    assert len(set(names)) == len(names)
    for attribute in ("label", "colour"):
        values = [getattr(r, attribute) for r in table]
        assert len(set(values)) == len(values), f"two readers share a {attribute}: {values}"
    for reader in table:
        assert matplotlib.colors.is_color_like(reader.colour), (reader.name, reader.colour)
        assert reader.language in ("cpp", "python", "java", "tool") and reader.format in ("ttree", "rntuple", "numpy", "memory")


def test_the_configs_readers_are_the_measured_readers_in_table_order():
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]["readers"]
    assert schema["items"]["enum"] == list(vocabulary.READERS)
    # "members" runs on the split-object file whatever the readers (OBJECT_METHODS); elsewhere only when asked
    assert schema["default"] == [r for r in vocabulary.READERS if r != "members"]
    assert "members" in vocabulary.OBJECT_METHODS


def test_derived_groups_follow_the_table():
    assert vocabulary.CPP_METHODS == ("columnar", "bulk", "ttreereader", "draw", "rdataframe", "members", "cmssw",
                                      "rntuple", "baskets", "memory")
    assert "rntuple" not in vocabulary.TREE_CPP_METHODS and set(vocabulary.TREE_CPP_METHODS) < set(vocabulary.CPP_METHODS)
    # the limit is measured beside the readers but is not one of them (the fastest C++ reader's target)
    assert "baskets" not in vocabulary.TREE_CPP_METHODS and "baskets" in vocabulary.OBJECT_METHODS
    # nor is the pass over the values held in memory (no file: what loading from the files costs)
    assert "memory" not in vocabulary.TREE_CPP_METHODS and "memory" not in vocabulary.OBJECT_METHODS


def test_every_python_and_java_reader_has_its_implementation():
    # a reader added to the table without its code would only fail when the workflow runs it
    from throughput.experiments.reader_comparison import measuring, readers
    assert set(readers._PYTHON_READ) == set(vocabulary.PYTHON_READERS)
    assert set(measuring.JAVA_BUILDS) == set(vocabulary.JAVA_READERS)
    for name, build in measuring.JAVA_BUILDS.items():
        # its sources: the parent pom.xml, the module common and the reader's own module
        assert all(source.exists() for source in build.sources), (name, build.sources)
        assert any((source / "pom.xml").is_file() for source in build.sources if source.is_dir()), name


@pytest.mark.parametrize("copies", [{"rntuple": [], "numpy": []}, {"rntuple": ["x.ntuple.root"], "numpy": ["x.npz"]}])
def test_the_plan_runs_a_copys_reader_only_where_the_copy_exists(copies):
    params = {"readers": list(vocabulary.READERS), "collections": ["Jet"], "cold_collections": [],
              "scan_collections": [], "timeline_collection": "Jet", "rootreadspeed": False}
    inputs = {"nanoaod/ZLIB": {"role": "main", "layout": "nanoaod", "compression": "ZLIB", "root": ["x.root"], **copies}}
    planned = [m for run in rc.plan(params, inputs) for m in run["methods"]]
    expected = [r.name for r in vocabulary.READER_TABLE
                if r.language != "tool" and (r.format in ("ttree", "memory") or copies[r.format])]
    assert sorted(planned) == sorted(expected)


def test_the_plan_passes_over_memory_in_warm_runs_only():
    # the values held in memory are the same whether the files are cached or not: a cold run has no use for them
    params = {"readers": list(vocabulary.READERS), "collections": ["Jet"], "cold_collections": ["Jet"],
              "scan_collections": [], "timeline_collection": "Jet", "rootreadspeed": False}
    inputs = {"nanoaod/ZLIB": {"role": "main", "layout": "nanoaod", "compression": "ZLIB", "root": ["x.root"]}}
    by_cache = {run["cache"]: run["methods"] for run in rc.plan(params, inputs) if run["group"] == "cpp"}
    assert "memory" in by_cache["warm"] and "memory" not in by_cache["cold"] and "columnar" in by_cache["cold"]
