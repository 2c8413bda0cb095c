"""Conversation state per session in a SQL database: a SQLite file by default, any server database
SQLAlchemy speaks to (PostgreSQL, MySQL) when `session_db` is a SQLAlchemy URL.

One store is shared safely by several processes (uvicorn workers, a CLI beside a server, several
servers on one database). With SQLite: WAL journal (readers never block the writer), a busy
timeout (a writer that finds the lock taken waits), and every write in a BEGIN IMMEDIATE
transaction. With a server database: every write locks its session's row (SELECT … FOR UPDATE)
before it reads the counters it increments. A session holds:

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
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from ..engine.errors import ShardwiseInputError

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's transaction
# "postgresql+psycopg://user@host/db", "sqlite:///path": a SQLAlchemy URL, not a file name
DATABASE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

METADATA = sa.MetaData()
SESSIONS = sa.Table(
    "sessions", METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
    sa.Column("state", sa.Text, nullable=False, server_default="{}"),
    sa.Column("result_counter", sa.Integer, nullable=False, server_default="0"),
)
MESSAGES = sa.Table(
    "messages", METADATA,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("message", sa.Text, nullable=False),
)


def is_database_url(where: str | Path) -> bool:
    return isinstance(where, str) and bool(DATABASE_URL.match(where.strip()))


def database_url(where: str | Path) -> sa.URL:
    """A SQLAlchemy URL as given, or a file path as a SQLite URL."""
    if is_database_url(where):
        try:
            return sa.make_url(str(where).strip())
        except SQLAlchemyError as exc:
            raise ShardwiseInputError(f"the session database URL is not valid: {exc}") from None
    return sa.URL.create("sqlite", database=str(Path(where).expanduser()))


def shown(url: sa.URL) -> str:
    """The URL without its password, for messages."""
    return url.render_as_string(hide_password=True)


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # the driver's own BEGIN is off: ours below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA journal_mode=WAL")  # stored in the file; a no-op once set
        cursor.execute("PRAGMA foreign_keys=ON")
        # In WAL mode NORMAL syncs at checkpoints, not at every commit: a crash of the server loses
        # nothing; a power cut may lose the last turns (SQLite's documented trade-off for WAL).
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        # A write takes the lock when it begins, not at its first write, so two writers never
        # deadlock upgrading their read locks; reads stay deferred and never wait.
        write = connection.get_execution_options().get("shardwise_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


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
    def __init__(self, where: str | Path):
        """`where`: a SQLite file path, or a SQLAlchemy URL (postgresql+psycopg://user:pass@host/db)."""
        self.url = database_url(where)
        self.path = Path(self.url.database) if self.url.get_backend_name() == "sqlite" and self.url.database else None
        try:
            if self.url.get_backend_name() == "sqlite":
                if self.path is not None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                self.engine = _sqlite_engine(self.url)
            else:
                self.engine = sa.create_engine(self.url, pool_pre_ping=True)
            METADATA.create_all(self.engine)
        except ImportError as exc:
            raise ShardwiseInputError(f"the session database {shown(self.url)} needs a driver that is not installed "
                                      f"({exc.name}); e.g. pip install 'psycopg[binary]' for PostgreSQL") from None
        except (SQLAlchemyError, OSError) as exc:
            reason = getattr(exc, "orig", None) or exc
            raise ShardwiseInputError(f"cannot open the session database {shown(self.url)}: {reason}") from None

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with self.engine.connect().execution_options(shardwise_write=True) as db, db.begin():
            yield db

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        with self.engine.connect() as db, db.begin():
            yield db

    def _locked_counter(self, db: sa.Connection, session_id: str) -> int:
        """The session's result counter, its row locked for this transaction (KeyError if unknown)."""
        row = db.execute(sa.select(SESSIONS.c.result_counter).where(SESSIONS.c.id == session_id)
                         .with_for_update()).first()
        if row is None:
            raise KeyError(session_id)
        return row[0]

    # -- sessions -------------------------------------------------------------------------
    def open(self, session_id: str | None = None) -> Session:
        """The session with that id (created if new), or a new one with a fresh id."""
        session_id = new_session_id() if session_id is None else check_session_id(session_id)
        now = time.time()
        try:
            with self._write() as db:
                if db.execute(sa.select(SESSIONS.c.id).where(SESSIONS.c.id == session_id)).first() is None:
                    db.execute(SESSIONS.insert().values(id=session_id, created=now, updated=now, state="{}",
                                                        result_counter=0))
        except IntegrityError:  # another process created it between our look and our insert
            pass
        return self.load(session_id)

    def load(self, session_id: str) -> Session:
        with self._read() as db:
            row = db.execute(sa.select(SESSIONS.c.state, SESSIONS.c.created, SESSIONS.c.updated)
                             .where(SESSIONS.c.id == session_id)).first()
            if row is None:
                raise KeyError(session_id)
            rows = db.execute(sa.select(MESSAGES.c.turn, MESSAGES.c.message)
                              .where(MESSAGES.c.session_id == session_id).order_by(MESSAGES.c.seq)).all()
        return Session(id=session_id, state=json.loads(row[0]), created=row[1], updated=row[2],
                       messages=[(turn, json.loads(m)) for turn, m in rows])

    def exists(self, session_id: str) -> bool:
        with self._read() as db:
            return db.execute(sa.select(SESSIONS.c.id).where(SESSIONS.c.id == session_id)).first() is not None

    def delete(self, session_id: str) -> None:
        with self._write() as db:
            db.execute(MESSAGES.delete().where(MESSAGES.c.session_id == session_id))
            db.execute(SESSIONS.delete().where(SESSIONS.c.id == session_id))

    def list_sessions(self) -> list[tuple[str, float]]:
        with self._read() as db:
            rows = db.execute(sa.select(SESSIONS.c.id, SESSIONS.c.updated).order_by(SESSIONS.c.updated.desc())).all()
        return [(r[0], r[1]) for r in rows]

    # -- writes ---------------------------------------------------------------------------
    def next_result_ids(self, session_id: str, count: int = 1) -> list[str]:
        """Reserve `count` result ids ("R7", "R8", …), unique within the session across processes."""
        with self._write() as db:
            start = self._locked_counter(db, session_id)
            db.execute(SESSIONS.update().where(SESSIONS.c.id == session_id).values(result_counter=start + count))
        return [f"R{start + i + 1}" for i in range(count)]

    def append_turn(self, session_id: str, messages: list[dict], state: dict | None = None) -> int:
        """Store one turn's messages (and the new state) atomically; returns the turn number."""
        payload = [json.dumps(m, ensure_ascii=False) for m in messages]
        values: dict = {"updated": time.time()}
        if state is not None:
            values["state"] = json.dumps(state, ensure_ascii=False)
        with self._write() as db:
            self._locked_counter(db, session_id)  # the row lock orders concurrent appends to this session
            turn, seq = db.execute(sa.select(sa.func.coalesce(sa.func.max(MESSAGES.c.turn), 0),
                                             sa.func.coalesce(sa.func.max(MESSAGES.c.seq), 0))
                                   .where(MESSAGES.c.session_id == session_id)).one()
            turn += 1
            if payload:
                db.execute(MESSAGES.insert(), [{"session_id": session_id, "seq": seq + i + 1, "turn": turn,
                                                "message": text} for i, text in enumerate(payload)])
            db.execute(SESSIONS.update().where(SESSIONS.c.id == session_id).values(**values))
        return turn
