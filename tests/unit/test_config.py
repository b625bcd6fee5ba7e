"""config: schema defaults, validation messages, resource checks, thread counts."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from throughput import REPO, configuration
from throughput.setup import config, machine_fit
from throughput.setup.config import ConfigError

BIG = 64 * 10**9  # plenty of memory, so only the values under test matter


def _validate(cfg, **kwargs):
    kwargs.setdefault("available_memory", BIG)
    return configuration.validate(cfg, **kwargs)


def _walk(schema, prefix=""):
    """(dotted key, sub-schema) for every property, nested objects included."""
    for key, sub in schema.get("properties", {}).items():
        yield prefix + key, sub
        if sub.get("type") == "object":
            yield from _walk(sub, prefix + key + ".")


def _defaults(schema):
    out = {}
    for key, sub in schema.get("properties", {}).items():
        if sub.get("type") == "object":
            out[key] = _defaults(sub)
        else:
            out[key] = sub["default"]
    return out


# --- schema and defaults ----------------------------------------------------------------------

def test_schema_keys_have_description_and_default():
    schema = config.load_schema()
    keys = list(_walk(schema))
    assert len(keys) >= 8  # repetitions, warmup, memory_bandwidth and its six... at least
    lacking = [k for k, sub in keys if not sub.get("description") or "default" not in sub]
    assert not lacking, f"keys without description or default: {lacking}"


def test_schema_is_closed_at_every_level():
    schema = config.load_schema()
    assert schema.get("additionalProperties") is False
    for key, sub in _walk(schema):
        if sub.get("type") == "object":
            assert sub.get("additionalProperties") is False, key


def test_schema_defaults_are_valid():
    schema = config.load_schema()
    import jsonschema
    jsonschema.Draft202012Validator(schema).validate(_defaults(schema))


def test_empty_config_gets_all_defaults(tmp_path):
    resolved = _validate({}, workdir=tmp_path)
    expected = _defaults(config.load_schema())
    expected["memory_bandwidth"]["max_threads"] = config.usable_cores()  # null means every usable core
    fitted = resolved.pop("fitted_to_machine")  # not a config key: what validate lowered, here nothing
    assert resolved == expected
    assert fitted and not any(fitted.values())
    assert resolved["repetitions"] >= 1
    assert resolved["memory_bandwidth"]["opt_levels"] == ["O0", "O1", "O2", "O3"]


def test_defaults_without_resource_check_keep_null_threads():
    resolved = configuration.validate({}, check_resources=False)
    assert resolved["memory_bandwidth"]["max_threads"] is None


def test_given_values_kept_and_input_not_modified():
    given = {"repetitions": 3, "memory_bandwidth": {"n_values": 5000, "max_threads": 2}}
    snapshot = yaml.safe_load(yaml.safe_dump(given))
    resolved = _validate(given)
    assert given == snapshot
    assert resolved["repetitions"] == 3
    assert resolved["warmup"] == 1
    assert resolved["memory_bandwidth"]["n_values"] == 5000
    assert resolved["memory_bandwidth"]["max_threads"] == 2
    assert resolved["fit_to_machine"] is False and resolved["fitted_to_machine"]["memory_bandwidth"] == []


def test_fill_defaults_does_not_share_default_objects():
    schema = config.load_schema()
    first = config.fill_defaults({}, schema)
    first["memory_bandwidth"]["opt_levels"].append("O9")
    second = config.fill_defaults({}, schema)
    assert "O9" not in second["memory_bandwidth"]["opt_levels"]
    assert "O9" not in schema["properties"]["memory_bandwidth"]["properties"]["opt_levels"]["default"]


# --- bad values -------------------------------------------------------------------------------

@pytest.mark.parametrize("cfg, key, value", [
    ({"repetitions": 0}, "repetitions", "0"),
    ({"warmup": -1}, "warmup", "-1"),
    ({"repetitions": "five"}, "repetitions", "five"),
    ({"memory_bandwidth": {"max_threads": 0}}, "memory_bandwidth.max_threads", "0"),
    ({"memory_bandwidth": {"opt_levels": ["O4"]}}, "memory_bandwidth.opt_levels", "O4"),
    ({"memory_bandwidth": {"opt_levels": []}}, "memory_bandwidth.opt_levels", "[]"),
    ({"memory_bandwidth": {"n_values": 10}}, "memory_bandwidth.n_values", "10"),
    ({"fit_to_machine": "yes please"}, "fit_to_machine", "yes please"),
    ({"memory_bandwidth": {"python_methods": ["julia"]}}, "memory_bandwidth.python_methods", "julia"),
    ({"memory_bandwidth": 5}, "memory_bandwidth", "5"),
    # accepted before, then failing inside a job or named by another key (issue 44)
    ({"rdataframe": {"rate_model": {"throttle_factor": 1e-300}}}, "rdataframe.rate_model.throttle_factor", "1e-300"),
    ({"writing": {"flush_mb": 1e30}}, "writing.flush_mb", "1e+30"),
    ({"writing": {"slow_mb_s": 1e30}}, "writing.slow_mb_s", "1e+30"),
    ({"rdataframe": {"dask": {"connect_timeout_s": 1e-300}}}, "rdataframe.dask.connect_timeout_s", "1e-300"),
])
def test_bad_value_names_key_and_value(cfg, key, value):
    with pytest.raises(ConfigError) as info:
        _validate(cfg)
    message = str(info.value)
    assert f"'{key}" in message
    assert value in message
    assert len(info.value.problems) == 1


@pytest.mark.parametrize("writing, named", [
    ({"flush_mb": 1e6, "max_threads": 2}, "'writing.flush_mb' = 1000000.0 / 'writing.max_threads' = 2"),
    ({"events": 10**8}, "'writing.random_mb' = 2 / 'writing.events' = 100000000"),
    ({"object_events": 10**7, "events": 10}, "'writing.object_events' = 10000000"),
])
def test_a_writing_run_beyond_memory_names_the_keys_of_its_largest_part(writing, named):
    # a flush of a terabyte was blamed on writing.events and writing.random_mb (issue 44)
    with pytest.raises(ConfigError) as info:
        _validate({"writing": {"media": ["memory"], "event_media": ["memory"], **writing}})
    assert f"config key {named}: a writing run needs about" in str(info.value), str(info.value)


@pytest.mark.parametrize("cfg, name", [
    ({"repetitons": 5}, "'repetitons'"),
    ({"memory_bandwidth": {"n_valeus": 1000}}, "'memory_bandwidth.n_valeus'"),
])
def test_typo_key_is_named(cfg, name):
    with pytest.raises(ConfigError) as info:
        _validate(cfg)
    message = str(info.value)
    assert name in message
    assert "unknown" in message
    assert len(info.value.problems) == 1


def test_typo_key_lists_known_keys():
    with pytest.raises(ConfigError) as info:
        _validate({"memory_bandwidth": {"n_valeus": 1000}})
    assert "n_values" in info.value.problems[0]


def test_several_problems_reported_together():
    cfg = {"repetitions": 0, "warmup": -1, "repetitons": 3,
           "memory_bandwidth": {"max_threads": 0, "opt_levels": ["O4"], "n_valeus": 7}}
    with pytest.raises(ConfigError) as info:
        _validate(cfg)
    problems = info.value.problems
    assert len(problems) == 6
    message = str(info.value)
    for needle in ("'repetitions' = 0", "'warmup' = -1", "'repetitons'", "'memory_bandwidth.max_threads' = 0",
                   "O4", "'memory_bandwidth.n_valeus'"):
        assert needle in message
    assert all(p in message for p in problems)


# --- resources --------------------------------------------------------------------------------

def test_n_values_too_large_for_memory(tmp_path):
    with pytest.raises(ConfigError) as info:
        configuration.validate({"memory_bandwidth": {"n_values": 10**9}}, workdir=tmp_path, available_memory=10**9)
    message = str(info.value)
    assert "'memory_bandwidth.n_values'" in message
    assert str(10**9) in message
    assert "fit_to_machine: true" in message
    assert len(info.value.problems) == 1


def test_n_values_that_fits_is_kept(tmp_path):
    n = 10**6  # 24 MB for three arrays, well within 60% of 1 GB
    resolved = configuration.validate({"memory_bandwidth": {"n_values": n}}, workdir=tmp_path, available_memory=10**9)
    assert resolved["memory_bandwidth"]["n_values"] == n


def test_fit_to_machine_lowers_n_values_and_records_it(tmp_path):
    available = 10**9
    resolved = configuration.validate({"fit_to_machine": True, "memory_bandwidth": {"n_values": 10**9}},
                               workdir=tmp_path, available_memory=available)
    n = resolved["memory_bandwidth"]["n_values"]
    assert 1000 <= n < 10**9
    assert 3 * 8 * n <= config.MEMORY_SHARE * available
    assert 3 * 8 * (n + 1) > config.MEMORY_SHARE * available  # as large as fits
    assert resolved["fitted_to_machine"]["memory_bandwidth"] == [
        {"key": "memory_bandwidth.n_values", "requested": 10**9, "used": n, "limit": "0.6 GB of memory for one run"}]


@pytest.mark.parametrize("section, key", [
    ("memory_bandwidth", "max_threads"), ("gpu_bandwidth", "max_threads"), ("writing", "max_threads"),
    ("rdataframe", "max_threads"), ("rdataframe", "dask.max_workers")])
def test_one_rule_for_every_count_above_the_cores(tmp_path, section, key):
    cores, asked = config.usable_cores(), config.usable_cores() + 3
    given: dict = {}
    holder = given.setdefault(section, {})
    *outer, last = key.split(".")
    for part in outer:
        holder = holder.setdefault(part, {})
    holder[last] = asked
    with pytest.raises(ConfigError) as info:
        configuration.validate(given, workdir=tmp_path, available_memory=BIG)
    assert f"config key '{section}.{key}' = {asked}: more than the {cores} usable cores" in str(info.value)
    assert f"fit_to_machine: true to use {cores}" in str(info.value)
    resolved = configuration.validate({**given, "fit_to_machine": True}, workdir=tmp_path, available_memory=BIG)
    used = resolved[section]
    for part in key.split("."):
        used = used[part]
    assert used == cores
    assert resolved["fitted_to_machine"][section] == [
        {"key": f"{section}.{key}", "requested": asked, "used": cores, "limit": f"{cores} usable cores"}]


def test_the_rate_models_processes_may_oversubscribe_the_cores_three_times(tmp_path):
    cores = config.usable_cores()
    allowed = configuration.validate({"rdataframe": {"rate_model": {"max_processes": 3 * cores}}}, workdir=tmp_path,
                              available_memory=BIG)
    assert allowed["rdataframe"]["rate_model"]["max_processes"] == 3 * cores
    with pytest.raises(ConfigError) as info:
        configuration.validate({"rdataframe": {"rate_model": {"max_processes": 3 * cores + 1}}}, workdir=tmp_path,
                        available_memory=BIG)
    assert (f"config key 'rdataframe.rate_model.max_processes' = {3 * cores + 1}: more than 3 per usable core "
            f"({cores} cores)") in str(info.value)
    assert f"fit_to_machine: true to use {3 * cores}" in str(info.value)


def test_a_fit_is_recorded_in_every_runs_provenance():
    from throughput.setup import machine_fit
    from throughput.core import provenance

    fits = [{"key": "writing.max_threads", "requested": 64, "used": 2, "limit": "2 usable cores"}]
    try:
        machine_fit.record(fits)
        assert provenance.capture({}, cache_state="n/a")["fitted_to_machine"] == fits
        assert machine_fit.requested(fits, "writing.max_threads", None) == 64
        assert machine_fit.requested(fits, "rdataframe.max_threads", 2) == 2
        assert "writing.max_threads from 64 to 2 (2 usable cores)" in machine_fit.describe(fits)
    finally:
        machine_fit.record([])
    assert provenance.capture({}, cache_state="n/a")["fitted_to_machine"] == []


def test_no_resource_check_keeps_large_n_values():
    resolved = configuration.validate({"memory_bandwidth": {"n_values": 10**12}}, check_resources=False)
    assert resolved["memory_bandwidth"]["n_values"] == 10**12


# --- loading files ----------------------------------------------------------------------------

def test_load_default_config(tmp_path):
    resolved = configuration.load(REPO / "config" / "config.yaml", workdir=tmp_path, available_memory=BIG)
    with open(REPO / "config" / "config.yaml") as stream:
        raw = yaml.safe_load(stream)
    assert resolved["repetitions"] == raw["repetitions"]
    assert resolved["memory_bandwidth"]["n_values"] == raw["memory_bandwidth"]["n_values"]
    assert resolved["memory_bandwidth"]["max_threads"] >= 1


def test_load_full_config_fits_to_memory(tmp_path):
    # Only the memory fit: the paper-scale inputs need more disk than a small machine may have.
    from throughput.experiments import memory_bandwidth

    available = 16 * 10**9
    resolved = configuration.load(REPO / "config" / "full.yaml", check_resources=False)
    mb, problems = resolved["memory_bandwidth"], []
    fitter = machine_fit.Fitter("memory_bandwidth", resolved["fit_to_machine"], problems, available)
    memory_bandwidth.check_config(mb, fitter)
    assert not problems
    assert resolved["fit_to_machine"] is True and [f.key for f in fitter.fits] == ["memory_bandwidth.n_values"]
    assert mb["n_values"] == int(config.MEMORY_SHARE * available) // 24
    assert mb["n_values"] < 10**10


def test_load_full_config_on_this_machine(tmp_path):
    # Paper scale fits this machine's memory and cores (it is fitted to them);
    # its tens of GB of inputs may not fit its disk, and then only that is said.
    try:
        resolved = configuration.load(REPO / "config" / "full.yaml", workdir=tmp_path)
    except config.ConfigError as error:
        assert all("on disk" in problem for problem in error.problems), error.problems
    else:
        assert 1000 <= resolved["memory_bandwidth"]["n_values"] <= 10**10


def _key_paths(mapping, prefix=()):
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from _key_paths(value, prefix + (key,))
        else:
            yield prefix + (key,)


@pytest.mark.parametrize("scale", ["medium.yaml", "full.yaml"])
def test_a_larger_scale_sets_every_key_the_default_sets(scale):
    # Snakemake reads config.yaml first and the scale's file over it: a key only config.yaml
    # set would make that scale change with the default (full.yaml read three of the six
    # particle types after the default was cut to them).
    with open(REPO / "config" / "config.yaml") as stream:
        default = set(_key_paths(yaml.safe_load(stream)))
    with open(REPO / "config" / scale) as stream:
        larger = set(_key_paths(yaml.safe_load(stream)))
    assert not default - larger, sorted(default - larger)


def test_medium_config_fits_a_24_gb_machine_without_lowering(tmp_path):
    available = 20 * 10**9  # what a 24 GB machine has available with its system running
    resolved = configuration.load(REPO / "config" / "medium.yaml", workdir=tmp_path, available_memory=available)
    assert resolved["fit_to_machine"] is False
    assert not any(resolved["fitted_to_machine"].values()), resolved["fitted_to_machine"]
    # it is larger than the default in every experiment it scales
    default = configuration.load(REPO / "config" / "config.yaml", workdir=tmp_path, available_memory=available)
    for section, key in [("memory_bandwidth", "n_values"), ("writing", "events"), ("rdataframe", "files"),
                         ("reader_comparison", "nanoaod_events"), ("gpu_bandwidth", "events")]:
        assert resolved[section][key] > default[section][key], (section, key)


def test_load_empty_file(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing\n")
    resolved = configuration.load(path, check_resources=False)
    assert resolved["repetitions"] == 5


def test_load_non_mapping_raises(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        configuration.load(path, check_resources=False)


def test_load_bad_file_names_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("repetitions: 0\nmemory_bandwidth:\n  n_valeus: 5\n")
    with pytest.raises(ConfigError) as info:
        configuration.load(path, check_resources=False)
    assert len(info.value.problems) == 2
    assert "'repetitions' = 0" in str(info.value)
    assert "'memory_bandwidth.n_valeus'" in str(info.value)


def test_config_error_is_value_error():
    error = ConfigError(["a", "b"])
    assert isinstance(error, ValueError)
    assert error.problems == ["a", "b"]
    assert "a" in str(error) and "b" in str(error)


# --- thread counts ----------------------------------------------------------------------------

@pytest.mark.parametrize("max_threads, counts", [
    (1, [1]), (2, [1, 2]), (3, [1, 2, 3]), (4, [1, 2, 4]), (6, [1, 2, 4, 6]), (8, [1, 2, 4, 8]),
    (64, [1, 2, 4, 8, 16, 32, 64]), (65, [1, 2, 4, 8, 16, 32, 64, 65]),
])
def test_thread_counts(max_threads, counts):
    assert config.thread_counts(max_threads) == counts


def test_more_threads_than_cores_is_refused_with_the_key(tmp_path):
    too_many = config.usable_cores() + 1
    with pytest.raises(config.ConfigError) as error:
        configuration.validate({"memory_bandwidth": {"max_threads": too_many}}, workdir=tmp_path, available_memory=10**10)
    assert f"'memory_bandwidth.max_threads' = {too_many}" in str(error.value)


def test_fit_to_machine_never_goes_below_the_schema_minimum(tmp_path):
    with pytest.raises(config.ConfigError, match="memory_bandwidth.n_values.*cannot be fitted"):
        configuration.validate({"fit_to_machine": True, "memory_bandwidth": {"n_values": 10**9}},
                        workdir=tmp_path, available_memory=10**4)


def test_load_tiny_config(tmp_path):
    resolved = configuration.load(REPO / "tests" / "data" / "tiny.yaml", workdir=tmp_path, available_memory=BIG)
    assert resolved["memory_bandwidth"]["n_values"] == 200000
    assert resolved["writing"]["random_mb"] == 0.5


# --- integers, NaN and infinity (the same rule for every key of the kind) ----------------------

def _set(cfg: dict, dotted: str, value) -> dict:
    *parents, last = dotted.split(".")
    holder = cfg
    for part in parents:
        holder = holder.setdefault(part, {})
    holder[last] = value
    return cfg


def _keys_of_type(kind: str) -> list[tuple[str, dict]]:
    return [(key, sub) for key, sub in _walk(config.load_schema())
            if kind == sub.get("type") or kind in (sub.get("type") if isinstance(sub.get("type"), list) else [])]


INTEGER_KEYS = _keys_of_type("integer")
NUMBER_KEYS = _keys_of_type("number")


def test_schema_has_the_keys_the_review_named():
    # the parametrized tests below cover every such key; these are the ones found passing before
    assert {"repetitions", "memory_bandwidth.n_values"} <= {k for k, _ in INTEGER_KEYS}
    assert {"writing.random_mb", "writing.slow_mb_s", "writing.flush_mb", "datasets.jitter",
            "rdataframe.dask.connect_timeout_s", "rdataframe.rtol"} <= {k for k, _ in NUMBER_KEYS}


@pytest.mark.parametrize("key, sub", INTEGER_KEYS, ids=[k for k, _ in INTEGER_KEYS])
def test_float_for_an_integer_key_is_refused(key, sub):
    # a value the schema's bounds accept, given as YAML's float (2.0), fails only for its type
    good = sub["default"] if sub["default"] is not None else sub.get("minimum", 1)
    cfg = yaml.safe_load(yaml.safe_dump(_set({}, key, float(good))))  # as a YAML file gives it
    with pytest.raises(ConfigError) as info:
        configuration.validate(cfg, check_resources=False)
    assert info.value.problems == [f"config key '{key}' = {float(good)!r}: {float(good)!r} is not of type "
                                   + ("'integer'" if sub["type"] == "integer" else "'integer', 'null'")]
    # and the same value as an integer passes
    configuration.validate(_set({}, key, int(good)), check_resources=False)


@pytest.mark.parametrize("text, key, value", [
    ("repetitions: 2.0\n", "repetitions", "2.0"),
    ("memory_bandwidth:\n  n_values: 2.0e+5\n", "memory_bandwidth.n_values", "200000.0"),
    ("rdataframe:\n  histogram_counts: [1, 3.0]\n", "rdataframe.histogram_counts[1]", "3.0"),
    ("repetitions: true\n", "repetitions", "True"),
])
def test_float_or_bool_in_a_yaml_file_is_refused_naming_key_and_value(tmp_path, text, key, value):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        configuration.load(path, check_resources=False)
    assert len(info.value.problems) == 1
    assert f"config key '{key}' = {value}:" in info.value.problems[0]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("key", [k for k, _ in NUMBER_KEYS])
def test_nan_and_infinity_are_refused_for_every_number_key(tmp_path, key, value):
    with pytest.raises(ConfigError) as info:
        _validate(_set({}, key, value), workdir=tmp_path)
    # once, naming the key, even where the value also breaks a bound
    assert info.value.problems == [f"config key '{key}' = {value!r}: not a finite number"]


def test_nan_and_infinity_in_a_yaml_file_are_each_named(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("writing:\n  random_mb: .nan\n  slow_mb_s: .inf\n  flush_mb: .inf\n"
                    "rdataframe:\n  rtol: .nan\n  dask:\n    connect_timeout_s: .NaN\ndatasets:\n  jitter: -.inf\n")
    with pytest.raises(ConfigError) as info:
        configuration.load(path, workdir=tmp_path, available_memory=BIG)
    assert sorted(info.value.problems) == sorted([
        "config key 'writing.random_mb' = nan: not a finite number",
        "config key 'writing.slow_mb_s' = inf: not a finite number",
        "config key 'writing.flush_mb' = inf: not a finite number",
        "config key 'rdataframe.rtol' = nan: not a finite number",
        "config key 'rdataframe.dask.connect_timeout_s' = nan: not a finite number",
        "config key 'datasets.jitter' = -inf: not a finite number",
    ])


# --- config files: duplicates, empty, not a mapping --------------------------------------------

@pytest.mark.parametrize("text, problem", [
    ("repetitions: 2\nwarmup: 0\nrepetitions: 3\n", "config key 'repetitions' is given twice (lines 1 and 3)"),
    ("writing:\n  random_mb: 1\n  events: 10\n  random_mb: 2\n",
     "config key 'writing.random_mb' is given twice (lines 2 and 4)"),
    ("rdataframe:\n  dask:\n    max_workers: 1\n    max_workers: 2\n",
     "config key 'rdataframe.dask.max_workers' is given twice (lines 3 and 4)"),
    ("writing: {}\nwriting:\n  events: 10\n", "config key 'writing' is given twice (lines 1 and 2)"),
])
def test_duplicate_key_is_refused_naming_key_file_and_lines(tmp_path, text, problem):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        configuration.load(path, check_resources=False)
    assert info.value.problems == [f"config file {path}: {problem}"]


def test_yaml_merge_key_may_be_overridden(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("base: &base {max_workers: 1, partitions_per_worker: 3}\n")
    assert config.read(path)["base"]["max_workers"] == 1
    path.write_text("rdataframe:\n  dask:\n    <<: {max_workers: 1, partitions_per_worker: 3}\n    max_workers: 2\n")
    assert config.read(path) == {"rdataframe": {"dask": {"max_workers": 2, "partitions_per_worker": 3}}}


@pytest.mark.parametrize("text", ["", "\n", "# nothing\n", "---\n"])
def test_empty_file_means_every_default(tmp_path, text):
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert config.read(path) == {}
    assert configuration.load(path, check_resources=False) == configuration.validate({}, check_resources=False)


@pytest.mark.parametrize("text, kind", [("- 1\n- 2\n", "list"), ("5\n", "int"), ("just words\n", "str")])
def test_non_mapping_file_is_refused_naming_the_file(tmp_path, text, kind):
    path = tmp_path / "notamap.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        configuration.load(path, check_resources=False)
    assert info.value.problems == [f"config file {path}: the configuration must be a mapping of keys, got {kind}"]


def test_bad_yaml_and_missing_file_name_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("writing:\n  events: [1, 2\n")
    with pytest.raises(ConfigError, match=f"config file {path}: not valid YAML"):
        configuration.load(path, check_resources=False)
    with pytest.raises(ConfigError, match=f"config file {tmp_path / 'absent.yaml'}: cannot be read"):
        configuration.load(tmp_path / "absent.yaml", check_resources=False)


def test_workflow_refuses_a_duplicate_key_before_any_job(tmp_path):
    from conftest import snakemake

    path = tmp_path / "dup.yaml"
    path.write_text("repetitions: 2\nmemory_bandwidth:\n  n_values: 5000\n  n_values: 6000\n")
    result = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", str(path))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"config file {path}: config key 'memory_bandwidth.n_values' is given twice (lines 3 and 4)" in output
    assert not (tmp_path / "results").exists() and not (tmp_path / "build").exists()


# --- paths ---------------------------------------------------------------------------------------

def test_datasets_source_that_is_a_file_is_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a folder of ROOT files\n")
    with pytest.raises(ConfigError) as info:
        _validate({"datasets": {"source": str(text)}}, workdir=tmp_path)
    assert len(info.value.problems) == 1
    assert f"config key 'datasets.source' = {str(text)!r}" in info.value.problems[0]
    assert "not a folder" in info.value.problems[0]


def test_relative_disk_dir_is_checked_and_returned_from_the_workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # another current directory than the workdir
    work = tmp_path / "work"
    (work / "scratch").mkdir(parents=True)
    resolved = _validate({"writing": {"disk_dir": "scratch/disk", "media": ["disk"], "event_media": ["memory"]}},
                         workdir=work)
    assert resolved["writing"]["disk_dir"] == str(work / "scratch" / "disk")  # absolute, for every job
    # ... and checked there: 'blocker' is a file in the workdir (and absent from the current directory)
    assert not (REPO / "blocker").exists()
    (work / "blocker").write_text("a file, not a folder\n")
    with pytest.raises(ConfigError) as info:
        _validate({"writing": {"disk_dir": "blocker", "media": ["disk"], "event_media": ["memory"]}}, workdir=work)
    assert info.value.problems == [f"config key 'writing.disk_dir' = {str(work / 'blocker')!r}: not a directory"]


def test_relative_tmpfs_dir_is_made_absolute_from_the_workdir(tmp_path):
    resolved = configuration.validate({"writing": {"tmpfs_dir": "shm"}}, check_resources=False, workdir=tmp_path)
    assert resolved["writing"]["tmpfs_dir"] == str(tmp_path / "shm")
    assert configuration.validate({}, check_resources=False, workdir=tmp_path)["writing"]["tmpfs_dir"] == "/dev/shm"


READ_ONLY_CHECK = """
import json, sys
from throughput import configuration
try:
    configuration.validate({"writing": {"tmpfs_dir": sys.argv[1], "disk_dir": sys.argv[2], "media": ["tmpfs", "disk"],
                                 "event_media": ["tmpfs"]}}, workdir="/", available_memory=64 * 10**9)
    print(json.dumps([]))
