"""``lsgtool finetune``: train LSG and LOCOST models on datasets (classification, multilabel, token
classification, MLM, seq2seq, GSG pre-training) with transformers' Trainer."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.commands._common import JsonOption, emit
from lsgtool.commands._progress import TrainingProgress
from lsgtool.core.errors import Interrupted, UsageError

COMMAND = "finetune"


def finetune_command(
    task: Annotated[Optional[str], typer.Option(
        help="classification, multilabel, token-classification, mlm, seq2seq or gsg.", show_default="classification")] = None,
    model: Annotated[Optional[str], typer.Option(help="Preset, folder, Hub id or LOCOST checkpoint to train.")] = None,
    data: Annotated[Optional[str], typer.Option(
        help="json/jsonl/csv/parquet/txt file or folder, a save_to_disk folder, or a Hub dataset.")] = None,
    text_column: Annotated[Optional[str], typer.Option(help="Input text column.", show_default="text")] = None,
    label_column: Annotated[Optional[str], typer.Option(help="Label column (classification).", show_default="label")] = None,
    summary_column: Annotated[Optional[str], typer.Option(help="Target column (seq2seq).", show_default="summary")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Run folder: final model, metrics, curves, checkpoints.",
                                                show_default="./finetune-<task>")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="A TOML file with any option (\\[train] lr = 8e-5).")] = None,
    sets: Annotated[Optional[list[str]], typer.Option("--set", help="Override one key: --set train.lr=5e-4 (repeatable).")] = None,
    recipe: Annotated[Optional[str], typer.Option(
        help="The papers' settings: lsg-classification, lsg-summarization, locost-finetune, locost-pretrain.")] = None,
    convert: Annotated[Optional[bool], typer.Option("--convert", help="Convert a plain checkpoint to LSG first "
                                                                       "(--block, --factor, --sparse, --global, --max-length).")] = None,
    block: Annotated[Optional[int], typer.Option(help="--convert: LSG block size.", min=1)] = None,
    factor: Annotated[Optional[int], typer.Option(help="--convert: sparsity factor.", min=1)] = None,
    sparse: Annotated[Optional[str], typer.Option(help="--convert: sparse selector.")] = None,
    global_tokens: Annotated[Optional[int], typer.Option("--global", help="--convert: global tokens.", min=0)] = None,
    max_length: Annotated[Optional[int], typer.Option(
        help="Input length: with --convert the LSG length; for an LSG model, extend its positions first (4K -> 16K).",
        min=1)] = None,
    train: Annotated[Optional[str], typer.Option("--train", help="full, or global-only (only the global tokens learn).")] = None,
    freeze: Annotated[Optional[list[str]], typer.Option(help="Freeze parameters matching a pattern (repeatable).")] = None,
    lr: Annotated[Optional[float], typer.Option(help="Learning rate.")] = None,
    epochs: Annotated[Optional[float], typer.Option(help="Epochs.")] = None,
    max_steps: Annotated[Optional[int], typer.Option(help="Stop after this many optimizer steps.", min=1)] = None,
    batch_size: Annotated[Optional[int], typer.Option(help="Examples per device and step.", min=1)] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its last checkpoint.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a run folder lsgtool wrote.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Prepare data and model, train nothing (gsg: print pairs).")] = False,
    show: Annotated[int, typer.Option(help="--dry-run: examples to print.", min=0)] = 3,
    as_json: JsonOption = False,
) -> None:
    """Fine-tune (or GSG pre-train) a model on a dataset with transformers' Trainer; resumable, distributable."""
    from lsgtool.finetune.config import resolve, to_toml

    if config is None and (model is None or data is None):
        model, data = _ask_missing(model, data, as_json)
    typed = {"train": {"task": task, "lr": lr, "epochs": epochs, "max_steps": max_steps, "batch_size": batch_size},
             "model": {"name": model, "convert": convert, "block": block, "factor": factor, "sparse": sparse,
                       "global": global_tokens, "max_length": max_length, "train": train, "freeze": freeze},
             "data": {"name": data, "text_column": text_column, "label_column": label_column,
                      "summary_column": summary_column}}
    settings = resolve(recipe, config, typed, list(sets or []))
    task = settings["train"]["task"]
    out = out or Path(f"finetune-{task}")
    if dry_run:
        return _dry_run(settings, show, as_json)
    if _is_main():  # under torchrun / accelerate launch the first process checks and writes the folder
        _check_out(out, resume, overwrite)
    from lsgtool.finetune.train import prepare

    prepared = prepare(settings)
    _start(out, resume, overwrite, to_toml(settings))
    result = _train(settings, prepared, out, resume, as_json)
    if _is_main():
        emit(result, as_json, _render)


