"""Split a side-by-side answer ("H100 vs H200: the best plan on each") into what it says about each side.

An answer attributes text to a side by naming it, however it lays the answer out:

- a table whose header names the sides, one column each (`| | H100 | H200 |`): a column's cells,
  each with its row's heading ("best plan: `TP=1 CP=8 …`"), belong to that column's side;
- a table whose rows start with a side's name (`| H100 | 1 | 8 | … |`): that row, under the header;
- prose: a line that names a side, from the name up to where the line names another side
  ("On H100 use TP=1 CP=8 DP=2; on H200, TP=1 CP=4 DP=4.") — name the side, then what it gets;
  a side named in brackets is an aside and does not take the line over ("On H200 (unlike the H100) …");
  the rest of that paragraph continues the side last named (words before a line's first name,
  if they hold no number, lead into it: "- On the H200: …");
- a heading that names one side ("### H200", "**On the H200**", "If you switch to fp8:" alone on a
  line), or a change from one side to the other ("**What if bf16 → fp8?**", opening the second):
  the paragraphs under it, up to the next side's name.

Text before any side is named belongs to none. A label must start a word, so "LoRA" is not
found in "QLoRA" (it may run on: "Qwen" names "Qwen2.5-7B"). A line that names two sides or
more, or compares ("vs", "than", "compared with", "against"), is *shared*: its plan mentions are
split by name as above, but its numbers may be the other side's ("fp8 gives 99,983 tokens/s vs
68,102"), so graders/per_side.py does not attribute them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING_CHARS = 60  # a heading line naming one side is this short at most ...
HEADING_WORDS = 5  # ... with at most this many other words ("If you switch to fp8:")
_MARKUP = re.compile(r"[#*_`>|:?!.→\-\s]+")
_CITATION = re.compile(r"\[[A-Z]\d+(?:,\s*[A-Z]?\d+)*\]")  # "[R1]", "[R1, R2]": a tool-result citation
_ARROW = re.compile(r"→|->|\bto\b")
_ASIDE = re.compile(r"\([^()]*\)")  # "(as on the H100)": a side named in brackets does not take the line over
_COMPARES = re.compile(r"\b(?:vs|versus|than|compared (?:to|with)|against|relative to)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Piece:
    side: int
    text: str
    shared: bool = False  # from a line that names more than one side, or compares
    paragraph: int = 0  # pieces of one side and paragraph are read as one paragraph


def label_pattern(alternatives: list[str]) -> re.Pattern:
    """Any alternative (case-insensitive), starting a word: "LoRA" is not found in "QLoRA" nor "8k"
    in "128k", but "Qwen" is found in "Qwen2.5-7B" and "H100" in "H100s"."""
    return re.compile(r"(?<![\w.])(?:" + "|".join(f"(?:{a})" for a in alternatives) + r")", re.IGNORECASE)


def _named(text: str, patterns: list[re.Pattern]) -> list[tuple[int, int, int]]:
    """(start, end, side) for every side name in `text`, in order; where names overlap the longest wins."""
    hits = sorted(((m.start(), -(m.end() - m.start()), side) for side, p in enumerate(patterns)
                   for m in p.finditer(text)))
    out: list[tuple[int, int, int]] = []
    for start, neg_len, side in hits:
        end = start - neg_len
        if out and start < out[-1][1]:
            continue
        out.append((start, end, side))
    return out


def _only_side(text: str, patterns: list[re.Pattern]) -> int | None:
    sides = {side for _, _, side in _named(text, patterns)}
    return sides.pop() if len(sides) == 1 else None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table_pieces(lines: list[str], patterns: list[re.Pattern], current: int | None, paragraph: int) -> list[Piece]:
    header = _cells(lines[0])
    rows = [_cells(ln) for ln in lines[2:]] if len(lines) >= 3 else []
    columns = {j: _only_side(cell, patterns) for j, cell in enumerate(header)}
    columns = {j: side for j, side in columns.items() if side is not None}
    if len(set(columns.values())) >= 2:  # one column per side
        out = []
        for j, side in columns.items():
            text = "\n".join(f"{row[0]}: {row[j]}" for row in rows if j < len(row) and row[0] != row[j])
            out.append(Piece(side, text, paragraph=paragraph))
        return out
    by_row = [(_only_side(row[0], patterns) if row else None, row) for row in rows]
    if any(side is not None for side, _ in by_row):  # one row per side
        return [Piece(side, "\n".join([lines[0], lines[1], lines[2 + i]]), paragraph=paragraph)
                for i, (side, _) in enumerate(by_row) if side is not None]
    return [Piece(current, "\n".join(lines), paragraph=paragraph)] if current is not None else []


def _heading_side(line: str, named: list[tuple[int, int, int]]) -> int | None:
    """The side a heading line opens: a short marked line ("### H200", "**On the H200**", "If you
    switch to fp8:") that says little more than one side's name — or a change from one side to
    another ("**What if bf16 → fp8?**"), which opens the second."""
    if not named:
        return None
    if len({side for _, _, side in named}) > 1:
        if len(named) != 2 or not _ARROW.search(line[named[0][1]:named[1][0]]):
            return None
    text = _CITATION.sub("", line).strip()
    marked = text.startswith("#") or (text.startswith("**") and text.rstrip(":").endswith("**")) or text.endswith(":")
    rest, last = "", 0
    for start, end, _ in named:
        rest, last = rest + " " + line[last:start], end
    rest = _MARKUP.sub(" ", _CITATION.sub("", rest + " " + line[last:])).strip()
    ok = marked and len(text) <= HEADING_CHARS and len(rest.split()) <= HEADING_WORDS and not re.search(r"\d", rest)
    return named[-1][2] if ok else None


def pieces(answer: str, labels: list[list[str]]) -> list[Piece]:
    """What the answer says about each side (labels: each side's name alternatives), in order."""
    patterns = [label_pattern(alts) for alts in labels]
    out: list[Piece] = []
    section: int | None = None  # the side a heading opened
    current: int | None = None  # the side the paragraph last named
    paragraph = 0
    lines = answer.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].strip():  # a paragraph ends: back to the heading's side
            current, paragraph = section, paragraph + 1
            i += 1
            continue
        if lines[i].lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            paragraph += 1
            out += [p for p in _table_pieces(lines[i:j], patterns, current, paragraph) if p.text.strip()]
            paragraph += 1
            i = j
            continue
        line = lines[i]
        asides = [m.span() for m in _ASIDE.finditer(line)]
        named = [n for n in _named(line, patterns) if not any(a <= n[0] < b for a, b in asides)]
        heading = _heading_side(line, named)
        if heading is not None:
            section = current = heading
            paragraph += 1
            out.append(Piece(current, line, len(named) > 1, paragraph))
            i += 1
            continue
        shared = len({side for _, _, side in named}) > 1 or bool(_COMPARES.search(line))
        # Words before the line's first name and without a number ("- On the ", "For ") lead into it.
        lead_in = bool(named) and not re.search(r"\d", line[:named[0][0]])
        cuts = [(0, named[0][2])] if lead_in else [(0, current)]
        for start, _, side in named:
            if side != cuts[-1][1]:
                cuts.append((start, side))
        for k, (start, side) in enumerate(cuts):
            end = cuts[k + 1][0] if k + 1 < len(cuts) else len(line)
            if side is not None and line[start:end].strip():
                out.append(Piece(side, line[start:end], shared, paragraph))
        current = cuts[-1][1]
        i += 1
    return out


def side_texts(answer: str, labels: list[list[str]]) -> list[str]:
    """Each side's text: its pieces, a paragraph each (so one side's plan never reads into another's)."""
    paragraphs: list[dict[int, list[str]]] = [{} for _ in labels]
    for p in pieces(answer, labels):
        paragraphs[p.side].setdefault(p.paragraph, []).append(p.text)
    return ["\n\n".join("\n".join(lines) for lines in side.values()) for side in paragraphs]
