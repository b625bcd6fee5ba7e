"""results: raw Parquet files with provenance, atomic writes; measure-once reuse (experiment.measure_once)."""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from throughput.core import experiment, provenance, results

PROVENANCE = {"date_utc": "2024-01-01T00:00:00+00:00", "cpu_model": "test cpu", "packages": {"numpy": "1.0"},
              "git_dirty": None, "logical_cores": 4}
PARAMS = {"n_values": 1000, "repetitions": 2, "warmup": 1, "opt_levels": ["O0", "O3"], "max_threads": None}


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"rep": [-1, 0, 1], "warmup": [True, False, False],
                         "wall_s": [0.5, 0.25, 0.125], "mode": ["inplace"] * 3})


def _leftovers(directory: Path, final_name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in (final_name, results.CURRENT_RUNS))


# --- write_raw / read_raw ---------------------------------------------------------------------

def test_round_trip(tmp_path):
    frame = _frame()
    path = tmp_path / "sub" / "run.parquet"  # parent is created
    returned = results.write_raw(frame, path, PROVENANCE, PARAMS)
    assert returned == path and path.is_file()
    read_frame, provenance, params = results.read_raw(path)
    pd.testing.assert_frame_equal(read_frame, frame, check_dtype=False)
    assert read_frame["warmup"].dtype == bool
    assert provenance == PROVENANCE
    assert params == PARAMS
    assert _leftovers(path.parent, path.name) == []


def test_round_trip_non_json_values_become_strings(tmp_path):
    path = tmp_path / "run.parquet"
    results.write_raw(_frame(), path, {"where": Path("/x/y")}, {"dir": Path("/a/b")})
    _, provenance, params = results.read_raw(path)
    assert provenance == {"where": "/x/y"}
    assert params == {"dir": "/a/b"}


def test_write_raw_replaces_existing(tmp_path):
    path = tmp_path / "run.parquet"
    results.write_raw(_frame(), path, PROVENANCE, PARAMS)
    results.write_raw(_frame().iloc[:1], path, PROVENANCE, {"other": 1})
    frame, _, params = results.read_raw(path)
    assert len(frame) == 1 and params == {"other": 1}


def test_read_raw_without_provenance_raises(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.Table.from_pandas(_frame(), preserve_index=False), path)
    with pytest.raises(ValueError, match="provenance"):
        results.read_raw(path)


def test_read_raw_with_provenance_but_no_params_raises(tmp_path):
    path = tmp_path / "half.parquet"
    table = pa.Table.from_pandas(_frame(), preserve_index=False)
    table = table.replace_schema_metadata({results.PROVENANCE_KEY: b"{}"})
    pq.write_table(table, path)
    with pytest.raises(ValueError):
        results.read_raw(path)


# --- atomic_path ------------------------------------------------------------------------------

def test_atomic_path_success(tmp_path):
    final = tmp_path / "out.txt"
    with results.atomic_path(final) as temporary:
        assert temporary != final
        assert temporary.parent == final.parent
        assert temporary.suffix == final.suffix
        temporary.write_text("done")
        assert not final.exists()
    assert final.read_text() == "done"
    assert _leftovers(tmp_path, "out.txt") == []


def test_atomic_path_failure_leaves_nothing(tmp_path):
    final = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError, match="boom"):
        with results.atomic_path(final) as temporary:
            temporary.write_text("half written")
            raise RuntimeError("boom")
    assert not final.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_failure_keeps_previous_file(tmp_path):
    final = tmp_path / "out.txt"
    final.write_text("previous")
    with pytest.raises(KeyError):
        with results.atomic_path(final) as temporary:
            temporary.write_text("new")
            raise KeyError("interrupted")
    assert final.read_text() == "previous"
    assert _leftovers(tmp_path, "out.txt") == []


def test_atomic_path_failure_before_writing(tmp_path):
    final = tmp_path / "deep" / "out.txt"
    with pytest.raises(ValueError):
        with results.atomic_path(final):
            raise ValueError("nothing written")
    assert not final.exists()
    assert list(final.parent.iterdir()) == []


# --- measure_once -----------------------------------------------------------------------------

class Counter:
    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.frame.assign(call=self.calls), {"call": self.calls}


def test_measure_once_measures_then_reuses(tmp_path):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    first = experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 1
    assert path.is_file()
    second = experiment.measure_once(path, dict(PARAMS), measure)
    assert measure.calls == 1  # reused, not measured again
    pd.testing.assert_frame_equal(first, second, check_dtype=False)
    _, provenance, params = results.read_raw(path)
    assert {k: v for k, v in provenance.items() if k != "load"} == {"call": 1}
    assert params == results.reuse_key(PARAMS)


def test_measure_once_records_the_load_the_machine_saw(tmp_path):
    path = tmp_path / "m.parquet"

    def busy():
        deadline = time.process_time() + 0.2
        while time.process_time() < deadline:  # this process's own work is not "other" load
            pass
        return _frame(), {}

    experiment.measure_once(path, PARAMS, busy)
    load = results.read_raw(path)[1]["load"]
    assert load["wall_s"] >= 0.2 and load["cores"] >= 1
    assert load["others_cpu_s"] >= 0 and load["steal_s"] >= 0 and load["load_avg_1min"] >= 0
    # the 0.2 s this process spent are not counted as the others' (a little slack for the rest of the machine)
    assert load["others_cpu_s"] < load["wall_s"] * load["cores"]


