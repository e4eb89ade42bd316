"""Abstractive summaries: any sequence-to-sequence model ``lsgtool.load`` takes, run through ``model.generate``.

``input_limit`` is what one encoder pass takes: LOCOST any length; LSG models and other learned-position
models their position table; relative-position models (T5, LongT5) their tokenizer's ``model_max_length``.
LED gets global attention on its first token, as its authors prescribe.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lsgtool.core.lsg.folder import is_lsg_model
from lsgtool.core.errors import UsageError
from lsgtool.core.tokens import count_tokens, truncate_ids
from lsgtool.summarize.generation import Generation
from lsgtool.progress import Progress

NO_LIMIT = 10**7  # tokenizers say 1e30 when they know no limit
KEPT_OFFSETS = 64  # texts whose token offsets are kept from their encoding (a batch's documents)


@dataclass
class Generated:
    text: str
    input_tokens: int
    new_tokens: int
    seconds: float
    padded_to: int = 0  # encoder positions of its row (the batch's longest input)
    steps: int = 0  # decoder positions of its row (the batch's longest summary)
    token_ends: list[int] | None = None  # with sources: where each generated token ends in ``text``
    token_mass: Any = None  # with sources: (tokens, input sentences) cross-attention mass (``attribution``)


def model_kind(model) -> str:
    if getattr(model.config, "model_type", None) == "locost":
        return "locost"
    if is_lsg_model(model):
        return "lsg"
    return "led" if model.config.model_type == "led" else "seq2seq"


def input_limit(model, tokenizer) -> int | None:
    """Tokens one encoder pass takes (None: no limit)."""
    kind = model_kind(model)
    if kind == "locost":
        return None
    if kind == "lsg":
        from lsgtool.core.lsg.engine import model_positions

        return model_positions(model)
    for name in ("max_encoder_position_embeddings", "max_position_embeddings"):
        value = getattr(model.config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < NO_LIMIT else None


def _layers(encoder) -> torch.nn.ModuleList | None:
    return next((m for m in encoder.modules() if isinstance(m, torch.nn.ModuleList) and len(m)), None)


class _Steps:
    """A logits processor that only counts decoding steps (works with beam search, unlike streamers)."""

    def __init__(self, progress: Progress):
        self.progress = progress

    def __call__(self, input_ids, scores):
        self.progress.advance(1)
        return scores


class _Stream:
    """A streamer handing decoded text pieces to the progress display (greedy decoding only)."""

    def __init__(self, tokenizer, progress: Progress):
        self.tokenizer, self.progress, self.ids, self.shown, self.first = tokenizer, progress, [], "", True

    def put(self, value) -> None:
        if self.first:  # the decoder start token
            self.first = False
            return
        self.ids += value.reshape(-1).tolist()
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if len(text) > len(self.shown) and not text.endswith("\ufffd"):
            self.progress.text(text[len(self.shown):])
            self.shown = text

    def end(self) -> None:
        pass


class Abstractive:
    """A loaded sequence-to-sequence model with its tokenizer and resolved generation settings."""

    method = "abstractive"

    def __init__(self, model, tokenizer, name: str, generation: Generation, limit: int | None = None):
        self.model, self.tokenizer, self.name, self.generation = model, tokenizer, name, generation
        self.kind = model_kind(model)
        self.limit = limit if limit is not None else input_limit(model, tokenizer)
        self.specials = tokenizer.num_special_tokens_to_add(pair=False)
        self.track_offsets = False  # encode keeps where its tokens are in the text (sources are traced)
        self._offsets: dict[str, list[tuple[int, int]]] = {}  # the last texts encoded
        self.notes: list[str] = []  # what the run could not do as asked, for every record's notes
        self._cap_new_tokens()

    def _cap_new_tokens(self) -> None:
        """``max_new_tokens`` (and ``min_new_tokens``) at most what the decoder's learned positions write: past them
        generation fails with an IndexError. The cap is a note (as a length is capped), not an error: the default
        (256) or the model's own generation config may ask for more than a small decoder has."""
        longest, values, sources = self.longest, self.generation.values, self.generation.sources
        if longest is None:
            return
        for name in ("max_new_tokens", "min_new_tokens"):
            if values.get(name) is not None and values[name] > longest:
                source = sources.get(name, "")
                asked = f"--{name.replace('_', '-')} {values[name]:,}" if source.startswith("flag") else \
                    f"{name} {values[name]:,} ({source})"
                self.notes.append(f"{asked} is more than the decoder of '{self.name}' writes ({longest:,} new tokens: "
                                  f"its learned positions): capped to {longest:,}")
                values[name], sources[name] = longest, f"{source}, capped to the decoder's {longest:,} positions"

    @property
    def pass_tokens(self) -> int | None:
        """Text tokens one pass takes (the limit less the special tokens the tokenizer adds)."""
        return None if self.limit is None else self.limit - self.specials

    @property
    def longest(self) -> int | None:
        """New tokens the decoder can write (its learned positions less the start token; None: no limit)."""
        positions = getattr(self.model.get_decoder(), "embed_positions", None)
        size = getattr(positions, "num_embeddings", None)
        if not isinstance(size, int):
            return None
        return size - getattr(positions, "offset", 0) - 1

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def count(self, texts: list[str]) -> list[int]:
        """Tokens of each text, special tokens not counted."""
        return count_tokens(self.tokenizer, texts)

    def encode(self, text: str) -> list[int]:
        """Token ids with the tokenizer's special tokens (the one tokenisation of a text: counted and generated
        from the same ids; with ``track_offsets``, where each token is in the text is kept from it too)."""
        if not self.track_offsets:
            return self.tokenizer(text, verbose=False)["input_ids"]
        encoded = self.tokenizer(text, verbose=False, return_offsets_mapping=True)
        if len(self._offsets) >= KEPT_OFFSETS:
            self._offsets.pop(next(iter(self._offsets)))
        self._offsets[text] = [tuple(pair) for pair in encoded["offset_mapping"]]
        return encoded["input_ids"]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Each token's character span in ``text``, for the ids ``encode`` gives ((0, 0): a special token); from
        the text's ``encode`` when it was one of the last ``KEPT_OFFSETS``, so a text is tokenised once."""
        self.require_traceable()
        if text in self._offsets:
            return self._offsets[text]
        return [tuple(pair) for pair in self.tokenizer(text, return_offsets_mapping=True, verbose=False)["offset_mapping"]]

    def untraceable(self) -> str | None:
        """Why summary sentences cannot be traced to their sources with this model (None: they can)."""
        from lsgtool.summarize.attribution import cross_attention_modules

        if not getattr(self.tokenizer, "is_fast", False):
            return "its tokenizer cannot say where its tokens are in the text (not a fast tokenizer)"
        if not cross_attention_modules(self.model):
            return "its decoder has no cross-attention lsgtool knows"
        return None

    def require_traceable(self) -> None:
        """Refuse ``--sources`` with the reason ``untraceable`` gives."""
        why = self.untraceable()
        if why:
            raise UsageError(f"--sources: the sources of '{self.name}'s sentences cannot be traced: {why}.",
                             "leave --sources out, or give a --tokenizer with a tokenizer.json.")

    def truncate(self, ids: list[int], keep: int) -> list[int]:
        """The first ``keep`` text tokens of ``ids``, with the special tokens around them kept (as the
        tokenizer's own truncation does: a cut input still ends with ``</s>``)."""
        return truncate_ids(self.tokenizer, ids, keep)

    def generate_kwargs(self, ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> dict[str, Any]:
        mask = torch.ones_like(ids) if attention_mask is None else attention_mask
        kwargs = {"input_ids": ids, "attention_mask": mask, **self.generation.kwargs()}
        if self.kind == "led":  # LED: global attention on the first token (its authors' summarisation setting)
            glob = torch.zeros_like(ids)
            glob[:, 0] = 1
            kwargs["global_attention_mask"] = glob
        return kwargs

    def generate(self, ids: list[int], progress: Progress | None = None, stream: bool = False,
                 bins: tuple[torch.Tensor, int] | None = None, length=None) -> Generated:
        """Summary of one token sequence, exactly as ``model.generate`` gives it for these ids and settings.
        ``bins``: (each token's input sentence, sentences) to record the cross-attention each sentence gets;
        ``length``: a ``length.Budget`` (new tokens, sentences) in place of --max-new-tokens."""
        return self.generate_batch([ids], progress, stream, None if bins is None else [bins], length)[0]

    @torch.no_grad()
    def generate_batch(self, batch_ids: list[list[int]], progress: Progress | None = None,
                       stream: bool = False, bins: list[tuple[torch.Tensor, int]] | None = None,
                       length=None) -> list[Generated]:
        """Summaries of several token sequences in one padded batch (right padding, masked); with ``bins`` (one
        per sequence), the cross-attention mass of each input sentence per generated token."""
        from contextlib import nullcontext

        from transformers import LogitsProcessorList, StoppingCriteriaList

        from lsgtool.summarize.attribution import Recorder
        from lsgtool.summarize.length import SentenceStop

        progress = progress or Progress()
        start = time.perf_counter()
        width = max(len(ids) for ids in batch_ids)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in batch_ids], device=self.device)
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in batch_ids], device=self.device)
        kwargs = self.generate_kwargs(batch, mask)
        layers = _layers(self.model.get_encoder())
        hooks = [] if layers is None else [layer.register_forward_hook(lambda *a: progress.advance(1)) for layer in layers]
        tokens = sum(len(ids) for ids in batch_ids)
        progress.stage("encode", len(layers) if layers is not None else None,
                       f"{tokens:,} tokens" + (f" in {len(batch_ids)} inputs" if len(batch_ids) > 1 else ""))
        try:
            encoder_outputs = self.model.get_encoder()(input_ids=batch, attention_mask=kwargs["attention_mask"],
                                                       **({"global_attention_mask": kwargs["global_attention_mask"]}
                                                          if "global_attention_mask" in kwargs else {}))
        finally:
            for hook in hooks:
                hook.remove()
        if length is not None:
            kwargs["max_new_tokens"] = length.tokens
            kwargs["min_new_tokens"] = min(kwargs.get("min_new_tokens", 0), length.tokens)
        stops = [SentenceStop(self.tokenizer, length.sentences)] if length is not None and length.sentences else []
        progress.stage("generate", kwargs["max_new_tokens"], "tokens")
        single_greedy = stream and self.generation.values["num_beams"] == 1 and len(batch_ids) == 1
        streamer = _Stream(self.tokenizer, progress) if single_greedy else None
        recorder = None if bins is None else Recorder(self.model, [b for b, _ in bins], [n for _, n in bins],
                                                      self.generation.values["num_beams"])
        processors = [_Steps(progress)] + ([recorder] if recorder else [])
        with recorder.recording() if recorder else nullcontext():
            out = self.model.generate(**kwargs, **(recorder.generate_kwargs if recorder else {}),
                                      encoder_outputs=encoder_outputs, streamer=streamer,
                                      logits_processor=LogitsProcessorList(processors),
                                      stopping_criteria=StoppingCriteriaList(stops))
        seconds = (time.perf_counter() - start) / len(batch_ids)
        results = []
        for i, (row, ids) in enumerate(zip(out, batch_ids)):
            new = row[1:]  # after the decoder start token
            text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            if stops:  # a sentence begun after the last one asked for is left out
                text = _first_sentences(text, length.sentences)
            result = Generated(text, len(ids), self._new_tokens(new.tolist()), seconds, width, len(new))
            if recorder is not None:  # steps after the row's end of sequence (waiting for the batch) are not its own
                result.token_ends = self._ends(new[:result.new_tokens].tolist(), text)
                result.token_mass = recorder.tokens(row, i)[:result.new_tokens]
            results.append(result)
        return results

    def _ends(self, new: list[int], text: str) -> list[int]:
        """Where each generated token ends in the stripped summary ``text`` (decoded prefix by prefix; past the end
        of ``text`` for tokens it left out, after the sentences --sentences asked for)."""
        full = self.tokenizer.decode(new, skip_special_tokens=True)
        lead = len(full) - len(full.lstrip())
        return [max(len(self.tokenizer.decode(new[:i + 1], skip_special_tokens=True)) - lead, 0)
                for i in range(len(new))]

    def _new_tokens(self, new: list[int]) -> int:
        """Tokens generated: up to the first end of sequence, which is counted; what follows it is the padding of
        a row that ended before the batch's longest (a token equal to the pad id before it is the model's)."""
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if eos is None:
            eos = self.model.config.eos_token_id
        ends = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
        return next((i + 1 for i, token in enumerate(new) if token in ends), len(new))


