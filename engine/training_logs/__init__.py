"""Training logs in, a measured run out: Megatron-LM, torchtitan, DeepSpeed, Hugging Face Trainer.

`read_log(text)` tries each format's reader and returns the first that finds a throughput.
Pure text parsing (the CLI reads the file; decode_log turns its bytes into text)."""

from __future__ import annotations

from ..errors import ShardwiseInputError
from .decoding import as_pasted, decode_log
from .deepspeed import read_deepspeed
from .hf_trainer import read_hf_trainer
from .megatron import read_megatron
from .reading import LogReading
from .torchtitan import read_torchtitan

READERS = (read_megatron, read_torchtitan, read_deepspeed, read_hf_trainer)
LOOKED_FOR = ("Megatron-LM 'elapsed time per iteration (ms):'", "torchtitan 'step: … tps: …'",
              "DeepSpeed 'RunningAvgSamplesPerSec='", "DeepSpeed pipeline 'steps: … iter time (s): … samples/sec: …'", "Hugging Face Trainer 'train_samples_per_second'")


def read_log(text: str, name: str = "the log") -> LogReading:
    text = as_pasted(text)
    for reader in READERS:
        reading = reader(text)
        if reading is not None:
            return reading
    raise ShardwiseInputError(f"could not read a throughput from {name}: found none of {', '.join(LOOKED_FOR)}")


__all__ = ["LogReading", "decode_log", "read_log"]
