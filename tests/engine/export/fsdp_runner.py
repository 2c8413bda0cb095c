"""Run an exported FSDP2 script under torchrun on CPUs (gloo), with a tiny stand-in model.

    python -m torch.distributed.run --nproc-per-node N fsdp_runner.py train_fsdp2.py

The script is imported as written; only build_model (a Hugging Face model, which needs
transformers and weights) and the sequence length (the plan's is long for a CPU) are replaced.
Rank 0 prints the sharding it ended up with.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import namedtuple
from types import SimpleNamespace

import torch
from torch import nn


# A pytree node, like Hugging Face's ModelOutput: FSDP2 hooks the backward of what forward returns.
CausalLMOutput = namedtuple("CausalLMOutput", "loss")


class TinyCausalLM(nn.Module):
    """Hugging Face's layout where the script looks: model.model.layers, config.vocab_size, .loss."""

    def __init__(self, vocab: int = 64, hidden: int = 16, layers: int = 2):
        super().__init__()
        self.config = SimpleNamespace(vocab_size=vocab)
        self.model = nn.Module()
        self.model.embed = nn.Embedding(vocab, hidden)
        self.model.layers = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.SiLU(), nn.Linear(4 * hidden, hidden)) for _ in range(layers))
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, labels):
        h = self.model.embed(input_ids)
        for block in self.model.layers:
            h = h + block(h)
        logits = self.lm_head(h).float()
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return CausalLMOutput(loss=loss)


def main(script: str) -> None:
    spec = importlib.util.spec_from_file_location("exported", script)
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    exported.SEQ_LEN = 8
    seen = {}
    keep_alive = []
    original = exported.apply_parallelism

    def recording(model, mesh):
        out = original(model, mesh)
        keep_alive.append(out)  # freed only by os._exit below, never by a destructor
        seen.update(mesh_shape=list(mesh.shape), wrapper=type(out).__name__,
                    checkpointed=any("CheckpointWrapper" in type(m).__name__ for m in model.modules()))
        return out

    exported.apply_parallelism = recording
    exported.main(model_fn=TinyCausalLM, steps=1)
    if os.environ.get("RANK") == "0":
        print("RUNNER" + json.dumps(seen), flush=True)
    # Leave without running destructors: on CPU, freeing a DDP model over gloo can deadlock in
    # torch itself (the Reducer's ProcessGroupGloo destructor joins gloo's worker thread while
    # holding the GIL, and that thread waits for the GIL to drop its last work item; seen with
    # py-spy, about one run in ten on a loaded 2-core machine). GPU runs use NCCL, not this path.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
