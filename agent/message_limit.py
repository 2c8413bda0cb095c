"""What a user whose message is over the length limit is told, the same in the chat (CLI, page, REST /api/chat).

A long message is usually a pasted Hugging Face config.json. The chat cannot take one that long, so the message
says where a config.json does go on each surface: the page's Model list ("Paste a Hugging Face config.json…",
web/templates/_form.html), the `model` field of a REST body (web/schemas.py: a JSON object or its text), and the
CLI's --model; and how to name a catalog model in a few characters instead.
"""

from __future__ import annotations

from ..engine.catalog_listing import catalog_hint
from ..engine.model_catalog import model_ids

CONFIG_GOES = ("A model outside the catalog goes in as its Hugging Face config.json: on the page, the Model list's "
               "\"Paste a Hugging Face config.json…\" (or load the file); over REST, the `model` field of "
               "POST /api/recommend or /api/evaluate; on the command line, `shardwise evaluate --model config.json`.")


def too_long_message(length: int, limit: int) -> str:
    return (f"the message is {length:,} characters long; the limit is {limit:,}. Shorten it: ask one question at a "
            f"time and name the model by {catalog_hint('model', len(model_ids()))}. {CONFIG_GOES}")