def test_measure_once_does_not_reuse_a_run_of_another_machine(tmp_path, monkeypatch):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    real = provenance.fingerprint()
    monkeypatch.setattr(provenance, "fingerprint", lambda: {**real, "hostname": "another-host"})
    experiment.measure_once(path, PARAMS, measure)  # as if copied in from another machine
    monkeypatch.setattr(provenance, "fingerprint", lambda: real)
    experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 2
    assert results.read_raw(path)[2]["machine"]["hostname"] == real["hostname"]


def test_measure_once_does_not_reuse_a_run_made_with_other_package_versions(tmp_path, monkeypatch):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    real = provenance.package_versions()
    monkeypatch.setattr(provenance, "package_versions", lambda: {**real, "numpy": "0.0"})
    experiment.measure_once(path, PARAMS, measure)
    monkeypatch.setattr(provenance, "package_versions", lambda: real)
    experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 2


def test_measure_once_key_order_does_not_matter(tmp_path):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    experiment.measure_once(path, {"a": 1, "b": [1, 2]}, measure)
    experiment.measure_once(path, {"b": [1, 2], "a": 1}, measure)
    assert measure.calls == 1


def test_measure_once_remeasures_when_params_differ(tmp_path):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    experiment.measure_once(path, PARAMS, measure)
    frame = experiment.measure_once(path, {**PARAMS, "n_values": 2000}, measure)
    assert measure.calls == 2
    assert set(frame["call"]) == {2}
    _, provenance, params = results.read_raw(path)
    assert params["n_values"] == 2000 and provenance["call"] == 2
    # and the new parameters are now reused
    experiment.measure_once(path, {**PARAMS, "n_values": 2000}, measure)
    assert measure.calls == 2


def test_measure_once_remeasures_corrupt_file(tmp_path):
    path = tmp_path / "m.parquet"
    path.write_bytes(b"\x00garbage, not parquet\xff" * 10)
    measure = Counter(_frame())
    frame = experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 1
    assert len(frame) == 3
    _, _, params = results.read_raw(path)
    assert params == results.reuse_key(PARAMS)


def test_measure_once_remeasures_truncated_file(tmp_path):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    experiment.measure_once(path, PARAMS, measure)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 2
    assert results.read_raw(path)[2] == results.reuse_key(PARAMS)


def test_measure_once_remeasures_file_without_provenance(tmp_path):
    path = tmp_path / "m.parquet"
    pq.write_table(pa.Table.from_pandas(_frame(), preserve_index=False), path)
    measure = Counter(_frame())
    experiment.measure_once(path, PARAMS, measure)
    assert measure.calls == 1


def test_measure_once_failing_measure_leaves_old_file(tmp_path):
    path = tmp_path / "m.parquet"
    measure = Counter(_frame())
    experiment.measure_once(path, PARAMS, measure)

    def broken():
        raise RuntimeError("kernel failed")

    with pytest.raises(RuntimeError):
        experiment.measure_once(path, {**PARAMS, "warmup": 3}, broken)
    assert results.read_raw(path)[2] == results.reuse_key(PARAMS)


def test_params_stored_as_canonical_json(tmp_path):
    path = tmp_path / "m.parquet"
    experiment.measure_once(path, {"t": (1, 2), "p": Path("/q")}, Counter(_frame()))
    metadata = pq.read_schema(path).metadata
    stored = json.loads(metadata[results.PARAMS_KEY])
    assert {k: stored[k] for k in ("t", "p")} == {"t": [1, 2], "p": "/q"}


def test_inputs_are_identified_by_name_and_content(tmp_path):
    first, moved = tmp_path / "a" / "part0.root", tmp_path / "b" / "part0.root"
    for path in (first, moved):
        path.parent.mkdir()
        path.write_bytes(b"same bytes")
    assert results.input_identity([first]) == results.input_identity([moved])  # another folder, same bytes
    assert results.input_identity([first])[0] == ["part0.root", hashlib.sha256(b"same bytes").hexdigest()]
    before = results.sha256(first)
    first.write_bytes(b"same length")  # regenerated with other bytes, the same size
    os.utime(first, ns=(1, 1))         # and an older date: the content still tells
    assert results.sha256(first) != before == results.sha256(moved)
    assert results.input_identity([first]) != results.input_identity([moved])


