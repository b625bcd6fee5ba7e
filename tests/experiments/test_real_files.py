"""Real files come through scikit-hep-testdata: with datasets.source null, the copy in
../shared/data when there, else a download; a datasets.source that is set is the only place looked at."""
from __future__ import annotations

import pytest
import requests

from throughput import configuration
from throughput.setup import config
from throughput.inputs import datasets

SECTION = configuration.validate({}, check_resources=False)["datasets"]
NAME = "uproot-HZZ-lz4.root"


class _Response:
    def __init__(self, content: bytes):
        self.content = content

    def raise_for_status(self) -> None:
        pass


def test_the_local_copy_is_used_when_it_is_there():
    path = datasets.real_file(NAME, SECTION)
    assert path == datasets.source_dir(SECTION) / NAME and path.is_file()


def test_a_file_not_in_the_local_copy_is_fetched_by_scikit_hep_testdata(tmp_path, monkeypatch):
    original = (datasets.source_dir(SECTION) / NAME).read_bytes()
    asked = []

    def fake_get(url, timeout):  # the network, as scikit-hep-testdata calls it
        asked.append(url)
        return _Response(original)

    monkeypatch.setattr(requests, "get", fake_get)
    monkeypatch.setattr(datasets, "SHARED_COPIES", tmp_path / "no-copies")  # no ../shared/data (Binder)
    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "downloads")
    assert SECTION["source"] is None
    path = datasets.real_file(NAME, SECTION)
    assert path == tmp_path / "downloads" / NAME and path.read_bytes() == original
    assert len(asked) == 1 and asked[0].endswith("/" + NAME)
    # a second call finds the download and asks nothing
    assert datasets.real_file(NAME, SECTION) == path and len(asked) == 1


def test_no_copy_and_no_network_names_the_file_and_the_key_and_leaves_no_folder(tmp_path, monkeypatch):
    def offline(url, timeout):
        raise requests.ConnectionError("no network here")

    monkeypatch.setattr(requests, "get", offline)
    monkeypatch.setattr(datasets, "SHARED_COPIES", tmp_path / "no-copies")
    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "data" / "real")
    with pytest.raises(datasets.RealFileError, match=rf"{NAME}.*datasets.source.*no network"):
        datasets.real_file(NAME, SECTION)
    assert not (tmp_path / "data").exists()


def test_a_source_that_is_set_is_the_only_place_looked_at(tmp_path, monkeypatch):
    def network(*args, **kwargs):
        raise AssertionError("a datasets.source that is set must not reach the network")

    monkeypatch.setattr(requests, "get", network)
    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "downloads")
    missing = str(tmp_path / "no-copies")
    with pytest.raises(datasets.RealFileError, match=rf"{NAME}.*'datasets.source' = '{missing}'"):
        datasets.real_file(NAME, {**SECTION, "source": missing})
    assert not (tmp_path / "downloads").exists() and not (tmp_path / "no-copies").exists()


def test_a_source_that_is_not_a_folder_is_refused_before_any_job(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a folder")
    with pytest.raises(config.ConfigError, match="datasets.source"):
        configuration.validate({"datasets": {"source": str(text)}})
