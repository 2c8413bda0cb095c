"""Ground truth for a measurement no run can produce: "we measure 9,800 tok/s/GPU on a 70B", "peak
43210MiB on our A100 40GB". The answer must refuse it and say why with the figure that shows it.

- A measured speed (tokens/s per GPU, a step time, or an MFU) that means more model FLOP/s than the
  GPU's dense peak: the answer must state the MFU it implies (as a percentage, "419 %", or a multiple of
  the peak, "4.2x") or the model TFLOP/s per GPU it implies. MFU is model FLOPs per second over the dense
  peak, so for one model and plan it is proportional to tokens/s: implied MFU = measured tokens/s ×
  predicted MFU / predicted tokens/s (the same proportionality as evals/truth_uncertainty.py), and the
  implied TFLOP/s = implied MFU × the GPU's dense peak of the run's precision (the catalog's).
- A measured peak memory above the GPU's memory: the answer must state the GPU's memory (GiB, the
  catalog's) or the measured peak in GiB (the conversion from MiB or GB that shows it is above).

Both also need a word of refusal (`REFUSAL_WORDS`). A measurement that a run could produce is an error
here (tests/evals/test_cases.py then fails), so a case cannot claim "impossible" by mistake.
"""

from __future__ import annotations

from . import scenario as sc
from .case import Measured, Scenario

# MFU cannot exceed 1: HFU >= MFU and HFU <= 1 is physics (engine/assumptions/calibration_bounds.py
# says the same for calibrate; written here again, not imported, so the truth does not grade itself).
MAX_POSSIBLE_MFU = 1.0
REFUSAL_WORDS = (r"impossible", r"not possible", r"cannot", r"can't", r"can ?not", r"refus", r"more than",
                 r"exceed", r"above", r"over (?:the|its|100)", r"physically", r"not (?:a )?(?:real|valid|plausible)")


def implied_mfu(s: Scenario, plan: dict, measured: Measured) -> float:
    from .truth_uncertainty import _evaluate, measured_tokens_per_s_per_gpu

    if measured.mfu is not None:
        return measured.mfu
    _, e = _evaluate(s, plan)
    return measured_tokens_per_s_per_gpu(s, plan, measured) * e.throughput.mfu / e.throughput.tokens_per_s_per_gpu


def impossible_truth(s: Scenario, plan: dict, measured: Measured):
    from .truth import Truth

    specs = sc.build(s)
    gpu = specs.cluster.gpu
    groups: list[tuple] = []
    if measured.has_speed:
        mfu = implied_mfu(s, plan, measured)
        if mfu <= MAX_POSSIBLE_MFU:
            return Truth(kind="impossible", error=f"the measured speed is possible (MFU {mfu:.0%})")
        peak_tflops = gpu.peak_tflops(specs.setup.precision)
        groups.append((("mfu", mfu), ("flops", mfu * peak_tflops)))
    if measured.peak_gib is not None:
        if measured.peak_gib <= gpu.memory_gib:
            return Truth(kind="impossible", error=f"the measured peak {measured.peak_gib:g} GiB fits the "
                                                  f"{gpu.memory_gib:g} GiB of the {gpu.id}")
        groups.append((("memory", gpu.memory_gib), ("memory", measured.peak_gib)))
    return Truth(kind="impossible", stated=(tuple(groups),), keywords=(REFUSAL_WORDS,),
                 is_moe=specs.model.is_moe)
