"""The alternatives table gives the step in seconds, as the summary above it does: it read "Step ms 56,330" under a
"Step time 56.33 s" (the same plan, two units). Sorting still goes by the exact value (data-value, ms)."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.pages import DEFAULT_FORM
from shardwise.web.settings import Settings


def test_the_table_step_is_the_summary_step_in_seconds():
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    page = html.unescape(client.post("/ui/results", data={**DEFAULT_FORM, "model": "llama-3.1-8b", "gpus": "8"}).text)
    assert "<button type=\"button\">Step s</button>" in page and "Step ms" not in page
    summary = re.search(r"<dt>Step time</dt><dd>([\d.,]+) <small>s</small>", page).group(1)
    winner = page.split('<tr class="winner">', 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r'<td data-value="([^"]*)">([^<]*)</td>', winner)
    step_ms, shown = cells[3]  # #, plan, memory, step, tokens/s, MFU
    assert shown == summary  # e.g. 13.42 = 13,420 ms / 1000, two decimals as the summary
    assert float(shown.replace(",", "")) == round(float(step_ms) / 1000, 2)
