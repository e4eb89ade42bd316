"""The LSG view of ``inspect-kernels``: the connectivity map of a layout (a model's, or the flags' alone), its
numbers beside the nominal ones and other patterns', and, with a text, which tokens a layer's selector takes."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError
from lsgtool.inspection.options import InspectOptions, in_range, input_needs_a_checkpoint, one_length
from lsgtool.progress import Progress

MAX_LENGTH = 2**18
DEFAULT_LENGTH = 4096
MAP_HEADS = 4  # heads drawn when --head is not given (those with their own pattern)
SHOW_CHARS = 1500  # picked spans shown in the terminal; picks.html holds the whole text


@dataclass
class LSGView:
    """``report``: what the CLI prints and --json gives; ``connectivity`` and ``picks`` the objects behind it."""

    report: dict[str, Any]
    connectivity: Any  # core.inspect.connectivity.Connectivity
    picks: Any = None  # inspection.picks.Picks, with --input

    def write(self, folder: Path, plots: bool, progress: Progress) -> list[Path]:
        from lsgtool.core.writing import write_file

        written = []
        if plots:
            from lsgtool.inspection import plots as draw

            written.append(draw.lsg_map(self.connectivity, self.report["map_heads"], folder / "lsg-map.png",
                                        self.report["title"]))
        if self.picks is not None:
            from lsgtool.inspection.picks import to_html

            p = self.report["picks"]
            title = f"{p['selector']} picks, layer {p['layer']}, head {p['head']} — {p['input']}"
            written.append(write_file(folder / "picks.html", to_html(self.picks, title)))
        return written


def prepare(options: InspectOptions, sources: list, progress: Progress) -> LSGView:
    """Map the layout of ``sources[0]`` (or of ``options.layout`` alone) and, with ``options.input_file``, trace
    the picks of ``options.layer``'s selector on that text."""
    from lsgtool.core.inspect.connectivity import column_map, compare_budget, connectivity, is_data_dependent, nominal
    from lsgtool.inspection.models import lsg_target
    from lsgtool.inspection.picks import Ticks

    target = lsg_target(sources[0] if sources else None, options.layout.overrides())
    config = target.config
    n = one_length(options.length, int(target.positions or DEFAULT_LENGTH))
    if n > MAX_LENGTH:
        raise UsageError(f"--length {n} is longer than the map is drawn for ({MAX_LENGTH}).",
                         "LSG's pattern repeats along the sequence: a map at 16k shows what 1M looks like.")
    in_range("--head", options.head, target.heads, "heads")
    in_range("--layer", options.layer, target.layers, "layers")
    document = None
    if options.input_file is not None:
        from lsgtool.documents.read import read

        document = read(options.input_file)  # checked before the map is traced and the model loads
    name = options.models[0] if options.models else "layout from flags"
    if document is not None and not target.source.has_weights:
        raise UsageError(f"--input runs the model on the text, and {name!r} has no weights here.",
                         input_needs_a_checkpoint(options.input_file))
    S = config.block_size
    progress.stage("tracing the selector", total=column_map(n + (-n % S), S)[1])
    with _traceable():
        conn = connectivity(config, n, target.heads, target.head_dim, progress=Ticks(progress))
    report: dict[str, Any] = {
        "what": "lsg", "model": name, "length": n, "padded": conn.padded, "heads": target.heads,
        "config": config.to_dict(), "nominal": nominal(config, target.heads, n),
        "measured": conn.summary(), "data_dependent": is_data_dependent(config),
        "distinct_heads": conn.distinct_heads(), "compare": compare_budget(config, n, target.heads),
        "column_size": conn.column_size, "title": _title(name, config, n),
    }
    report["notes"] = _notes(report, config)
    if target.positions and n > target.positions:
        report["notes"].insert(0, f"{name} takes at most {target.positions} positions: this map is the layout's at {n} "
                                  "tokens, which the model itself cannot read (convert it with a larger --max-length).")
    heads = [options.head] if options.head is not None else report["distinct_heads"][:MAP_HEADS]
    report["map_heads"] = heads
    report["terminal_map"] = ascii_map(conn, heads[0])
    view = LSGView(report, conn)
    if document is not None:
        view.picks = _picks(target, document, options.layer or 0, options.head or 0, progress)
        report["picks"] = _picks_summary(view.picks, document.name)
    return view


