"""Regenerate megatron_lm_flags.json from Megatron-LM's own argument parser (dev-time only).

Megatron-LM's training arguments (megatron/training/arguments.py) are not part of the
megatron-core wheel, so the tests cannot import them. This script runs the real parser from a
Megatron-LM checkout at the tag matching the installed megatron-core and records, for every
option string, what argparse needs to parse it (nargs, type, const, choices). It writes data,
not code; the tests rebuild a parser from it.

    git clone https://github.com/NVIDIA/Megatron-LM && git -C Megatron-LM checkout core_v0.16.1
    python make_megatron_lm_flags.py Megatron-LM megatron_lm_flags.json

Two imports the parser does not use are stubbed: `six` (a tokenizer dependency) and
megatron.core's batch-invariant kernels (they import triton, absent on CPU machines).
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import json
import sys
import types

STUBBED = {"six", "megatron.core.transformer.custom_layers.batch_invariant_kernels"}


class _Anything:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return args[0] if len(args) == 1 and callable(args[0]) and not kwargs else _Anything()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name in STUBBED or name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__file__ = f"<stub {spec.name}>"

        def getattr_(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Anything()

        module.__getattr__ = getattr_
        return module

    def exec_module(self, module):
        pass


def option_table(parser: argparse.ArgumentParser) -> dict[str, dict]:
    table = {}
    for option, action in parser._option_string_actions.items():
        kind = type(action).__name__
        table[option] = {
            "dest": action.dest,
            "action": kind,
            "nargs": action.nargs if isinstance(action.nargs, (int, str)) or action.nargs is None else str(action.nargs),
            "type": getattr(action.type, "__name__", None) if action.type is not None else None,
            "const": action.const if isinstance(action.const, (bool, int, float, str, type(None))) else str(action.const),
            "choices": [c if isinstance(c, (bool, int, float, str)) else str(c) for c in action.choices]
            if action.choices is not None else None,
            "default": action.default if isinstance(action.default, (bool, int, float, str, type(None))) else None,
        }
    return table


def main(checkout: str, out_path: str) -> None:
    sys.meta_path.insert(0, _Stub())
    sys.path.insert(0, checkout)  # megatron is a namespace package: megatron.training joins megatron.core
    from megatron.core.package_info import __version__ as core_version
    from megatron.training.arguments import add_megatron_arguments

    parser = add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False))
    with open(out_path, "w") as out:  # a file: importing Megatron prints to stdout
        json.dump({"source": f"Megatron-LM megatron/training/arguments.py at core_v{core_version}, "
                         f"add_megatron_arguments()",
                   "megatron_core_version": core_version, "options": option_table(parser)},
                  out, indent=0, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
