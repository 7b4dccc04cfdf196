#!/usr/bin/env python3
"""The figure and table of one study finding (benchmarks/README.md, "Findings").

  plot_findings.py --finding NAME --out_dir DIR --target T   (NAME: one of FINDINGS below)

Reads the study runner's DIR/study.csv (mean and 95% half-width over seeds per configuration)
and, for the curves, DIR/runs.csv, and writes DIR/finding_<name>.png and DIR/finding_<name>.md
(the numbers the README quotes). Every configuration compared is the best of its learning rates
(and momentums, where the finding does not vary them): the lowest mean time to target among
those whose every seed reached it, else the highest mean final accuracy; a configuration whose
every rate diverged is named as such.

  backup        accuracy against (simulated) time of sync, each backup count and async, and the
                time to target of each with its interval
  momentum      per async worker count, the final test loss against the explicit momentum, and
                the best momentum against the worker count
  staleness_lr  the final test accuracy (and the highest during the run) against the async
                worker count, one line per learning rate, with the plain and with the
                staleness-aware learning rate
  ssp           the time to target against the staleness bound, with sync and async
  async_delay   per async learning-rate rule (constant, staleness-aware, delay-adaptive), with
                and without Ringmaster's max_delay, the time to target and the final test
                accuracy against the worker count, under heavy-tailed compute times
  async_local_sgd  asynchronous local SGD with one worker 4x slow: per configuration (sync local
                SGD, async local SGD with a naive outer optimizer, with delayed Nesterov, with
                dynamic local updates) its best learning rate's accuracy against simulated
                time and its time to target, with the exchanges (rounds or pushes) it took
  diloco        the final test loss against the averaging period H (the table gives the
                exchanges) and against the simulated time, for local SGD with plain averaging
                and with DiLoCo's outer optimizer, with W workers and with one (the M = 1
                control), and sync
"""
import argparse
import csv
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_study import band_plot, load_configs  # noqa: E402


def number(text):
    return float(text) if text != "" else math.nan


def read_rows(out_dir):
    rows = []
    with open(os.path.join(out_dir, "study.csv"), newline="") as f:
        for r in csv.DictReader(f):
            r["policy"] = r["config"].split(" ")[0]
            r["workers"] = int(r["workers"])
            r["lr"] = float(r["lr"])
            r["momentum"] = float(r["momentum"])
            r["seeds"] = int(r["seeds"])
            r["not_reached"] = int(r["not_reached"])
            r["diverged"] = int(r["diverged"])
            for k in list(r):
                if k.endswith("_mean") or k.endswith("_ci95"):
                    r[k] = number(r[k])
            rows.append(r)
    return rows


def best(rows):
    """The best configuration of `rows` (see the module doc), or None when all diverged."""
    reached = [r for r in rows if r["not_reached"] == 0]
    if reached:
        return min(reached, key=lambda r: r["time_to_target_s_mean"])
    finite = [r for r in rows if r["diverged"] == 0]
    return max(finite, key=lambda r: r["final_test_accuracy_mean"]) if finite else None


def best_by_loss(rows):
    finite = [r for r in rows if r["diverged"] == 0]
    return min(finite, key=lambda r: r["final_test_loss_mean"]) if finite else None


def group(rows, key):
    out = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def ci(r, name, scale=1.0):
    half = r[name + "_ci95"]
    return f"{scale * r[name + '_mean']:.3g} ± {scale * half:.2g}" if not math.isnan(half) \
        else f"{scale * r[name + '_mean']:.3g}"


def time_cell(r, target):
    if r["not_reached"] > 0:
        return f"{r['not_reached']} of {r['seeds']} seeds did not reach {100 * target:g}%"
    return ci(r, "time_to_target_s")


