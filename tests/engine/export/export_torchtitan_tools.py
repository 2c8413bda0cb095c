"""torchtitan 0.2.2 on a CPU machine, and torchtitan 0.3.0's command line rebuilt from its source.

`import torchtitan` pulls torchtitan/models/moe/kernels.py, which imports triton (absent on
CPU-only machines) for a MoE permutation kernel the config manager never uses; that one module
is replaced by an empty stand-in, nothing else.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Literal

CLI_03 = json.loads((Path(__file__).parent / "data" / "torchtitan_0.3.0_cli.json").read_text())


def import_torchtitan():
    if importlib.util.find_spec("triton") is None and "torchtitan.models.moe.kernels" not in sys.modules:
        stand_in = types.ModuleType("torchtitan.models.moe.kernels")
        stand_in.generate_permute_indices = None
        stand_in.fill_indices_wrapper = None
        sys.modules["torchtitan.models.moe.kernels"] = stand_in
    import torchtitan.config

    return torchtitan


def v03_config_class():
    """Trainer.Config's command-line surface in 0.3.0: training, parallelism, compile sections
    with their fields, types and defaults, and the activation-checkpoint subcommands."""
    import tyro

    sections = []
    for section, class_name in CLI_03["sections"].items():
        fields = []
        for name, spec in CLI_03["classes"][class_name].items():
            annotation = eval(spec["annotation"], {"Literal": Literal})  # e.g. "Literal['default', 'always']"
            default = spec["default"]
            if default is None and spec["annotation"].startswith("list"):
                fields.append((name, annotation, dataclasses.field(default_factory=list)))
            else:
                fields.append((name, annotation, dataclasses.field(default=default)))
        cls = dataclasses.make_dataclass(class_name, fields, kw_only=True)
        sections.append((section, cls, dataclasses.field(default_factory=cls)))

    @dataclasses.dataclass
    class FullAC:
        preserve_rng_state: bool = True

    @dataclasses.dataclass
    class SelectiveAC:
        preserve_rng_state: bool = True

    from typing import Annotated

    subcommands = {"full": FullAC, "selective": SelectiveAC}
    ac_type = (Annotated[SelectiveAC, tyro.conf.subcommand("selective")]
               | Annotated[FullAC, tyro.conf.subcommand("full")]
               | Annotated[None, tyro.conf.subcommand("none")])
    assert set(subcommands) | {"none"} <= set(CLI_03["activation_checkpoint_subcommands"])
    sections.append(("activation_checkpoint", ac_type, dataclasses.field(default_factory=SelectiveAC)))
    return dataclasses.make_dataclass("TrainerConfig03", sections), FullAC, SelectiveAC
