"""The SSM view of ``inspect-kernels``: every LOCOST layer's kernels at one length, their reach and spectral
radius, for one or two models (or one beside its random init)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsgtool.inspection.options import InspectOptions, in_range, one_length
from lsgtool.progress import Progress

DEFAULT_LENGTH = 4096


@dataclass
class SSMView:
    """``report``: what the CLI prints and --json gives; ``at_layer``: (model, KernelStats) of the layer drawn."""

    report: dict[str, Any]
    at_layer: list[tuple[str, Any]]

    def write(self, folder: Path, plots: bool, progress: Progress) -> list[Path]:
        if not plots:
            return []
        from lsgtool.inspection import plots as draw

        title = f"SSM kernels at {self.report['length']} tokens"
        layer = f"{title}, layer {self.report['layer']}"
        return [draw.ssm_kernels(self.at_layer, folder / "ssm-kernels.png", layer),
                draw.ssm_heatmap(self.at_layer, folder / "ssm-heatmap.png", f"{layer}, every channel"),
                draw.ssm_reach([(m["model"], m["layers"]) for m in self.report["models"]], folder / "ssm-reach.png",
                               f"{title}: effective reach per layer")]


def prepare(options: InspectOptions, sources: list, progress: Progress) -> SSMView:
    """Kernel statistics of every SSM layer of each model of ``sources`` (LOCOST), at ``options.length``."""
    from lsgtool.core.inspect.ssm import REACH_FRACTION, kernel_stats, ssm_layers
    from lsgtool.inspection.models import NO_WEIGHTS, locost_model, random_locost

    n = one_length(options.length, DEFAULT_LENGTH)
    layer = options.layer or 0
    loaded = [(name, *locost_model(source)) for name, source in zip(options.models, sources)]
    if options.vs_init:
        loaded.append((f"{options.models[0]} (random init)", random_locost(loaded[0][1].config), "random weights"))
    models, at_layer = [], []
    progress.stage("computing kernels", total=sum(len(ssm_layers(m)) for _, m, _ in loaded))
    for name, model, note in loaded:
        mixers = ssm_layers(model)
        in_range("--layer", options.layer, len(mixers), "SSM layers")
        rows = []
        for index, (_, mixer) in enumerate(mixers):
            stats = kernel_stats(f"layer {index}", mixer, n)
            rows.append(stats.summary())
            if index == layer:
                at_layer.append((f"{name} (random weights)" if note == NO_WEIGHTS else name, stats))
            progress.advance(1)
        models.append({"model": name, "weights": note, "ssm_variant": getattr(model.config, "ssm_variant", "?"),
                       "d_state": getattr(model.config, "d_state", None), "layers": rows})
    report = {"what": "ssm", "length": n, "layer": layer, "reach_fraction": REACH_FRACTION, "models": models,
              "notes": ["effective reach: the distance past which |K| stays below 1% of its maximum; a channel whose "
                        f"reach equals --length ({n}) has not decayed within it.",
                        "spectral radius max|λ| per channel from the kernel's modes (S4D family) or fitted on its decay."]}
    return SSMView(report, at_layer)
