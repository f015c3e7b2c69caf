"""Labelled series for the change-point benchmark.

Writes SERIES.csv (`series,position,value`, every run of every build) and LABELS.json
({id: {"kind", "length", "runs", "noise", "change_points": [first position of each new regime]}}).
Cases: steps (1-3 steps of 1-30%, either way), no change, outlier builds (every run of one or
two builds 20-60% off, no change), and lognormal (skewed) noise with and without steps.
Noise is 0.5-3% of the level; lengths 50-500 builds; 1-5 runs per build. Seeded.
"""
import json
import sys

import numpy as np


def noise(rng, kind, sigma, size):
    if kind == "lognormal":
        # Skewed: a lognormal of shape 0.8 rescaled to mean 0 and standard deviation sigma.
        s = 0.8
        x = rng.lognormal(0.0, s, size)
        mean = np.exp(s * s / 2)
        std = np.sqrt((np.exp(s * s) - 1) * np.exp(s * s))
        return sigma * (x - mean) / std
    return rng.normal(0.0, sigma, size)


def steps(rng, length, count):
    """Change positions at least 10 builds apart and from both ends."""
    for _ in range(100):
        pos = sorted(rng.choice(np.arange(10, length - 9), size=count, replace=False).tolist())
        if all(b - a >= 10 for a, b in zip(pos, pos[1:])):
            return pos
    return [length // 2]


def series(rng, kind):
    length = int(rng.choice([50, 100, 200, 300, 500]))
    runs = int(rng.integers(1, 6))
    sigma = float(rng.uniform(0.005, 0.03))
    level = np.ones(length) * float(rng.uniform(10, 1000))
    cps = []
    if kind in ("step", "lognormal"):
        cps = steps(rng, length, int(rng.integers(1, 4)))
        for p in cps:
            size = float(rng.uniform(0.01, 0.30)) * rng.choice([-1, 1])
            level[p:] *= 1 + size
    outliers = []
    if kind == "outlier":
        outliers = sorted(rng.choice(np.arange(1, length - 1), size=int(rng.integers(1, 3)), replace=False).tolist())
    rows = []
    for p in range(length):
        factor = 1.0
        if p in outliers:
            factor = 1 + float(rng.uniform(0.2, 0.6)) * rng.choice([-1, 1]) * 0.8
        e = noise(rng, "lognormal" if kind == "lognormal" else "normal", sigma, runs)
        for v in level[p] * factor * (1 + e):
            rows.append((p, float(v)))
    return rows, {"kind": kind, "length": length, "runs": runs, "noise": sigma, "change_points": cps}


def main():
    out_csv, out_labels, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(20261201)
    kinds = ["step"] * 4 + ["none"] * 2 + ["outlier"] * 2 + ["lognormal"] * 2
    labels = {}
    with open(out_csv, "w") as f:
        f.write("series,position,value\n")
        for i in range(count):
            kind = kinds[i % len(kinds)]
            rows, label = series(rng, kind)
            sid = f"s{i:05d}"
            labels[sid] = label
            f.write("".join(f"{sid},{p},{v:.6g}\n" for p, v in rows))
    with open(out_labels, "w") as f:
        json.dump(labels, f)


if __name__ == "__main__":
    main()