def _first_sentences(text: str, n: int) -> str:
    from lsgtool.documents.sentences import sentence_spans

    spans = list(sentence_spans(text))
    return text[:spans[n - 1][1]] if len(spans) > n else text


def load_abstractive(source, flags: dict[str, Any], tokenizer: str | None = None, device: str = "cpu",
                     dtype: str | None = None, limit: int | None = None, trust_checkpoint: bool = False,
                     config: Any = None) -> Abstractive:
    """Load a sequence-to-sequence model, with its tokenizer and settings. ``source``: the ``Source`` the run
    resolved (or any name ``lsgtool.load`` takes, resolved here, once)."""
    from lsgtool.core.load import Source, load, load_tokenizer, resolve
    from lsgtool.summarize.generation import forget_evaluation_defaults
    from lsgtool.summarize.generation import resolve as resolve_generation

    if not isinstance(source, Source):
        source = resolve(source, config=config)
    options = {"dtype": dtype} if dtype else {}
    loaded = load(source, trust_checkpoint=trust_checkpoint, **options)
    if not getattr(loaded.config, "is_encoder_decoder", False) or not hasattr(loaded, "generate"):
        raise UsageError(f"'{source.name}' is not a sequence-to-sequence model ({type(loaded).__name__}): it cannot "
                         "write abstractive summaries.", "give a summariser (BART, PEGASUS, T5, LED, LOCOST, or one of "
                                                         "them converted to LSG), or --method extractive for an encoder.")
    tok = load_tokenizer(source, tokenizer=tokenizer)
    forget_evaluation_defaults(getattr(loaded, "generation_config", None))
    loaded = loaded.to(device)
    folder = source.folder if source.layout != "lightning" else None
    return Abstractive(loaded, tok, source.name, resolve_generation(flags, folder and Path(folder), model_kind(loaded)),
                       limit)
