"""Conversation state per session in SQLite (standard library sqlite3).

One file, shared safely by several processes (uvicorn workers, a CLI beside a server):
WAL journal, a busy timeout, and every write in a BEGIN IMMEDIATE transaction, with a
fresh connection per operation so nothing is shared across threads. A session holds:

- `state`: a JSON object owned by the agent — the user's current scenario, the last plan
  and its alternatives — so "what if H200s?" works in the next request, after a restart,
  or on another worker;
- `messages`: the conversation, OpenAI-shaped dicts, grouped into turns (one user message
  and everything answered to it) so history is trimmed a whole turn at a time;
- a counter for result ids ("R1", "R2", …) that stay unique within the session.

Two turns of ONE session running at the same moment both append their messages; the one
that finishes last sets the state.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..engine.errors import ShardwiseInputError

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    state TEXT NOT NULL DEFAULT '{}',
    result_counter INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""


@dataclass
class Session:
    id: str
    state: dict = field(default_factory=dict)
    messages: list[tuple[int, dict]] = field(default_factory=list)  # (turn, message)
    created: float = 0.0
    updated: float = 0.0

    def turns(self) -> list[list[dict]]:
        grouped: dict[int, list[dict]] = {}
        for turn, message in self.messages:
            grouped.setdefault(turn, []).append(message)
        return [grouped[t] for t in sorted(grouped)]


def new_session_id() -> str:
    return "s-" + secrets.token_urlsafe(12).replace("_", "x").replace("-", "y")


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not SESSION_ID.match(session_id):
        raise ShardwiseInputError(
            "a session name is 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit")
    return session_id


class SessionStore:
    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise ShardwiseInputError(f"cannot open the session database {self.path}: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        # In WAL mode NORMAL syncs at checkpoints, not at every commit: a crash of the server loses
        # nothing; a power cut may lose the last turns (SQLite's documented trade-off for WAL).
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with closing(self._connect()) as db:
            db.execute("BEGIN IMMEDIATE")  # take the write lock now, not at the first write
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- sessions -------------------------------------------------------------------------
    def open(self, session_id: str | None = None) -> Session:
        """The session with that id (created if new), or a new one with a fresh id."""
        session_id = new_session_id() if session_id is None else check_session_id(session_id)
        now = time.time()
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO sessions (id, created, updated) VALUES (?, ?, ?)",
                       (session_id, now, now))
        return self.load(session_id)

    def load(self, session_id: str) -> Session:
        with closing(self._connect()) as db:
            row = db.execute("SELECT state, created, updated FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise KeyError(session_id)
            rows = db.execute("SELECT turn, message FROM messages WHERE session_id = ? ORDER BY seq",
                              (session_id,)).fetchall()
        return Session(id=session_id, state=json.loads(row[0]), created=row[1], updated=row[2],
                       messages=[(turn, json.loads(m)) for turn, m in rows])

    def exists(self, session_id: str) -> bool:
        with closing(self._connect()) as db:
            return db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def delete(self, session_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def list_sessions(self) -> list[tuple[str, float]]:
        with closing(self._connect()) as db:
            return db.execute("SELECT id, updated FROM sessions ORDER BY updated DESC").fetchall()

    # -- writes ---------------------------------------------------------------------------
    def next_result_ids(self, session_id: str, count: int = 1) -> list[str]:
        """Reserve `count` result ids ("R7", "R8", …), unique within the session across processes."""
        with self._write() as db:
            row = db.execute("SELECT result_counter FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise KeyError(session_id)
            start = row[0]
            db.execute("UPDATE sessions SET result_counter = ? WHERE id = ?", (start + count, session_id))
        return [f"R{start + i + 1}" for i in range(count)]

    def append_turn(self, session_id: str, messages: list[dict], state: dict | None = None) -> int:
        """Store one turn's messages (and the new state) atomically; returns the turn number."""
        payload = [json.dumps(m, ensure_ascii=False) for m in messages]
        state_text = json.dumps(state, ensure_ascii=False) if state is not None else None
        with self._write() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise KeyError(session_id)
            row = db.execute("SELECT COALESCE(MAX(turn), 0), COALESCE(MAX(seq), 0) FROM messages WHERE session_id = ?",
                             (session_id,)).fetchone()
            turn, seq = row[0] + 1, row[1]
            db.executemany("INSERT INTO messages (session_id, seq, turn, message) VALUES (?, ?, ?, ?)",
                           [(session_id, seq + i + 1, turn, text) for i, text in enumerate(payload)])
            if state_text is not None:
                db.execute("UPDATE sessions SET state = ?, updated = ? WHERE id = ?",
                           (state_text, time.time(), session_id))
            else:
                db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time(), session_id))
        return turn
