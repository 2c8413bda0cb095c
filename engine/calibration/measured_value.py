"""What a user measured, as the one quantity calibration fits: tokens/s per GPU.

Shared by `shardwise calibrate` and the chat's calibrate tool, so a step time, an MFU or a training
log means the same thing in both.
  step time S s   -> global batch x sequence length / S / GPUs   (tokens per optimizer step over its time)
  MFU F           -> F x the GPU's dense peak at the precision / model FLOPs per token
                     (shardwise's MFU definition, README: model FLOPs per token incl. attention)
  log             -> its tokens/s per GPU, else its step time as above, else samples/s x sequence / GPUs
"""

from __future__ import annotations

from ..assumptions.calibration_bounds import MAX_MEASURED_MFU
from ..cluster import Cluster
from ..errors import SettingsInputError
from ..flops import model_flops_per_token
from ..model_spec import ModelSpec
from ..training import TrainingSetup
from ..training_logs import LogReading
from .fit_profile import tokens_per_step


def tokens_from_step_time(step_s: float, setup: TrainingSetup, cluster: Cluster) -> float:
    return tokens_per_step(setup) / step_s / cluster.num_gpus


def mfu_fraction(mfu: float) -> float:
    """45 and 0.45 both mean 45 %: a value above 1 is read as percent."""
    return mfu / 100 if mfu > 1 else mfu


def tokens_from_mfu(mfu: float, model: ModelSpec, setup: TrainingSetup, cluster: Cluster) -> float:
    if mfu_fraction(mfu) > MAX_MEASURED_MFU:  # each surface names the setting its own way (SettingsInputError)
        raise SettingsInputError("{measured_mfu} " + f"{mfu:g} is {mfu_fraction(mfu):.0%} MFU: no run exceeds 100 % of "
                                 "the GPU's dense peak (give a fraction such as 0.45 or a percent such as 45)",
                                 "measured_mfu")
    peak = cluster.gpu.peak_tflops(setup.precision) * 1e12
    return mfu_fraction(mfu) * peak / model_flops_per_token(model, setup.seq_len, setup)


def tokens_from_log(reading: LogReading, setup: TrainingSetup, cluster: Cluster) -> float:
    if reading.tokens_per_s_per_gpu is not None:
        return reading.tokens_per_s_per_gpu
    if reading.step_s is not None:
        return tokens_from_step_time(reading.step_s, setup, cluster)
    return reading.samples_per_s * setup.seq_len / cluster.num_gpus
