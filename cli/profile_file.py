"""`--profile FILE`: a CalibrationProfile saved by `shardwise calibrate --save`, read and checked."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError


def add_profile_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", metavar="FILE",
                   help="a calibration profile from `shardwise calibrate --save FILE` (your cluster's measured run)")


def profile_error(where: str, exc: ValidationError) -> ShardwiseInputError:
    first = exc.errors()[0]
    field = ".".join(str(x) for x in first["loc"]) or "profile"
    return ShardwiseInputError(f"{where} is not a valid calibration profile: {field}: {first['msg']} "
                               "(write one with `shardwise calibrate ... --save FILE`)")


def profile_from_data(data, where: str = "the profile") -> CalibrationProfile:
    try:
        return CalibrationProfile.model_validate(data)
    except ValidationError as exc:
        raise profile_error(where, exc) from None


def load_profile(path: str) -> CalibrationProfile:
    where = f"--profile {path!r}"
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ShardwiseInputError(f"{where} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ShardwiseInputError(f"{where} is not JSON ({exc.__class__.__name__}: {exc})") from None
    return profile_from_data(data, where)


def profile_from_args(args: argparse.Namespace) -> CalibrationProfile | None:
    path = getattr(args, "profile", None)
    return load_profile(path) if path else None
