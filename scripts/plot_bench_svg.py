#!/usr/bin/env python3
"""Draws busbw against message size from `commlens bench --json` files as an SVG line chart,
one line per collective and backend (out-of-place), for the docs:

    scripts/plot_bench_svg.py RUN.json [RUN2.json ...] -o chart.svg [--title TEXT] [--min-size BYTES]

Standard library only; the x axis is log2 of the size, the y axis linear GB/s."""
import argparse
import json
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def series(paths, min_size):
    out = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        for c in run["collectives"]:
            pts = [(r["size_bytes"], r["out_of_place"]["busbw_gbps"]) for r in c["results"]
                   if r["size_bytes"] >= max(min_size, 1)]
            out.append((f'{c["name"]} {c.get("backend", "nccl")}', pts))
    return out


def human(b):
    for unit in ["B", "K", "M", "G"]:
        if b < 1024:
            return f"{b:g}{unit}"
        b /= 1024
    return f"{b:g}T"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--title", default="busbw against size")
    ap.add_argument("--min-size", type=int, default=1024)
    a = ap.parse_args()
    data = series(a.runs, a.min_size)
    w, h, left, right, top, bottom = 760, 420, 60, 170, 40, 50
    xs = [s for _, pts in data for s, _ in pts]
    ys = [v for _, pts in data for _, v in pts]
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    ymax = max(ys) * 1.05
    px = lambda s: left + (math.log2(s) - x0) / max(x1 - x0, 1e-9) * (w - left - right)
    py = lambda v: h - bottom - v / ymax * (h - top - bottom)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">{a.title}</text>']
    step = 10 ** math.floor(math.log10(ymax / 5)) if ymax > 0 else 1
    step *= 2 if ymax / step > 10 else 1
    v = 0.0
    while v <= ymax:
        svg.append(f'<line x1="{left}" x2="{w - right}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += step
    for e in range(int(math.ceil(x0)), int(x1) + 1, 2):
        x = px(2 ** e)
        svg.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>')
        svg.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{human(2 ** e)}</text>')
    svg.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">message size (bytes per rank)</text>')
    svg.append(f'<text x="16" y="{(top + h - bottom) / 2}" transform="rotate(-90 16 {(top + h - bottom) / 2})" text-anchor="middle">busbw (GB/s)</text>')
    for i, (label, pts) in enumerate(data):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{px(s):.1f},{py(v):.1f}" for s, v in pts)
        svg.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        ly = top + 18 * i + 10
        svg.append(f'<line x1="{w - right + 12}" x2="{w - right + 32}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        svg.append(f'<text x="{w - right + 38}" y="{ly + 4}">{label}</text>')
    svg.append("</svg>")
    with open(a.output, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
