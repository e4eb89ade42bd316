"""The PNGs of ``lsgtool inspect-kernels``: LSG connectivity maps, SSM kernels (LOCOST Fig. 3 / App. C style),
reach per layer, and the operator breakdown. matplotlib is the optional extra ``plot``."""

from __future__ import annotations

from pathlib import Path

import torch

from lsgtool.plots import pyplot, save

COLOURS = {"global": (0.55, 0.25, 0.65), "local": (0.20, 0.45, 0.80), "sparse": (0.95, 0.50, 0.10)}
KIND_COLOURS = {"matmul": "tab:blue", "fft": "tab:purple", "softmax/sdpa": "tab:red", "gather/copy": "tab:orange",
                "norm": "tab:green", "elementwise": "tab:gray", "other": "tab:brown"}


def _rgb(conn, head: int) -> torch.Tensor:
    """(nb, cols, 3) image of one head: local blue, sparse orange (paler where a column gives fewer keys)."""
    nb, cols = conn.local.shape
    image = torch.ones(nb, cols, 3)
    full = max(1.0, conn.column_size / conn.config.sparsity_factor)  # most sparse keys a column can give
    strength = (conn.sparse[head] / full).clamp(0, 1)[..., None]
    sparse = torch.tensor(COLOURS["sparse"])
    image = torch.where(strength > 1e-6, 1 - (0.25 + 0.75 * strength) * (1 - sparse), image)
    image[conn.local > 0] = torch.tensor(COLOURS["local"])
    return image


def lsg_map(conn, heads: list[int], path: Path, title: str) -> Path:
    """Queries (rows, per block) by keys (columns) for each head in ``heads``; the global tokens as strips."""
    from matplotlib.patches import Patch

    plt = pyplot()
    n, G = conn.padded, conn.config.num_global_tokens
    fig, axes = plt.subplots(1, len(heads), figsize=(5.2 * len(heads) + 0.6, 5.6), squeeze=False)
    strip = max(G, n * 0.025) if G else 0
    for ax, head in zip(axes[0], heads):
        ax.imshow(_rgb(conn, head).numpy(), extent=(0, n, n, 0), interpolation="antialiased", aspect="auto")
        if G:  # global keys (left) and global queries (top): seen by / seeing everything
            ax.imshow([[COLOURS["global"]]], extent=(-strip, 0, n, -strip), aspect="auto")
            ax.imshow([[COLOURS["global"]]], extent=(-strip, n, 0, -strip), aspect="auto")
        ax.set_xlim(-strip, n)
        ax.set_ylim(n, -strip)
        ax.set_xlabel("key position" + ("" if conn.column_size == 1 else f" (columns of {conn.column_size} tokens)"))
        ax.set_ylabel(f"query position (blocks of {conn.config.block_size})")
        ax.set_title(f"head {head}" if conn.heads > 1 else "all heads", fontsize=9)
        if conn.length < n:
            ax.axvline(conn.length, color="black", linewidth=0.6, linestyle=":")
    handles = [Patch(color=COLOURS["local"], label="local (blocks i-1, i, i+1)"),
               Patch(color=COLOURS["sparse"], label=f"sparse ({conn.config.sparsity_type}; paler: fewer keys)"),
               *([Patch(color=COLOURS["global"], label=f"{G} global token(s)")] if G else [])]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    save(fig, path, rect=(0, 0.05, 1, 0.95))
    return path


def _channels(stats, count: int = 6) -> list[int]:
    """Channels spread over the reach distribution (shortest to longest), for line plots."""
    order = stats.reach.float().mean(0).argsort()
    picks = torch.linspace(0, len(order) - 1, min(count, len(order))).round().long()
    return [int(order[i]) for i in picks.unique()]


