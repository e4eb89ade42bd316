"""``lsgtool inspect-kernels``: what an LSG layer connects, how far LOCOST's SSM kernels reach, which operators
dominate a forward pass. The work is ``lsgtool.inspection.run``; this module parses the options and renders."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lsgtool.commands._common import LSG_FLAGS, Device, JsonOption, emit, flag_names
from lsgtool.commands._progress import RichProgress
from lsgtool.core.errors import ConfigError
from lsgtool.documents.model import NAMED_KINDS


class What(str, Enum):
    auto = "auto"
    lsg = "lsg"
    ssm = "ssm"
    ops = "ops"


def inspect_kernels_command(
    models: Annotated[Optional[list[str]], typer.Argument(
        metavar="MODEL_OR_CONFIG", show_default=False,
        help="A preset, model folder, config.json or Hub id: an LSG model (connectivity), a LOCOST model (SSM "
             "kernels; two to compare them), or any model for --what ops. Left out: an LSG layout from the flags, "
             "or synthetic layers for ops.")] = None,
    what: Annotated[What, typer.Option(
        help="lsg: connectivity map; ssm: kernels and reach; ops: operator breakdown of one forward; auto: lsg or "
             "ssm, from the model.")] = What.auto,
    length: Annotated[Optional[str], typer.Option(
        help="Tokens: one length (lsg, ssm), or a list for ops (1k,4k).",
        show_default="lsg: the model's positions or 4096; ssm: 4096; ops: 1k,4k")] = None,
    layer: Annotated[Optional[int], typer.Option(
        help="Layer: whose selector picks --input shows (lsg), whose kernels are drawn (ssm).", show_default="0", min=0)] = None,
    head: Annotated[Optional[int], typer.Option(
        help="Head of the map and the picks (lsg).", show_default="map: every head with its own pattern, up to 4; picks: 0", min=0)] = None,
    input_file: Annotated[Optional[Path], typer.Option(
        "--input", help=f"A document ({', '.join(NAMED_KINDS)}): show which tokens the selector of --layer picks in "
                        "it (lsg, a checkpoint with its tokenizer).")] = None,
    block: Annotated[Optional[int], typer.Option(help="LSG block size S (overrides the model's).", min=1)] = None,
    sparse_block: Annotated[Optional[int], typer.Option(help="Sparse tokens per side (default: --block).", min=0)] = None,
    factor: Annotated[Optional[int], typer.Option(help="Sparsity factor f.", min=1)] = None,
    sparse: Annotated[Optional[str], typer.Option(help="Sparse selector (`lsgtool plugins` lists them; none).")] = None,
    global_tokens: Annotated[Optional[int], typer.Option("--global", help="Global tokens.", min=0)] = None,
    vs_init: Annotated[bool, typer.Option(
        "--vs-init", help="ssm: put the model beside a random-weight model of the same config.")] = False,
    device: Annotated[Device, typer.Option(help="ops: cpu or cuda.")] = Device.cpu,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the PNGs and JSON (replaced on the next run).")] = Path("kernels-out"),
    plots: Annotated[bool, typer.Option(help="Draw the PNGs (needs matplotlib: pip install 'lsgtool\\[plot]').")] = True,
    as_json: JsonOption = False,
) -> None:
    """See what a long-context model connects: LSG connectivity, SSM kernel reach, operator breakdown."""
    from lsgtool.commands._common import require_device
    from lsgtool.inspection import InspectOptions, LSGLayout, run
    from lsgtool.plots import require_plotting
    from lsgtool.progress import Progress

    if plots:
        require_plotting()
    require_device(device)
    layout = LSGLayout(block_size=block, sparse_block_size=sparse_block, sparsity_factor=factor, sparsity_type=sparse,
                       num_global_tokens=global_tokens)
    options = InspectOptions(models=list(models or []), what=what.value, length=length, layer=layer, head=head,
                             input_file=input_file, layout=layout, vs_init=vs_init, device=device.value, out=out,
                             plots=plots)
    try:
        result = run(options, Progress() if as_json else RichProgress())
    except ConfigError:  # the layout's keys, as the flags the user typed (--block, not block_size)
        with flag_names(LSG_FLAGS):
            raise
    emit(result.report, as_json, {"lsg": _render_lsg, "ssm": _render_ssm, "ops": _render_ops}[result.what])


# ---------------------------------------------------------------- rendering


def _render_lsg(console: Console, data: dict) -> None:
    nominal, measured = data["nominal"], data["measured"]
    console.print(Text(data["title"], style="bold"))
    table = Table(title="keys per query and reach (interior blocks; edge blocks see fewer)", title_justify="left")
    for column in ("", "global", "local", "sparse", "keys per query", "connexions (cards)", "reach (tokens)"):
        table.add_column(column, justify="right")
    table.add_row("nominal (config)", str(nominal["global"]), str(nominal["local"]), str(nominal["sparse"]),
                  str(nominal["keys_per_query"]), str(nominal["connexions"]), str(nominal["reach"]))
    table.add_row("measured (selector traced)", "", "", "", str(measured["keys_per_query"]["interior_max"]), "",
                  str(measured["reach"]["interior_max"]))
    console.print(table)
    console.print(Text(f"map of head {data['map_heads'][0]} (# local, + sparse, : few sparse keys, G global):",
                       style="bold"))
    console.print("\n".join(data["terminal_map"]), markup=False, highlight=False)
    compare = Table(title=f"same keys per query, other patterns ({data['length']} tokens, {data['heads']} heads, fp32)",
                    title_justify="left")
    for column in ("pattern", "keys per query", "reach (tokens)", "scores per layer MB", "setting"):
        compare.add_column(column, justify="right" if column != "setting" else "left")
    for row in data["compare"]:
        compare.add_row(row["pattern"], str(row["keys_per_query"]), str(row["reach"]), f"{row['scores_mb']:.1f}",
                        row["setting"])
    console.print(compare)
    console.print(f"score matrices per layer if built at once: {nominal['scores_mb']:.1f} MB (full attention "
                  f"{nominal['full_scores_mb']:.1f} MB); lsgtool builds them a chunk of blocks at a time.", markup=False)
    if "picks" in data:
        _render_picks(console, data["picks"])
    for note in data["notes"]:
        console.print(f"note: {note}", markup=False)
    console.print(f"written: {', '.join(data['files'])}", markup=False)


def _render_picks(console: Console, picks: dict) -> None:
    console.print(Text(f"{picks['selector']} picks in {picks['input']} — layer {picks['layer']}, head {picks['head']}: "
                       f"{picks['tokens_taken']} of {picks['tokens']} tokens", style="bold"))
    if picks["truncated_tokens"]:
        console.print(f"the model read the first {picks['tokens']} tokens; {picks['truncated_tokens']} more were cut "
                      "at its positions.", markup=False)
    shown = Text()
    top = max((w for _, w in picks["preview"]), default=1.0) or 1.0
    for piece, weight in picks["preview"]:
        shade = int(80 + 175 * weight / top)
        shown.append(piece, style=f"black on rgb(255,{255 - shade // 2},{255 - shade})" if weight > 1e-6 else "")
    if not picks["preview"] and not picks["spans"]:
        shown.append("(the tokenizer gives no character offsets: picks.html and --json list the weights per token)")
    console.print(shown)
    from lsgtool.inspection.lsg import SHOW_CHARS

    console.print(f"(the first {SHOW_CHARS} characters, taken tokens highlighted; every span is in picks.html and "
                  "--json)", markup=False)


def _render_ssm(console: Console, data: dict) -> None:
    for model in data["models"]:
        table = Table(title=f"{model['model']} — {model['ssm_variant']}, state {model['d_state']}, {model['weights']}; "
                            f"effective reach at {data['length']} tokens (→ causal, ← anti-causal)",
                      title_justify="left")
        for column in ("layer", "→ median", "→ p90", "← median", "← p90", "not decayed", "radius median",
                       "radius max"):
            table.add_column(column, justify="right")
        for row in model["layers"]:
            table.add_row(row["layer"].removeprefix("layer "), str(row["causal_reach_median"]), str(row["causal_reach_p90"]),
                          str(row.get("anti-causal_reach_median", "-")), str(row.get("anti-causal_reach_p90", "-")),
                          str(row["causal_channels_at_length"] + row.get("anti-causal_channels_at_length", 0)),
                          f"{row['radius_median']:.5f}", f"{row['radius_max']:.5f}")
        console.print(table)
    for note in data["notes"]:
        console.print(f"note: {note}", markup=False)
    console.print(f"written: {', '.join(data['files'])}", markup=False)


def _short(length: int) -> str:
    return f"{length // 1024}k" if length % 1024 == 0 else str(length)


def _render_ops(console: Console, data: dict) -> None:
    from lsgtool.inspection.ops import KINDS

    table = Table(title=f"self time of one forward by operator kind — {data['model'] or 'synthetic layers'}, "
                        f"{data['device']}, {data['threads']} threads", title_justify="left")
    short = {"softmax/sdpa": "sdpa", "gather/copy": "copy", "elementwise": "elem"}
    for column in ("variant", "length", "ms", *(short.get(k, k) for k in KINDS)):
        table.add_column(column, justify="right", no_wrap=column == "variant")
    for p in data["points"]:
        if p["error"]:
            table.add_row(p["variant"], _short(p["length"]), f"[dim]{p['error']}[/dim]", *[""] * len(KINDS))
            continue
        table.add_row(p["variant"], _short(p["length"]), f"{p['total_ms']:.0f}",
                      *[f"{100 * p['share'][k]:.0f}%" for k in KINDS])
    console.print(table)
    console.print(f"written: {', '.join(data['files'])}", markup=False)
