"""`--profile FILE`: a CalibrationProfile saved by `shardwise calibrate --save`, read and checked."""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from .files import read_json_file


def add_profile_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", metavar="FILE",
                   help="a calibration profile from `shardwise calibrate --save FILE` (your cluster's measured run)")


def profile_error(where: str, exc: ValidationError) -> ShardwiseInputError:
    first = exc.errors()[0]
    field = ".".join(str(x) for x in first["loc"]) or "profile"
    return ShardwiseInputError(f"{where} is not a valid calibration profile: {field}: {first['msg'].removeprefix('Value error, ')} "
                               "(write one with `shardwise calibrate ... --save FILE`)")


def profile_from_data(data, where: str = "the profile") -> CalibrationProfile:
    try:
        return CalibrationProfile.model_validate(data)
    except ValidationError as exc:
        raise profile_error(where, exc) from None


def load_profile(path: str) -> CalibrationProfile:
    return profile_from_data(read_json_file(path, "--profile"), f"--profile {path!r}")


def profile_from_args(args: argparse.Namespace) -> CalibrationProfile | None:
    path = getattr(args, "profile", None)
    return load_profile(path) if path else None
