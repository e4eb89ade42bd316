"""A fine-tuning run in its folder, what ``lsgtool finetune`` does and a notebook can call:
``run(resolve(None, Path("run.toml"), {}, []), "out", progress=Progress())``.

The folder: the final model (config, safetensors, tokenizer) at its root, ``metrics.json``, ``curves.png``,
``finetune.toml`` (the settings) and ``checkpoints/``; ``.lsgtool.json`` says whether the run is running,
interrupted or done, so an interrupted one is resumed (``resume``) or replaced (``overwrite``), never
mistaken. The folder is checked before anything loads; under ``torchrun`` / ``accelerate launch``, on one
machine or several, the first process checks and writes it, its refusal stops every process, and every process
must see the folder it writes (shared storage). Ctrl-C checkpoints the current step and raises ``Interrupted``;
resuming with the run's settings and data (others are refused: the checkpoint's scheduler would not take them;
data by its content, ``identity``) gives the same loss curve as a run that was never stopped (``resumable``).
"""

from __future__ import annotations

import shutil
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsgtool.core.errors import Interrupted, UsageError
from lsgtool.core.writing import check_target, read_marker, write_file, write_json, write_marker
from lsgtool.distributed import is_main, together
from lsgtool.finetune.config import Settings, changed, check, read_saved
from lsgtool.progress import Progress

if TYPE_CHECKING:
    from lsgtool.finetune.prepare import Prepared
    from lsgtool.finetune.train import Stop

COMMAND = "finetune"  # the marker's "command": a folder of another command is never taken for a run


def run(settings: Settings, out: str | Path | None = None, *, resume: bool = False, overwrite: bool = False,
        dry_run: bool = False, show: int = 3, progress: Progress | None = None) -> dict[str, Any]:
    """Train as ``settings`` say into ``out`` (default ``finetune-<task>``); returns what ``metrics.json`` holds.

    ``dry_run``: prepare data and model, train nothing, write nothing; returns the counts (for ``gsg`` the first
    ``show`` gap-sentence pairs instead). ``progress`` hears the training steps (``stage("training", steps)``,
    then ``advance`` with a ``step i/n: loss ...`` detail per log)."""
    import torch

    from lsgtool import distributed
    from lsgtool.core.load import resolve
    from lsgtool.finetune.prepare import gsg_preview

    check(settings)
    task, out = settings.train.task, Path(out or f"finetune-{settings.train.task}")
    if dry_run and task == "gsg":
        return gsg_preview(settings, resolve(settings.model.name, weights_needed=False), show)
    if not dry_run:  # under a launcher, what the first process refuses stops every process (not only the first)
        distributed.start(cpu=not torch.cuda.is_available())  # as the Trainer's
        distributed.together(lambda: check_out(out, resume, overwrite, settings) if is_main() else None)
    prepared = distributed.together(lambda: _prepare(settings, progress))  # data or a model a machine lacks, too
    if dry_run:
        return {"task": task, "model": settings.model.name, **prepared.info, "labels": prepared.labels}
    distributed.together(lambda: start(out, resume, overwrite, settings) if is_main() else None)
    distributed.shared(out)  # every machine resumes from, and waits on, the folder the first one writes
    return _train(settings, prepared, out, resume, progress or Progress())


def _prepare(settings: Settings, progress: Progress | None = None) -> Prepared:
    from lsgtool.core.load import resolve
    from lsgtool.finetune.arguments import check_saving
    from lsgtool.finetune.prepare import prepare

    source = resolve(settings.model.name, weights_needed=True)  # resolved once: loads take it
    prepared = prepare(settings, source, progress)
    check_saving(settings, prepared.eval is not None)
    return prepared


def check_out(out: Path, resume: bool, overwrite: bool, settings: Settings | None = None) -> None:
    """Refuse (UsageError) a folder the run must not write, and a resume without a run to continue or with other
    settings than the run's."""
    from lsgtool.finetune.train import last_checkpoint

    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other.", "resume the run, or replace it.")
    if out.is_dir() and not out.is_symlink() and not any(out.iterdir()) and not resume:
        return  # an empty folder: nothing to lose
    if out.exists():
        marker = read_marker(out) if out.is_dir() else None
        if (marker or {}).get("command") != COMMAND:
            raise UsageError(f"--out {out} exists and is not a run folder of lsgtool finetune: it is left untouched.",
                             "choose another --out.")
        if not resume and not overwrite:
            state = marker.get("state", "?")
            raise UsageError(f"--out {out} holds a {state} run.",
                             "pass --resume to continue it, --overwrite to replace it, or choose another --out.")
        if resume and last_checkpoint(out) is None:
            raise UsageError(f"--resume: {out} has no checkpoint yet.", "run it again with --overwrite.")
        if resume:
            check_same_settings(out, settings)
    elif resume:
        raise UsageError(f"--resume: {out} does not exist.", "start the run without --resume.")
    else:
        check_target(out, overwrite=False)


