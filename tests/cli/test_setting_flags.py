"""Every setting an engine message names is a real input on every surface.

The engine writes settings as `{name}` (SettingsInputError, settings_text); REST and the chat's tools say
`name`, the CLI says `flag_for(name)`. Each name must therefore be a flag the parser has and a field of a
REST request body or a tool's arguments. The names are read from the engine's source (the calls that
build such messages), the flags from the real argparse parser, the fields from the app's OpenAPI request
bodies and the tools' pydantic argument models: no hand-written list on either side.
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import pytest
from pydantic import BaseModel

import shardwise
from shardwise.cli.flags import flag_for
from shardwise.cli.main import build_parser

PACKAGE = Path(shardwise.__file__).parent
ENGINE = PACKAGE / "engine"
BUILDERS = {"SettingsInputError", "settings_text"}  # (template, *setting names)
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
# Where the engine defines the machinery rather than a message (its names come from its callers).
DEFINITIONS = {"engine/errors.py", "engine/setting_text.py", "engine/export/result.py"}


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _literal_parts(node: ast.AST) -> str:
    """The literal text of a template argument: a string, an f-string's fixed parts, a concatenation's."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp):
        return _literal_parts(node.left) + _literal_parts(node.right)
    return ""


def _trees(root: Path):
    # the package's own modules only: a checkout also holds .venv/, build/ and tests/ beside them
    skip = {"build", "dist", "tests", "benchmarks", "node_modules"}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if any(p.startswith(".") or p in skip for p in parts[:-1]):
            continue
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _dict_keys_assigned(relative: str, name: str) -> set[str]:
    tree = ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and isinstance(node.value, ast.Dict)):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    raise AssertionError(f"{relative} no longer assigns a dict to {name}")


def _parse_count_settings() -> set[str]:
    """parse_count(value, what) names `what` as a setting: the literal names its callers pass (what-if's
    own calls re-raise as plain text, engine/whatif.py `_named_as_changes`), and parse_token_count's default."""
    from shardwise.engine.inputs import parse_token_count

    names = {inspect.signature(parse_token_count).parameters["what"].default}
    for relative, tree in _trees(PACKAGE):
        if relative.startswith("tests/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) in ("parse_count", "parse_token_count") \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                names.add(node.args[1].value)
    return names


def _megatron_only_fields() -> set[str]:
    from shardwise.engine.training import MEGATRON_ONLY_OPTIONS

    return {o.field for o in MEGATRON_ONLY_OPTIONS}


def _training_setting_names() -> set[str]:
    from shardwise.engine.training import SETTING_NAMES

    return set(SETTING_NAMES)


# A message whose setting names are computed: where they come from, read from the code that computes them.
COMPUTED = {
    ("engine/inputs.py", "what"): _parse_count_settings,
    ("engine/post_training/modes.py", "*given"): lambda: _dict_keys_assigned("engine/post_training/modes.py",
                                                                             "rollout_inputs"),
    ("engine/export/plan.py", "*megatron_only"): _megatron_only_fields,
    ("engine/training.py", "*(n for n in SETTING_NAMES if '{' + n + '}' in template)"): _training_setting_names,
}


def engine_setting_names() -> dict[str, list[str]]:
    """setting -> where the engine names it (file:line)."""
    found: dict[str, list[str]] = {}
    for relative, tree in _trees(ENGINE):
        if relative in DEFINITIONS:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _callee(node) in BUILDERS and node.args):
                continue
            where = f"{relative}:{node.lineno}"
            listed = set()
            for arg in node.args[1:]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    listed.add(arg.value)
                else:
                    source = COMPUTED.get((relative, ast.unparse(arg)))
                    assert source is not None, f"{where}: setting names from {ast.unparse(arg)}; teach COMPUTED"
                    listed |= source()
            written = set(PLACEHOLDER.findall(_literal_parts(node.args[0])))
            assert written <= listed, f"{where}: the template names {written - listed} without listing them"
            for name in listed:
                found.setdefault(name, []).append(where)
    return found


@cache
def cli_flags() -> set[str]:
    parser = build_parser()
    flags = set()
    for sub in parser._subparsers._group_actions[0].choices.values():
        for action in sub._actions:
            flags.update(action.option_strings)
    return flags


@cache
def rest_fields() -> set[str]:
    """Every property of every REST request body, nested objects included (from the app's OpenAPI)."""
    from shardwise.web.app import create_app
    from shardwise.web.settings import Settings

    spec = create_app(Settings(), chat_service=object()).openapi()
    schemas = spec["components"]["schemas"]
    names, seen = set(), set()

    def walk(schema: dict) -> None:
        if "$ref" in schema:
            ref = schema["$ref"].rsplit("/", 1)[-1]
            if ref not in seen:
                seen.add(ref)
                walk(schemas[ref])
            return
        for name, sub in schema.get("properties", {}).items():
            names.add(name)
            walk(sub)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key, []):
                walk(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                walk(schema[key])

    for operations in spec["paths"].values():
        for op in operations.values():
            for content in op.get("requestBody", {}).get("content", {}).values():
                walk(content["schema"])
    return names


@cache
def tool_fields() -> set[str]:
    """Every field of every chat tool's arguments, nested argument models included."""
    from typing import get_args

    from shardwise.tools import registry

    names, seen = set(), set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            names.add(name)
            stack = [field.annotation]
            while stack:
                t = stack.pop()
                if isinstance(t, type) and issubclass(t, BaseModel):
                    walk(t)
                stack.extend(get_args(t))

    for tool in registry().values():
        walk(tool.args)
    return names


NAMES = engine_setting_names()


def test_the_engine_names_settings_in_its_messages():
    # the scan finds the converted refusals (a scan that silently found nothing would prove nothing)
    assert {"gpus", "gpus_per_node", "params", "precision", "format", "mode", "moe_dispatcher"} <= set(NAMES)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_setting_is_a_cli_flag(name):
    assert flag_for(name) in cli_flags(), f"{name} (named at {NAMES[name]}) -> {flag_for(name)}, not a flag"


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_setting_is_a_rest_field_and_the_tools_spell_it_so(name):
    # REST takes every input; the chat's tools take fewer (no train_tokens, price_per_gpu_hour or the
    # Megatron-only options), and a tool field that holds a setting has the setting's name
    assert name in rest_fields(), f"{name} (named at {NAMES[name]}) is not a field of any REST request body"
    near = {f for f in tool_fields() if f.replace("_", "") == name.replace("_", "") and f != name}
    assert not near, f"the tools spell {name} as {near}"
