# SPDX-License-Identifier: Apache-2.0
"""`kernelhub benchmark --visual BASE`: one bar chart per theme of the workloads' mean times,
the kernel beside the reference computation (verify_<w>) where there is one, drawn with
matplotlib, an optional dependency as in the reference (which also writes media/*.svg)."""
import sys
from pathlib import Path

# (background, text, grid) per theme; the bar colours read on both backgrounds.
_THEMES = {
    "light": ("#ffffff", "#1f2328", "#d0d7de"),
    "dark": ("#0d1117", "#e6edf3", "#30363d"),
}
_KERNEL_COLOUR = "#f59e0b"
_REFERENCE_COLOUR = "#6b7280"
_MEDIA_DIR = Path("media")


def require_matplotlib():
    """matplotlib.pyplot on the Agg backend (no display needed), or a BenchmarkError."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        # Text stays text in the SVG (not glyph outlines): smaller, searchable, and a page
        # that embeds the chart can read its labels.
        matplotlib.rcParams["svg.fonttype"] = "none"
        import matplotlib.pyplot as plt
    except ImportError as exc:
        from ._benchmark_timing import BenchmarkError

        raise BenchmarkError("--visual draws its charts with matplotlib, which is not "
                             f"installed for {sys.executable}: pip install matplotlib") from exc
    return plt


def _draw(plt, timings, title: str, subtitle: str, theme: str):
    background, text, grid = _THEMES[theme]
    names = sorted(timings)
    rows = len(names)
    fig, ax = plt.subplots(figsize=(10, max(3.0, 0.9 * rows + 1.6)))
    fig.patch.set_facecolor(background)
    ax.set_facecolor(background)
    height = 0.36
    for index, name in enumerate(names):
        t = timings[name]
        y = rows - 1 - index  # the first workload on top
        # Each workload on its own scale (the slower of kernel and reference is 1): workloads
        # of microseconds and of seconds stay readable in one chart; the labels give the ms.
        slowest = max(t.mean_ms, t.ref_mean_ms or 0.0) or 1.0
        label = f"{t.mean_ms:.4f} ms"
        if t.ref_mean_ms is not None:
            ax.barh(y - height / 2, t.ref_mean_ms / slowest, height, color=_REFERENCE_COLOUR)
            ax.text(t.ref_mean_ms / slowest, y - height / 2, f" {t.ref_mean_ms:.4f} ms",
                    va="center", color=text, fontsize=8)
            if t.mean_ms > 0:
                label += f"  ({t.ref_mean_ms / t.mean_ms:.2f}x)"
        ax.barh(y + height / 2, t.mean_ms / slowest, height, color=_KERNEL_COLOUR)
        ax.text(t.mean_ms / slowest, y + height / 2, " " + label, va="center", color=text,
                fontsize=8)
    ax.set_yticks(range(rows))
    ax.set_yticklabels([names[rows - 1 - i] for i in range(rows)], color=text, fontsize=9)
    ax.set_xlim(0, 1.45)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("mean time per call, relative to the slower of the pair (shorter is faster)",
                  color=text, fontsize=9)
    ax.tick_params(colors=text)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(grid)
    ax.grid(axis="x", color=grid, linewidth=0.5)
    ax.set_axisbelow(True)
    handles = [plt.Rectangle((0, 0), 1, 1, color=_KERNEL_COLOUR)]
    labels = ["kernel"]
    if any(timings[n].ref_mean_ms is not None for n in names):
        handles.append(plt.Rectangle((0, 0), 1, 1, color=_REFERENCE_COLOUR))
        labels.append("reference (verify_*)")
    ax.legend(handles, labels, loc="lower right", facecolor=background, edgecolor=grid,
              labelcolor=text, fontsize=8)
    fig.suptitle(title, x=0.01, ha="left", color=text, fontsize=12, fontweight="bold")
    ax.set_title(subtitle, loc="left", color=text, fontsize=9)
    fig.tight_layout()
    return fig


def write_charts(timings, base: str, repo_id: str, info: dict, *,
                 rasterized: bool = False) -> list[Path]:
    """media/<base>_light.svg and media/<base>_dark.svg (and .png with `rasterized`)."""
    plt = require_matplotlib()
    _MEDIA_DIR.mkdir(exist_ok=True)
    where = info["gpu"] if info["gpu"] != "N/A" else info["cpu"]
    subtitle = f"{where} · {info['backend']} · PyTorch {info['pytorchVersion']}"
    written = []
    for theme in _THEMES:
        fig = _draw(plt, timings, repo_id, subtitle, theme)
        suffixes = (".svg", ".png") if rasterized else (".svg",)
        for suffix in suffixes:
            path = _MEDIA_DIR / f"{base}_{theme}{suffix}"
            fig.savefig(path, facecolor=fig.get_facecolor(), dpi=150)
            written.append(path)
        plt.close(fig)
    return written
