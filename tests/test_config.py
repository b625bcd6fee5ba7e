"""config: schema defaults, validation messages, resource checks, thread counts."""
from __future__ import annotations

import pytest
import yaml

from throughput import REPO, config
from throughput.config import ConfigError

BIG = 64 * 10**9  # plenty of memory, so only the values under test matter


def _validate(cfg, **kwargs):
    kwargs.setdefault("available_memory", BIG)
    return config.validate(cfg, **kwargs)


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
    assert resolved == expected
    assert resolved["repetitions"] >= 1
    assert resolved["memory_bandwidth"]["opt_levels"] == ["O0", "O1", "O2", "O3"]


def test_defaults_without_resource_check_keep_null_threads():
    resolved = config.validate({}, check_resources=False)
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
    assert resolved["memory_bandwidth"]["fit_to_memory"] is False


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
    ({"memory_bandwidth": {"fit_to_memory": "yes please"}}, "memory_bandwidth.fit_to_memory", "yes please"),
    ({"memory_bandwidth": {"python_methods": ["julia"]}}, "memory_bandwidth.python_methods", "julia"),
    ({"memory_bandwidth": 5}, "memory_bandwidth", "5"),
])
def test_bad_value_names_key_and_value(cfg, key, value):
    with pytest.raises(ConfigError) as info:
        _validate(cfg)
    message = str(info.value)
    assert f"'{key}" in message
    assert value in message
    assert len(info.value.problems) == 1


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
        config.validate({"memory_bandwidth": {"n_values": 10**9}}, workdir=tmp_path, available_memory=10**9)
    message = str(info.value)
    assert "'memory_bandwidth.n_values'" in message
    assert str(10**9) in message
    assert "fit_to_memory" in message
    assert len(info.value.problems) == 1


def test_n_values_that_fits_is_kept(tmp_path):
    n = 10**6  # 24 MB for three arrays, well within 60% of 1 GB
    resolved = config.validate({"memory_bandwidth": {"n_values": n}}, workdir=tmp_path, available_memory=10**9)
    assert resolved["memory_bandwidth"]["n_values"] == n


def test_fit_to_memory_lowers_n_values(tmp_path):
    available = 10**9
    resolved = config.validate({"memory_bandwidth": {"n_values": 10**9, "fit_to_memory": True}},
                               workdir=tmp_path, available_memory=available)
    n = resolved["memory_bandwidth"]["n_values"]
    assert 1000 <= n < 10**9
    assert 3 * 8 * n <= config.MEMORY_SHARE * available
    assert 3 * 8 * (n + 1) > config.MEMORY_SHARE * available  # as large as fits


def test_no_resource_check_keeps_large_n_values():
    resolved = config.validate({"memory_bandwidth": {"n_values": 10**12}}, check_resources=False)
    assert resolved["memory_bandwidth"]["n_values"] == 10**12


# --- loading files ----------------------------------------------------------------------------

def test_load_default_config(tmp_path):
    resolved = config.load(REPO / "config" / "config.yaml", workdir=tmp_path, available_memory=BIG)
    with open(REPO / "config" / "config.yaml") as stream:
        raw = yaml.safe_load(stream)
    assert resolved["repetitions"] == raw["repetitions"]
    assert resolved["memory_bandwidth"]["n_values"] == raw["memory_bandwidth"]["n_values"]
    assert resolved["memory_bandwidth"]["max_threads"] >= 1


def test_load_full_config_fits_to_memory(tmp_path):
    # Only the memory fit: the paper-scale inputs need more disk than a small machine may have.
    from throughput.experiments import memory_bandwidth

    available = 16 * 10**9
    resolved = config.load(REPO / "config" / "full.yaml", check_resources=False)
    mb, problems = resolved["memory_bandwidth"], []
    memory_bandwidth.check_config(mb, available, problems)
    assert not problems
    assert mb["fit_to_memory"] is True
    assert mb["n_values"] == int(config.MEMORY_SHARE * available) // 24
    assert mb["n_values"] < 10**10


def test_load_full_config_on_this_machine(tmp_path):
    # Paper scale fits this machine's memory and cores (it is fitted to them);
    # its tens of GB of inputs may not fit its disk, and then only that is said.
    try:
        resolved = config.load(REPO / "config" / "full.yaml", workdir=tmp_path)
    except config.ConfigError as error:
        assert all("on disk" in problem for problem in error.problems), error.problems
    else:
        assert 1000 <= resolved["memory_bandwidth"]["n_values"] <= 10**10


def test_load_empty_file(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing\n")
    resolved = config.load(path, check_resources=False)
    assert resolved["repetitions"] == 5


def test_load_non_mapping_raises(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        config.load(path, check_resources=False)


def test_load_bad_file_names_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("repetitions: 0\nmemory_bandwidth:\n  n_valeus: 5\n")
    with pytest.raises(ConfigError) as info:
        config.load(path, check_resources=False)
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
        config.validate({"memory_bandwidth": {"max_threads": too_many}}, workdir=tmp_path, available_memory=10**10)
    assert f"'memory_bandwidth.max_threads' = {too_many}" in str(error.value)


def test_fit_to_memory_never_goes_below_the_schema_minimum(tmp_path):
    with pytest.raises(config.ConfigError, match="memory_bandwidth.n_values"):
        config.validate({"memory_bandwidth": {"n_values": 10**9, "fit_to_memory": True}},
                        workdir=tmp_path, available_memory=10**4)