def _title(name: str, config, n: int) -> str:
    sparse = (f"{config.sparse_block_size} sparse tokens per side, {config.sparsity_type} f={config.sparsity_factor}"
              if config.has_sparse else "no sparse tokens")
    return f"{name}: block {config.block_size}, {sparse}, {config.num_global_tokens} global; {n} tokens"


def ascii_map(conn, head: int, width: int = 64, rows: int = 16) -> list[str]:
    """The map of one head in characters: rows sample query blocks, each character a span of keys;
    ``G`` global, ``#`` local, ``+`` sparse (``:`` a few sparse keys), ``.`` nothing."""
    import torch

    nb, cols = conn.local.shape
    per_char = max(1, -(-cols // width))
    chars = -(-cols // per_char)
    pad = chars * per_char - cols
    local = torch.nn.functional.pad(conn.local, (0, pad)).view(nb, chars, per_char).amax(-1)
    sparse = torch.nn.functional.pad(conn.sparse[head], (0, pad)).view(nb, chars, per_char).sum(-1)
    full = per_char * max(1.0, conn.column_size / conn.config.sparsity_factor)
    G = "G" if conn.config.num_global_tokens else ""
    lines = [f"{'query block':>12} {G}keys 0 .. {conn.padded} ({conn.padded // chars} tokens per character)"]
    picks = sorted(set(torch.linspace(0, nb - 1, min(rows, nb)).round().long().tolist()))
    for i in picks:
        row = "".join("#" if local[i, c] > 0 else "+" if sparse[i, c] >= 0.25 * full else ":" if sparse[i, c] > 1e-6
                      else "." for c in range(chars))
        lines.append(f"{i:>12} {G}{row}")
    return lines


@contextmanager
def _traceable():
    from lsgtool.core.inspect.connectivity import NotLinear

    try:
        yield
    except NotLinear as exc:
        raise UsageError(str(exc), "the map needs a selector whose reduced tokens are weighted sums of tokens (every "
                                   "built-in one is); its keys per query are still 3S + 2 x sparse tokens + globals.") from None


def _notes(report: dict, config) -> list[str]:
    notes = []
    nominal, measured = report["nominal"], report["measured"]
    if measured["full_attention"]:
        notes.append(f"{report['length']} tokens fit in two blocks of {config.block_size}: LSG runs full attention here.")
    if report["padded"] != report["length"]:
        notes.append(f"the sequence is padded from {report['length']} to {report['padded']} tokens (whole blocks); "
                     "padding is never a key.")
    if report["data_dependent"]:
        notes.append(f"{config.sparsity_type} picks depend on the data: the map shows its picks on random keys; "
                     "--input FILE with a checkpoint shows them on a text.")
    if not measured["full_attention"] and measured["keys_per_query"]["interior_max"] != nominal["keys_per_query"]:
        notes.append(f"measured keys per query ({measured['keys_per_query']['interior_max']}) differ from the nominal "
                     f"{nominal['keys_per_query']}: the selector leaves some reduced tokens unusable (empty clusters "
                     "or padding).")
    notes.append(f"connexions = 3S + 2 x sparse tokens per side = {nominal['connexions']}, globals not counted, as the "
                 "LSG model cards count them (384 for 128/0, 160 for 32/4); their and the paper's 644 for 128/4 is 4 "
                 "above this rule's 640 and follows from no setting of those models.")
    return notes


def _picks(target, document, layer: int, head: int, progress: Progress):
    """Run the checkpoint on ``document`` and trace what ``layer``'s selector takes for ``head``."""
    from lsgtool.core.lsg.engine import model_positions
    from lsgtool.core.inspect.connectivity import lsg_layers
    from lsgtool.core.load import load, load_tokenizer
    from lsgtool.inspection.picks import picks

    tokenizer = load_tokenizer(target.source)
    model = load(target.source).eval()
    in_range("--layer", layer, len(lsg_layers(model)), "LSG layers")
    limit = model_positions(model) or 2**20
    with _traceable():
        return picks(model, tokenizer, document.text, layer, head, limit, progress=progress,
                     detail=f"on {document.name}")


def _picks_summary(found, input_name: str) -> dict[str, Any]:
    from lsgtool.inspection.picks import preview

    return {"input": input_name, "layer": found.layer, "head": found.head, "selector": found.selector,
            "tokens": found.tokens, "truncated_tokens": found.truncated,
            "tokens_taken": sum(1 for w in found.weights if w > 1e-6), "spans": found.spans,
            "preview": preview(found, SHOW_CHARS)}