def finding_backup(rows, out_dir, target, ax_curves, ax_bars):
    chosen = []
    for policy, rs in group(rows, lambda r: r["policy"]).items():
        b = best(rs)
        chosen.append((policy, b))
    lines = ["| policy | best lr | time to target (s) | examples to target | final test acc (%) |",
             "|---|---:|---:|---:|---:|"]
    configs = load_configs(out_dir)
    curves = {}
    for policy, r in chosen:
        if r is None:
            lines.append(f"| {policy} | every rate diverged | | | |")
            continue
        lines.append(f"| {policy} | {r['lr']:g} | {time_cell(r, target)} | "
                     f"{ci(r, 'examples_to_target') if r['not_reached'] == 0 else ''} | "
                     f"{ci(r, 'final_test_accuracy', 100)} |")
        if r["config"] in configs:
            curves[r["config"]] = configs[r["config"]]
    band_plot(ax_curves, curves, 0, "simulated time (s)", target)
    names = [p for p, r in chosen if r is not None and r["not_reached"] == 0]
    means = [r["time_to_target_s_mean"] for p, r in chosen if r is not None and
             r["not_reached"] == 0]
    errs = [0 if math.isnan(r["time_to_target_s_ci95"]) else r["time_to_target_s_ci95"]
            for p, r in chosen if r is not None and r["not_reached"] == 0]
    ax_bars.barh(names, means, xerr=errs, color=[f"C{i % 10}" for i in range(len(names))])
    ax_bars.set_xlabel(f"simulated time to {100 * target:g}% (s), mean and 95% interval")
    ax_bars.invert_yaxis()
    return lines


def finding_momentum(rows, out_dir, target, ax_loss, ax_best):
    lines = ["| async workers | best momentum | its lr | final test loss | "
             "loss at momentum 0 (best lr) |", "|---:|---:|---:|---:|---:|"]
    best_m = []
    for w, rs in sorted(group(rows, lambda r: r["workers"]).items()):
        by_m = []
        for m, ms in sorted(group(rs, lambda r: r["momentum"]).items()):
            b = best_by_loss(ms)
            by_m.append((m, b))
        xs = [m for m, b in by_m if b is not None]
        ys = [b["final_test_loss_mean"] for m, b in by_m if b is not None]
        es = [0 if math.isnan(b["final_test_loss_ci95"]) else b["final_test_loss_ci95"]
              for m, b in by_m if b is not None]
        ax_loss.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=f"{w} workers")
        finite = [(m, b) for m, b in by_m if b is not None]
        if not finite:
            lines.append(f"| {w} | every setting diverged | | | |")
            continue
        m_best, b_best = min(finite, key=lambda mb: mb[1]["final_test_loss_mean"])
        zero = dict(finite).get(0.0)
        lines.append(f"| {w} | {m_best:g} | {b_best['lr']:g} | {ci(b_best, 'final_test_loss')} | "
                     f"{ci(zero, 'final_test_loss') if zero else 'diverged'} |")
        best_m.append((w, m_best))
    ax_loss.set_xlabel("explicit momentum")
    ax_loss.set_ylabel("final test loss (best lr), mean and 95% interval")
    ax_loss.set_yscale("log")
    ax_loss.legend(fontsize=8)
    ax_best.plot([w for w, _ in best_m], [m for _, m in best_m], marker="o")
    ax_best.set_xscale("log", base=2)
    ax_best.set_xlabel("async workers")
    ax_best.set_ylabel("best explicit momentum")
    return lines


def peak_accuracy(out_dir):
    """{config: [highest test accuracy of each seed's evaluations]} from the runs' logs."""
    peaks = {}
    with open(os.path.join(out_dir, "runs.csv"), newline="") as f:
        for run in csv.DictReader(f):
            with open(run["log"], newline="") as log:
                accs = [float(r["test_accuracy"]) for r in csv.DictReader(log)
                        if r["kind"] == "eval" and r["test_accuracy"] != ""]
            peaks.setdefault(run["config"], []).append(max(accs) if accs else math.nan)
    return peaks


