"""The model fingerprint ``summarize --resume`` keys on, part by part: each file that decides the outputs counts by
its content (weights, configuration, tokenizer, a Hub tokenizer's snapshot), never by its times; large files'
hashes come from lsgtool's cache while the file is unchanged, and a cache that fails costs only a hash."""

import json
import os
import shutil
import time

import pytest

from lsgtool.core.load import fingerprint as fp
from lsgtool.core.load import resolve

WEIGHTS = fp.CACHED_BYTES + 13  # large enough for the cache
STAMP = 1_600_000_000  # one modification time for every file (touch -d, tar --mtime, Nix, reproducible images)


def _model(folder, fill: bytes, config=None):
    """A model folder as resolve finds it: config, weights of ``fill`` bytes, a tokenizer; every file at STAMP."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config or {"model_type": "bart", "d_model": 32}))
    (folder / "model.safetensors").write_bytes(fill * WEIGHTS)
    (folder / "generation_config.json").write_text(json.dumps({"num_beams": 2}))
    (folder / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0}}}')
    _same_times(folder)
    return folder


def _same_times(folder):
    for path in folder.iterdir():
        os.utime(path, (STAMP, STAMP))


def _print(folder, **kwargs):
    return fp.fingerprint(resolve(str(folder)), **kwargs)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """lsgtool's cache in this test's folder, entries kept however fresh the files are."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setattr(fp, "SETTLED_NS", 0)
    return tmp_path / "xdg-cache" / "lsgtool" / "hashes"


def test_same_shaped_models_with_one_mtime_differ_by_their_weights(tmp_path):  # issue 29, item 1
    a, b = _model(tmp_path / "a", b"\x01"), _model(tmp_path / "b", b"\x02")
    before = _print(a)
    assert before != _print(b)  # same names, sizes, times and configuration: only the weights' bytes differ
    time.sleep(0.05)  # the next write falls in another tick of the file system's clock
    for path in b.iterdir():  # b copied over a as `cp -rp` does: same inodes, b's times put back
        shutil.copy2(path, a / path.name)
    assert _print(a) == _print(b) != before  # a's weights hash came from the cache: its change time told


def test_a_copy_of_a_model_is_the_same_model(tmp_path):  # issue 29, item 2
    a = _model(tmp_path / "a", b"\x01")
    shutil.copytree(a, tmp_path / "copy")  # new modification times
    os.utime(tmp_path / "copy" / "config.json", (STAMP + 999, STAMP + 999))
    assert _print(tmp_path / "copy") == _print(a)


@pytest.mark.parametrize("name, content", [
    ("config.json", {"model_type": "bart", "d_model": 32, "dropout": 0.5}),  # issue 29, item 2
    ("generation_config.json", {"num_beams": 3}),  # issue 29, item 2: same size, same time
])
def test_configuration_files_count_by_content(tmp_path, name, content):
    a = _model(tmp_path / "a", b"\x01")
    before = _print(a)
    (a / name).write_text(json.dumps(content))
    _same_times(a)
    assert _print(a) != before


def test_tokenizer_files_count_by_content_in_the_model_folder_and_in_another(tmp_path):  # issue 29, item 2
    a = _model(tmp_path / "a", b"\x01")
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    (tokenizer / "tokenizer.json").write_text('{"model": {"vocab": {"b": 0}}}')
    own, other = _print(a), _print(a, tokenizer=str(tokenizer))
    assert own != other
    (a / "tokenizer.json").write_text('{"model": {"vocab": {"c": 0}}}')  # same size, same time
    (tokenizer / "tokenizer.json").write_text('{"model": {"vocab": {"d": 0}}}')
    _same_times(a)
    os.utime(tokenizer / "tokenizer.json", (STAMP, STAMP))
    assert _print(a) not in (own, other) and _print(a, tokenizer=str(tokenizer)) not in (own, other)


def test_a_hub_tokenizer_counts_by_its_snapshots_files_not_its_name(tmp_path, monkeypatch):  # issue 29, item 1
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--tok"

    def publish(commit, vocab):
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(commit)
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab}}))

    a = _model(tmp_path / "a", b"\x01")
    publish("1" * 40, {"a": 0})
    first = _print(a, tokenizer="org/tok")
    publish("2" * 40, {"b": 0})  # the Hub id's tokenizer changed, its name did not
    assert _print(a, tokenizer="org/tok") != first


def test_settings_count(tmp_path):  # issue 29, item 2
    a = _model(tmp_path / "a", b"\x01")
    assert _print(a, dtype=None, device="cpu") != _print(a, dtype="bfloat16", device="cpu")


def test_a_cached_hash_is_not_computed_again_until_the_file_changes(tmp_path, cache, monkeypatch):  # issue 29, item 2
    a = _model(tmp_path / "a", b"\x01")
    real, hashed = fp._sha256, []
    monkeypatch.setattr(fp, "_sha256", lambda path: hashed.append(path.name) or real(path))
    first = _print(a)
    assert hashed.count("model.safetensors") == 1 and len(list(cache.glob("*.json"))) == 1
    hashed.clear()
    assert _print(a) == first and "model.safetensors" not in hashed  # the cache answered
    assert "config.json" in hashed  # small files are read each time
    time.sleep(0.05)
    (a / "model.safetensors").write_bytes(b"\x03" * WEIGHTS)  # in place: same inode, size and (below) time
    os.utime(a / "model.safetensors", (STAMP, STAMP))
    hashed.clear()
    assert _print(a) != first and hashed.count("model.safetensors") == 1


def test_a_cache_that_fails_costs_a_hash_and_nothing_else(tmp_path, cache, monkeypatch):  # issue 29, item 1
    a = _model(tmp_path / "a", b"\x01")
    right = _print(a)
    for entry in cache.glob("*.json"):
        entry.write_text("{not json")
    assert _print(a) == right
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # the cache cannot be written at all
    assert _print(a) == right
    assert not list(tmp_path.glob("**/*.lsgtool-tmp"))


def test_the_cache_is_lsgtools_own_under_the_users_cache_folder(tmp_path, monkeypatch):  # issue 29, item 1
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert fp.cache_dir() == tmp_path / "x" / "lsgtool" / "hashes"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert fp.cache_dir() == tmp_path / "home" / ".cache" / "lsgtool" / "hashes"


def test_fresh_files_are_not_cached(tmp_path, cache, monkeypatch):  # issue 29, item 1
    monkeypatch.setattr(fp, "SETTLED_NS", 60 * 10**9)  # a write in the same clock tick would leave the same times
    _print(_model(tmp_path / "a", b"\x01"))
    assert not list(cache.glob("*.json"))
