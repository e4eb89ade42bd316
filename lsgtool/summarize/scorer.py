"""A learned sentence scorer for extractive summaries: a small head over what the document says of each sentence
(``features``: its place, its section and the words of that section's heading, its centrality, its similarity to
the title, and the encoder's embedding of it), trained on greedy-oracle labels of (document, summary) pairs by
``lsgtool finetune --task extractive``.

The packaged one (``packaged_scorer/``, a few KB) was trained on the tuning part of ``../shared/quality`` (RFCs,
stories and meetings: ``benchmarks/quality.py --pairs``) over the packaged encoder's embeddings, and is the default
of the packaged encoder, its score blended with the rule's (centroid, lexical centrality, title: ``RULE_WEIGHT``);
``--scorer rule`` keeps the rule alone. A folder holds ``scorer.json`` (the encoder it was trained with, the
features, the head's size) and ``model.safetensors``.
"""

from __future__ import annotations

import bisect
import json
import math
from collections import Counter
from pathlib import Path

import torch
import torch.nn.functional as F

from lsgtool.core.errors import UsageError

PACKAGED = Path(__file__).with_name("packaged_scorer")
CONFIG = "scorer.json"
WEIGHTS = "model.safetensors"
KIND = "lsgtool-sentence-scorer"
# what the document says of a sentence, before its embedding (``features``); a folder trained on other names is
# refused
FEATURES = ("centroid", "eligible_centroid", "lexical", "title", "titled", "place", "opening", "early", "first",
            "words", "eligible", "substance", "paragraph_first", "section_first", "section_place", "section_centroid",
            "section_weight", "opening_similarity", "neighbours", "spoken", "sentences", "headed",
            "heading_similarity")
SPOKEN_SHARED = 19  # the first features are also given times ``spoken``: a transcript weighs them its own way
SCALE = 0.3  # a document's scores, standardised, are scaled to the range of similarities MMR subtracts
# the rule's score (``Extractive.rule_score``), standardised, is added to the learned one with this weight: chosen by
# 4-fold cross-validation on the tuning part of ../shared/quality (RFCs, stories, meetings): R-1 35.4 / 42.2 / 29.7
# against 34.5 / 43.1 / 29.2 for the learned score alone (0.5: 35.2 / 42.8 / 29.3; 2: 35.3 / 42.1 / 30.0)
RULE_WEIGHT = 1.0
POSITIVE_WEIGHT = 5.0  # in training, the oracle's few picks weigh this much more than the other sentences (as above)
NEIGHBOURS = 10


def features(text: str, spans: list[tuple[int, int]], sentences: list[str], embeddings: torch.Tensor,
             eligible: list[bool], lexical: torch.Tensor, title: torch.Tensor | None, spoken: bool,
             sections: tuple[list[int], torch.Tensor] | None = None) -> torch.Tensor:
    """(sentences, features) of the ``sentences`` at ``spans`` of ``text``: ``FEATURES`` (with the first
    ``SPOKEN_SHARED`` again times ``spoken``), then the unit ``embeddings``, then the unit embedding of the heading
    each sentence is under (zeros before the first). ``lexical``: their lexical centrality (``summarize.lexical``);
    ``title``: the unit embedding of the document's title, when it has one; ``sections``: where each heading
    begins and the unit embeddings of their words, when it has headings (what a section is about: a motivation, an
    introduction, alternatives, related work)."""
    from lsgtool.documents.prose import substance
    from lsgtool.summarize.extractive import paragraph_firsts

    n = len(sentences)
    e = embeddings.float()
    doc = F.normalize(e.mean(0), dim=0)
    mask = torch.tensor(eligible, dtype=torch.bool)
    centred = e @ F.normalize(e[mask if mask.any() else slice(None)].mean(0), dim=0)
    place = torch.arange(n, dtype=torch.float) / max(n, 1)
    words = torch.tensor([len(s.split()) for s in sentences], dtype=torch.float)
    paragraph = torch.zeros(n)
    paragraph[list(paragraph_firsts(text, spans))] = 1
    section_first, section_place, section_centroid, section_weight = _sections(text, spans, e, doc, spoken)
    heading = torch.zeros_like(e)  # the heading each sentence is under
    if sections is not None:
        starts, heads = sections
        under = torch.tensor([bisect.bisect_right(starts, a) - 1 for a, _ in spans])
        heading[under >= 0] = heads.float()[under[under >= 0]]
    opening = e @ F.normalize(e[:5].mean(0), dim=0)
    neighbours = _neighbours(e)
    full = lambda value: torch.full((n,), float(value))  # noqa: E731
    found = torch.stack([
        e @ doc, centred, lexical.float(), e @ title if title is not None else full(0), full(title is not None),
        place, torch.exp(-20 * place), torch.exp(-5 * place), (torch.arange(n) == 0).float(), torch.log1p(words),
        mask.float(), torch.log1p(torch.tensor([substance(s) for s in sentences], dtype=torch.float)), paragraph,
        section_first, section_place, section_centroid, section_weight, opening, neighbours, full(spoken),
        full(math.log(n + 1) / 8), heading.any(1).float(), (e * heading).sum(1)], 1)
    return torch.cat([found, found[:, :SPOKEN_SHARED] * float(spoken), e, heading], 1)