def check_same_settings(out: Path, settings: Settings | None) -> None:
    """A resumed run continues with the optimizer, scheduler and data order of its checkpoint: a setting that
    differs from the run's ``finetune.toml`` would not take effect (or not fully), so it is refused; so is data
    whose content is not what the run started on. A model or data named by another path to the same place, or
    data of the same content, is the same."""
    from lsgtool.finetune.identity import same_data, same_place

    saved = out / "finetune.toml"
    if settings is None or not saved.is_file():
        return
    before, record = read_saved(saved), (read_marker(out) or {}).get("data")
    data = same_data(settings.data.name, record)  # the run's own file edited since: refused here
    differences = [(key, now, then) for key, now, then in changed(settings, before)
                   if not (key in ("model.name", "data.name") and same_place(now, then) or key == "data.name" and data)]
    if data is False and all(key != "data.name" for key, _, _ in differences):
        differences.insert(0, ("data.name", settings.data.name, record["path"]))
    if differences:
        key, now, before = differences[0]
        more = f" (and {', '.join(k for k, _, _ in differences[1:])})" if len(differences) > 1 else ""
        raise UsageError(f"--resume with {key} {_shown(now)}, but the run was started with {_shown(before)}{more}.",
                         f"resume with the run's settings (--config {saved}), or start a new run with another --out "
                         "to train with the new ones.")


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def start(out: Path, resume: bool, overwrite: bool, settings: Settings) -> None:
    """The folder marked running, with the settings as ``finetune.toml`` (a replaced run's files gone)."""
    from lsgtool.finetune.identity import data_record

    if overwrite and out.exists() and not resume:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    kept = (read_marker(out) or {}).get("data") if resume else None  # checked to be the data of this resume
    _mark(out, "running", kept or data_record(settings.data.name))
    write_file(out / "finetune.toml", settings.to_toml())


def _mark(out: Path, state: str, data: dict | None = None) -> None:
    """The marker in ``state``, keeping the record of the data the run started on (``identity.data_record``)."""
    data = data or (read_marker(out) or {}).get("data")
    write_marker(out, command=COMMAND, state=state, **({"data": data} if data else {}))


def _train(settings: Settings, prepared: Prepared, out: Path, resume: bool, progress: Progress) -> dict[str, Any]:
    from lsgtool.finetune.train import Stop, last_checkpoint, trainer_for

    stop = Stop()
    trainer = trainer_for(settings, prepared, out, stop, progress)
    with _stop_on_sigint(stop):
        try:
            output = trainer.train(resume_from_checkpoint=str(last_checkpoint(out)) if resume else None)
        except KeyboardInterrupt:
            _interrupted(out, f"interrupted: {out} keeps its last checkpoint ({_checkpoint_name(out)}).")
    return together(lambda: _finish(settings, prepared, trainer, output.metrics, out, stop))  # the first one writes


@contextmanager
def _stop_on_sigint(stop: Stop):
    """A first Ctrl-C asks the trainer to checkpoint and stop after the current step; a second stops at once."""
    previous = signal.getsignal(signal.SIGINT)

    def interrupt(signum, frame):
        if stop.requested:
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        stop.requested = True

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _finish(settings: Settings, prepared: Prepared, trainer, train_metrics: dict, out: Path, stop: Stop) -> dict[str, Any]:
    """metrics.json, then (unless stopped early) the final model, curves.png and the folder marked done."""
    from lsgtool.finetune.curves import curves
    from lsgtool.finetune.metrics import summary_numbers
    from lsgtool.finetune.train import save_final

    state, history = trainer.state, trainer.state.log_history
    data = {"task": settings.train.task, "model": settings.model.name, "out": str(out), **prepared.info,
            "steps": state.global_step, "max_steps": state.max_steps, "best_checkpoint": state.best_model_checkpoint,
            **summary_numbers(history), "train_metrics": train_metrics, "log_history": history}
    if not is_main():
        return data
    write_json(out / "metrics.json", data)
    if stop.requested and state.global_step < state.max_steps:
        _interrupted(out, f"interrupted at step {state.global_step} of {state.max_steps}: {out} keeps a checkpoint "
                          f"of this step ({_checkpoint_name(out)}).")
    save_final(trainer.model, prepared.tokenizer, out)
    try:
        data["curves"] = str(curves(history, out / "curves.png", f"{data['task']} — {data['model']}"))
    except UsageError:  # no matplotlib: the numbers are in metrics.json
        data["curves"] = None
    write_json(out / "metrics.json", data)
    _mark(out, "done")
    return data


def _interrupted(out: Path, message: str) -> None:
    _mark(out, "interrupted")
    raise Interrupted(message, "continue with the same command and --resume.") from None


def _checkpoint_name(out: Path) -> str:
    from lsgtool.finetune.train import last_checkpoint

    found = last_checkpoint(out)
    return found.name if found else "none yet"
