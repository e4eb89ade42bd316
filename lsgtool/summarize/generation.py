"""Which generation settings a summary uses, and where each value came from.

Order: the command-line flag; the model's own ``generation_config.json``; the paper of the model's kind
(LOCOST §5: greedy decoding; LSG §4.2: beam search of 5 with length penalty 2.0, also used for other
sequence-to-sequence models that ship no generation config); lsgtool's default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIELDS = ("max_new_tokens", "min_new_tokens", "num_beams", "length_penalty", "no_repeat_ngram_size",
          "repetition_penalty")
DEFAULTS = {"max_new_tokens": 256, "min_new_tokens": 0, "num_beams": 1, "length_penalty": 1.0,
            "no_repeat_ngram_size": 0, "repetition_penalty": 1.0}
# transformers' old generation defaults, all of them, as Seq2SeqTrainer (5.x) writes them into the model's config
# after a generating evaluation (lsgtool finetune before this version saved them so): a file holding every one
# of them says nothing about how its model should summarise (else a finetuned model wrote 20 tokens, greedily).
WRITTEN_BY_EVALUATION = {"max_length": 20, "min_length": 0, "num_beams": 1, "length_penalty": 1.0,
                         "no_repeat_ngram_size": 0, "repetition_penalty": 1.0}
EVALUATION_MARKS = {"num_assistant_tokens": 20, "num_assistant_tokens_schedule": "constant",
                    "assistant_confidence_threshold": 0.4}
PAPERS = {
    "locost": ({"num_beams": 1}, "LOCOST paper §5 (greedy decoding)"),
    "lsg": ({"num_beams": 5, "length_penalty": 2.0}, "LSG paper §4.2 (beam 5, length penalty 2.0)"),
}


@dataclass
class Generation:
    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)

    def kwargs(self) -> dict[str, Any]:
        """What ``model.generate`` receives (neutral values left out)."""
        out = {k: v for k, v in self.values.items() if not (k in ("no_repeat_ngram_size", "min_new_tokens") and not v)}
        if out.get("num_beams", 1) == 1:
            out.pop("length_penalty", None)  # only beam search uses it; transformers warns otherwise
        return {**out, "do_sample": False}

    def to_dict(self) -> dict[str, Any]:
        return {**self.values, "sources": dict(self.sources)}


def saved_settings(folder: Path | None) -> dict[str, Any]:
    """The summarisation settings a model's generation_config.json sets (max/min length read as new tokens)."""
    if folder is None or not (Path(folder) / "generation_config.json").is_file():
        return {}
    from transformers import GenerationConfig

    config = GenerationConfig.from_pretrained(folder)
    forget_evaluation_defaults(config)
    diff = config.to_diff_dict()
    found = {k: diff[k] for k in FIELDS if diff.get(k) is not None}
    for old, new in (("max_length", "max_new_tokens"), ("min_length", "min_new_tokens")):
        if new not in found and diff.get(old) is not None:
            found[new] = diff[old]
    return found


def forget_evaluation_defaults(config) -> bool:
    """Unset what a ``GenerationConfig`` holds only because an evaluation wrote it (``WRITTEN_BY_EVALUATION``):
    neither read as the model's settings nor passed on by ``generate`` (which warned that ``max_length`` 20 and
    ``max_new_tokens`` were both set). Recognised when it holds every one of them, or when it holds the speculative
    decoding defaults the same evaluation writes (``EVALUATION_MARKS``, which no summariser sets): then each of
    them still at its old default is unset, and the model's own values kept. True when there was such a thing."""
    if config is None:
        return False
    found = {k for k, v in WRITTEN_BY_EVALUATION.items() if getattr(config, k, None) == v}
    marked = all(getattr(config, k, None) == v for k, v in EVALUATION_MARKS.items())
    if not found or (len(found) < len(WRITTEN_BY_EVALUATION) and not marked):
        return False
    for key in found:
        setattr(config, key, None)
    return True


def resolve(flags: dict[str, Any], folder: Path | None, kind: str) -> Generation:
    """Settings for a model of ``kind`` (``locost``, ``lsg``, ``seq2seq``) saved in ``folder``."""
    saved = saved_settings(folder)
    paper, paper_name = PAPERS["locost"] if kind == "locost" else PAPERS["lsg"]
    if kind not in PAPERS:
        paper_name = "lsgtool default for models without a generation config: " + paper_name
    values, sources = {}, {}
    for name in FIELDS:
        for source, table in (("flag --" + name.replace("_", "-"), flags), ("the model's generation_config.json", saved),
                              (paper_name, paper), ("lsgtool default", DEFAULTS)):
            if table.get(name) is not None:
                values[name], sources[name] = table[name], source
                break
    return Generation(values, sources)