except configuration.ConfigError as error:
    print(json.dumps(error.problems))
"""
# Mounts a read-only tmpfs on each of the two directories, in a mount namespace of its own.
READ_ONLY_MOUNTS = 'mount -t tmpfs -o ro tmpfs "$1" && mount -t tmpfs -o ro tmpfs "$2" && exec "$3" -c "$4" "$1" "$2"'


def _user_namespaces() -> bool:
    import shutil
    import subprocess

    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm tmpfs")
def test_read_only_directories_are_refused():
    """A tmpfs_dir and a disk_dir where nothing can be written, checked by making a file there: read-only
    mounts (a user namespace), or else read-only permission bits (which do not stop root)."""
    import json
    import subprocess
    import sys
    import tempfile

    namespaces = _user_namespaces()
    if not namespaces and os.geteuid() == 0:
        pytest.skip("root without user namespaces: no directory here is read-only to this process")
    shm = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="throughput-test-"))
    disk = Path(tempfile.mkdtemp(prefix="throughput-test-"))
    check = [sys.executable, "-c", READ_ONLY_CHECK, str(shm), str(disk)]

    def problems(argv):
        result = subprocess.run(argv, capture_output=True, text=True, cwd="/", timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads(result.stdout)

    try:
        if namespaces:
            found = problems(["unshare", "-rm", "sh", "-c", READ_ONLY_MOUNTS, "sh", str(shm), str(disk),
                              sys.executable, READ_ONLY_CHECK])
        else:
            for directory in (shm, disk):
                directory.chmod(0o555)
            found = problems(check)
        assert len(found) == 2, found
        assert found[0].startswith(f"config key 'writing.tmpfs_dir' = {str(shm)!r}: cannot write in {shm}"), found
        assert found[1].startswith(f"config key 'writing.disk_dir' = {str(disk)!r}: cannot write in {disk}"), found
        # the same directories, writable, pass
        for directory in (shm, disk):
            directory.chmod(0o700)
        assert problems(check) == []
    finally:
        for directory in (shm, disk):
            directory.chmod(0o700)
            directory.rmdir()


# --- the Dask scheduler ----------------------------------------------------------------------------

@pytest.fixture
def silent_server():
    """A TCP server on 127.0.0.1 that accepts connections and never says anything (stops by itself)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(60)  # the accepting thread ends after a minute whatever happens
    accepted = []

    def serve():
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}", accepted
    server.close()
    for connection in accepted:
        connection.close()
    thread.join(5)


