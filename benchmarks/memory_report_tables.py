"""Print the tables of docs/memory.md: the engine against PyTorch's memory trackers (the oracle cases
of tests/oracle) and against measured peak memory (calibration/measured_runs.csv).

    python benchmarks/memory_report_tables.py            # both tables, markdown (about a minute)
    python benchmarks/memory_report_tables.py --measured # only the measured-runs table (fast)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "oracle"))
sys.path.insert(0, str(REPO / "tests" / "engine" / "memory"))

MIB, GIB = 2**20, 2**30


def oracle_table() -> None:
    from oracle_cases import CASES, CATEGORIES, measured, predicted

    print("| case | " + " | ".join(CATEGORIES) + " |")
    print("|---|" + "---|" * len(CATEGORIES))
    worst = {c: 0.0 for c in CATEGORIES}
    for case in CASES:
        ours, theirs = predicted(case), measured(case)
        cells = []
        for c in CATEGORIES:
            err = (ours[c] - theirs[c]) / theirs[c] * 100 if theirs[c] else 0.0
            if theirs[c] >= 0.02 * theirs["peak"]:
                worst[c] = max(worst[c], abs(err))
            cells.append(f"{ours[c] / MIB:,.0f} / {theirs[c] / MIB:,.0f} ({err:+.1f} %)" if theirs[c] or ours[c]
                         else "0 / 0")
        print(f"| {case.name} | " + " | ".join(cells) + " |")
    print()
    print("Largest |error| per category (categories above 2 % of the peak): "
          + ", ".join(f"{c} {worst[c]:.1f} %" for c in CATEGORIES))


def measured_table() -> None:
    import test_measured_runs as runs

    from shardwise.engine.model_catalog import get_model
    from shardwise.engine.plans import RECOMPUTE_FULL, RECOMPUTE_SELECTIVE

    print("| run | GPUs | plan | measured | predicted | error |")
    print("|---|---|---|---|---|---|")
    for r in runs.rows():
        if not r["source"].startswith("torchtitan"):
            continue
        gpus, tp, pp, cp = int(r["num_gpus"]), int(r["tp"] or 1), int(r["pp"] or 1), int(r["cp"] or 1)
        dp = int(r["dp"])
        notes = r["notes"]
        micro_batch = int(r["micro_batch"]) if r["micro_batch"] else 1
        local = 32 if "local batch size 32" in notes else 8 if "local batch size 8" in notes else micro_batch
        global_batch = int(r["global_batch_seqs"]) if r["global_batch_seqs"] else local * dp
        vpp = 2 if "Interleaved" in notes else 1
        recompute = RECOMPUTE_FULL if r["recompute"] == "full" else RECOMPUTE_SELECTIVE
        model = get_model(r["model"].replace(" ", "-"))
        predicted = runs.tracked_peak_plus_fragmentation(
            model, "fsdp", gpus, int(r["seq_len"]), global_batch, tp=tp, pp=pp, vpp=vpp, cp=cp, zero_stage=3,
            micro_batch=micro_batch, recompute=recompute)
        measured = float(r["measured_peak_mem_gb"])
        label = f"{r['model']}, {notes.split(';')[0]}"
        plan = f"TP{tp} PP{pp}{' VPP2' if vpp > 1 else ''} CP{cp} FSDP{dp * cp}, s={r['seq_len']}, mb={micro_batch}, {r['recompute']}"
        print(f"| {label} ({r['precision']}) | {gpus} | {plan} | {measured:.1f} GiB | {predicted / GIB:.1f} GiB | "
              f"{(predicted / GIB - measured) / measured * 100:+.1f} % |")
    print()
    for framework in ("megatron", "deepspeed"):
        errors = runs.playbook_errors(framework)
        cells = ", ".join(f"{e * 100:+.0f}" for e in errors)
        mean_abs = sum(abs(e) for e in errors) / len(errors) * 100
        print(f"Ultra-Scale Playbook best configurations (nanotron), as `{framework}`: errors % [{cells}], "
              f"mean |error| {mean_abs:.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measured", action="store_true", help="only the measured-runs table")
    args = parser.parse_args()
    if not args.measured:
        oracle_table()
        print()
    measured_table()


if __name__ == "__main__":
    main()
