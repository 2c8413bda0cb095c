"""Scenario settings as the CLI's flags: the CLI's spelling of engine text that names settings.

The engine names a setting as REST bodies and the chat's tools do (gpus, seq_len, zero); here it becomes
the flag that sets it (--gpus, --seq-len, --zero). tests/cli/test_setting_flags.py checks that every setting
an engine message names maps to a flag the parser really has.
"""

from __future__ import annotations

from ..engine.errors import SettingsInputError, ShardwiseInputError

# Where a flag is not the setting's name with dashes: engine spec fields (a range error names what the
# user typed) and settings whose flag says the non-default value (--grad-reduce-in-bf16 sets
# grad_reduce_dtype=bf16).
FIELD_FLAGS = {"tp": "--tp", "pp": "--pp", "vpp": "--vpp", "cp": "--cp", "ep": "--ep", "etp": "--etp",
               "zero_stage": "--zero", "micro_batch": "--micro-batch", "seq_len": "--seq-len",
               "global_batch": "--global-batch", "lora_rank": "--lora-rank", "num_gpus": "--gpus",
               "gpus_per_node": "--gpus-per-node", "grad_reduce_dtype": "--grad-reduce-in-bf16"}


def flag_for(setting: str) -> str:
    """A scenario setting as the flag that sets it: gpu -> --gpu, seq_len -> --seq-len, num_gpus -> --gpus."""
    return FIELD_FLAGS.get(setting, "--" + setting.replace("_", "-"))


def error_text(exc: ShardwiseInputError) -> str:
    """The engine's message; one that names scenario settings names them here as the flags the user typed."""
    return exc.spelled(flag_for) if isinstance(exc, SettingsInputError) else str(exc)
