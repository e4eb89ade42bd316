"""Training data: every local format, save_to_disk folders, column and label checks naming the flag, the
truncation count."""

import json

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.finetune.data import check_columns, label_names, load, tokenize

ROWS = [{"text": f"w{i} w{i + 1} w{i + 2}", "label": i % 2, "summary": f"w{i}"} for i in range(6)]


def write(tmp_path, suffix):
    path = tmp_path / f"data{suffix}"
    if suffix in (".json", ".jsonl"):
        path.write_text("\n".join(json.dumps(r) for r in ROWS))
    elif suffix == ".csv":
        path.write_text("text,label,summary\n" + "\n".join(f"{r['text']},{r['label']},{r['summary']}" for r in ROWS))
    elif suffix == ".parquet":
        import datasets

        datasets.Dataset.from_list(ROWS).to_parquet(str(path))
    else:
        path.write_text("\n".join(r["text"] for r in ROWS))
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".parquet", ".txt"])
def test_local_files_of_every_kind(tmp_path, suffix):
    data = load(str(write(tmp_path, suffix)), cache_dir=str(tmp_path / "cache"))
    assert list(data) == ["train"] and len(data["train"]) == 6
    assert data["train"][0]["text"] == "w0 w1 w2"


def test_save_to_disk_folders_and_folders_of_files(tmp_path):
    import datasets

    table = datasets.Dataset.from_list(ROWS)
    table.save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"train": table, "validation": table.select(range(2))}).save_to_disk(str(tmp_path / "two"))
    assert len(load(str(tmp_path / "one"))["train"]) == 6
    assert {k: len(v) for k, v in load(str(tmp_path / "two")).items()} == {"train": 6, "validation": 2}
    folder = tmp_path / "files"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_text("\n".join(json.dumps(r) for r in ROWS))
    assert len(load(str(folder), cache_dir=str(tmp_path / "cache"))["train"]) == 12


def test_bad_data_is_a_usage_error_naming_the_flag(tmp_path):
    cases = [(str(tmp_path / "missing.jsonl"), "no such file"), ("./nowhere", "no such file")]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.csv").write_text("text\nx\n")
    (mixed / "b.json").write_text('{"text": "y"}')
    (tmp_path / "nothing").mkdir()
    cases += [(str(mixed), "cannot read .csv, .json as one dataset"), (str(tmp_path / "nothing"), "empty folder")]
    for name, message in cases:
        with pytest.raises(UsageError, match=message):
            load(name, cache_dir=str(tmp_path / "cache"))
    with pytest.raises(UsageError, match="holds no examples"):
        load(str(empty), cache_dir=str(tmp_path / "cache"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "a"}\n{not json')
    with pytest.raises(UsageError, match="cannot be read as json"):
        load(str(broken), cache_dir=str(tmp_path / "cache"))


def test_columns_and_labels(tmp_path):
    data = load(str(write(tmp_path, ".jsonl")), cache_dir=str(tmp_path / "cache"))
    check_columns(data, {"text": "text", "label": "label"})
    with pytest.raises(UsageError, match="--summary-column 'abstract'") as caught:
        check_columns(data, {"summary": "abstract"})
    assert caught.value.hint == "its columns: text, label, summary."
    assert label_names(data, "label") == ["0", "1"]
    import datasets

    floats = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["a", "b"], "score": [0.5, 1.5]})})
    with pytest.raises(UsageError, match="--label-column 'score' holds float values"):
        label_names(floats, "score")
    tags = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["a", "b"], "tags": [["x", "y"], ["z"]]})})
    assert label_names(tags, "tags", multilabel=True) == ["x", "y", "z"]
    with pytest.raises(UsageError, match="a list of labels per example"):
        label_names(datasets.DatasetDict({"train": datasets.Dataset.from_dict({"t": ["a"], "l": ["x"]})}), "l",
                    multilabel=True)


def test_tokenisation_counts_what_it_cuts(tmp_path, tiny_folder):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_folder)
    data = load(str(write(tmp_path, ".jsonl")), cache_dir=str(tmp_path / "cache"))
    full = tokenize(data, tokenizer, "text", max_length=64)
    assert full.truncated == 0 and full.longest == 5  # [CLS] + 3 words + [SEP]
    cut = tokenize(data, tokenizer, "text", max_length=4, target="summary", target_length=2)
    assert cut.truncated == 6 and cut.examples == 6
    row = cut.data["train"][0]
    assert len(row["input_ids"]) == 4 == row["length"] and len(row["labels"]) == 2 and "truncated" not in row


def test_a_cut_example_keeps_its_special_tokens(tmp_path, tiny_folder):
    """Issue 21, item 2: a cut target still ends with the end token (a target cut by slicing taught the model not
    to stop), a cut input keeps [CLS] ... [SEP], and the cut is still counted."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_folder)
    data = load(str(write(tmp_path, ".jsonl")), cache_dir=str(tmp_path / "cache"))
    cut = tokenize(data, tokenizer, "text", max_length=4, target="text", target_length=3)
    assert cut.truncated == 6
    for row in cut.data["train"]:
        words = tokenizer.convert_ids_to_tokens(row["input_ids"])
        assert len(words) == 4 and words[0] == "[CLS]" and words[-1] == "[SEP]", words
        target = tokenizer.convert_ids_to_tokens(row["labels"])
        assert len(target) == 3 and target[-1] == "[SEP]", target


def test_an_unreadable_file_is_a_permission_problem_not_a_format_one(tmp_path, monkeypatch):
    """Issue 21, item 16 (tests run as root, where chmod 000 does not block reading: the read raises instead)."""
    import errno

    import datasets

    path = write(tmp_path, ".jsonl")

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(datasets, "load_dataset", denied)
    with pytest.raises(UsageError, match="permission denied reading") as caught:
        load(str(path), cache_dir=str(tmp_path / "cache"))
    assert "chmod" in caught.value.hint and "format" not in caught.value.hint


def test_a_hub_dataset_is_probed_once_and_offline_answers_at_once(tmp_path, monkeypatch):
    """Issue 21, item 16: without network, one quick probe (the model loader's) instead of datasets' ~28 s of
    retries; offline (HF_HUB_OFFLINE=1), datasets answers from its cache at once."""
    import time

    import datasets
    import huggingface_hub.constants as hub

    from lsgtool.core.load import source

    start = time.monotonic()
    with pytest.raises(UsageError, match="someone/no-such-dataset"):
        load("someone/no-such-dataset", cache_dir=str(tmp_path / "cache"))
    assert time.monotonic() - start < 10
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(source, "hub_unreachable", lambda timeout=3.0: "huggingface.co: Network is unreachable")
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("datasets looked the name up"))
    with pytest.raises(UsageError, match="the Hub cannot be reached .*Network is unreachable"):
        load("someone/no-such-dataset", cache_dir=str(tmp_path / "cache"))
