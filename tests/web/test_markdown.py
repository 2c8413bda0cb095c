"""Chat answers are model output: markdown renders, but nothing executable survives."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from shardwise.web.markdown import render_markdown


def test_markdown_renders_emphasis_lists_code_and_tables():
    html = render_markdown("**TP=8** wins:\n\n- fits\n- fast\n\n`--tp 8`\n\n| plan | GiB |\n|---|--:|\n| TP8 | 61.2 |")
    for fragment in ("<strong>TP=8</strong>", "<li>fits</li>", "<code>--tp 8</code>", "<table>", "<td style=\"text-align:right\">61.2</td>"):
        assert fragment in html


@pytest.mark.parametrize("attack", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<iframe src='https://evil.example'></iframe>",
    "[click](javascript:alert(1))",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<svg onload=alert(1)>",
    "![x](javascript:alert(1))",
    "<style>body{display:none}</style>",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
])
def test_nothing_executable_survives(attack):
    html = render_markdown(f"before {attack} after")
    elements = Elements()
    elements.feed(html)
    for tag, attrs in elements.found:
        assert tag not in {"script", "img", "iframe", "svg", "style", "object", "embed"}
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name in {"href", "src"}:
                assert (value or "").startswith(("http://", "https://", "mailto:")), value
    assert "before" in html and "after" in html


class Elements(HTMLParser):
    """The tags and attributes a browser would build from the HTML (escaped text is not a tag)."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def test_script_text_is_shown_as_text():
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in render_markdown("<script>alert(1)</script>")


def test_links_open_safely():
    html = render_markdown("[docs](https://example.com/a)")
    assert 'href="https://example.com/a"' in html and "noopener" in html and "noreferrer" in html
