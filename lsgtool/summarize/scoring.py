"""ROUGE as the summarisation papers compute it, with Google's ``rouge-score``.

ROUGE-1 and ROUGE-2 on the texts; ROUGE-Lsum on the texts with one sentence per line (the summary-level
LCS); F1 reported (precision and recall kept too), Porter stemming on by default (``stem=False`` to switch
it off), per document and as the mean over documents. BERTScore is added when the ``bert-score`` package and
its model are available.
"""

from __future__ import annotations


from lsgtool.core.errors import UsageError
from lsgtool.documents.sentences import sentences

METRICS = ("rouge1", "rouge2", "rougeLsum")


def make_scorer(stem: bool):
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise UsageError("--rouge needs the rouge-score package.", "pip install 'lsgtool[eval]' (or rouge-score).") from None
    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=stem)


def rouge(prediction: str, reference: str, stem: bool = True, scorer=None) -> dict[str, dict[str, float]]:
    """{metric: {"precision", "recall", "f1"}} for one summary against its reference."""
    scorer = scorer or make_scorer(stem)
    scores = scorer.score("\n".join(sentences(reference)), "\n".join(sentences(prediction)))
    return {m: {"precision": s.precision, "recall": s.recall, "f1": s.fmeasure} for m, s in scores.items()}


def bertscore(pairs: list[tuple[str, str]]) -> tuple[dict[str, float] | None, str | None]:
    """(mean BERTScore F1, None) when bert-score and its model are on this machine; else (None, why not)."""
    if not pairs:
        return None, "no references to score against"
    try:
        from bert_score import score
    except ImportError:
        return None, "bert-score is not installed (pip install bert-score)"
    try:
        _, _, f1 = score([p for p, _ in pairs], [r for _, r in pairs], lang="en", verbose=False)
    except Exception as exc:  # its model comes from the Hub (offline: not there), or memory runs out
        message = f"{type(exc).__name__}: {exc}".splitlines()[0]
        if isinstance(exc, MemoryError) or "out of memory" in message.lower():
            message = f"out of memory: {message}"
        return None, message
    return {"bertscore_f1": float(f1.mean())}, None