def _ask_missing(model: str | None, data: str | None, as_json: bool) -> tuple[str | None, str | None]:
    """On a terminal, what is missing is asked for; in a pipe, under CI or with --json the checks say it instead."""
    from lsgtool.commands._prompt import ask, choose, interactive, model_choices

    if not interactive(as_json):
        return model, data
    if model is None:
        model = choose("Which model should be trained?", model_choices(), default="minilm")
    if data is None:
        found = sorted(p.name for p in Path(".").iterdir() if p.suffix.lower() in (".json", ".jsonl", ".csv", ".parquet", ".txt"))
        data = ask("Which data (a file, a folder, a save_to_disk folder or a Hub dataset)?", found[0] if found else "",
                   check=lambda v: None if v else "a dataset is needed.")
    return model, data


def _is_main() -> bool:
    import os

    return os.environ.get("RANK", "0") == "0"


def _check_out(out: Path, resume: bool, overwrite: bool) -> None:
    from lsgtool.core.writing import check_target, read_marker

    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other.", "resume the run, or replace it.")
    if out.exists():
        marker = read_marker(out) if out.is_dir() else None
        if (marker or {}).get("command") != COMMAND:
            raise UsageError(f"--out {out} exists and is not a run folder of lsgtool finetune: it is left untouched.",
                             "choose another --out.")
        if not resume and not overwrite:
            state = marker.get("state", "?")
            raise UsageError(f"--out {out} holds a {state} run.",
                             "pass --resume to continue it, --overwrite to replace it, or choose another --out.")
        if resume:
            from lsgtool.finetune.train import last_checkpoint

            if last_checkpoint(out) is None:
                raise UsageError(f"--resume: {out} has no checkpoint yet.", "run it again with --overwrite.")
    elif resume:
        raise UsageError(f"--resume: {out} does not exist.", "start the run without --resume.")
    else:
        check_target(out, overwrite=False)


def _start(out: Path, resume: bool, overwrite: bool, resolved: str) -> None:
    from lsgtool.core.writing import write_marker

    if not _is_main():
        return
    if overwrite and out.exists() and not resume:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    write_marker(out, command=COMMAND, state="running")
    (out / "finetune.toml").write_text(resolved)


def _train(settings: dict, prepared, out: Path, resume: bool, as_json: bool) -> dict:
    from lsgtool.core.writing import write_marker
    from lsgtool.finetune.train import Stop, curves, last_checkpoint, save_final, summary_numbers, trainer_for, write_json

    stop = Stop()
    previous = signal.getsignal(signal.SIGINT)

    def interrupt(signum, frame):
        if stop.requested:  # a second Ctrl-C: stop now
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        stop.requested = True

    with TrainingProgress(as_json, _is_main()) as progress:
        trainer = trainer_for(settings, prepared, out, stop, progress.log)
        signal.signal(signal.SIGINT, interrupt)
        try:
            output = trainer.train(resume_from_checkpoint=str(last_checkpoint(out)) if resume else None)
        except KeyboardInterrupt:
            write_marker(out, command=COMMAND, state="interrupted")
            raise Interrupted(f"interrupted: {out} keeps its last checkpoint ({_checkpoint_name(out)}).",
                              "continue with the same command and --resume.") from None
        finally:
            signal.signal(signal.SIGINT, previous)
    history = trainer.state.log_history
    data = {"task": settings["train"]["task"], "model": settings["model"]["name"], "out": str(out),
            **prepared.info, "steps": trainer.state.global_step, "max_steps": trainer.state.max_steps,
            "best_checkpoint": trainer.state.best_model_checkpoint, **summary_numbers(history),
            "train_metrics": output.metrics, "log_history": history}
    if not _is_main():
        return data
    write_json(out / "metrics.json", data)
    if stop.requested and trainer.state.global_step < trainer.state.max_steps:
        write_marker(out, command=COMMAND, state="interrupted")
        raise Interrupted(f"interrupted at step {trainer.state.global_step} of {trainer.state.max_steps}: {out} keeps a "
                          f"checkpoint of this step ({_checkpoint_name(out)}).",
                          "continue with the same command and --resume.")
    save_final(trainer.model, prepared.tokenizer, out)
    try:
        curves(history, out / "curves.png", f"{data['task']} — {data['model']}")
        data["curves"] = str(out / "curves.png")
    except UsageError:  # no matplotlib: the numbers are in metrics.json
        data["curves"] = None
    write_json(out / "metrics.json", data)
    write_marker(out, command=COMMAND, state="done")
    return data