def _neighbours(e: torch.Tensor, rows: int = 2048) -> torch.Tensor:
    """Each sentence's mean similarity to its ``NEIGHBOURS`` most similar others, ``rows`` sentences at a time (a
    book's 30K sentences never make a 30K x 30K matrix)."""
    n = len(e)
    if n < 2:
        return torch.zeros(n)
    found = []
    for start in range(0, n, rows):
        similar = e[start:start + rows] @ e.T
        similar[torch.arange(len(similar)), torch.arange(start, start + len(similar))] = -1  # not itself
        found.append(similar.topk(min(NEIGHBOURS, n - 1), dim=1).values.mean(1))
    return torch.cat(found)


def _sections(text: str, spans: list[tuple[int, int]], e: torch.Tensor, doc: torch.Tensor, spoken: bool):
    """Per sentence: whether its place in its section (the text between headings: ``documents.prose.headings``,
    Markdown's or a plain text's bare heading lines) is first (exp(-k) for the k-th), the section's place among
    sections, the sentence's similarity to the section's centroid and the section centroid's to the document's (a
    discourse-aware view, as HipoRank)."""
    from lsgtool.documents.prose import headings

    n = len(spans)
    heads = [] if spoken else headings(text, False)
    section = torch.tensor([bisect.bisect_right(heads, a) for a, _ in spans])
    first, place, centroid, weight = (torch.zeros(n) for _ in range(4))
    kinds = section.unique().tolist()
    for k, s in enumerate(kinds):
        members = (section == s).nonzero()[:, 0]
        middle = F.normalize(e[members].mean(0), dim=0)
        first[members] = torch.exp(-torch.arange(len(members), dtype=torch.float))
        place[members] = k / len(kinds)
        centroid[members] = e[members] @ middle
        weight[members] = float(middle @ doc)
    return first, place, centroid, weight


class Scorer(torch.nn.Module):
    """A linear (``hidden`` 0) or one-hidden-layer head from standardised features to a sentence's score; trained
    on a document's sentences at once (a batch: several documents, padded, ``mask`` the real sentences) with
    binary cross-entropy against oracle labels, positives weighted ``positive_weight``."""

    def __init__(self, config: dict):
        super().__init__()
        self.options = dict(config)
        dim = len(FEATURES) + SPOKEN_SHARED + 2 * int(config["embedding_size"])  # the sentence's, its heading's
        hidden = int(config.get("hidden", 0))
        self.head = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 1)) \
            if hidden else torch.nn.Linear(dim, 1)
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, features: torch.Tensor, mask: torch.Tensor | None = None, labels: torch.Tensor | None = None):
        logits = self.head((features - self.mean) / self.scale)[..., 0]
        if labels is None:
            return {"logits": logits}
        mask = torch.ones_like(logits, dtype=torch.bool) if mask is None else mask.bool()
        weight = torch.tensor(float(self.options.get("positive_weight", POSITIVE_WEIGHT)), device=logits.device)
        loss = F.binary_cross_entropy_with_logits(logits[mask], labels[mask].float(), pos_weight=weight)
        return {"loss": loss, "logits": logits}

    @torch.no_grad()
    def score(self, features: torch.Tensor, rule: torch.Tensor | None = None) -> torch.Tensor:
        """(sentences,) the document's scores, standardised, with the ``rule``'s scores standardised and weighted
        ``RULE_WEIGHT`` added, scaled to ``SCALE``."""
        score = standardised(self(features.to(self.mean.device))["logits"].float().cpu())
        return SCALE * (score if rule is None else score + RULE_WEIGHT * standardised(rule.float()))

    def save_pretrained(self, folder: str | Path, **_) -> None:
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / CONFIG).write_text(json.dumps({**self.options, "kind": KIND, "features": list(FEATURES)}, indent=2))
        save_file({k: v.contiguous() for k, v in self.state_dict().items()}, str(folder / WEIGHTS))

    @classmethod
    def from_pretrained(cls, folder: str | Path) -> "Scorer":
        from safetensors.torch import load_file

        folder = Path(folder)
        config = json.loads((folder / CONFIG).read_text())
        scorer = cls(config)
        scorer.load_state_dict(load_file(str(folder / WEIGHTS)))
        return scorer.eval()