def finding_staleness_lr(rows, out_dir, target, ax_plain, ax_aware):
    # One learning rate for every worker count is the rule's promise: per variant, the final
    # test accuracy (solid) and the highest one during the run (dotted) against the worker
    # count, one line per (base) rate; 1 worker has no staleness, so its plain run stands in
    # for both.
    policies = (("async", ax_plain, "plain lr"),
                ("async(lr/staleness)", ax_aware, "staleness-aware lr (lr / staleness)"))
    workers = sorted({r["workers"] for r in rows})
    lrs = sorted({r["lr"] for r in rows})
    peaks = peak_accuracy(out_dir)

    def row_of(policy, w, lr):
        for r in rows:
            if r["workers"] == w and r["lr"] == lr and (
                    r["policy"] == policy or (w == 1 and r["policy"] == "async")):
                return r
        return None

    lines = ["| variant | lr | " + " | ".join(f"{w} workers: final (peak)" for w in workers) + " |",
             "|---|---:|" + "---:|" * len(workers)]
    for policy, ax, title in policies:
        for i, lr in enumerate(lrs):
            cells, xs, ys, es, px, py = [], [], [], [], [], []
            for w in workers:
                r = row_of(policy, w, lr)
                if r is None:
                    cells.append("")
                    continue
                seeds = [p for p in peaks.get(r["config"], []) if not math.isnan(p)]
                peak = 100 * sum(seeds) / len(seeds) if seeds else math.nan
                if not math.isnan(peak):
                    px.append(w)
                    py.append(peak)
                if r["diverged"] > 0:
                    cells.append(f"{r['diverged']} of {r['seeds']} diverged")
                    continue
                cells.append(f"{ci(r, 'final_test_accuracy', 100)} ({peak:.1f})")
                xs.append(w)
                ys.append(100 * r["final_test_accuracy_mean"])
                half = r["final_test_accuracy_ci95"]
                es.append(0 if math.isnan(half) else 100 * half)
            lines.append(f"| {title} | {lr:g} | " + " | ".join(cells) + " |")
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, color=f"C{i}", label=f"lr {lr:g}")
            ax.plot(px, py, linestyle=":", marker=".", color=f"C{i}")
        ax.set_title(title + " (dotted: peak during the run)", fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("async workers (missing point: diverged)")
        ax.set_ylabel("final test accuracy (%), mean and 95% interval")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=8)
    return lines


def finding_ssp(rows, out_dir, target, ax_time, ax_examples):
    lines = ["| policy | best lr | time to target (s) | examples to target | final test acc (%) |"
             " staleness mean |", "|---|---:|---:|---:|---:|---:|"]
    ssp, others = [], []
    for policy, rs in group(rows, lambda r: r["policy"]).items():
        b = best(rs)
        if b is None:
            lines.append(f"| {policy} | every rate diverged | | | | |")
            continue
        lines.append(f"| {policy} | {b['lr']:g} | {time_cell(b, target)} | "
                     f"{ci(b, 'examples_to_target') if b['not_reached'] == 0 else ''} | "
                     f"{ci(b, 'final_test_accuracy', 100)} | {ci(b, 'staleness_mean')} |")
        if policy.startswith("ssp(bound="):
            ssp.append((int(policy[len("ssp(bound="):-1]), b))
        else:
            others.append((policy, b))
    ssp.sort()
    for ax, name, label in ((ax_time, "time_to_target_s", "simulated time to target (s)"),
                            (ax_examples, "examples_to_target", "examples to target")):
        pts = [(s, b) for s, b in ssp if b["not_reached"] == 0]
        ax.errorbar([s for s, _ in pts], [b[name + "_mean"] for _, b in pts],
                    yerr=[0 if math.isnan(b[name + "_ci95"]) else b[name + "_ci95"]
                          for _, b in pts], marker="o", capsize=3, color="C0", label="ssp")
        for i, (policy, b) in enumerate(others):
            if b["not_reached"] == 0:
                mean, half = b[name + "_mean"], b[name + "_ci95"]
                ax.axhline(mean, color=f"C{i + 1}", linestyle="--", label=f"{policy} (band: 95%)")
                if not math.isnan(half):
                    ax.axhspan(mean - half, mean + half, color=f"C{i + 1}", alpha=0.12)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("staleness bound s (0: bulk-synchronous)")
        ax.set_ylabel(f"{label}, mean and 95% interval")
        ax.legend(fontsize=8)
    return lines


def last_eval(log):
    """The last evaluation row of a run's convergence log: its step and simulated time."""
    last = None
    with open(log, newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] == "eval":
                last = r
    return int(last["step"]), float(last["wall_time_s"])


