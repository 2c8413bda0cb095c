"""Shared by the Megatron tests: Megatron-LM's parser rebuilt from its option table, the
arrays of an exported script, and megatron-core on torch's fake process group."""

from __future__ import annotations

import argparse
import ast
import json
import re
import shlex
from pathlib import Path

FLAGS = json.loads((Path(__file__).parent / "data" / "megatron_lm_flags.json").read_text())

# Megatron-LM's custom argument types, by what they accept: moe_freq_type takes an int or a
# Python list expression (megatron/training/arguments.py, moe_freq_type / _eval_pattern).
TYPES = {"int": int, "float": float, "str": str, "moe_freq_type": lambda text: ast.literal_eval(text)}


def megatron_lm_parser() -> argparse.ArgumentParser:
    """Megatron-LM 0.16.1's options with their nargs, types, consts, choices and plain defaults."""
    parser = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False, add_help=False)
    for option, spec in FLAGS["options"].items():
        if spec["action"] in ("_HelpAction", "_VersionAction"):
            continue
        kwargs = {"dest": spec["dest"], "default": spec["default"]}
        if spec["action"] in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction"):
            kwargs.update(action="store_const", const=spec["const"])
        elif spec["action"] == "BooleanOptionalAction":  # --x / --no-x
            kwargs.update(action="store_const", const=not option.startswith("--no-"))
        else:
            kwargs.update(nargs=spec["nargs"], type=TYPES.get(spec["type"], str))
            if spec["choices"] is not None and spec["type"] in ("str", "int", None):
                kwargs["choices"] = spec["choices"]
        parser.add_argument(option, **kwargs)
    return parser


def parse(args: list[str]) -> argparse.Namespace:
    namespace, unknown = megatron_lm_parser().parse_known_args(args)
    assert not unknown, f"flags Megatron-LM does not define: {unknown}"
    return namespace


def bash_arrays(text: str) -> dict[str, list[str]]:
    """NAME=( ... ) blocks of a bash script, split as bash would split them."""
    return {name: shlex.split(body, comments=True) for name, body in re.findall(r"^(\w+)=\((.*?)\)$", text, re.S | re.M)}


def megatron_lm_layout(ns: argparse.Namespace) -> dict:
    """Megatron-LM's own derivations (megatron/training/arguments.py validate_args, 0.16.1):
    - VPP from --num-layers-per-virtual-pipeline-stage: layers must divide by PP, and the layers
      per stage by the layers per virtual stage ("number of layers per pipeline stage must be
      divisible number of layers per virtual pipeline stage");
    - an uneven split names the first/last stages; the rest must divide evenly;
    - DP = world / (TP·PP·CP); micro-batches = global / (micro·DP), exactly."""
    layers, pp = ns.num_layers, ns.pipeline_model_parallel_size
    vpp = None
    if ns.num_layers_per_virtual_pipeline_stage:
        assert layers % pp == 0
        assert (layers // pp) % ns.num_layers_per_virtual_pipeline_stage == 0
        vpp = layers // pp // ns.num_layers_per_virtual_pipeline_stage
    stages = None
    if ns.decoder_first_pipeline_num_layers or ns.decoder_last_pipeline_num_layers:
        first, last = ns.decoder_first_pipeline_num_layers, ns.decoder_last_pipeline_num_layers
        middle, remainder = divmod(layers - first - last, pp - 2) if pp > 2 else (0, layers - first - last)
        assert remainder == 0
        stages = [first] + [middle] * (pp - 2) + [last]
    return {"vpp": vpp if vpp and vpp > 1 else 1, "stages": stages}