def test_scheduler_that_accepts_and_stays_silent_is_refused_within_the_timeout(tmp_path, silent_server):
    address, accepted = silent_server
    # the check returns (it does not hang on the silent server) and says it gave up after the timeout
    with pytest.raises(ConfigError) as info:
        _validate({"rdataframe": {"dask": {"scheduler": address, "connect_timeout_s": 1}}}, workdir=tmp_path)
    assert accepted, "the check never connected"
    assert len(info.value.problems) == 1
    assert info.value.problems[0].startswith(f"config key 'rdataframe.dask.scheduler' = {address!r}: "
                                             "no Dask scheduler answered within 1 s")


def test_a_running_dask_scheduler_passes_the_check(tmp_path):
    import subprocess
    import sys

    from throughput.experiments import rdataframe as rdf

    code = ("import asyncio\nfrom distributed import Scheduler\n"
            "async def main():\n"
            "    async with Scheduler(host='127.0.0.1', port=0, dashboard_address=None) as s:\n"
            "        print(s.address, flush=True)\n"
            "        await asyncio.sleep(120)\n"
            "asyncio.run(main())\n")
    scheduler = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)
    try:
        address = scheduler.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), address
        assert rdf.scheduler_problem(address, 10) is None
    finally:
        scheduler.kill()
        scheduler.wait()


