"""An ``inspect-kernels`` run, the one call the command (and a notebook) makes: check the request, resolve the
models once, run the view (LSG map, SSM kernels or operator breakdown), write its output folder in one step.

    from lsgtool.inspection import InspectOptions, LSGLayout, run
    result = run(InspectOptions(layout=LSGLayout(block_size=32, sparsity_factor=4), length="1k", out=Path("k")))
    print(result.report["measured"])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lsgtool.core.errors import ConfigError, Interrupted, UsageError
from lsgtool.inspection.options import WHATS, InspectOptions, check_input
from lsgtool.progress import Progress

__all__ = ["COMMAND", "Inspection", "View", "run"]

COMMAND = "inspect-kernels"  # what the output folder's marker says wrote it


class View(Protocol):
    """What each view's ``prepare(options, sources, progress)`` returns (``inspection.lsg``, ``.ssm``, ``.ops``)."""

    report: dict[str, Any]  # what the CLI prints and --json gives

    def write(self, folder: Path, plots: bool, progress: Progress) -> list[Path]:
        """Write the view's files (PNGs, traces, pages) into the staged ``folder``; the files written."""


@dataclass
class Inspection:
    """What a run found: ``report`` (what the CLI prints and ``--json`` gives, ``files`` included), the files
    written, and the view holding the objects behind the numbers (connectivity map, kernel stats, points)."""

    what: str  # lsg, ssm or ops
    report: dict[str, Any]
    files: list[Path]
    view: View  # inspection.lsg.LSGView, inspection.ssm.SSMView or inspection.ops.OpsView


def run(options: InspectOptions, progress: Progress | None = None) -> Inspection:
    """Inspect what ``options`` ask for and write ``options.out``; usage errors are raised before any work, and
    Ctrl-C leaves ``options.out`` as it was."""
    from lsgtool.core.writing import check_own_target, clean_stale
    from lsgtool.inspection.models import find

    progress = progress or Progress()
    if options.plots:
        from lsgtool.plots import require_plotting

        require_plotting()
    sources = [find(name) for name in options.models]
    what = decide(options.what, options.models, sources)
    check_applies(what, options)
    check_own_target(options.out, COMMAND)
    clean_stale(options.out)
    with progress:
        try:
            view = _view(what).prepare(options, sources, progress)
            files = _write(view, options, progress)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted: nothing was written, {options.out} is as it was.",
                              "run the same command again.") from None
    files = [options.out / f.name for f in files]
    view.report["files"] = [str(f) for f in files]
    return Inspection(what, view.report, files, view)


def _view(what: str):
    """The module of the view ``what``, whose ``prepare(options, sources, progress)`` returns a ``View``."""
    from importlib import import_module

    return import_module(f"lsgtool.inspection.{what}")


def decide(what: str, models: list[str], sources: list) -> str:
    """The view to run (``auto``: lsg or ssm from the model's kind), refusing models it cannot show."""
    if what not in WHATS:
        raise UsageError(f"unknown view {what!r}.", f"views: {', '.join(WHATS)}.")
    kinds = [s.kind for s in sources]
    if what == "auto":
        if not models:
            return "lsg"
        if all(k == "locost" for k in kinds):
            return "ssm"
        if kinds[0] == "lsg":
            return "lsg"
        raise UsageError(f"{models[0]!r} is neither an LSG nor a LOCOST model (model type "
                         f"{sources[0].config.get('model_type')!r}): it has no LSG connectivity or SSM kernels to show.",
                         f"convert it first (lsgtool convert {models[0]}), or see its operators with --what ops.")
    if what == "lsg":
        if len(models) > 1:
            raise UsageError("--what lsg maps one model at a time.", "pass one MODEL_OR_CONFIG.")
        if models and kinds[0] != "lsg":
            raise UsageError(f"{models[0]!r} is not an LSG model (model type {sources[0].config.get('model_type')!r}).",
                             "it is a LOCOST model: see its kernels with --what ssm." if kinds[0] == "locost" else
                             f"convert it first (lsgtool convert {models[0]}), or leave MODEL out and describe the "
                             "layout with --block, --factor, --sparse, --global.")
    if what == "ssm":
        if not models:
            raise UsageError("--what ssm needs a LOCOST model.", "pass a LOCOST folder or preset, e.g. locost-base.")
        if len(models) > 2:
            raise UsageError("--what ssm compares at most two models.", "pass one or two LOCOST models.")
        for name, kind in zip(models, kinds):
            if kind != "locost":
                raise UsageError(f"{name!r} is not a LOCOST model: it has no SSM kernels.",
                                 "pass a LOCOST folder or preset (`lsgtool plugins` lists the presets).")
    if what == "ops" and len(models) > 1:
        raise UsageError("--what ops profiles one model (or, without one, synthetic layers).", "pass at most one model.")
    return what


def check_applies(what: str, options: InspectOptions) -> None:
    """Options that do nothing for this view are refused rather than ignored. A layout key given outside the LSG
    view is a ConfigError naming the key (the CLI names its flag instead)."""
    if what != "lsg":
        for flag, value in (("--head", options.head), ("--input", options.input_file)):
            if value is not None:
                raise UsageError(f"{flag} applies to --what lsg, not {what}.", f"leave {flag} out.")
        given = options.layout.given()
        if given:
            raise ConfigError(f"{given[0]} applies to --what lsg, not {what}.", f"leave {given[0]} out.")
    if options.vs_init and what != "ssm":
        raise UsageError(f"--vs-init applies to --what ssm, not {what}.", "leave --vs-init out.")
    if options.vs_init and len(options.models) > 1:
        raise UsageError("--vs-init compares one model with its random init; two models were given.",
                         "pass one model with --vs-init, or two models without it.")
    if options.device == "cuda" and what != "ops":
        raise UsageError(f"--device applies to --what ops, not {what}.", "leave --device out.")
    check_input(options.input_file, options.models)


def _write(view: View, options: InspectOptions, progress: Progress) -> list[Path]:
    """Stage every file next to ``options.out``, publish with one rename; a failure leaves the old folder."""
    import shutil

    from lsgtool.core.writing import publish, stage, write_json, write_marker

    what = view.report["what"]
    tmp = stage(options.out)
    try:
        files = view.write(tmp, options.plots, progress)
        files.append(write_json(tmp / f"{what}.json", view.report))
        write_marker(tmp, command=COMMAND, what=what)
        publish(tmp, options.out, overwrite=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return files