def ssm_kernels(models: list[tuple[str, object]], path: Path, title: str) -> Path:
    """LOCOST Fig. 3 style: mean |K| per distance bin for channels of short to long reach, causal and anti-causal,
    one column per model."""
    plt = pyplot()
    directions = max(s.reach.shape[0] for _, s in models)
    fig, axes = plt.subplots(directions, len(models), figsize=(5.2 * len(models), 3.4 * directions), squeeze=False)
    for col, (label, stats) in enumerate(models):
        centres = ((stats.edges[:-1] + stats.edges[1:]).float() / 2).clamp(min=0.5).numpy()
        for d in range(stats.reach.shape[0]):
            ax = axes[d][col]
            for c in _channels(stats):
                ax.plot(centres, stats.profile[d, c].clamp(min=1e-12).numpy(), linewidth=1,
                        label=f"ch {c}: reach {int(stats.reach[d, c])}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("distance (tokens)")
            ax.set_ylabel("mean |K|")
            ax.set_title(f"{label} — {stats.name}, {('causal', 'anti-causal')[d]}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    save(fig, path)
    return path


def ssm_heatmap(models: list[tuple[str, object]], path: Path, title: str) -> Path:
    """App. C style: |K| / max per channel across all channels (sorted by reach) and distance, anti-causal to the
    left of 0 and causal to the right, log colour."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.6), squeeze=False)
    image = None
    for ax, (label, stats) in zip(axes[0], models):
        profile = stats.profile / stats.profile.amax((0, 2), keepdim=True).clamp(min=1e-30)
        order = stats.reach.float().mean(0).argsort()
        rows = profile[:, order].clamp(min=1e-6).log10()  # (c H bins)
        both = torch.cat([rows[1].flip(-1), rows[0]], dim=-1) if rows.shape[0] == 2 else rows[0]
        bins = rows.shape[-1]
        image = ax.imshow(both.numpy(), aspect="auto", cmap="magma", vmin=-6, vmax=0, interpolation="nearest",
                          extent=(-bins if rows.shape[0] == 2 else 0, bins, len(order), 0))
        ticks = [i for i in range(0, bins, max(1, bins // 4))]
        positions = ticks + ([-t for t in ticks if t] if rows.shape[0] == 2 else [])
        ax.set_xticks([p + 0.5 if p >= 0 else p - 0.5 for p in positions])
        ax.set_xticklabels([f"{'-' if p < 0 else ''}{int(stats.edges[abs(p)])}" for p in positions], fontsize=7)
        ax.set_xlabel("distance (tokens; left: anti-causal, right: causal; log bins)")
        ax.set_ylabel("channel (sorted by reach)")
        ax.set_title(f"{label} — {stats.name}", fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), label="log10 |K| / max")
    fig.suptitle(title, fontsize=10)
    save(fig, path, tight_box=True)
    return path


def ssm_reach(models: list[tuple[str, list[dict]]], path: Path, title: str) -> Path:
    """Median and 90th-percentile reach per layer (both directions), one line per model."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for label, rows in models:
        layers = range(len(rows))
        for direction, style in (("causal", "-"), ("anti-causal", "--")):
            key = f"{direction}_reach_median"
            if key not in rows[0]:
                continue
            line = ax.plot(layers, [r[key] for r in rows], style, marker="o", label=f"{label} {direction} median")[0]
            ax.plot(layers, [r[f"{direction}_reach_p90"] for r in rows], style, marker="^", markersize=4, linewidth=0.8,
                    alpha=0.6, color=line.get_color(), label=f"{label} {direction} p90")
    length = models[0][1][0]["length"]
    ax.axhline(length, color="black", linewidth=0.8, linestyle=":", label=f"kernel length {length}")
    ax.set_yscale("log")
    ax.set_xticks(list(range(max(len(rows) for _, rows in models))))
    ax.set_xlabel("layer")
    ax.set_ylabel("effective reach (tokens)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, path)
    return path


def ops(breakdowns: list, path: Path, title: str) -> Path:
    """Stacked bars: milliseconds per operator kind, one bar per variant and length."""
    plt = pyplot()
    ok = [b for b in breakdowns if not b.error]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(ok) + 2), 4.6))
    labels = [f"{b.variant}\n{b.length}" for b in ok]
    bottom = [0.0] * len(ok)
    for kind, colour in KIND_COLOURS.items():
        values = [b.by_kind.get(kind, 0.0) for b in ok]
        ax.bar(labels, values, bottom=bottom, color=colour, label=kind)
        bottom = [a + v for a, v in zip(bottom, values)]
    ax.set_ylabel("self time per forward (ms)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    ax.tick_params(axis="x", labelsize=7)
    save(fig, path)
    return path
