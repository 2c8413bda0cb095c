"""The calibration profile the tools predict with, for the duration of one tool call.

The chat's tools take only JSON arguments from the model; a user's profile (`ask --profile`,
`chat --profile`, the web chat's `profile`) is the session's, not the model's to invent. The
dispatcher sets it around one synchronous `tool.run` (`using_profile`), and the tools pass
`active_profile()` to the engine.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from ..engine.calibration.profile import CalibrationProfile

_ACTIVE: ContextVar[CalibrationProfile | None] = ContextVar("shardwise_calibration_profile", default=None)


def active_profile() -> CalibrationProfile | None:
    return _ACTIVE.get()


@contextmanager
def using_profile(profile: CalibrationProfile | None) -> Iterator[None]:
    token = _ACTIVE.set(profile)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
