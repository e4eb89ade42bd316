"""``lsgtool inspect-kernels``: what an LSG layer connects, how far LOCOST's SSM kernels reach, which operators
dominate a forward pass."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lsgtool.commands._common import LSG_FLAGS, Device, JsonOption, emit, flag_names
from lsgtool.commands._progress import Steps
from lsgtool.core.errors import Interrupted, UsageError

COMMAND = "inspect-kernels"
DEFAULT_OPS_LENGTHS = "1k,4k"
OPS_VARIANTS = ["full", "lsg-norm", "locost"]
SHOW_CHARS = 1500  # picked spans shown in the terminal; picks.html holds the whole text


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
        help="Layer: whose selector picks --input shows (lsg), whose kernels are drawn (ssm).", show_default="0")] = None,
    head: Annotated[Optional[int], typer.Option(
        help="Head of the map and the picks (lsg).", show_default="map: every head with its own pattern, up to 4; picks: 0")] = None,
    input_file: Annotated[Optional[Path], typer.Option(
        "--input", help="A text (txt, md, pdf, epub): show which tokens the selector of --layer picks in it (lsg, a "
                        "checkpoint with its tokenizer).")] = None,
    block: Annotated[Optional[int], typer.Option(help="LSG block size S (overrides the model's).", min=1)] = None,
    sparse_block: Annotated[Optional[int], typer.Option(help="Sparse tokens per side (default: --block).", min=0)] = None,
    factor: Annotated[Optional[int], typer.Option(help="Sparsity factor f.", min=1)] = None,
    sparse: Annotated[Optional[str], typer.Option(help="Sparse selector (`lsgtool plugins` lists them; none).")] = None,
    global_tokens: Annotated[Optional[int], typer.Option("--global", help="Global tokens.", min=0)] = None,
    vs_init: Annotated[bool, typer.Option(
        "--vs-init", help="ssm: put the model beside a random-weight model of the same config.")] = False,
    device: Annotated[Device, typer.Option(help="ops: cpu or cuda.")] = Device.cpu,
    out: Annotated[Path, typer.Option(help="Folder for the PNGs and JSON (replaced on the next run).")] = Path("kernels-out"),
    plots: Annotated[bool, typer.Option(help="Draw the PNGs (needs matplotlib: lsgtool\\[plot]).")] = True,
    as_json: JsonOption = False,
) -> None:
    """See what a long-context model connects: LSG connectivity, SSM kernel reach, operator breakdown."""
    from lsgtool.commands._common import require_device
    from lsgtool.core.writing import clean_stale

    models = list(models or [])
    overrides = {"block_size": block, "sparse_block_size": sparse_block, "sparsity_factor": factor,
                 "sparsity_type": sparse, "num_global_tokens": global_tokens}
    given = [f for f, v in zip(("--block", "--sparse-block", "--factor", "--sparse", "--global"), overrides.values())
             if v is not None]
    if plots:
        from lsgtool.plots import require_plotting

        require_plotting()
    require_device(device)
    sources = [_find(name) for name in models]
    what = _decide(what, models, sources)
    _check_applies(what, models, head, input_file, given, vs_init, device)
    _check_out(out)
    clean_stale(out)
    job = {"lsg": _lsg, "ssm": _ssm, "ops": _ops}[what.value]
    try:
        prepared = job(models, sources, length=length, layer=layer, head=head, input_file=input_file,
                       overrides=overrides, vs_init=vs_init, device=device.value, as_json=as_json)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: nothing was written, {out} is as it was.", "run the same command again.") from None
    _write(prepared, out, plots, as_json)


# ---------------------------------------------------------------- checks


def _find(name: str):
    from lsgtool.inspection.models import find

    return find(name)


def _decide(what: What, models: list[str], sources) -> What:
    kinds = [s.kind for s in sources]
    if what is What.auto:
        if not models:
            return What.lsg
        if all(k == "locost" for k in kinds):
            return What.ssm
        if kinds[0] == "lsg":
            return What.lsg
        raise UsageError(f"{models[0]!r} is neither an LSG nor a LOCOST model (model type "
                         f"{sources[0].config.get('model_type')!r}): it has no LSG connectivity or SSM kernels to show.",
                         f"convert it first (lsgtool convert {models[0]}), or see its operators with --what ops.")
    if what is What.lsg:
        if len(models) > 1:
            raise UsageError("--what lsg maps one model at a time.", "pass one MODEL_OR_CONFIG.")
        if models and kinds[0] != "lsg":
            raise UsageError(f"{models[0]!r} is not an LSG model (model type {sources[0].config.get('model_type')!r}).",
                             "it is a LOCOST model: see its kernels with --what ssm." if kinds[0] == "locost" else
                             f"convert it first (lsgtool convert {models[0]}), or leave MODEL out and describe the "
                             "layout with --block, --factor, --sparse, --global.")
    if what is What.ssm:
        if not models:
            raise UsageError("--what ssm needs a LOCOST model.", "pass a LOCOST folder or preset, e.g. locost-base.")
        if len(models) > 2:
            raise UsageError("--what ssm compares at most two models.", "pass one or two LOCOST models.")
        for name, kind in zip(models, kinds):
            if kind != "locost":
                raise UsageError(f"{name!r} is not a LOCOST model: it has no SSM kernels.",
                                 "pass a LOCOST folder or preset (`lsgtool plugins` lists the presets).")
    if what is What.ops and len(models) > 1:
        raise UsageError("--what ops profiles one model (or, without one, synthetic layers).", "pass at most one model.")
    return what


def _check_applies(what: What, models, head, input_file, given, vs_init, device) -> None:
    """Options that do nothing for this --what are refused rather than ignored."""
    if what is not What.lsg:
        for flag, value in (("--head", head), ("--input", input_file)):
            if value is not None:
                raise UsageError(f"{flag} applies to --what lsg, not {what.value}.", f"leave {flag} out.")
        if given:
            raise UsageError(f"{given[0]} applies to --what lsg, not {what.value}.", f"leave {given[0]} out.")
    if vs_init and what is not What.ssm:
        raise UsageError(f"--vs-init applies to --what ssm, not {what.value}.", "leave --vs-init out.")
    if vs_init and len(models) > 1:
        raise UsageError("--vs-init compares one model with its random init; two models were given.",
                         "pass one model with --vs-init, or two models without it.")
    if device is Device.cuda and what is not What.ops:
        raise UsageError(f"--device applies to --what ops, not {what.value}.", "leave --device out.")
    if input_file is not None and not models:
        raise UsageError("--input needs an LSG checkpoint to run on the text.", "pass MODEL_OR_CONFIG too.")


def _check_out(out: Path) -> None:
    from lsgtool.core.writing import check_target, read_marker

    if out.exists() and (out.is_dir() and (read_marker(out) or {}).get("command") != COMMAND):
        raise UsageError(f"--out {out} exists and was not written by lsgtool {COMMAND}: it is left untouched.",
                         "choose another --out (inspect-kernels replaces only its own output folders).")
    check_target(out, overwrite=True)


def _lengths(text: str, flag: str = "--length") -> list[int]:
    from lsgtool.profiling import parse_lengths

    try:
        values = parse_lengths(text)
    except (UsageError, ValueError) as exc:
        raise UsageError(f"{flag} {text!r}: {getattr(exc, 'message', exc)}", "e.g. --length 4096, 4k or 1k,4k.") from None
    if any(v < 1 for v in values):
        raise UsageError(f"{flag} {text!r}: lengths must be positive.", "e.g. --length 4096.")
    return values


def _one_length(text: str | None, default: int) -> int:
    if text is None:
        return default
    values = _lengths(text)
    if len(values) != 1:
        raise UsageError(f"--length {text!r} gives {len(values)} lengths; this view takes one.", "e.g. --length 4096.")
    return values[0]


def _in_range(flag: str, value: int | None, count: int | None, what: str) -> None:
    if value is not None and count is not None and not 0 <= value < count:
        raise UsageError(f"{flag} {value} is out of range: the model has {count} {what}.",
                         f"pass {flag} 0 to {count - 1}.")


# ---------------------------------------------------------------- LSG


LSG_MAX_LENGTH = 2**18


def _lsg(models, sources, *, length, layer, head, input_file, overrides, as_json, **_) -> dict:
    from lsgtool.core.inspect.connectivity import compare_budget, connectivity, is_data_dependent, nominal
    from lsgtool.inspection.models import lsg_target

    with flag_names(LSG_FLAGS):
        target = lsg_target(sources[0] if sources else None, overrides)
    config = target.config
    n = _one_length(length, int(target.positions or 4096))
    if n > LSG_MAX_LENGTH:
        raise UsageError(f"--length {n} is longer than the map is drawn for ({LSG_MAX_LENGTH}).",
                         "LSG's pattern repeats along the sequence: a map at 16k shows what 1M looks like.")
    _in_range("--head", head, target.heads, "heads")
    _in_range("--layer", layer, target.layers, "layers")
    document = None
    if input_file is not None:
        from lsgtool.documents.read import read

        document = read(input_file)  # checked before the model loads
    name = models[0] if models else "layout from flags"
    title = f"{name}: block {config.block_size}, " + (
        f"{config.sparse_block_size} sparse tokens per side, {config.sparsity_type} f={config.sparsity_factor}"
        if config.has_sparse else "no sparse tokens") + f", {config.num_global_tokens} global; {n} tokens"
    with Steps("tracing the selector", as_json=as_json) as tick, _traceable():
        conn = connectivity(config, n, target.heads, target.head_dim, progress=tick)
    result: dict[str, Any] = {
        "what": "lsg", "model": name, "length": n, "padded": conn.padded, "heads": target.heads,
        "config": config.to_dict(), "nominal": nominal(config, target.heads, n),
        "measured": conn.summary(), "data_dependent": is_data_dependent(config),
        "distinct_heads": conn.distinct_heads(), "compare": compare_budget(config, n, target.heads),
        "column_size": conn.column_size, "title": title,
    }
    result["notes"] = _lsg_notes(result, config)
    if target.positions and n > target.positions:
        result["notes"].insert(0, f"{name} takes at most {target.positions} positions: this map is the layout's at {n} "
                                  "tokens, which the model itself cannot read (convert it with a larger --max-length).")
    heads = [head] if head is not None else result["distinct_heads"][:4]
    result["map_heads"] = heads
    result["terminal_map"] = ascii_map(conn, heads[0])
    files = {"conn": conn}
    if document is not None:
        result["picks"], files["picks"] = _picks(models[0], target, document, layer or 0, head or 0, as_json)
    return {"result": result, "draw": lambda folder, plots: _draw_lsg(folder, plots, result, files)}


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


def _lsg_notes(result: dict, config) -> list[str]:
    notes = []
    nominal, measured = result["nominal"], result["measured"]
    if measured["full_attention"]:
        notes.append(f"{result['length']} tokens fit in two blocks of {config.block_size}: LSG runs full attention here.")
    if result["padded"] != result["length"]:
        notes.append(f"the sequence is padded from {result['length']} to {result['padded']} tokens (whole blocks); "
                     "padding is never a key.")
    if result["data_dependent"]:
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


def _picks(name: str, target, document, layer: int, head: int, as_json: bool):
    from lsgtool.core.convert.engine import model_positions
    from lsgtool.core.inspect.connectivity import lsg_layers
    from lsgtool.core.load import load, load_tokenizer
    from lsgtool.inspection.picks import picks, preview

    if not target.source.has_weights:
        raise UsageError(f"--input runs the model on the text, and {name!r} has no weights here.",
                         "pass a checkpoint folder (a converted model), or leave --input out for the map.")
    tokenizer = load_tokenizer(name)
    model = load(name).eval()
    layers = lsg_layers(model)
    _in_range("--layer", layer, len(layers), "LSG layers")
    limit = model_positions(model) or 2**20
    with Steps(f"tracing layer {layer}'s selector on {document.name}", as_json=as_json) as tick, _traceable():
        found = picks(model, tokenizer, document.text, layer, head, limit, progress=tick)
    summary = {"input": document.name, "layer": layer, "head": head, "selector": found.selector,
               "tokens": found.tokens, "truncated_tokens": found.truncated,
               "tokens_taken": sum(1 for w in found.weights if w > 1e-6), "spans": found.spans,
               "preview": preview(found, SHOW_CHARS)}
    return summary, found


def _draw_lsg(folder: Path, plots: bool, result: dict, files: dict) -> list[Path]:
    written = []
    if plots:
        from lsgtool.inspection import plots as draw

        written.append(draw.lsg_map(files["conn"], result["map_heads"], folder / "lsg-map.png", result["title"]))
    if "picks" in files:
        from lsgtool.inspection.picks import to_html

        page = folder / "picks.html"
        p = result["picks"]
        page.write_text(to_html(files["picks"], f"{p['selector']} picks, layer {p['layer']}, head {p['head']} — "
                                                f"{p['input']}"))
        written.append(page)
    return written


# ---------------------------------------------------------------- SSM


def _ssm(models, sources, *, length, layer, vs_init, as_json, **_) -> dict:
    from lsgtool.core.inspect.ssm import kernel_stats, ssm_layers
    from lsgtool.inspection.models import NO_WEIGHTS, locost_model, random_locost

    n = _one_length(length, 4096)
    loaded = []
    for name, source in zip(models, sources):
        model, note = locost_model(source, name)
        loaded.append((name, model, note))
    if vs_init:
        loaded.append((f"{models[0]} (random init)", random_locost(loaded[0][1].config), "random weights"))
    results, stats_at_layer = [], []
    total = sum(len(ssm_layers(m)) for _, m, _ in loaded)
    with Steps("computing kernels", as_json=as_json, total=total) as tick:
        done = 0
        for name, model, note in loaded:
            mixers = ssm_layers(model)
            _in_range("--layer", layer, len(mixers), "SSM layers")
            rows = []
            for index, (module_name, mixer) in enumerate(mixers):
                stats = kernel_stats(f"layer {index}", mixer, n)
                rows.append(stats.summary())
                if index == (layer or 0):
                    shown = f"{name} (random weights)" if note == NO_WEIGHTS else name
                    stats_at_layer.append((shown, stats))
                done += 1
                tick(done, total)
            variant = getattr(model.config, "ssm_variant", "?")
            results.append({"model": name, "weights": note, "ssm_variant": variant,
                            "d_state": getattr(model.config, "d_state", None), "layers": rows})
    result = {"what": "ssm", "length": n, "layer": layer or 0, "reach_fraction": 0.01, "models": results,
              "notes": ["effective reach: the distance past which |K| stays below 1% of its maximum; a channel whose "
                        f"reach equals --length ({n}) has not decayed within it.",
                        "spectral radius max|λ| per channel from the kernel's modes (S4D family) or fitted on its decay."]}
    title = f"SSM kernels at {n} tokens"
    return {"result": result, "draw": lambda folder, plots: _draw_ssm(folder, plots, result, stats_at_layer, title)}


def _draw_ssm(folder: Path, plots: bool, result: dict, stats: list, title: str) -> list[Path]:
    if not plots:
        return []
    from lsgtool.inspection import plots as draw

    return [draw.ssm_kernels(stats, folder / "ssm-kernels.png", title + f", layer {result['layer']}"),
            draw.ssm_heatmap(stats, folder / "ssm-heatmap.png", title + f", layer {result['layer']}, every channel"),
            draw.ssm_reach([(m["model"], m["layers"]) for m in result["models"]], folder / "ssm-reach.png",
                           title + ": effective reach per layer")]


# ---------------------------------------------------------------- operators


def _ops(models, sources, *, length, device, as_json, **_) -> dict:
    import torch

    from lsgtool.profiling.variants import Setup, check_variants

    lengths = _lengths(length or DEFAULT_OPS_LENGTHS)
    setup = Setup(768, 12, 1, "layer", 1, 128, 4)
    target = None
    if models:
        from lsgtool.profiling.models import resolve_model

        model_target = resolve_model(models[0])
        target, variants = vars(model_target), model_target.default_variants
    else:
        variants = check_variants(OPS_VARIANTS)
    def run(folder: Path) -> list:
        from lsgtool.inspection.ops import breakdown

        with Steps("profiling", as_json=as_json, total=len(lengths) * len(variants)) as tick:
            count = [0]

            def point(variant, n):
                tick(count[0], len(lengths) * len(variants), f"profiling {variant} @ {n}")
                count[0] += 1

            return breakdown(variants, lengths, setup=setup, target=target, device=device, dtype=torch.float32,
                             traces=folder, on_point=point)

    result = {"what": "ops", "model": models[0] if models else None, "device": device, "lengths": lengths,
              "variants": variants, "threads": torch.get_num_threads(),
              "setup": None if models else {"level": "layer (pre-norm block with FFN)", "hidden": 768, "heads": 12,
                                            "block": 128, "factor": 4}}
    return {"result": result, "work_in_folder": run,
            "draw": lambda folder, plots: _draw_ops(folder, plots, result)}


def _draw_ops(folder: Path, plots: bool, result: dict) -> list[Path]:
    from lsgtool.inspection.ops import Breakdown

    traces = [folder / b["trace"] for b in result["points"] if b.get("trace")]
    if not plots:
        return traces
    from lsgtool.inspection import plots as draw

    points = [Breakdown(**{k: v for k, v in b.items() if k != "share"}) for b in result["points"]]
    title = f"operators of one forward — {result['model'] or 'synthetic layers, width 768'}, {result['device']}"
    return [draw.ops(points, folder / "ops.png", title), *traces]


# ---------------------------------------------------------------- output


def _write(prepared: dict, out: Path, plots: bool, as_json: bool) -> None:
    """Stage every file next to ``out``, publish with one rename; Ctrl-C leaves the old folder as it was."""
    import json

    from lsgtool.core.writing import publish, stage, write_marker

    result = prepared["result"]
    tmp = stage(out)
    try:
        if "work_in_folder" in prepared:
            points = prepared["work_in_folder"](tmp)
            result["points"] = [{**vars(p), "share": {k: round(v, 4) for k, v in p.share().items()}} for p in points]
        files = prepared["draw"](tmp, plots)
        (tmp / f"{result['what']}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
        write_marker(tmp, command=COMMAND, what=result["what"])
        publish(tmp, out, overwrite=True)
    except KeyboardInterrupt:
        shutil.rmtree(tmp, ignore_errors=True)
        raise Interrupted(f"interrupted: nothing was written, {out} is as it was.", "run the same command again.") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result["files"] = [str(out / f.name) for f in files] + [str(out / f"{result['what']}.json")]
    emit(result, as_json, {"lsg": _render_lsg, "ssm": _render_ssm, "ops": _render_ops}[result["what"]])


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
