"""Planning every run (one process per input set, cache state and reader
group) and measuring the runs of one input set and cache state interleaved,
round by round, or reusing them when stored with the same parameters, inputs
and reader versions on this machine."""
from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ...core import experiment, harness, noise, provenance
from ...core.results import input_identity, kernel_sha256, sources_sha256
from ...inputs.datasets import EMPTY_PRODUCT_BRANCH
from ...report import ledger
from ...setup.config import usable_cores
from . import readers
from .analysis import DECIDING_FIGURES, reading_time, slowdown, summary
from .command_line import read_captured
from .inputs import counter_of
from .processes import (ReaderFailed, build_java_reader, build_root4j_reader, classify_failure, java_dir, root4j_dir,
                        run_json_process, run_python_reader, run_rootreadspeed)
from .spec import LAURELIN_SOURCES, ROOT4J_SOURCES, java_available, main_sets, source_files
from .vocabulary import (COLLECTIONS, CPP_METHODS, HZZ_COLLECTIONS, JAVA_READERS, LAYOUTS, OBJECT_METHODS,
                         PYTHON_READERS, READER_BY_NAME, READER_TABLE, branch_name, collection_of, set_tree)

def plan(params: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every process to run: one per input set, cache state and reader group.

    `inputs` maps a set name to {"role": main|objects|scan|real|own, "layout",
    "compression", "root": [...], "rntuple": [...], "numpy": [...]}; a user's own
    file (role "own", throughput.readers) names its "tree", "branches" and "readers" itself."""
    runs = []
    for name, spec in inputs.items():
        readers = list(spec.get("readers", params["readers"]))
        cpp = [m for m in CPP_METHODS if m in readers]
        layout = spec["layout"]
        for cache, branches in _branches_by_cache(params, spec):
            base = {"set": name, "role": spec["role"], "layout": layout, "compression": spec["compression"],
                    "cache": cache, "branches": branches}
            # a reader of a copy (RNTuple, Numpy) runs where the set has that copy
            # (the values held in memory: a warm pass's, read from the TTree)
            has_copy = {"ttree": True, "rntuple": bool(spec.get("rntuple")), "numpy": bool(spec.get("numpy")),
                        "memory": cache == "warm"}
            # on the split-object file: where a CMSSW-like read's time goes, whatever the readers asked
            wanted_cpp = OBJECT_METHODS if spec["role"] == "objects" else cpp
            methods = [m for m in wanted_cpp if has_copy[READER_BY_NAME[m].format]]
            if methods:
                # and the split-object file's empty product: what each C++ method's read costs per
                # event whatever the product holds (seed 000's framework floor)
                cpp_branches = branches + [EMPTY_PRODUCT_BRANCH] if spec["role"] == "objects" else branches
                runs.append({**base, "branches": cpp_branches, "group": "cpp", "methods": methods})
            for reader in READER_TABLE:  # each Python or Java reader is a process of its own
                if reader.language in ("python", "java") and reader.name in readers and has_copy[reader.format]:
                    runs.append({**base, "group": reader.name, "methods": [reader.name]})
            if params["rootreadspeed"] and spec["role"] in ("main", "scan", "own") and cache == "warm":
                runs.append({**base, "group": "rootreadspeed", "methods": ["rootreadspeed"]})
    return runs


def _branches_by_cache(params: dict[str, Any], spec: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(cache state, branches) to read of one input set, by its role; each list starts with
    the figure's collection, so each process reads it first (JIT and warm-up visible)."""
    if spec["role"] == "own":
        return [("warm", list(spec["branches"]))]
    layout = spec["layout"]
    if spec["role"] == "main":
        wanted = [(c, "warm") for c in params["collections"]] + [(c, "cold") for c in params["cold_collections"]]
    elif spec["role"] == "objects":
        wanted = [(c, "warm") for c in params["collections"]]
    elif spec["role"] == "scan":
        wanted = [(c, "warm") for c in params["scan_collections"]]
    else:
        wanted = [(c, "warm") for c in (params["collections"] if layout != "hzz" else HZZ_COLLECTIONS)]
    plans = []
    for cache in ("warm", "cold"):
        collections = [c for c, state in wanted if state == cache and c in LAYOUTS[layout][2]]
        collections.sort(key=lambda c: (c != params["timeline_collection"], COLLECTIONS.index(c)
                                        if c in COLLECTIONS else 0))
        if collections:
            plans.append((cache, [branch_name(layout, c) for c in collections]))
    return plans


def run_name(run: dict[str, Any]) -> str:
    return f"{run['set'].replace('/', '_')}_{run['cache']}_{run['group']}"


def _records_frame(records: dict[str, list[dict]]) -> pd.DataFrame:
    # cannot_read: a method ROOT refuses for a branch (read_branch says why before it measures)
    frames = [pd.DataFrame(records.get(kind, [])) for kind in ("timing", "sample", "cannot_read")]
    frame = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    if "run_delay_s" in frame:  # -1: the kernel gave no scheduler statistics
        frame["run_delay_s"] = frame["run_delay_s"].where(frame["run_delay_s"] >= 0)
    return frame


def _measure_pass(run: dict[str, Any], spec: dict[str, Any], params: dict[str, Any],
                  repetition: int, settings: noise.Settings) -> tuple[pd.DataFrame, dict]:
    """One process of `run`: its warm-up passes, then one measured sample, which repeats the
    pass until its reading time reaches the noise section's min_sample_s, planned to cost at
    most its max_sample_s, and is taken again while the reading thread waited too long for a
    CPU (settings.sample_retakes; the Java readers and rootreadspeed, ROOT's own tool, which
    times one pass, do not retake). The interleaving
    loop calls it once per round; the C++ process runs its methods in the round's own random
    order, noise.round_order, as the processes of the round are. A reader that cannot read
    gives rows saying why."""
    common = {"files": ",".join(spec["root"]), "tree": set_tree(spec), "branches": ",".join(run["branches"]),
              "reps": 1, "warmup": params["warmup"], "min-sample-s": settings.min_sample_s,
              "max-sample-s": settings.max_sample_s, "cache": run["cache"], "sample-every": params["sample_every"]}
    build_info = None
    label = f"{run['group']} reader on {run['set']} ({run['cache']})"
    # the single-threaded readers (C++ and Python) are pinned to one core; the JVM's JIT and
    # garbage collector run beside its reading thread, and rootreadspeed is ROOT's to run
    core = harness.single_core() if run["group"] == "cpp" or run["group"] in PYTHON_READERS else None
    retaking = {**common, **settings.sample_retakes.kernel_args()}
    try:
        if run["group"] == "cpp":
            ordered = {**run, "methods": noise.round_order(run["methods"], repetition, settings.order_seed)}
            frame = _cpp_frame(ordered, spec, retaking, label, core)
            build_info = harness.build_info("read_branch")
        elif run["group"] in PYTHON_READERS:
            files = spec["numpy"] if run["group"] == "numpy" else spec["root"]
            args = {**retaking, "files": ",".join(files), "reader": run["group"],
                    "page-cache-tool": str(harness.kernel_path("page_cache"))}
            argv = [x for k, v in args.items() for x in (f"--{k}", str(v))]
            frame = _records_frame(run_python_reader(read_captured, argv, label, core=core))
        elif run["group"] in JAVA_READERS:
            reason = java_available()
            if reason is None:
                try:
                    jar = JAVA_BUILDS[run["group"]].build()
                except harness.KernelError as error:  # e.g. Maven Central out of reach on a fresh host
                    reason = f"not measured here: {error}"
            if reason:
                frame = _unread_rows("not_measured", [run["group"]], run["branches"], reason)
            else:
                args = {**common, "page-cache-tool": str(harness.kernel_path("page_cache"))}
                argv = ["java", "-jar", str(jar)] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
                frame = _records_frame(run_json_process(argv, label))
        else:
            frames = [run_rootreadspeed(spec["root"], set_tree(spec), branch,
                                        counter_of(spec["root"][0], set_tree(spec), branch), run["cache"],
                                        1, params["warmup"], settings.min_sample_s) for branch in run["branches"]]
            frame = pd.concat(frames, ignore_index=True)
    except ReaderFailed as error:
        # every method of the process failed with it (a C++ method alone: _cpp_frame)
        kind, reason = classify_failure(run["group"], run["compression"], error.error)
        frame = _unread_rows(kind, run["methods"], run["branches"], reason)
    frame = frame.assign(**{k: run[k] for k in ("set", "role", "layout", "compression", "cache", "group")})
    frame["reader"] = frame["method"]
    frame["warmup"] = frame["rep"] < 0  # sample rows belong to the pass of their rep; an unread row to none
    frame["collection"] = frame["branch"].map(collection_of)
    return frame, provenance.capture(params, cache_state=run["cache"], build_info=build_info, pinned_core=core)


def _cpp_frame(run: dict[str, Any], spec: dict[str, Any], common: dict[str, Any], label: str,
               core: int | None) -> pd.DataFrame:
    """The C++ methods of `run` in one process, interleaved as measured. Where that process
    fails (an exit code, a signal), each method runs alone in a process of its own: a method
    that aborts (TTreeReader, TTree::Draw and RDataFrame on a class without a dictionary, with
    SIGABRT) is then a row of its own with its own cause, and the others still read."""
    def records(methods: list[str], label: str) -> pd.DataFrame:
        args = {**common, "methods": ",".join(methods)}
        if "rntuple" in methods:
            args["rntuple-files"] = ",".join(spec["rntuple"])
        argv = [str(harness.kernel_path("read_branch"))] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
        frame = _records_frame(run_json_process(argv, label, core=core))
        _check_every_opening_left_out(frame, len(spec["root"]), label)
        return frame

    try:
        return records(run["methods"], label)
    except ReaderFailed:
        if len(run["methods"]) == 1:
            raise
    frames = []
    for method in run["methods"]:
        try:
            frames.append(records([method], f"{label}, {method} alone"))
        except ReaderFailed as error:
            kind, reason = classify_failure(run["group"], run["compression"], error.error)
            frames.append(_unread_rows(kind, [method], run["branches"], reason))
    return pd.concat(frames, ignore_index=True)


def _check_every_opening_left_out(frame: pd.DataFrame, files: int, label: str) -> None:
    """Each C++ method timed the opening of every file apart from its reading (RDataFrame, which
    opens the files itself, included): otherwise its reading rate would not compare. The memory
    method opens none: its values were read before any timing."""
    timing = frame[frame["record"] == "timing"]
    if timing.empty:
        return
    opens = timing["method"].map(lambda m: 0 if READER_BY_NAME[m].format == "memory" else files)
    wrong = timing[timing["files_opened"] != opens]
    if len(wrong):
        row = wrong.iloc[0]
        raise AssertionError(f"{label}: method {row['method']} timed the opening of {row['files_opened']} of "
                             f"{files} files apart from its reading")


def _unread_rows(kind: str, methods: list[str], branches: list[str], reason: str) -> pd.DataFrame:
    """Rows saying why `methods` did not read `branches` (record `kind`: failed, cannot_read, not_measured)."""
    return pd.DataFrame([{"record": kind, "method": method, "branch": b, "message": reason, "rep": float("nan")}
                         for method in methods for b in branches])


@dataclass(frozen=True)
class JavaBuild:
    """How a Java reader of READER_TABLE is built, where its jar is, and the
    sources it is built from (their hash is part of its runs' reuse key)."""

    build: Callable[[], Path]
    jar: Callable[[], Path]
    sources: tuple[Path, ...]


JAVA_BUILDS = {
    "laurelin": JavaBuild(build_java_reader, lambda: java_dir() / "laurelin-reader.jar", LAURELIN_SOURCES),
    "root4j": JavaBuild(build_root4j_reader, lambda: root4j_dir() / "root4j-reader.jar", ROOT4J_SOURCES),
}


def _tree_hash(*sources: Path) -> str:
    """sha256 over every file of `sources` (files, and every file below folders), in order."""
    digest = hashlib.sha256()
    for path in source_files(sources):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _version_key(run: dict[str, Any]) -> dict[str, Any]:
    if run["group"] == "cpp":
        return {"binary_sha256": kernel_sha256(harness.kernel_path("read_branch"))}
    if run["group"] in JAVA_READERS:
        return {"java_sources": _tree_hash(*JAVA_BUILDS[run["group"]].sources),
                "java": java_available() or shutil.which("java"),
                "jar_built": JAVA_BUILDS[run["group"]].jar().exists()}
    if run["group"] == "rootreadspeed":
        return {"root": provenance.package_versions()["root"]}
    return {"uproot": provenance.package_versions()["uproot"], "numpy": provenance.package_versions()["numpy"],
            "reader_source": sources_sha256(readers.__file__, harness.__file__)}


def groups(params: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> list[experiment.Group]:
    """The processes that ratios compare: every reader process of one input set
    and cache state (the C++ methods share one process, in each round's random order)."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in plan(params, inputs):
        grouped.setdefault((run["set"], run["cache"]), []).append({**run, "name": run_name(run)})
    return [experiment.Group(f"{name} ({cache})", runs) for (name, cache), runs in grouped.items()]


def deciding_claims(params: dict[str, Any], grouped: list[experiment.Group]) -> list[experiment.Deciding]:
    """The ledger's claims that this experiment's figures decide (analysis.DECIDING_FIGURES), each with
    the runs an extra round of it measures: the MiniAOD-like set's warm C++ process reading only the
    timeline branch with the columnar reader and the claim's (and the claim's own process, for a
    reader of its own), and its judge: the figure at the looks' level, by the claim's rule
    (ledger.decide, as the paper's ledger judges it)."""
    if "compression" not in params:  # a user's own file (throughput.readers): no main set, no claim
        return []
    aod_set, _ = main_sets(params["compression"])
    branch = branch_name("aod", params["timeline_collection"])
    group = next((g for g in grouped if g.name == f"{aod_set} (warm)"), None)
    if group is None:
        return []
    machine = ledger.Machine("this machine", usable_cores(), gpu=False)
    deciding = []
    for claim in ledger.deciding("reader_comparison", DECIDING_FIGURES):
        macro = claim.measured_by["macro"]
        reader = DECIDING_FIGURES[macro]
        runs = []
        for run in group.runs:
            if run["group"] == "cpp" and "columnar" in run["methods"]:
                methods = [m for m in run["methods"] if m in ("columnar", reader)]
                runs.append({**run, "branches": [branch], "methods": methods})
            elif run["group"] == reader:
                runs.append({**run, "branches": [branch]})
        measured = {m for run in runs for m in run["methods"]}
        if {"columnar", reader} <= measured:  # both readers measured on this set
            deciding.append(experiment.Deciding(claim.id, group.name, tuple(runs),
                                                _judge(claim, macro, machine, aod_set, branch, reader)))
    return deciding


def _judge(claim: ledger.Claim, macro: str, machine: ledger.Machine, set_name: str, branch: str,
           reader: str) -> experiment.Judge:
    return ledger.looks_judge(claim, machine, lambda rows, confidence: {
        macro: slowdown(summary(rows), set_name, branch, reader, confidence)})


def measure_runs(params: dict[str, Any], inputs: dict[str, dict[str, Any]], raw_dir: str | Path,
                 noise_settings: noise.Settings | None = None, progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters, inputs and reader
    versions on this machine) every run of `plan`, the processes of each group of
    `groups` interleaved round by round (throughput.core.experiment)."""
    grouped = groups(params, inputs)
    runs = [run for group in grouped for run in group.runs]
    # A missing input is bad input, not a reader's failure: stop before any run.
    missing = sorted({path for run in runs for key in ("root", "rntuple", "numpy")
                      for path in inputs[run["set"]].get(key, []) if not Path(path).is_file()})
    if missing:
        raise harness.KernelError(f"reader comparison: input files missing: {', '.join(missing)}")

    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        spec = inputs[run["set"]]
        return {**{k: params[k] for k in ("warmup", "sample_every")}, **run,
                "inputs": input_identity(spec["root"] + spec.get("rntuple", []) + spec.get("numpy", [])),
                **_version_key(run)}

    settings = noise_settings or noise.Settings()
    return experiment.measure_interleaved(
        grouped, raw_dir, key_of,
        lambda run, repetition: _measure_pass(run, inputs[run["set"]], params, repetition, settings),
        params["repetitions"], settings, series=["reader", "branch"],
        desc="reader comparison", progress=progress, quantity=reading_time,
        deciding=deciding_claims(params, grouped), looks=experiment.Looks.of(params))
