"""Planning every run (one process per input set, cache state and reader
group) and measuring it, or reusing it when stored with the same parameters,
inputs and reader versions."""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from ... import REPO, harness, provenance
from ...results import input_identity, measure_once, sha256
from . import readers
from .inputs import counter_of
from .processes import (ReaderFailed, build_java_reader, classify_failure, java_available, java_dir,
                        run_json_process, run_rootreadspeed)
from .vocabulary import (COLLECTIONS, CPP_METHODS, HZZ_COLLECTIONS, LAYOUTS, PYTHON_READERS, READER_BY_NAME,
                         READER_TABLE, branch_name, collection_of, tree_name)

def plan(params: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every process to run: one per input set, cache state and reader group.

    `inputs` maps a set name to {"role": main|scan|real, "layout", "compression",
    "root": [...], "rntuple": [...], "numpy": [...]}."""
    readers = list(params["readers"])
    cpp = [m for m in CPP_METHODS if m in readers]
    runs = []
    for name, spec in inputs.items():
        layout = spec["layout"]
        available = LAYOUTS[layout][2]
        if spec["role"] == "main":
            wanted = [(c, "warm") for c in params["collections"]] + [(c, "cold") for c in params["cold_collections"]]
        elif spec["role"] == "scan":
            wanted = [(c, "warm") for c in params["scan_collections"]]
        else:
            wanted = [(c, "warm") for c in (params["collections"] if layout != "hzz" else HZZ_COLLECTIONS)]
        for cache in ("warm", "cold"):
            collections = [c for c, state in wanted if state == cache and c in available]
            # the figure's collection first, so each process reads it first (JIT and warm-up visible)
            collections.sort(key=lambda c: (c != params["timeline_collection"], COLLECTIONS.index(c)
                                            if c in COLLECTIONS else 0))
            if not collections:
                continue
            branches = [branch_name(layout, c) for c in collections]
            base = {"set": name, "role": spec["role"], "layout": layout, "compression": spec["compression"],
                    "cache": cache, "branches": branches}
            # a reader of a copy (RNTuple, Numpy) runs where the set has that copy
            has_copy = {"ttree": True, "rntuple": bool(spec.get("rntuple")), "numpy": bool(spec.get("numpy"))}
            methods = [m for m in cpp if has_copy[READER_BY_NAME[m].format]]
            if methods:
                runs.append({**base, "group": "cpp", "methods": methods})
            for reader in READER_TABLE:  # each Python or Java reader is a process of its own
                if reader.language in ("python", "java") and reader.name in readers and has_copy[reader.format]:
                    runs.append({**base, "group": reader.name, "methods": [reader.name]})
            if params["rootreadspeed"] and spec["role"] != "real" and cache == "warm":
                runs.append({**base, "group": "rootreadspeed", "methods": ["rootreadspeed"]})
    return runs


def run_name(run: dict[str, Any]) -> str:
    return f"{run['set'].replace('/', '_')}_{run['cache']}_{run['group']}"


def _records_frame(records: dict[str, list[dict]]) -> pd.DataFrame:
    frames = [pd.DataFrame(records.get(kind, [])) for kind in ("timing", "sample")]
    frame = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    return frame


def _measure(run: dict[str, Any], spec: dict[str, Any], params: dict[str, Any]) -> tuple[pd.DataFrame, dict]:
    common = {"files": ",".join(spec["root"]), "tree": tree_name(run["layout"]), "branches": ",".join(run["branches"]),
              "reps": params["repetitions"], "warmup": params["warmup"], "cache": run["cache"],
              "sample-every": params["sample_every"]}
    build_info = None
    label = f"{run['group']} reader on {run['set']} ({run['cache']})"
    load = os.getloadavg()[0]  # other work on the machine shows in wall time: recorded with the run
    try:
        if run["group"] == "cpp":
            args = {**common, "methods": ",".join(run["methods"])}
            if "rntuple" in run["methods"]:
                args["rntuple-files"] = ",".join(spec["rntuple"])
            argv = [str(harness.kernel_path("read_branch"))] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
            records = run_json_process(argv, label)
            build_info = harness.build_info("read_branch")
            frame = _records_frame(records)
        elif run["group"] in PYTHON_READERS:
            files = spec["numpy"] if run["group"] == "numpy" else spec["root"]
            args = {**common, "files": ",".join(files), "reader": run["group"],
                    "page-cache-tool": str(harness.kernel_path("page_cache"))}
            argv = [sys.executable, "-m", "throughput.experiments.reader_comparison", "read"]
            argv += [x for k, v in args.items() for x in (f"--{k}", str(v))]
            frame = _records_frame(run_json_process(argv, label))
        elif run["group"] == "laurelin":
            reason = java_available()
            if reason is None:
                try:
                    jar = build_java_reader()
                except harness.KernelError as error:  # e.g. Maven Central out of reach on a fresh host
                    reason = f"not measured here: {error}"
            if reason:
                frame = pd.DataFrame([{"record": "not_measured", "method": "laurelin", "branch": b, "message": reason}
                                      for b in run["branches"]])
            else:
                args = {**common, "page-cache-tool": str(harness.kernel_path("page_cache"))}
                argv = ["java", "-jar", str(jar)] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
                frame = _records_frame(run_json_process(argv, label))
        else:
            frames = [run_rootreadspeed(spec["root"], tree_name(run["layout"]), branch,
                                        counter_of(spec["root"][0], tree_name(run["layout"]), branch), run["cache"],
                                        params["repetitions"], params["warmup"]) for branch in run["branches"]]
            frame = pd.concat(frames, ignore_index=True)
    except ReaderFailed as error:
        # every method of the process failed with it (the C++ group runs several)
        kind, reason = classify_failure(run["group"], run["compression"], error.error)
        frame = pd.DataFrame([{"record": kind, "method": method, "branch": b, "message": reason}
                              for method in run["methods"] for b in run["branches"]])
    frame = frame.assign(**{k: run[k] for k in ("set", "role", "layout", "compression", "cache", "group")},
                         load_1min=load)
    frame["reader"] = frame["method"]
    if "rep" in frame:  # sample rows belong to the pass of their rep
        frame["warmup"] = frame["rep"] < 0
    frame["collection"] = frame["branch"].map(collection_of)
    return frame, provenance.capture(params, cache_state=run["cache"], build_info=build_info)


def _version_key(run: dict[str, Any]) -> dict[str, Any]:
    if run["group"] == "cpp":
        return {"binary_sha256": sha256(harness.kernel_path("read_branch"))}
    if run["group"] == "laurelin":
        source = REPO / "kernels" / "reader_comparison" / "java"
        return {"java_sources": hashlib.sha256(b"".join(p.read_bytes() for p in sorted(source.rglob("*"))
                                                        if p.is_file())).hexdigest(),
                "java": java_available() or shutil.which("java"),
                "jar_built": (java_dir() / "laurelin-reader.jar").exists()}
    if run["group"] == "rootreadspeed":
        return {"root": provenance.package_versions()["root"]}
    return {"uproot": provenance.package_versions()["uproot"], "numpy": provenance.package_versions()["numpy"],
            "reader_source": sha256(readers.__file__)}


def measure(params: dict[str, Any], inputs: dict[str, dict[str, Any]], raw_dir: str | Path,
            progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters and inputs) every run of `plan`."""
    from tqdm.auto import tqdm

    raw_dir = Path(raw_dir)
    frames = []
    runs = plan(params, inputs)
    # A missing input is bad input, not a reader's failure: stop before any run.
    missing = sorted({path for run in runs for key in ("root", "rntuple", "numpy")
                      for path in inputs[run["set"]].get(key, []) if not Path(path).is_file()})
    if missing:
        raise harness.KernelError(f"reader comparison: input files missing: {', '.join(missing)}")
    for run in tqdm(runs, desc="reader comparison", unit="run", disable=not progress):
        spec = inputs[run["set"]]
        key = {**{k: params[k] for k in ("repetitions", "warmup", "sample_every")}, **run,
               "inputs": input_identity(spec["root"] + spec.get("rntuple", []) + spec.get("numpy", [])),
               **_version_key(run)}
        frames.append(measure_once(raw_dir / f"{run_name(run)}.parquet", key,
                                   lambda run=run, spec=spec: _measure(run, spec, params)))
    return pd.concat(frames, ignore_index=True)
