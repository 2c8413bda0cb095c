"""Print the DPO oracle table of docs/post_training.md: the engine against PyTorch's MemTracker on a
DPO step (policy + frozen reference) at Llama-3-8B width (tests/oracle/test_post_training_oracle.py).

    python benchmarks/post_training_oracle_table.py      # about a minute
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "oracle"))

MIB = 2**20
CATEGORIES = ("weights", "gradients", "optimizer", "activations", "peak")


def main() -> None:
    from oracle_cases import LLAMA3_8B, LLAMA3_8B_SMALL_VOCAB
    from test_post_training_oracle import measured, predicted

    print("| case | " + " | ".join(CATEGORIES) + " |")
    print("|---|" + "---|" * len(CATEGORIES))
    for name, cfg in (("Llama-3-8B width, 2 layers", LLAMA3_8B), ("8K vocab, 4 layers", LLAMA3_8B_SMALL_VOCAB)):
        ours, theirs = predicted(cfg, dpo=True), measured(cfg)
        cells = []
        for c in CATEGORIES:
            error = f" ({(ours[c] / theirs[c] - 1) * 100:+.1f} %)" if theirs[c] else ""
            cells.append(f"{ours[c] / MIB:,.0f} / {theirs[c] / MIB:,.0f}{error}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    with_ref, without = measured(LLAMA3_8B, True), measured(LLAMA3_8B, False)
    print(f"\nreference weights: predicted {predicted(LLAMA3_8B, dpo=True)['reference'] / MIB:,.0f} MiB, measured "
          f"{(with_ref['weights'] - without['weights']) / MIB:,.0f} MiB (run with minus run without it)")


if __name__ == "__main__":
    main()
