"""Which tokens of a real text an LSG layer's selector takes: the model runs on the text once, the chosen
layer's selector inputs are recorded, and the selector is traced on them (``core.inspect.connectivity``)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import torch

from lsgtool.core.errors import UsageError
from lsgtool.progress import Progress


@dataclass
class Picks:
    text: str
    tokens: int  # tokens the model read
    truncated: int  # tokens cut off at the model's positions
    layer: int
    head: int
    selector: str
    weights: list[float]  # per token read: what the selector took from it (1 = one whole reduced token)
    spans: list[dict]  # character spans of the tokens taken, with their weight
    offsets: list[tuple[int, int]] | None


class Ticks:
    """A core callback ``progress(done, total)`` reported as ``Progress.advance`` steps of the current stage."""

    def __init__(self, progress: Progress):
        self.progress, self.done = progress, 0

    def __call__(self, done: int, total: int) -> None:
        self.progress.advance(done - self.done)
        self.done = done


def picks(model, tokenizer, text: str, layer: int, head: int, max_tokens: int, progress: Progress | None = None,
          detail: str = "") -> Picks:
    """Run ``model`` on ``text`` (cut at ``max_tokens``) and trace what layer ``layer``'s selector took, per token,
    for head ``head``; ``detail`` (e.g. the text's name) follows the stage's name in ``progress``."""
    from lsgtool.core.inspect.connectivity import connectivity, lsg_layers, record_selector

    layers = lsg_layers(model)
    module = layers[layer]
    config = module.lsg_config
    if config.selector is None:
        raise UsageError(f"layer {layer} has no sparse selector (sparsity_type {config.sparsity_type!r}): it takes no "
                         "sparse tokens to show.", "pick a model converted with --sparse norm, lsh, pooling, ...")
    fast = getattr(tokenizer, "is_fast", False)
    # cut here, and reported: the tokenizer's own warning about the length would only repeat it
    encoded = tokenizer(text, return_offsets_mapping=fast, return_tensors="pt", truncation=False, verbose=False)
    ids = encoded["input_ids"]
    total = ids.shape[1]
    truncated = max(0, total - max_tokens)
    ids = ids[:, :max_tokens]
    offsets = [tuple(map(int, o)) for o in encoded["offset_mapping"][0, :max_tokens]] if fast else None
    if ids.shape[1] <= 2 * config.block_size:
        raise UsageError(f"the text gives {ids.shape[1]} tokens, no more than two blocks ({2 * config.block_size}): "
                         "LSG runs full attention there and no selector is called.",
                         "pass a longer --input (several blocks of text).")
    progress = progress or Progress()
    padded = ids.shape[1] + (-ids.shape[1] % config.block_size)
    progress.stage(f"tracing layer {layer}'s selector", total=padded, detail=detail)  # one column per token
    run = model.get_encoder() if getattr(model.config, "is_encoder_decoder", False) else model
    with torch.no_grad(), record_selector(module) as seen:
        run(input_ids=ids, attention_mask=torch.ones_like(ids))
    if not seen:
        raise UsageError(f"layer {layer}'s selector was not called on this input.", "pass a longer --input.")
    x = seen[0]
    x.key, x.query = x.key[:1], x.query[:1]
    x.mask, x.first_query = x.mask[:1], x.first_query[:1]
    function = x.config.selector
    # the recorded sequence holds the non-global tokens, padded to whole blocks: position p is token p
    conn = connectivity(config, ids.shape[1], inputs=x, selector=getattr(function, "original", function),
                        token_level=True, progress=Ticks(progress))
    weights = conn.picked[head, : ids.shape[1]].tolist()
    return Picks(text, ids.shape[1], truncated, layer, head, config.sparsity_type, weights,
                 _spans(text, offsets, weights), offsets)


def _spans(text: str, offsets, weights: list[float]) -> list[dict]:
    """Adjacent taken tokens merged into character spans, each with its largest weight."""
    if offsets is None:
        return []
    spans: list[dict] = []
    for (start, end), weight in zip(offsets, weights):
        if weight <= 1e-6 or end <= start:
            continue
        if spans and start - spans[-1]["end"] <= 1:
            spans[-1]["end"], spans[-1]["weight"] = end, max(spans[-1]["weight"], weight)
        else:
            spans.append({"start": start, "end": end, "weight": weight})
    for span in spans:
        span["text"] = text[span["start"] : span["end"]]
        span["weight"] = round(span["weight"], 4)
    return spans


def preview(result: Picks, chars: int) -> list[tuple[str, float]]:
    """The first ``chars`` characters read as (text, weight) segments: weight 0 where nothing was taken."""
    segments: list[tuple[str, float]] = []
    cursor = 0
    for (start, end), weight in zip(result.offsets or [], result.weights):
        if start >= chars:
            break
        if end <= start:
            continue
        if start > cursor:
            segments.append((result.text[cursor:start], 0.0))
        segments.append((result.text[start:end], weight))
        cursor = end
    return segments


def to_html(result: Picks, title: str) -> str:
    """The text read, every taken token shaded by its weight."""
    top = max(result.weights) or 1.0
    parts, cursor = [], 0
    for (start, end), weight in zip(result.offsets or [], result.weights):
        if end <= start:
            continue
        parts.append(html.escape(result.text[cursor:start]))
        piece = html.escape(result.text[start:end])
        share = weight / top
        parts.append(f'<span style="background: rgba(245,130,20,{0.15 + 0.85 * share:.2f})" title="{weight:.3f}">{piece}</span>'
                     if weight > 1e-6 else piece)
        cursor = end
    end_of_read = (result.offsets or [(0, 0)])[-1][1]
    parts.append(html.escape(result.text[cursor:end_of_read]))
    rest = len(result.text) - end_of_read
    note = f"<p><em>{rest} more characters not read (the model's positions end there).</em></p>" if rest > 0 else ""
    return (f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<h3>{html.escape(title)}</h3><p style='white-space: pre-wrap; font-family: serif'>{''.join(parts)}</p>{note}")
