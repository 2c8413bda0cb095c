"""Load eval cases from evals/cases/*.yaml and *.jsonl (or any files/directories given)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from ..engine.errors import ShardwiseInputError
from .case import Case

CASES_DIR = Path(__file__).parent / "cases"


def _records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = yaml.safe_load(text) or []
    return data if isinstance(data, list) else [data]


def load_cases(paths: list[Path] | None = None) -> list[Case]:
    files: list[Path] = []
    for p in paths or [CASES_DIR]:
        p = Path(p)
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.suffix in (".yaml", ".yml", ".jsonl"))
        elif p.exists():
            files.append(p)
        else:
            raise ShardwiseInputError(f"no such case file or directory: {p}")
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    for f in files:
        try:
            records = _records(f)
        except (yaml.YAMLError, json.JSONDecodeError) as exc:
            raise ShardwiseInputError(f"{f}: not valid YAML/JSONL: {exc}") from None
        for i, record in enumerate(records):
            try:
                case = Case.model_validate(record)
            except ValidationError as exc:
                where = record.get("id", f"#{i + 1}") if isinstance(record, dict) else f"#{i + 1}"
                raise ShardwiseInputError(f"{f.name}: case {where}: {exc.errors()[0]['loc']}: "
                                          f"{exc.errors()[0]['msg']}") from None
            if case.id in seen:
                raise ShardwiseInputError(f"case id {case.id!r} appears in {seen[case.id].name} and {f.name}")
            seen[case.id] = f
            cases.append(case)
    return cases


def select(cases: list[Case], families: list[str] | None = None, ids: list[str] | None = None) -> list[Case]:
    out = cases
    if families:
        unknown = set(families) - {c.family for c in cases}
        if unknown:
            raise ShardwiseInputError(f"no cases in famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(sorted(unknown))}; "
                                      f"families: {', '.join(sorted({c.family for c in cases}))}")
        out = [c for c in out if c.family in families]
    if ids:
        known = {c.id for c in cases}
        missing = [i for i in ids if i not in known and not any(k.startswith(i) for k in known)]
        if missing:
            raise ShardwiseInputError(f"no case with id {', '.join(missing)}")
        out = [c for c in out if any(c.id == i or c.id.startswith(i) for i in ids)]
    return out
