"""The run layer: one ``summarize`` run resolves its model once, tokenises each document once, and is the same
call a notebook makes."""

import json

import pytest
from transformers.tokenization_utils_base import PreTrainedTokenizerBase

import lsgtool.core.load.source as source_module


@pytest.fixture
def counted(monkeypatch):
    """Counts of model resolutions (every resolve of a folder reads its config.json and globs its weights) and of
    tokenizer calls, per text tokenised."""
    counts = {"resolved": [], "tokenised": []}
    folder_source = source_module._folder_source
    call = PreTrainedTokenizerBase.__call__

    def resolving(name, folder, *args, **kwargs):
        counts["resolved"].append(str(folder))
        return folder_source(name, folder, *args, **kwargs)

    def tokenising(self, text=None, *args, **kwargs):
        counts["tokenised"].extend(text if isinstance(text, list) else [text])
        return call(self, text, *args, **kwargs)

    monkeypatch.setattr(source_module, "_folder_source", resolving)
    monkeypatch.setattr(PreTrainedTokenizerBase, "__call__", tokenising)
    return counts


@pytest.mark.parametrize("documents", [1, 3])
def test_a_summarize_run_resolves_once_and_tokenises_each_document_once(runner, app, models, tmp_path, text, counted,
                                                                        documents):
    paths = []
    for i in range(documents):
        paths.append(tmp_path / f"doc{i}.txt")
        paths[-1].write_text(text(1 + i, 2))
    out = ["--out", str(tmp_path / "out")] if documents > 1 else []
    result = runner.invoke(app, ["summarize", *map(str, paths), "--model", str(models / "bart-lsg"),
                                 "--max-new-tokens", "4", "--num-beams", "1", "--json", *out])
    assert result.exit_code == 0, result.output
    assert counted["resolved"] == [str(models / "bart-lsg")]
    for path in paths:
        document = path.read_text()
        assert counted["tokenised"].count(document) == 1, counted["tokenised"]
    records = json.loads(result.stdout)
    assert (records["done"] if documents > 1 else 1) == documents


def test_a_notebook_gets_the_same_run(models, tmp_path, text):
    from lsgtool.summarize import SummarizeOptions, run

    doc = tmp_path / "doc.txt"
    doc.write_text(text(2))
    options = SummarizeOptions(inputs=[str(doc)], model=str(models / "bart-lsg"),
                               generation={"max_new_tokens": 5, "num_beams": 1})
    result = run(options)
    record = result.records[0]
    assert result.outputs is None and result.method == "abstractive" and result.model == str(models / "bart-lsg")
    assert record["input_tokens"] == record["encoded_tokens"] > 0 and record["route"] == "one pass"
    assert record["settings"]["max_new_tokens"] == 5 and record["settings"]["sources"]["max_new_tokens"].startswith("flag")


def test_truncation_keeps_the_special_tokens_the_tokenizer_puts_around_a_text(models, text):
    from lsgtool.core.load import load_tokenizer
    from lsgtool.core.tokens import truncate_ids

    tokenizer = load_tokenizer(str(models / "bart-lsg"))
    document = text(3)
    ids = tokenizer(document)["input_ids"]
    for keep in (0, 1, 7, len(ids)):
        cut = truncate_ids(tokenizer, ids, keep)
        expected = tokenizer(document, truncation=True, max_length=keep + 2)["input_ids"]
        assert cut == expected and cut[0] == tokenizer.bos_token_id and cut[-1] == tokenizer.eos_token_id
    assert truncate_ids(tokenizer, tokenizer("")["input_ids"], 3) == tokenizer("")["input_ids"]
