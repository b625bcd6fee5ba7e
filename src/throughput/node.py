"""The experiments that need no ROOT, measured on a host that has none (a GPU node).

GPU nodes often lack ROOT, Snakemake and papermill, have no network and no
room for a virtual environment. This command builds the kernels of the CPU
memory-bandwidth and the GPU-bandwidth experiments (explode and combine
included) with the host's own CMake and compilers (kernels/CMakeLists.txt
with THROUGHPUT_WITHOUT_ROOT), measures them with the project's own loop,
checks and provenance (the same `measure` the notebooks call, config from
the schema's defaults fitted to this machine), and packs the raw results with
the machine's fingerprint into an archive folder (throughput.machines.archive), to be
committed under archive/ and read beside other machines:

    THROUGHPUT_COMMIT=<commit> python -m throughput.node OUT_DIR --label LABEL

The copy of the tree on such a node has no .git: THROUGHPUT_COMMIT says which
commit it is (throughput.core.provenance). `--step build|memory_bandwidth|gpu_bandwidth|pack`
runs one step, for hosts that limit a command's time (how long each takes on a
GPU node is not measured yet); the steps reuse what an earlier one left in OUT_DIR, and a measured group is
never measured again (throughput.core.experiment). `--quick` uses sizes small
enough for a test. A GPU method that cannot run here is a row of the archive's
manifest that says why, never a number.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import REPO
from .machines import archive
from .experiments import SPECS
# the packages import their measured code on first use of a name (setup.spec.load_later): a CPU
# step never loads the GPU's numba and CuPy
from .experiments import gpu_bandwidth as gb
from .experiments import memory_bandwidth as mb
from .setup import config, machine_fit
from .core import noise

# The experiments measured here, each with its section's check against this machine (its spec's
# check_config; throughput.configuration checks every section, importing the others' owners too).
SECTION_CHECKS = {name: SPECS[name].check_config for name in ("memory_bandwidth", "gpu_bandwidth")}
EXPERIMENTS = tuple(SECTION_CHECKS)
STEPS = ("build", *EXPERIMENTS, "pack", "none")  # none: only check the settings
# Sizes for a test of this path (the tests' tiny config, one round): not a measurement to publish.
QUICK = {"repetitions": 1, "warmup": 1, "memory_bandwidth": {"n_values": 200_000},
         "gpu_bandwidth": {"gpu_array_mib": 4, "cpu_array_mib": 4, "events": 2000, "gpu_events": 4096}}


class NodeError(Exception):
    """A step that cannot be done here, with what to fix."""


def build(out: Path) -> Path:
    """Configure and build the ROOT-free kernels in OUT/build; the folder of the binaries."""
    build_dir = out / "build"
    cmake = shutil.which("cmake")
    if cmake is None:
        raise NodeError("cmake is not on PATH: the kernels cannot be built")
    configure = [cmake, "-S", str(REPO / "kernels"), "-B", str(build_dir), "-DTHROUGHPUT_WITHOUT_ROOT=ON",
                 f"-DTHROUGHPUT_PYTHON={sys.executable}"]  # it generates the GPU case rows from the package
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    log = out / "build.log"
    with open(log, "w") as stream:
        for argv in (configure, [cmake, "--build", str(build_dir), "--parallel"]):
            if subprocess.run(argv, stdout=stream, stderr=subprocess.STDOUT).returncode != 0:
                raise NodeError(f"{' '.join(argv[:2])} failed; the end of {log}:\n"
                                + "\n".join(log.read_text().splitlines()[-30:]))
    return build_dir / "bin"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a finder that refuses it (the tests hide ROOT and others this way)
        return False


def settings(quick: bool, overrides: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """The two sections from the schema's defaults (or QUICK), with `overrides` (a config's keys,
    from --config) on top, fitted to this machine by the one rule of throughput.setup.machine_fit,
    and the methods left out here with why. Without jsonschema (not on GPU nodes) the values are
    not checked against the schema: check an overrides file on a host that has it first
    (`python -m throughput.node OUT --config FILE --step none` there)."""
    given = dict(QUICK) if quick else {}
    for key, value in (overrides or {}).items():  # a section's keys over QUICK's, not in place of them
        given[key] = {**given[key], **value} if isinstance(value, dict) and isinstance(given.get(key), dict) else value
    given["fit_to_machine"] = True
    resolved = config.validate(given, check_resources=False, schema_check=_installed("jsonschema"))
    left_out = {}
    if not _installed("awkward") and "awkward" in resolved["gpu_bandwidth"]["cpu_methods"]:
        resolved["gpu_bandwidth"]["cpu_methods"].remove("awkward")
        left_out["jagged awkward"] = "awkward is not installed on this host"
    problems = config.fit_sections(resolved, SECTION_CHECKS)
    if problems:
        raise config.ConfigError(problems)
    return resolved, left_out


def _params(resolved: dict[str, Any], section: str) -> dict[str, Any]:
    """A section's parameters as its notebook's session makes them (its spec's); what was fitted goes
    into every run's provenance."""
    machine_fit.record(resolved["fitted_to_machine"].get(section, []))
    return SPECS[section].parameters(resolved)


def measure_memory_bandwidth(resolved: dict[str, Any], results: Path) -> dict[str, str]:
    params = _params(resolved, "memory_bandwidth")
    frame = mb.measure_runs(params, results / "memory_bandwidth" / "raw", noise.Settings.from_config(resolved["noise"]))
    mb.check_agreement(frame)
    return {}


def measure_gpu_bandwidth(resolved: dict[str, Any], results: Path) -> dict[str, str]:
    """Measures what can run here; returns each run not measured, with why."""
    params = _params(resolved, "gpu_bandwidth")
    status = gb.detect_gpu(params["gpu_methods"])
    gb.check_device_fit(params, status)
    frame, skipped = gb.measure_runs(params, results / "gpu_bandwidth" / "raw", status,
                                noise.Settings.from_config(resolved["noise"]))
    if len(frame):
        gb.check_agreement(frame)
    not_measured = {f"{row.group} {row.method}": row.reason for row in skipped.itertuples()} if len(skipped) else {}
    return not_measured


def _overrides(path: Path | None) -> dict[str, Any]:
    """The --config file's keys (a mapping), or NodeError naming the file."""
    if path is None:
        return {}
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise NodeError(f"--config {path}: cannot be read as YAML ({error})") from error
    if not isinstance(loaded, dict):
        raise NodeError(f"--config {path}: a mapping of config keys is needed, not {type(loaded).__name__}")
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m throughput.node", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder for the build, the raw results and the archive")
    parser.add_argument("--label", default=None, help="the archive's label (default: this host's name)")
    parser.add_argument("--step", choices=STEPS, action="append", help="only these steps (default: all)")
    parser.add_argument("--quick", action="store_true", help="test sizes: not a measurement to publish")
    parser.add_argument("--kernels", default=None, help="use these built kernels instead of building")
    parser.add_argument("--config", default=None, type=Path,
                        help="a YAML of config keys over the schema's defaults (say fewer methods or rounds, for "
                             "a host that limits a command's time); the archive's manifest records it")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    steps = args.step or list(STEPS)
    results = out / "results"
    notes_path = out / "not_measured.json"
    try:
        overrides = _overrides(args.config)
        if steps == ["none"]:
            settings(args.quick, overrides)
            print(f"node: the settings{' of ' + str(args.config) if args.config else ''} are valid here")
            return 0
        kernels = Path(args.kernels).resolve() if args.kernels else out / "build" / "bin"
        if "build" in steps and not args.kernels:
            kernels = build(out)
            print(f"node: kernels built in {kernels}")
        if not kernels.is_dir():
            raise NodeError(f"no kernels in {kernels}: run the build step first")
        os.environ["THROUGHPUT_KERNELS_DIR"] = str(kernels)
        resolved, left_out = settings(args.quick, overrides)
        notes = json.loads(notes_path.read_text()) if notes_path.exists() else {}
        for experiment, measure in (("memory_bandwidth", measure_memory_bandwidth),
                                    ("gpu_bandwidth", measure_gpu_bandwidth)):
            if experiment in steps:
                notes[experiment] = {**measure(resolved, results),
                                     **(left_out if experiment == "gpu_bandwidth" else {})}
                notes_path.write_text(json.dumps(notes, indent=1, sort_keys=True) + "\n")
                print(f"node: {experiment} measured into {results / experiment / 'raw'}")
        if "pack" in steps:
            from .core import provenance

            label = args.label or provenance.machine()["hostname"]
            target = archive.pack(label, results, out / label, list(EXPERIMENTS),
                                  notes={"not_measured": notes, "quick": args.quick, "config": overrides,
                                         "schema_checked": _installed("jsonschema")})
            print(f"node: archive of {label} in {target} (commit it under archive/{label})")
    except (NodeError, archive.ArchiveError, config.ConfigError) as error:
        print(f"throughput.node: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
