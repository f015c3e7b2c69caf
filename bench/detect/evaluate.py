"""Scores quiescent's change points and Apache Otava's on the same labelled series.

Usage: evaluate.py SERIES.csv LABELS.json QUIESCENT.jsonl QUIESCENT_SECONDS
Runs Otava 0.8 (`otava.analysis.compute_change_points` with its defaults: window 50,
p 0.001, no minimum magnitude) on each series' per-build means (Otava takes one value per
build), timing only the analysis. A detection matches a labelled change within
max(2, 1% of the length) positions, one to one. Prints precision, recall and F1 over the
series with steps, false positives per 100 builds on no-change and outlier series, and builds
analysed per second, for both.
"""
import csv
import json
import sys
import time
from collections import defaultdict

import numpy as np
from otava.analysis import compute_change_points


def load_series(path):
    series = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for row in csv.DictReader(f):
            series[row["series"]][int(row["position"])].append(float(row["value"]))
    return series


def match(found, truth, tol):
    """Greedy one-to-one matching of detections to labels, nearest first."""
    pairs = sorted((abs(f - t), i, j) for i, f in enumerate(found) for j, t in enumerate(truth) if abs(f - t) <= tol)
    used_f, used_t = set(), set()
    for _, i, j in pairs:
        if i not in used_f and j not in used_t:
            used_f.add(i)
            used_t.add(j)
    tp = len(used_f)
    return tp, len(found) - tp, len(truth) - tp


def score(name, detections, labels):
    tp = fp = fn = 0
    quiet_fp = quiet_points = 0
    by_kind = defaultdict(lambda: [0, 0, 0])
    for sid, label in labels.items():
        found = detections.get(sid, [])
        tol = max(2, 0.01 * label["length"])
        t, f, n = match(found, label["change_points"], tol)
        k = by_kind[label["kind"]]
        k[0] += t
        k[1] += f
        k[2] += n
        if label["change_points"]:
            tp, fp, fn = tp + t, fp + f, fn + n
        else:
            quiet_fp += f
            quiet_points += label["length"]
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    fp100 = 100.0 * quiet_fp / quiet_points
    kinds = " ".join(f"{k}:tp={v[0]},fp={v[1]},fn={v[2]}" for k, v in sorted(by_kind.items()))
    print(f"{name:10s} precision={precision:.3f} recall={recall:.3f} F1={f1:.3f} "
          f"fp/100pts(no-change+outlier)={fp100:.4f}  [{kinds}]")
    return f1, fp100


def main():
    series_path, labels_path, ours_path, ours_seconds = sys.argv[1:5]
    labels = json.load(open(labels_path))
    series = load_series(series_path)
    builds = sum(l["length"] for l in labels.values())
    samples = sum(len(v) for s in series.values() for v in s.values())

    ours = {}
    for line in open(ours_path):
        r = json.loads(line)
        ours[r["series"]] = r["change_points"]
    ours_seconds = float(ours_seconds)

    means = {sid: [float(np.mean(s[p])) for p in sorted(s)] for sid, s in series.items()}
    otava = {}
    started = time.perf_counter()
    for sid, m in means.items():
        cps, _ = compute_change_points(m, window_len=50, max_pvalue=0.001, min_magnitude=0.0)
        otava[sid] = [cp.index for cp in cps]
    otava_seconds = time.perf_counter() - started

    print(f"{len(labels)} series, {builds} builds, {samples} samples")
    f1_q, fp_q = score("quiescent", ours, labels)
    f1_o, fp_o = score("otava-0.8", otava, labels)
    speed_q, speed_o = builds / ours_seconds, builds / otava_seconds
    print(f"speed      quiescent {speed_q:,.0f} builds/s ({samples / ours_seconds:,.0f} samples/s), "
          f"otava {speed_o:,.0f} builds/s; ratio {speed_q / speed_o:.1f}x")
    ok = f1_q >= f1_o and fp_q <= fp_o and speed_q >= speed_o
    print(f"targets    F1 {f1_q:.3f} >= {f1_o:.3f}: {f1_q >= f1_o}; "
          f"false positives {fp_q:.4f} <= {fp_o:.4f}: {fp_q <= fp_o}; speed: {speed_q >= speed_o}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