def standardised(values: torch.Tensor) -> torch.Tensor:
    """A document's scores as z-scores (zeros for one sentence): what the scorer, the rule and a focus blend."""
    return (values - values.mean()) / values.std().clamp(min=1e-6) if len(values) > 1 else values * 0


def is_scorer(folder: Path) -> bool:
    """Whether ``folder`` holds a sentence scorer (``scorer.json`` of this kind)."""
    try:
        return json.loads((folder / CONFIG).read_text()).get("kind") == KIND
    except (OSError, ValueError, AttributeError):
        return False


def load_scorer(name: str | None, encoder: str, embedding_size: int, flag: str = "--scorer") -> Scorer | None:
    """The scorer ``name`` asks for: ``rule`` (None: the rule), a folder ``lsgtool finetune --task extractive``
    wrote, or None for the default (the packaged scorer with the packaged encoder, else the rule). A folder trained
    with another encoder, or on other features, is refused."""
    if name == "rule":
        return None
    if name is None:
        if encoder != "minilm" or not is_scorer(PACKAGED):
            return None
        scorer = Scorer.from_pretrained(PACKAGED)
        scorer.options["name"] = "packaged"
        return scorer
    folder = Path(name).expanduser()
    if not is_scorer(folder):
        raise UsageError(f"{flag} {name} is not a sentence scorer folder (no {CONFIG} of lsgtool's).",
                         f"pass rule, or a folder written by lsgtool finetune --task extractive.")
    if json.loads((folder / CONFIG).read_text()).get("features") != list(FEATURES):  # before its weights' shapes
        raise UsageError(f"{flag} {name} was trained on other features than this lsgtool computes.",
                         "train it again with this version (lsgtool finetune --task extractive).")
    scorer = Scorer.from_pretrained(folder)
    scorer.options["name"] = str(folder)
    if int(scorer.options["embedding_size"]) != embedding_size or scorer.options.get("encoder") not in (encoder, None):
        raise UsageError(f"{flag} {name} was trained over the encoder {scorer.options.get('encoder')!r} "
                         f"({scorer.options['embedding_size']} dims), not {encoder!r} ({embedding_size}).",
                         f"pass --model {scorer.options.get('encoder')}, or --scorer rule.")
    return scorer


def oracle(sentences: list[str], reference: str, words: int) -> list[int]:
    """The greedy ROUGE oracle: add the sentence that raises ROUGE-1 + ROUGE-2 F1 (rouge-score's stemmed tokens)
    against ``reference`` most, until nothing raises it or ``words`` are reached; the indices, in order picked."""
    try:
        from rouge_score import tokenizers
    except ImportError:
        raise UsageError("--task extractive labels sentences by ROUGE, with the rouge-score package.",
                         "pip install 'lsgtool[train]' (or rouge-score).") from None
    tokenize = tokenizers.DefaultTokenizer(use_stemmer=True).tokenize
    target = [_grams(tokenize(reference), n) for n in (1, 2)]
    grams = [[_grams(tokens, n) for n in (1, 2)] for tokens in map(tokenize, sentences)]
    picked: list[int] = []
    held, best, used = [Counter(), Counter()], 0.0, 0
    while used < words:
        top, chosen = best, None
        for i, own in enumerate(grams):
            if i not in picked:
                value = sum(_f1(held[k] + own[k], target[k]) for k in (0, 1))
                if value > top:
                    top, chosen = value, i
        if chosen is None:
            break
        picked.append(chosen)
        held = [held[k] + grams[chosen][k] for k in (0, 1)]
        best, used = top, used + len(sentences[chosen].split())
    return picked


def _grams(tokens: list[str], n: int) -> Counter:
    return Counter(zip(*(tokens[i:] for i in range(n))))


def _f1(found: Counter, target: Counter) -> float:
    overlap = sum((found & target).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(found.values()), overlap / sum(target.values())
    return 2 * precision * recall / (precision + recall)
