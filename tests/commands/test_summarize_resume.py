"""What ``summarize --resume`` keys on, through the command line: the model's files by content (a retrained model
whose files carry the old times is redone), ROUGE under this run's settings (re-scored, not re-summarised), and
no model loaded when every input is finished."""

import json
import os
import shutil

import pytest
import torch
import transformers as T

GEN = ["--max-new-tokens", "4", "--num-beams", "1"]
STAMP = 1_600_000_000  # one modification time for every file (touch -d, tar --mtime, Nix, reproducible images)


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def loads(monkeypatch):
    """Every model load of the run, counted (lsgtool.core.load.load, which both summarisers call)."""
    import lsgtool.core.load as core_load

    real, calls = core_load.load, []
    monkeypatch.setattr(core_load, "load", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    return calls


def test_a_retrained_model_with_the_old_files_times_is_redone(runner, app, models, docs, tmp_path, text):  # issue 29, item 1
    model, retrained = tmp_path / "bart", tmp_path / "retrained"
    shutil.copytree(models / "bart", model)
    torch.manual_seed(1)
    T.BartForConditionalGeneration(T.BartConfig.from_pretrained(model)).save_pretrained(retrained)
    for path in [*model.iterdir(), *retrained.iterdir()]:
        os.utime(path, (STAMP, STAMP))
    args = ["summarize", str(docs()), "--model", str(model), *GEN, "--out", str(tmp_path / "out"),
            "--json"]
    assert _json(runner.invoke(app, args))["done"] == 2
    shutil.copy2(retrained / "model.safetensors", model)  # `cp -p`: same name, size and time, other weights
    again = _json(runner.invoke(app, [*args, "--resume"]))
    assert again["done"] == 2 and again["skipped"] == 0


def test_resume_with_every_input_finished_loads_no_model(runner, app, models, docs, tmp_path, text, loads):  # issue 29, 22a
    out = tmp_path / "out"
    args = ["summarize", str(docs()), "--model", str(models / "bart-lsg"), *GEN, "--out", str(out),
            "--json"]
    first = _json(runner.invoke(app, args))
    assert first["done"] == 2 and len(loads) == 1
    loads.clear()
    again = _json(runner.invoke(app, [*args, "--resume"]))
    assert again["skipped"] == 2 and again["method"] == "abstractive" and loads == []
    assert {r["summary"] for r in again["records"]} == {r["summary"] for r in first["records"]}
    (out / "doc1.summary.md").unlink()  # an output to write again: its record has what it needs, no model
    assert _json(runner.invoke(app, [*args, "--resume"]))["skipped"] == 2 and loads == []
    assert (out / "doc1.summary.md").is_file()
    for record in (out / ".lsgtool-summaries" / "records").glob("doc1.*.json"):
        record.unlink()  # one input unfinished: the model loads for it, the other is still skipped
    (out / "doc1.summary.md").unlink()
    partly = _json(runner.invoke(app, [*args, "--resume"]))
    assert (partly["done"], partly["skipped"], len(loads)) == (1, 1, 1)


def test_resume_rouge_scores_under_this_runs_column_and_stemmer_without_summarising(runner, app, tmp_path, loads):
    # issue 29, item 3
    from lsgtool.summarize.scoring import rouge

    rows = [{"article": "The rivers rose in the night. The storms came over the hills. Dogs barked at the light.",
             "summary": "The storms came over the hills.", "highlights": "The river rising at night."}] * 2
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["summarize", "--dataset", str(data), "--model", "minilm", "--max-new-tokens", "64", "--rouge",
            "--out", str(tmp_path / "out"), "--json"]

    def scores(report, reference, stem):
        found = [r["rouge"] for r in report["records"]]
        assert found == [rouge(r["summary"], reference, stem) for r in report["records"]]
        return found

    first = _json(runner.invoke(app, args))
    by_summary = scores(first, rows[0]["summary"], True)
    loads.clear()
    column = _json(runner.invoke(app, [*args, "--resume", "--summary-column", "highlights"]))
    by_highlights = scores(column, rows[0]["highlights"], True)
    assert column["skipped"] == 2 and loads == []  # the summaries are kept: only the scores change
    unstemmed = _json(runner.invoke(app, [*args, "--resume", "--summary-column", "highlights", "--no-stemmer"]))
    assert by_summary != by_highlights != scores(unstemmed, rows[0]["highlights"], False)
    assert unstemmed["skipped"] == 2 and loads == []
    kept = [json.loads(p.read_text()) for p in (tmp_path / "out" / ".lsgtool-summaries" / "records").glob("*.json")]
    assert [r["rouge"] for r in kept] == [rouge(r["summary"], rows[0]["highlights"], False) for r in kept]
