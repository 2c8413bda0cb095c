"""The oracle for post-training memory: a DPO step measured with PyTorch's MemTracker on fake tensors.

Policy as in oracle_runs' "deepspeed" flavour (bf16 parameters and gradients, fp32 master weights and
fused AdamW m, v owned by the optimizer, eager fp32 cross-entropy). Beside it a frozen reference
model, built the same way in bf16 and only ever run under no_grad, as TRL and verl hold it (its
parameters keep requires_grad=True only because MemTracker registers a gradient hook on every
parameter of a module it sees; under no_grad no gradient is ever made, so the memory is the same). Each micro-batch of
`pairs` chosen/rejected pairs is 2·pairs sequences: the reference scores them first under no_grad
(verl's ref pass; TRL with precompute_ref_log_probs), then the policy's forward, the DPO loss
(Rafailov et al. 2023: −log σ(β·((π_c − π_r) − (ref_c − ref_r))) on summed token log-probs) and its
backward. Two optimizer steps of `grad_accum` micro-batches, as every oracle run.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import MemTracker

from oracle_models import OracleConfig
from oracle_runs import MasterWeightAdamW, _bytes, build

DPO_BETA = 0.1


def _sequence_logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Summed token log-probs per sequence, through the same fp32 cross-entropy the SFT oracle uses."""
    nll = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1), reduction="none")
    return -nll.view(labels.shape).sum(-1)


def measure_dpo_single_device(cfg: OracleConfig, seq_len: int, pairs: int, grad_accum: int = 2,
                              with_reference: bool = True) -> dict[str, int]:
    """MemTracker categories (bytes) at the peak of DPO training on one GPU."""
    with FakeTensorMode():
        policy = build(cfg, seq_len, torch.bfloat16)
        reference = build(cfg, seq_len, torch.bfloat16) if with_reference else None
        tokens = torch.randint(0, cfg.vocab, (2 * pairs, seq_len))
        labels = torch.randint(0, cfg.vocab, (2 * pairs, seq_len))
        opt = MasterWeightAdamW(policy.parameters())
        tracker = MemTracker()
        tracker.track_external(*(m for m in (policy, reference) if m is not None), opt, tokens, labels)
        with tracker:
            for _ in range(2):
                for _ in range(grad_accum):
                    with torch.no_grad():
                        ref = _sequence_logps(reference(tokens), labels) if reference is not None \
                            else torch.zeros(2 * pairs)
                    logps = _sequence_logps(policy(tokens), labels)
                    margin = (logps[:pairs] - logps[pairs:]) - (ref[:pairs] - ref[pairs:])
                    loss = -F.logsigmoid(DPO_BETA * margin).mean() / grad_accum
                    loss.backward()
                    tracker.reset_mod_stats()
                opt.step()
                opt.zero_grad()
        return _bytes(tracker.get_tracker_snapshot("peak"))
