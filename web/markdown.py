"""Chat answers as HTML: markdown rendered with raw HTML disabled, then sanitised by an allow-list.

Two layers because model output is untrusted: markdown-it never passes HTML through
(`html=False` escapes it), and nh3 (ammonia) removes any tag, attribute or URL scheme that
is not on the list below, so even a renderer bug cannot let a script, an event handler or a
`javascript:` link reach the page.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

# What an answer needs: paragraphs, emphasis, lists, code, tables, headings, quotes and links.
ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"style"}, "td": {"style"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
# markdown-it aligns table cells with style="text-align:…"; nothing else may be styled.
ALLOWED_STYLE_PROPERTIES = {"text-align"}

_renderer = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table").enable("strikethrough")


def render_markdown(text: str) -> str:
    """Safe HTML for a chat answer."""
    raw = _renderer.render(text or "")
    return nh3.clean(raw, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     filter_style_properties=ALLOWED_STYLE_PROPERTIES, link_rel="noopener noreferrer nofollow")