def test_a_kernel_rebuilt_from_the_same_source_keeps_its_hash_and_any_other_change_does_not(tmp_path):
    """Two nvcc builds of one source differ only in the name of nvcc's temporary file
    (tmpxft_<pid>_<counter>, seen in gpu_bandwidth_cuda): the kernel's hash (its runs' reuse key)
    is the same; a byte changed elsewhere, or a binary without such a name, hashes as its bytes."""
    body = b"\x7fELF code tmpxft_%s_00000000-6_gpu_bandwidth.compute_90.cudafe1.cpp more code"
    first, rebuilt, other = tmp_path / "first", tmp_path / "rebuilt", tmp_path / "other"
    first.write_bytes(body % b"000017f2")
    rebuilt.write_bytes(body % b"00001827")
    other.write_bytes((body % b"000017f2").replace(b"more", b"mode"))
    assert results.sha256(first) != results.sha256(rebuilt)
    assert results.kernel_sha256(first) == results.kernel_sha256(rebuilt) != results.kernel_sha256(other)
    plain = tmp_path / "g++ build"
    plain.write_bytes(b"\x7fELF code without nvcc's names")
    assert results.kernel_sha256(plain) == results.sha256(plain) == hashlib.sha256(plain.read_bytes()).hexdigest()


# --- current runs: what the latest execution used ------------------------------------------------

def test_current_runs_are_the_latest_executions_and_a_new_one_starts_afresh(tmp_path, monkeypatch):
    measure = Counter(_frame())
    assert results.current_raw_files(tmp_path) == []
    for name in ("a", "b"):  # one execution: measured at one scale
        experiment.measure_once(tmp_path / f"{name}.parquet", {**PARAMS, "run": name}, measure)
    assert [p.name for p in results.current_raw_files(tmp_path)] == ["a.parquet", "b.parquet"]
    # The next execution (another configuration) measures b anew and reuses c: a is kept on
    # disk, to be reused if that configuration comes back, but it is no longer current.
    monkeypatch.setattr(results, "EXECUTION", "the next one")
    results.write_raw(_frame(), tmp_path / "c.parquet", PROVENANCE, results.reuse_key(PARAMS))
    experiment.measure_once(tmp_path / "b.parquet", {**PARAMS, "run": "b", "n_values": 2000}, measure)
    monkeypatch.setattr(results, "EXECUTION", "the one after")
    experiment.measure_once(tmp_path / "b.parquet", {**PARAMS, "run": "b", "n_values": 2000}, measure)  # reused
    experiment.measure_once(tmp_path / "c.parquet", PARAMS, measure)  # reused
    assert measure.calls == 3 and (tmp_path / "a.parquet").is_file()
    assert [p.name for p in results.current_raw_files(tmp_path)] == ["b.parquet", "c.parquet"]
    # a run stored under another key is not reused, and not made current by being looked at
    assert results.stored_rows(tmp_path / "a.parquet", {"other": 1}) is None
    assert [p.name for p in results.current_raw_files(tmp_path)] == ["b.parquet", "c.parquet"]


def test_results_from_before_the_record_are_all_current(tmp_path):
    results.write_raw(_frame(), tmp_path / "a.parquet", PROVENANCE, PARAMS)
    (tmp_path / results.CURRENT_RUNS).unlink()
    assert [p.name for p in results.current_raw_files(tmp_path)] == ["a.parquet"]


def test_sources_sha256_follows_every_measuring_source_and_their_order(tmp_path):
    method, loop = tmp_path / "method.py", tmp_path / "loop.py"
    method.write_text("def measure(): pass\n")
    loop.write_text("def time_it(): pass\n")
    before = results.sources_sha256(method, loop)
    assert before == results.sources_sha256(str(method), str(loop)) and len(before) == 64
    assert before != results.sources_sha256(loop, method)
    loop.write_text("def time_it(): return 1\n")  # the shared timing loop edited: another key
    assert results.sources_sha256(method, loop) != before


def test_a_python_method_run_is_keyed_by_the_sources_that_measure_it(monkeypatch, tmp_path):
    # a Python method's run carries the hash of the modules that time it, as a kernel's run carries
    # its binary's: an edited measuring loop is measured again, never reused
    import inspect

    from throughput.core import harness
    from throughput.experiments import memory_bandwidth as mb
    from throughput.experiments.gpu_bandwidth import runs
    from throughput.experiments.memory_bandwidth import measuring, methods

    class Keys(Exception):
        pass

    def keys_only(groups, raw_dir, key_of, *args, **kwargs):
        raise Keys({run["name"]: key_of(run) for group in groups for run in group.runs})

    monkeypatch.setattr(measuring.experiment, "measure_interleaved", keys_only)
    params = {"n_values": 1000, "opt_levels": ["O3"], "max_threads": 1, "python_methods": ["numpy"],
              "repetitions": 2, "warmup": 1}
    with pytest.raises(Keys) as keys:
        mb.measure_runs(params, tmp_path)
    expected = results.sources_sha256(inspect.getfile(methods._numpy_method), harness.__file__)
    by_method = {key["method"]: key for key in keys.value.args[0].values()}
    assert by_method["numpy"]["source_sha256"] == expected and "binary_sha256" not in by_method["numpy"]
    assert "source_sha256" not in by_method["C++"] and len(by_method["C++"]["binary_sha256"]) == 64
    for module in ("cpu_jagged", "cupy_backend", "data", "numba_cuda"):
        assert any(path.endswith(f"gpu_bandwidth/{module}.py") for path in runs.PYTHON_MEASURING), module
    assert harness.__file__ in runs.PYTHON_MEASURING
