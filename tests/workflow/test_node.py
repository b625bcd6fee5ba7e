"""The path for a GPU node without ROOT (throughput.node), tested here as such a node is:
ROOT, uproot, awkward, jsonschema, Snakemake and papermill hidden, no CUDA device."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from throughput.machines import archive
from throughput.core import harness

from conftest import REPO, command_env

HIDDEN = ("ROOT", "cppyy", "uproot", "awkward", "jsonschema", "snakemake", "papermill")


def _node_env(tmp_path):
    """The environment of a node that lacks HIDDEN: a sitecustomize refuses to import them."""
    shim = tmp_path / "node-shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import importlib.abc, sys

        class _NotOnThisNode(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {HIDDEN!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (hidden: a GPU node has none)")
                return None

        sys.meta_path.insert(0, _NotOnThisNode())
    """))
    env = command_env()
    env["PYTHONPATH"] = f"{shim}:{REPO / 'src'}"
    env["THROUGHPUT_COMMIT"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                                              text=True, check=True).stdout.strip()
    return env


def test_the_shim_hides_root_as_a_node_lacks_it(tmp_path):
    probe = subprocess.run([sys.executable, "-c", "import ROOT"], env=_node_env(tmp_path), capture_output=True,
                           text=True)
    assert probe.returncode != 0 and "hidden: a GPU node has none" in probe.stderr


@pytest.mark.slow
def test_a_node_without_root_measures_and_packs_an_archive(tmp_path):
    out = tmp_path / "node"
    argv = [sys.executable, "-m", "throughput.node", str(out), "--label", "test-node", "--quick",
            "--kernels", str(harness.kernels_dir())]
    run = subprocess.run(argv, env=_node_env(tmp_path), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    read = archive.read(out / "test-node")
    assert read.problems == []
    assert len(read.runs["memory_bandwidth"]) >= 10  # every -O level, numpy, numba and STREAM
    host_rows = [frame for frame, _, key in read.runs["gpu_bandwidth"] if key.get("method") == "C++"]
    assert host_rows, "the table's CPU row (host memcpy) is measured without a GPU"
    manifest = json.loads((out / "test-node" / archive.MANIFEST).read_text())
    notes = manifest["notes"]
    assert notes["quick"] and not notes["schema_checked"]  # jsonschema hidden: the defaults, unchecked
    gpu = notes["not_measured"]["gpu_bandwidth"]
    assert gpu and all(any(why in reason for why in ("no GPU", "awkward", "one NUMA node")) for reason in gpu.values()), gpu
    assert all("no GPU" in gpu[f"{part} {method}"] for part in ("table2", "jagged") for method in ("CUDA C++",)), gpu
    assert gpu["jagged awkward"] == "awkward is not installed on this host"
    # Measured groups are kept: packing again measures nothing (the archive exists: a new label).
    again = subprocess.run(argv[:5] + ["test-node-2", "--quick", "--kernels", str(harness.kernels_dir())],
                           env=_node_env(tmp_path), capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    first = json.loads((out / "test-node" / archive.MANIFEST).read_text())["files"]
    second = json.loads((out / "test-node-2" / archive.MANIFEST).read_text())["files"]
    assert first == second, "a measured group was measured again"


def test_a_config_file_narrows_what_the_node_measures_and_the_manifest_records_it(tmp_path):
    """--config: a lease-sized run (one type, no CPU methods) measures only those runs, and the
    archive says which keys differed from the defaults."""
    config = tmp_path / "lease.yaml"
    config.write_text("repetitions: 2\nnoise: {max_remeasures: 0}\ngpu_bandwidth: {dtypes: [float32], cpu_methods: []}\n")
    out = tmp_path / "node"
    argv = [sys.executable, "-m", "throughput.node", str(out), "--label", "lease", "--quick", "--config", str(config),
            "--kernels", str(harness.kernels_dir()), "--step", "gpu_bandwidth", "--step", "pack"]
    run = subprocess.run(argv, env=_node_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    read = archive.read(out / "lease")
    assert read.problems == [] and set(read.runs) == {"gpu_bandwidth"}
    keys = [key for _, _, key in read.runs["gpu_bandwidth"]]
    assert {(key["method"], key["dtype"]) for key in keys} == {("C++", "float32")}  # the host copy alone, float32
    assert {key["repetitions"] for key in keys} == {2}
    rounds = {int(r) for frame, _, _ in read.runs["gpu_bandwidth"] for r in frame.loc[~frame["warmup"], "round"]}
    assert rounds == {0, 1}
    notes = json.loads((out / "lease" / archive.MANIFEST).read_text())["notes"]
    assert notes["config"]["gpu_bandwidth"] == {"dtypes": ["float32"], "cpu_methods": []}
    assert notes["config"]["noise"] == {"max_remeasures": 0}


@pytest.mark.parametrize("config_name, label, dtypes, gpu_methods", [
    ("gpu_node_lease.yaml", "nvidia-h100", ["float32"], ["cuda"]),
    ("gpu_node_lease_all_methods.yaml", "nvidia-h200", ["float32", "float64"], ["cuda", "cupy", "numba_cuda"])])
def test_a_committed_lease_config_is_valid_and_is_what_its_archive_records(config_name, label, dtypes, gpu_methods):
    """Each committed lease config, checked against the schema here (the node has no jsonschema),
    is the configuration its archive was measured with: three rounds, its dtypes and methods."""
    from throughput import node

    overrides = node._overrides(REPO / "config" / config_name)
    resolved, _ = node.settings(False, overrides)
    assert resolved["repetitions"] == 3 and resolved["noise"]["max_remeasures"] == 0
    assert (resolved["gpu_bandwidth"]["dtypes"], resolved["gpu_bandwidth"]["gpu_methods"]) == (dtypes, gpu_methods)
    manifest = REPO / "archive" / label / archive.MANIFEST
    if manifest.exists():
        assert json.loads(manifest.read_text())["notes"]["config"] == overrides


@pytest.mark.parametrize("text, culprit", [("- a list\n", "a mapping of config keys is needed"),
                                           ("repetitions: [\n", "cannot be read as YAML"),
                                           ("repetitions: 0\n", "config key 'repetitions' = 0")])
def test_a_bad_config_file_is_named_before_any_work(tmp_path, capsys, text, culprit):
    from throughput import node

    config = tmp_path / "bad.yaml"
    config.write_text(text)
    assert node.main([str(tmp_path / "out"), "--config", str(config), "--step", "none"]) == 2
    error = capsys.readouterr().err
    assert culprit in error and (str(config) in error or "repetitions" in error)
    assert not (tmp_path / "out" / "build").exists()


def test_the_kernels_configure_and_build_without_root(tmp_path):
    """kernels/CMakeLists.txt with THROUGHPUT_WITHOUT_ROOT: no find_package(ROOT), only the
    memory and GPU bandwidth kernels (two are built here; the node builds all of them)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    build = tmp_path / "build"
    configure = subprocess.run([cmake, "-S", str(REPO / "kernels"), "-B", str(build), "-DTHROUGHPUT_WITHOUT_ROOT=ON",
                                "-DROOT_DIR=/nonexistent"], capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]
    assert "only the memory and GPU bandwidth kernels" in configure.stdout
    built = subprocess.run([cmake, "--build", str(build), "--target", "add_constant_O0", "host_copy"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-2000:]
    assert (build / "bin/add_constant_O0").is_file() and (build / "bin/host_copy").is_file()
    refused = subprocess.run([cmake, "--build", str(build), "--target", "read_branch"], capture_output=True, text=True)
    assert refused.returncode != 0  # a ROOT kernel is not part of this build