def _checkpoint_name(out: Path) -> str:
    from lsgtool.finetune.train import last_checkpoint

    found = last_checkpoint(out)
    return found.name if found else "none yet"


def _dry_run(settings: dict, show: int, as_json: bool) -> None:
    from lsgtool.finetune import data as D

    task = settings["train"]["task"]
    if task == "gsg":
        from lsgtool.core.load import load_tokenizer
        from lsgtool.finetune.train import gsg_dataset

        raw = D.load(settings["data"]["name"])
        D.check_columns(raw, {"text": settings["data"]["text_column"]})
        raw = type(raw)({k: v.select(range(min(len(v), max(show, 1) * 4))) for k, v in raw.items()})
        built, counts = gsg_dataset(raw, settings, load_tokenizer(settings["model"]["name"]))
        rows = [{"input": r["gsg_input"], "target": r["gsg_target"]} for r in built["train"].select(range(min(show, len(built["train"]))))]
        return emit({"task": task, **counts, "pairs": rows}, as_json, _render_pairs)
    from lsgtool.finetune.train import prepare

    prepared = prepare(settings)
    emit({"task": task, "model": settings["model"]["name"], **prepared.info, "labels": prepared.labels}, as_json,
         _render_dry)


def _render_pairs(console: Console, data: dict) -> None:
    console.print(f"gap-sentence pairs (sentinel {data['gsg_sentinel']}; {data['gsg_skipped_documents']} documents "
                  "without a pair skipped):", markup=False)
    for i, pair in enumerate(data["pairs"]):
        console.print(f"\n[{i}] input:  {pair['input'][:600]}", markup=False)
        console.print(f"[{i}] target: {pair['target'][:400]}", markup=False)


def _render_dry(console: Console, data: dict) -> None:
    table = Table(title=f"lsgtool finetune --dry-run — {data['task']}, {data['model']}", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    for key in ("train_examples", "eval_examples", "max_length", "truncated_examples", "trainable_parameters",
                "parameters"):
        if key in data:
            table.add_row(key.replace("_", " "), f"{data[key]:,}" if isinstance(data[key], int) else str(data[key]))
    console.print(table)
    for note in data.get("notes", []):
        console.print(f"note: {note}", markup=False)


def _render(console: Console, data: dict) -> None:
    table = Table(title=f"lsgtool finetune — {data['task']}, {data['model']}", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    rows = {"steps": data["steps"], "train examples": data["train_examples"], "eval examples": data["eval_examples"],
            "truncated examples": data.get("truncated_examples"), "trainable parameters": data["trainable_parameters"],
            "first loss": data.get("first_loss"), "last loss": data.get("last_loss"), "loss drop": data.get("loss_drop")}
    for key, value in {**rows, **(data.get("final_eval") or {})}.items():
        if value is not None:
            table.add_row(key.removeprefix("eval_"), f"{value:,}" if isinstance(value, int) else f"{value:.4g}")
    console.print(table)
    for note in data.get("notes", []):
        console.print(f"note: {note}", markup=False)
    if data.get("truncated_examples"):
        console.print(f"note: {data['truncated_examples']} examples were cut at {data['max_length']} tokens.", markup=False)
    console.print(f"written: {data['out']} (model, metrics.json, finetune.toml"
                  + (", curves.png" if data.get("curves") else "") + ", checkpoints/)", markup=False)
