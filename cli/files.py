"""JSON files named on the command line (--profile, --from-plan): a missing or malformed file is a
one-line error naming the flag, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from ..engine.errors import ShardwiseInputError


def read_json_file(path: str, flag: str) -> object:
    try:
        # utf-8-sig: a file saved "UTF-8 with BOM" (Windows editors) is still the same JSON
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ShardwiseInputError(f"{flag} {path!r} does not exist") from None
    except OSError as exc:  # a directory, no permission: it was "is not JSON (IsADirectoryError: …)"
        raise ShardwiseInputError(f"{flag} {path!r} cannot be read ({exc.strerror or exc}): give the JSON file "
                                  "itself") from None
    except ValueError as exc:
        raise ShardwiseInputError(f"{flag} {path!r} is not JSON ({exc.__class__.__name__}: {exc})") from None
