"""The page's script reads a length as the server does: app.js `tokenLength` against engine.inputs.parse_seq_len
(the one reading of "8k" for the CLI, REST and the form). It sent the chat seq_len 1 for "1,024" and "1e4"."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import shardwise
from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.inputs import parse_seq_len

APP_JS = Path(shardwise.__file__).parent / "web" / "static" / "app.js"
CASES = ["8192", "8k", "8K", " 32k ", "0.5k", "1,024", "1_024", "1e4", "8.3k", "3.5", "0", "-1k", "k", "", "abc", "infk"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_token_length_reads_as_the_engine_does():
    source = APP_JS.read_text(encoding="utf-8")
    function = re.search(r"  function tokenLength\(text\) \{.*?\n  \}\n", source, re.S).group(0)
    script = function + f"console.log(JSON.stringify({json.dumps(CASES)}.map(tokenLength)));"
    read = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)

    def engine(text: str) -> int | None:
        try:
            return parse_seq_len(text)
        except ShardwiseInputError:
            return None

    assert read == [engine(c) for c in CASES]
    assert read[:2] == [8192, 8 * 1024] and read[5] == 1024  # "1,024" is 1,024 tokens, not 1
