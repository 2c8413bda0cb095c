"""The `shardwise` command: one module per subcommand, each with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import sys

from pydantic import ValidationError

from ..engine.errors import SettingsInputError, ShardwiseInputError
from .common import setup_warnings
from .flags import FIELD_FLAGS, error_text, flag_for  # noqa: F401  (flag_for: re-exported)

# Subcommand modules, in the order `--help` lists them. A module that is not there yet is skipped.
SUBCOMMANDS = ["evaluate", "recommend", "explain", "whatif", "export", "catalog", "validate", "calibrate",
               "chat", "serve", "evals"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        self.exit(2, f"shardwise: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="shardwise", description="The fastest distributed-training plan that fits.")
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"shardwise {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__package__}.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def format_validation_error(exc: ValidationError, use_flags: bool = False) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "input"
        if use_flags:
            where = FIELD_FLAGS.get(where, where)
        got = f" (got {err['input']!r})" if isinstance(err.get("input"), (int, float, str)) else ""
        message = str(err.get("msg", "")).removeprefix("Value error, ")
        raised = (err.get("ctx") or {}).get("error")
        if use_flags and isinstance(raised, SettingsInputError):  # a validator's sentence naming settings: as flags
            message = raised.spelled(flag_for)
        # A check across several inputs (a model validator) has no single field to name.
        parts.append(message if where == "input" or not err.get("loc") else f"{where}: {message}{got}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # let the subcommand say it, so the hint points at its own --help
        sub = parser._subparsers._group_actions[0].choices[args.command]
        hint = getattr(args, "extra_args_hint", None)  # a subcommand that knows why such words come (validate)
        sub.error((hint and hint(args, extra)) or f"unrecognized arguments: {' '.join(extra)}")
    try:
        code = int(args.handler(args) or 0)
        for warning in setup_warnings(args) if code == 0 else ():
            print(f"shardwise: warning: {warning}", file=sys.stderr)
        return code
    except ShardwiseInputError as exc:
        print(f"shardwise: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        flags = args.command in ("evaluate", "recommend", "explain", "export", "calibrate")  # what-if: inputs
        print(f"shardwise: error: {format_validation_error(exc, flags)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file or directory the user named (-o, --export-dir, --from-plan, ...)
        where = f": {exc.filename!r}" if exc.filename else ""
        print(f"shardwise: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