# --- config files checked before Snakemake reads them (python -m throughput.configuration check) --------

BAD_FILES = [  # (name, content or None for a folder, the problem after "config file <path>: ")
    ("list.yaml", "- 1\n- 2\n", "the configuration must be a mapping of keys, got list"),
    ("scalar.yaml", "5\n", "the configuration must be a mapping of keys, got int"),
    ("syntax.yaml", "writing:\n  events: [1, 2\n", "not valid YAML at line 3, column 1: expected ',' or ']', but "
     "got '<stream end>' (while parsing a flow sequence from line 2, column 11)"),
    ("tabs.yaml", "writing:\n\tevents: 3\n", "not valid YAML at line 2, column 1: found character '\\t' that "
     "cannot start any token (while scanning for the next token)"),
    ("indent.yaml", "writing:\n  events: 3\n   media: [tmpfs]\n",
     "not valid YAML at line 3, column 9: mapping values are not allowed here"),
    ("two.yaml", "repetitions: 2\n---\nwarmup: 0\n", "not valid YAML at line 2, column 1: but found another "
     "document (expected a single document in the stream from line 1, column 1)"),
    ("binary.yaml", b"\xff\xfe\x00", "not UTF-8 text (byte 0: invalid start byte)"),
    ("empty.yaml", "# nothing set\n", "holds no configuration (Snakemake refuses an empty --configfile; "
     "write {} for every default)"),
    ("folder.yaml", None, "cannot be read (Is a directory)"),
    ("absent.yaml", "", "cannot be read (No such file or directory)"),
]


