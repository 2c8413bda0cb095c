"""The words a profile puts on a plan: what applied, and the flags that would apply the rest."""

from __future__ import annotations

from shardwise.engine.calibration.annotate import profile_note
from shardwise.engine.calibration.profile import CalibrationProfile
from shardwise.engine.inputs import build_cluster
from shardwise.engine.training import TrainingSetup


def _profile(**kw) -> CalibrationProfile:
    return CalibrationProfile(**{"gpu": "h100-sxm", "precision": "bf16", "framework": "fsdp", "compute_scale": 0.9,
                                 **kw})


def test_a_profile_from_another_framework_names_the_flag_that_applies_it():
    # Measured under FSDP; this scenario is Megatron: it said "not applied" without saying how to apply it.
    note = profile_note(_profile(), build_cluster("h100-sxm", 8), TrainingSetup(framework="megatron"))
    assert note == ("profile not applied: compute scale not applied (profile measured on h100-sxm/bf16/fsdp, "
                    "this is h100-sxm/bf16/megatron; --framework fsdp applies it)")


def test_every_setting_that_differs_is_named():
    note = profile_note(_profile(), build_cluster("a100-80gb", 8), TrainingSetup(framework="megatron"))
    assert "; --gpu h100-sxm --framework fsdp applies it)" in note


def test_a_profile_that_holds_in_part_says_so_not_calibrated():
    # compute holds (same GPU, precision, framework); the network scale needs traffic between nodes and 8 GPUs
    # are one node: the page read "Calibrated: compute ×0.900, network scale not applied" as a contradiction.
    note = profile_note(_profile(network="ib-ndr", comm_scale=1.2), build_cluster("h100-sxm", 8),
                        TrainingSetup(framework="fsdp"))
    assert note.startswith("calibrated in part: compute ×0.900, network scale not applied (measured on ib-ndr")
    assert note.endswith("it applies across nodes: more --gpus than the 8 in one node)")


def test_a_profile_that_holds_everywhere_says_calibrated():
    note = profile_note(_profile(network="ib-ndr", comm_scale=1.2), build_cluster("h100-sxm", 16),
                        TrainingSetup(framework="fsdp"))
    assert note == "calibrated: compute ×0.900, network ×1.200"
