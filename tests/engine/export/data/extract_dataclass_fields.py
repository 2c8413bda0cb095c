"""Record the fields of dataclasses as their source defines them (dev-time only).

For frameworks that cannot be imported here (Nanotron main, torchtitan 0.3, Megatron-Bridge),
the tests validate exports against the field names, annotations and required-ness written in
the frameworks' own source, read with `ast` (no import, no code copied):

    python extract_dataclass_fields.py SOURCE.py Class [Class.Nested ...]

prints {"Class": {"field": {"annotation": "...", "required": bool, "default": literal or null}}}. The data files in this
folder were made this way; each records the repository, commit and path it was read from.
"""

from __future__ import annotations

import ast
import json
import sys


def literal_default(value: ast.expr | None):
    """The default when it is a literal (field(default_factory=...) and expressions give None)."""
    if value is None:
        return None
    try:
        return ast.literal_eval(value)
    except ValueError:
        return None


def dataclass_fields(tree: ast.Module, dotted: str) -> dict[str, dict]:
    scope: list[ast.stmt] = tree.body
    node = None
    for name in dotted.split("."):
        node = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == name)
        scope = node.body
    fields = {}
    for stmt in scope:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            fields[stmt.target.id] = {"annotation": ast.unparse(stmt.annotation), "required": stmt.value is None,
                                      "default": literal_default(stmt.value)}
    return fields


def main(path: str, names: list[str]) -> None:
    tree = ast.parse(open(path).read())
    json.dump({name: dataclass_fields(tree, name) for name in names}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