def _bad_file(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif name != "absent.yaml":
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize("name, content, problem", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_check_names_the_bad_file_and_where(tmp_path, name, content, problem):
    path = _bad_file(tmp_path, name, content)
    good = tmp_path / "good.yaml"
    good.write_text("repetitions: 2\n")
    with pytest.raises(ConfigError) as info:  # with another, good file: the bad one is the one named
        configuration.check([good, path], check_resources=False)
    assert info.value.problems == [f"config file {path}: {problem}"]


def test_check_merges_the_files_over_the_default_config_as_snakemake_does(tmp_path):
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text("repetitions: 2\nwriting:\n  events: 10\n  random_mb: 0.5\n")
    second.write_text("writing:\n  events: 20\n")
    resolved = configuration.check([first, second], check_resources=False)
    assert resolved["repetitions"] == 2 and resolved["writing"]["events"] == 20
    assert resolved["writing"]["random_mb"] == 0.5  # kept from the first file
    assert resolved["writing"]["media"] == config.read(config.DEFAULT_CONFIG)["writing"]["media"]  # the default's
    # values are validated too, naming the key
    second.write_text("reader_comparison:\n  sample_every: 0\n")
    with pytest.raises(ConfigError, match="'reader_comparison.sample_every' = 0"):
        configuration.check([first, second], check_resources=False)


@pytest.mark.parametrize("name", ["config.yaml", "medium.yaml", "full.yaml"])
def test_check_takes_the_study_configs(name):
    configuration.check([REPO / "config" / name], check_resources=False)
    configuration.check([REPO / "tests" / "data" / "tiny.yaml"], check_resources=False)


def test_check_command_exits_non_zero_naming_each_bad_file(tmp_path):
    import subprocess
    import sys

    bad = [_bad_file(tmp_path, name, content) for name, content, _ in BAD_FILES if name in ("tabs.yaml", "list.yaml")]
    run = subprocess.run([sys.executable, "-m", "throughput.configuration", "check", "--no-resources", *map(str, bad)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and not run.stdout
    assert f"config file {bad[0]}: the configuration must be a mapping of keys, got list" in run.stderr
    assert f"config file {bad[1]}: not valid YAML at line 2, column 1" in run.stderr
    good = subprocess.run([sys.executable, "-m", "throughput.configuration", "check", "--no-resources",
                           str(REPO / "config" / "medium.yaml")], capture_output=True, text=True)
    assert good.returncode == 0 and "valid" in good.stdout, good.stderr


def test_make_paper_checks_the_config_before_snakemake_reads_it(tmp_path):
    import subprocess

    from conftest import command_env

    path = _bad_file(tmp_path, "tabs.yaml", "writing:\n\tevents: 3\n")
    run = subprocess.run(["make", "paper", f"CONFIG={path}"], cwd=REPO, capture_output=True, text=True,
                         env=command_env())
    assert run.returncode != 0
    assert f"config file {path}: not valid YAML at line 2, column 1" in run.stderr
    assert "snakemake" not in run.stdout  # stopped before it
    dry = subprocess.run(["make", "-n", "paper", "CONFIG=config/medium.yaml"], cwd=REPO, capture_output=True,
                         text=True, env=command_env())
    lines = dry.stdout.splitlines()
    check = lines.index("python -m throughput.configuration check config/medium.yaml")
    assert check < next(i for i, line in enumerate(lines) if line.startswith("snakemake "))


# --- ranges of the values that reach a kernel option --------------------------------------------

BEYOND_INT64 = "beyond the kernels' 64-bit integer options (at most 2^63 - 1 = 9223372036854775807)"


@pytest.mark.parametrize("key, value, problem", [
    # read_branch and the Java readers take a signed 64-bit --sample-every
    ("reader_comparison.sample_every", 10**30, BEYOND_INT64),
    ("reader_comparison.sample_every", 2**63, BEYOND_INT64),
    # a pass of less than one basket times opening a file, not writing
    ("writing.random_mb", 1e-300, "1e-300 is less than the minimum of 0.1"),
    ("writing.random_mb", 0.05, "0.05 is less than the minimum of 0.1"),
    # file k uses seed + k: the generators' signed 64-bit option
    ("datasets.seed", 2**70, BEYOND_INT64),
    ("datasets.seed", 2**32, "4294967296 is greater than the maximum of 4294967295"),
    # TTreeCache's buffer size is an Int_t
    ("rdataframe.rate_model.ttree_cache_bytes", 10**20, BEYOND_INT64),
    ("rdataframe.rate_model.ttree_cache_bytes", 2**31, "2147483648 is greater than the maximum of 2147483647"),
    # the throttle's sleep (bytes / rate)
    ("writing.slow_mb_s", 1e-300, "1e-300 is less than the minimum of 1"),
    ("repetitions", 10**30, BEYOND_INT64),
])
def test_a_value_beyond_its_kernels_range_stops_naming_key_and_value(tmp_path, key, value, problem):
    with pytest.raises(ConfigError) as info:
        _validate(_set({}, key, value), workdir=tmp_path)
    assert info.value.problems == [f"config key '{key}' = {value!r}: {problem}"]


@pytest.mark.parametrize("key", [k for k, _ in INTEGER_KEYS])
def test_every_integer_key_stops_beyond_the_64_bit_range_once(key):
    with pytest.raises(ConfigError) as info:
        configuration.validate(_set({}, key, 2**63), check_resources=False)
    assert info.value.problems == [f"config key '{key}' = {2**63}: {BEYOND_INT64}"]


def test_the_largest_values_the_kernels_take_pass():
    configuration.validate({"reader_comparison": {"sample_every": 2**63 - 1}, "datasets": {"seed": 2**32 - 1},
                     "rdataframe": {"rate_model": {"ttree_cache_bytes": 2**31 - 1}},
                     "writing": {"random_mb": 0.1, "slow_mb_s": 1}}, check_resources=False)


# --- machines.archive_dir and datasets.source: must be there; relative paths from the workdir ----

def test_archive_dir_must_be_a_folder(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a folder\n")
    for value, why in ((str(text), "not a folder"), (str(tmp_path / "absent"), "no such folder")):
        with pytest.raises(ConfigError) as info:
            _validate({"machines": {"archive_dir": value}}, workdir=tmp_path)
        assert len(info.value.problems) == 1
        assert info.value.problems[0].startswith(f"config key 'machines.archive_dir' = {value!r}: {why}")
    (tmp_path / "archive").mkdir()  # an empty archive is fine; a relative path is from the workdir
    resolved = _validate({"machines": {"archive_dir": "archive"}}, workdir=tmp_path)
    assert resolved["machines"]["archive_dir"] == str(tmp_path / "archive")


@pytest.fixture
def no_network(monkeypatch):
    """Fails the test if anything tries to download (scikit-hep-testdata, requests, a socket)."""
    import socket

    import requests
    import skhep_testdata

    def refuse(*args, **kwargs):
        raise AssertionError("the network was asked")

    monkeypatch.setattr(skhep_testdata, "data_path", refuse)
    monkeypatch.setattr(requests, "get", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_a_missing_datasets_source_stops_naming_it_without_network_or_new_folders(tmp_path, monkeypatch,
                                                                                   no_network):
    from throughput.inputs import datasets

    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "data" / "real")
    before = sorted(tmp_path.rglob("*"))
    missing = str(tmp_path / "no-copies")
    with pytest.raises(ConfigError) as info:
        _validate({"datasets": {"source": missing}}, workdir=tmp_path)
    assert info.value.problems == [
        f"config key 'datasets.source' = {missing!r}: no such folder (it holds local copies of the real files, "
        f"e.g. {datasets.NANOAOD_SOURCE}; null takes {datasets.SHARED_COPIES}, or downloads)"]
    assert sorted(tmp_path.rglob("*")) == before


def test_a_datasets_source_without_a_configured_real_file_names_the_file(tmp_path, no_network):
    from throughput.inputs import datasets
    from throughput.setup import paths

    copies = tmp_path / "copies"
    copies.mkdir()
    (copies / datasets.NANOAOD_SOURCE).symlink_to(paths.SHARED / "data" / datasets.NANOAOD_SOURCE)
    cfg = {"datasets": {"source": str(copies)}, "reader_comparison": {"real_files": ["uproot-HZZ-zstd.root"]}}
    with pytest.raises(ConfigError) as info:
        _validate(cfg, workdir=tmp_path)
    assert info.value.problems == [
        f"config key 'datasets.source' = {str(copies)!r}: no uproot-HZZ-zstd.root in it (the NanoAOD file every "
        "generated input is resampled from, and reader_comparison.real_files)"]
    (copies / "uproot-HZZ-zstd.root").symlink_to(paths.SHARED / "data" / "uproot-HZZ-zstd.root")
    assert _validate(cfg, workdir=tmp_path)["datasets"]["source"] == str(copies)


def test_relative_datasets_source_is_from_the_workdir_and_null_is_shared_data_from_anywhere(tmp_path, monkeypatch,
                                                                                            no_network):
    from throughput.inputs import datasets
    from throughput.setup import paths

    monkeypatch.chdir(REPO)  # another current directory than the workdir
    copies = tmp_path / "work" / "copies"
    copies.mkdir(parents=True)
    for real in (paths.SHARED / "data").glob("*.root"):
        (copies / real.name).symlink_to(real)
    resolved = _validate({"datasets": {"source": "copies"}}, workdir=tmp_path / "work")
    assert resolved["datasets"]["source"] == str(copies)
    assert datasets.source_dir(resolved["datasets"]) == copies
    # the default, null: ../shared/data beside the repository, whatever the working directory
    for workdir in (tmp_path, REPO / "notebooks"):
        section = _validate({}, workdir=workdir)["datasets"]
        assert section["source"] is None and datasets.source_dir(section) == paths.SHARED / "data"


def test_workflow_dry_run_with_a_missing_datasets_source_stops_naming_it_and_makes_nothing(tmp_path):
    from conftest import snakemake

    path = tmp_path / "typo.yaml"
    missing = tmp_path / "shraed" / "data"
    path.write_text(f"datasets:\n  source: {missing}\n")
    real = REPO / "data" / "real"
    had_real = real.exists()
    result = snakemake(tmp_path / "work", "-n", "--cores", "2", "--configfile", str(path))
    assert result.returncode != 0
    assert f"config key 'datasets.source' = {str(missing)!r}: no such folder" in result.stdout + result.stderr
    assert not (tmp_path / "work" / "data").exists() and real.exists() == had_real and not missing.parent.exists()


def test_a_path_that_root_would_expand_is_named_before_any_job(tmp_path):
    # ROOT opens "a $(b)/f.root" as "a $b/f.root" and "$HOME/f.root" as another file (tried with
    # ROOT 6.40): a '$' in a path key, or in the working directory every generated file lies
    # under, is refused naming it.
    disk = tmp_path / "disk $(HOME)"
    disk.mkdir()
    work = tmp_path / "work $USER"
    work.mkdir()
    with pytest.raises(ConfigError) as info:
        configuration.validate({"writing": {"disk_dir": str(disk)}}, check_resources=False, workdir=work)
    assert info.value.problems == [
        f"config key 'writing.disk_dir' = {str(disk)!r}: holds '$', which ROOT expands in file names ($VAR, $(VAR)): "
        "rename or move it",
        f"working directory {str(work)!r}: holds '$', which ROOT expands in file names ($VAR, $(VAR)): rename or move it"]
    assert configuration.validate({"writing": {"disk_dir": str(tmp_path)}}, check_resources=False, workdir=tmp_path)


# --- each section's check, handed to setup.config by throughput.configuration ---------------------------

def test_every_section_but_noise_has_its_owners_check():
    from throughput.experiments import SPECS

    assert set(configuration.SECTION_CHECKS) == set(config.sections()) - {"noise"}
    assert set(SPECS) <= set(configuration.SECTION_CHECKS)
    for name, spec in SPECS.items():  # an experiment's check lives in its cheap spec, which carries it
        assert configuration.SECTION_CHECKS[name] is spec.check_config
        assert spec.check_config.__module__ == f"throughput.experiments.{name}.spec"
    # checked in the sections' order (a shared section's values settled before an experiment's)
    assert list(configuration.SECTION_CHECKS) == sorted(configuration.SECTION_CHECKS)


def test_a_resource_check_without_the_sections_checks_is_refused():
    with pytest.raises(TypeError, match="throughput.configuration.validate"):
        config.validate({}, available_memory=BIG)
    assert config.validate({}, check_resources=False)["fitted_to_machine"] == {}


def test_a_section_may_set_its_own_rounds_over_the_studys():
    """The reader comparison's own `rounds`, where a config sets them, over the top-level
    repetitions; every other section, and the reader comparison where it sets none (the default
    config), takes the top-level ones; a bad value is named by its key before anything runs."""
    default = _validate(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    assert default["reader_comparison"]["rounds"] is None
    assert config.rounds(default, "reader_comparison") == config.rounds(default, "writing") == default["repetitions"]
    own = _validate({"repetitions": 3, "reader_comparison": {"rounds": 7}})
    assert config.rounds(own, "reader_comparison") == 7
    assert config.rounds(own, "writing") == config.rounds(own, "memory_bandwidth") == 3
    with pytest.raises(ConfigError, match="reader_comparison.rounds"):
        _validate({"reader_comparison": {"rounds": 0}})


def test_a_notebook_session_resolves_what_each_experiment_measures_with(tmp_path):
    from throughput import configuration
    from throughput.experiments import SPECS
    from throughput.setup.config import usable_cores

    # every experiment's parameters come from its spec (Spec.parameters), counts resolved by its own rule
    assert {name: spec.resolve_counts.__module__ for name, spec in SPECS.items() if spec.resolve_counts} == {
        name: f"throughput.experiments.{name}.spec" for name in ("gpu_bandwidth", "rdataframe", "writing")}
    folders = {"results_dir": tmp_path / "r", "figures_dir": tmp_path / "f", "paper_dir": tmp_path / "p"}
    given = {"repetitions": 4, "warmup": 0, "noise": {"max_remeasures": 2},
             "rdataframe": {"max_threads": None}, "writing": {"max_threads": None},
             "reader_comparison": {"rounds": 7}, "datasets": {"compression": "LZ4"}}
    sessions = {name: configuration.session(name, given, fitted_to_machine=None, **folders) for name in SPECS}
    # null counts are every usable core; the rounds are the section's own where it sets them
    assert sessions["rdataframe"].params["max_threads"] == usable_cores()
    assert sessions["rdataframe"].params["dask"]["max_workers"] == usable_cores()
    assert sessions["writing"].params["max_threads"] == usable_cores()
    assert sessions["gpu_bandwidth"].params["max_threads"] == usable_cores()  # null by default
    assert sessions["reader_comparison"].params["repetitions"] == 7
    assert sessions["reader_comparison"].params["compression"] == "LZ4"
    assert {s.params["repetitions"] for n, s in sessions.items() if n != "reader_comparison"} == {4}
    assert all(s.params["warmup"] == 0 for s in sessions.values())
    # re-measures where the section leaves them on (writing's are off by default), the noise section's otherwise
    assert sessions["memory_bandwidth"].noise.max_remeasures == 2 and sessions["writing"].noise.max_remeasures == 0
    assert sessions["gpu_bandwidth"].outputs.spec is SPECS["gpu_bandwidth"]
    assert sessions["gpu_bandwidth"].figures_dir == tmp_path / "f" and sessions["gpu_bandwidth"].fits == []
    # the workflow's record of what it lowered is taken as given
    fitted = [{"key": "writing.max_threads", "requested": 64, "used": 2, "limit": "2 usable cores"}]
    assert configuration.session("writing", given, fitted_to_machine=fitted, **folders).fits == fitted
    # the workflow's input parameters, as passed (none: the experiment's measure makes them)
    passed = {"input_files": ["a.root"], "aod_files": []}
    assert configuration.session("writing", given, fitted_to_machine=None, inputs=passed, **folders).inputs == passed
    assert sessions["writing"].inputs == {}
    # the archived machines the machines section names, read once for the tables and the macros
    none_shown = configuration.session("writing", {**given, "machines": {"archived": []}}, fitted_to_machine=None,
                                       **folders)
    assert none_shown.archived == [] and none_shown.archived is none_shown.archived


def test_a_notebook_session_stops_on_a_bad_parameter_naming_it(tmp_path):
    from throughput import configuration

    with pytest.raises(configuration.ConfigError, match="repetitions"):
        configuration.session("memory_bandwidth", {"repetitions": 0}, fitted_to_machine=None,
                              results_dir=tmp_path, figures_dir=tmp_path, paper_dir=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing made before the check