def finding_diloco(rows, out_dir, target, ax_period, ax_time):
    # Per configuration (mode label, workers): the steps and simulated time of its runs.
    runs = {}
    with open(os.path.join(out_dir, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["mode"], int(r["workers"])), []).append(last_eval(r["log"]))
    lines = ["| configuration | workers | H | exchanges | simulated time (s) | final test loss |"
             " final test acc (%) | time to target (s) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    series = {}

    def period(r):
        m = re.fullmatch(r"local_sgd\(H=(\d+)(?: outer=(\S+))?\)", r["mode"])
        return (int(m.group(1)), m.group(2) or "avg") if m else (0, "")

    for r in sorted(rows, key=lambda r: (r["mode"] != "sync", -r["workers"], period(r))):
        done = runs[(r["mode"], r["workers"])]
        steps = done[0][0]
        m = re.fullmatch(r"local_sgd\(H=(\d+)(?: outer=(\S+))?\)", r["mode"])
        h = int(m.group(1)) if m else 1
        outer = (m.group(2) or "avg") if m else None
        exchanges = math.ceil(steps / h) if r["workers"] > 1 else 0
        time_s = sum(t for _, t in done) / len(done)
        name = "sync" if m is None else ("DiLoCo" if outer == "diloco" else f"local SGD ({outer})")
        # The simulator's step time does not grow with the batch, so one worker taking the
        # whole global batch per step would look W times faster than it computes: no time.
        several = r["workers"] > 1
        time_text = f"{time_s:.1f}" if several else "(not comparable)"
        lines.append(f"| {name} | {r['workers']} | {h if m else ''} | {exchanges} | {time_text} | "
                     f"{ci(r, 'final_test_loss')} | {ci(r, 'final_test_accuracy', 100)} | "
                     f"{time_cell(r, target) if several else '(not comparable)'} |")
        series.setdefault((name, r["workers"]), []).append((exchanges, time_s, h, r))
    for i, ((name, workers), pts) in enumerate(sorted(series.items())):
        pts.sort(key=lambda p: p[2])
        label = f"{name}, {workers} worker{'s' if workers > 1 else ''}"
        style = dict(marker="o", capsize=3, color=f"C{i}", label=label,
                     linestyle="--" if workers == 1 else "-")
        loss = [p[3]["final_test_loss_mean"] for p in pts]
        err = [0 if math.isnan(p[3]["final_test_loss_ci95"]) else p[3]["final_test_loss_ci95"]
               for p in pts]
        if name == "sync":
            mean, half = loss[0], err[0]
            ax_period.axhline(mean, color=style["color"], linestyle=":", label=label + " (band: 95%)")
            ax_period.axhspan(mean - half, mean + half, color=style["color"], alpha=0.12)
        else:
            ax_period.errorbar([p[2] for p in pts], loss, yerr=err, **style)
        if workers > 1:  # see the table: one worker's simulated time is not comparable
            ax_time.errorbar([p[1] for p in pts], loss, yerr=err, **style)
            for p in pts:
                ax_time.annotate("sync" if name == "sync" else f"H={p[2]}",
                                 (p[1], p[3]["final_test_loss_mean"]), fontsize=7)
    ax_period.set_xscale("log")
    ax_period.set_xlabel("averaging period H (local steps between exchanges)")
    ax_time.set_xscale("log")
    ax_time.set_xlabel("simulated time of the run (s), all-reduces included; W workers")
    for ax in (ax_period, ax_time):
        ax.set_ylabel("final test loss, mean and 95% interval")
        ax.legend(fontsize=8)
    return lines


def finding_async_local_sgd(rows, out_dir, target, ax_curves, ax_bars):
    # The exchanges of a run: local_sgd's averagings (global steps / H), async_local_sgd's pushes
    # (each worker's steps / its rounds; from the log's last row when the runner records it).
    chosen = [(mode, best(rs)) for mode, rs in group(rows, lambda r: r["mode"]).items()]
    chosen.sort(key=lambda c: (not c[0].startswith("local_sgd"), c[0]))
    lines = ["| configuration | best lr | time to target (s) | examples to target | "
             "final test acc (%) | final test loss |", "|---|---:|---:|---:|---:|---:|"]
    configs = load_configs(out_dir)
    curves = {}
    for mode, r in chosen:
        if r is None:
            lines.append(f"| {mode} | every rate diverged | | | | |")
            continue
        lines.append(f"| {mode} | {r['lr']:g} | {time_cell(r, target)} | "
                     f"{ci(r, 'examples_to_target') if r['not_reached'] == 0 else ''} | "
                     f"{ci(r, 'final_test_accuracy', 100)} | {ci(r, 'final_test_loss')} |")
        if r["config"] in configs:
            curves[r["config"]] = configs[r["config"]]
    band_plot(ax_curves, curves, 0, "simulated time (s), one worker 4x slow", target)
    done = [(m, r) for m, r in chosen if r is not None and r["not_reached"] == 0]
    ax_bars.barh([m for m, _ in done], [r["time_to_target_s_mean"] for _, r in done],
                 xerr=[0 if math.isnan(r["time_to_target_s_ci95"]) else r["time_to_target_s_ci95"]
                       for _, r in done],
                 color=[f"C{i % 10}" for i in range(len(done))])
    ax_bars.set_xlabel(f"simulated time to {100 * target:g}% (s), mean and 95% interval")
    ax_bars.tick_params(axis="y", labelsize=7)
    ax_bars.invert_yaxis()
    return lines


def finding_async_delay(rows, out_dir, target, ax_time, ax_accuracy):
    # Per variant (the mode label: rule and bound) and worker count, its best learning rate.
    variants = sorted({r["mode"] for r in rows}, key=lambda v: (len(v), v))
    workers = sorted({r["workers"] for r in rows})
    lines = ["| variant | " + " | ".join(f"{w} workers: time to target (s), best lr; final acc (%)"
                                        for w in workers) + " |",
             "|---|" + "---:|" * len(workers)]
    for i, variant in enumerate(variants):
        cells, tx, ty, te, ax_, ay, ae = [], [], [], [], [], [], []
        for w in workers:
            b = best([r for r in rows if r["mode"] == variant and r["workers"] == w])
            if b is None:
                cells.append("every rate diverged")
                continue
            cells.append(f"{time_cell(b, target)}, lr {b['lr']:g}; "
                         f"{ci(b, 'final_test_accuracy', 100)}")
            if b["not_reached"] == 0:
                tx.append(w)
                ty.append(b["time_to_target_s_mean"])
                half = b["time_to_target_s_ci95"]
                te.append(0 if math.isnan(half) else half)
            ax_.append(w)
            ay.append(100 * b["final_test_accuracy_mean"])
            half = b["final_test_accuracy_ci95"]
            ae.append(0 if math.isnan(half) else 100 * half)
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
        style = dict(marker="o", capsize=3, color=f"C{i}", label=variant,
                     linestyle="--" if "R=" in variant else "-")
        ax_time.errorbar(tx, ty, yerr=te, **style)
        ax_accuracy.errorbar(ax_, ay, yerr=ae, **style)
    for ax in (ax_time, ax_accuracy):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("async workers (simulated, heavy-tailed step times)")
        ax.legend(fontsize=7)
    ax_time.set_ylabel(f"simulated time to {100 * target:g}% (s), mean and 95% interval")
    ax_time.set_yscale("log")
    ax_accuracy.set_ylabel("final test accuracy (%), mean and 95% interval")
    return lines


FINDINGS = {
    "async_delay": finding_async_delay,
    "async_local_sgd": finding_async_local_sgd,
    "diloco": finding_diloco,
    "backup": finding_backup,
    "momentum": finding_momentum,
    "staleness_lr": finding_staleness_lr,
    "ssp": finding_ssp,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--finding", required=True, choices=sorted(FINDINGS))
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--target", type=float, default=0.85)
    args = parser.parse_args()
    rows = read_rows(args.out_dir)
    if not rows:
        sys.exit(f"no configurations in {args.out_dir}/study.csv")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    lines = FINDINGS[args.finding](rows, args.out_dir, args.target, axes[0], axes[1])
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    png = os.path.join(args.out_dir, f"finding_{args.finding}.png")
    fig.savefig(png, dpi=90)
    md = os.path.join(args.out_dir, f"finding_{args.finding}.md")
    chosen = ("every learning rate of the grid" if args.finding == "staleness_lr" else
              "every configuration at its best learning rate")
    lines.insert(0, f"Target test accuracy {100 * args.target:g}%; {chosen} "
                    "(benchmarks/plot_findings.py).\n")
    with open(md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("wrote", png, "and", md)


if __name__ == "__main__":
    main()
