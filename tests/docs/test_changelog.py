"""CHANGELOG.md (Keep a Changelog): an Unreleased section whose first heading is the breaking changes, the
measured-MFU unit first among them, linked from the README; and the MFU entry says what the CLI does (run here)."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli_runner import run

ROOT = Path(__file__).parents[2]


def test_the_changelog_opens_with_the_breaking_mfu_change_and_the_readme_links_it():
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^(##+) (.+)$", text, flags=re.MULTILINE)
    assert headings[:2] == [("##", "[Unreleased]"), ("###", "Changed (breaking)")]  # "# Changelog" is level 1
    first_entry = text.split("### Changed (breaking)", 1)[1].split("\n- ", 2)[1]
    assert first_entry.startswith("**Measured MFU is a fraction of the dense peak**")
    assert "[CHANGELOG.md](CHANGELOG.md)" in (ROOT / "README.md").read_text()


def test_the_mfu_entry_matches_the_cli(capsys):
    # the entry: "--measured-mfu 45 ... is now refused in one line that names the fraction to give"
    code, _, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len",
                       "8k", "--global-batch", "512", "--tp", "4", "--pp", "4", "--measured-mfu", "45")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "for 45 % give 0.45" in err
