"""SQLite sessions: state and turns survive reopening, ids stay unique across processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import uuid

import pytest

from shardwise.agent.sessions import SessionStore, check_session_id
from shardwise.engine.errors import ShardwiseInputError


def test_state_and_turns_survive_a_new_store_object(tmp_path):
    db = tmp_path / "s.sqlite3"
    store = SessionStore(db)
    s = store.open("team-a")
    assert s.state == {} and s.messages == []
    store.append_turn("team-a", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
                      state={"scenario": {"gpu": "h100"}})
    store.append_turn("team-a", [{"role": "user", "content": "and H200?"}], state=None)
    again = SessionStore(db).load("team-a")  # as another worker or after a restart would see it
    assert again.state == {"scenario": {"gpu": "h100"}}
    assert [len(t) for t in again.turns()] == [2, 1]
    assert again.turns()[1][0]["content"] == "and H200?"


def test_new_sessions_get_fresh_ids(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    a, b = store.open(), store.open()
    assert a.id != b.id and check_session_id(a.id) == a.id


@pytest.mark.parametrize("bad", ["", "../etc", "a" * 65, "has space", "-lead"])
def test_bad_session_names_are_refused(tmp_path, bad):
    with pytest.raises(ShardwiseInputError, match="session name"):
        SessionStore(tmp_path / "s.db").open(bad)


def test_unknown_session_is_a_key_error(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    with pytest.raises(KeyError):
        store.load("nope")
    with pytest.raises(KeyError):
        store.append_turn("nope", [{"role": "user", "content": "x"}])


def test_unusable_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ShardwiseInputError, match="cannot open the session database"):
        SessionStore(blocker / "sub" / "s.db")


def _worker(where: str, session: str, worker: int, turns: int, queue, start) -> None:
    store = SessionStore(where)
    start.wait(30)  # all four begin together, so their writes really contend
    ids = []
    for i in range(turns):
        ids += store.next_result_ids(session, 2)
        store.append_turn(session, [{"role": "user", "content": f"w{worker}-t{i}"},
                                    {"role": "assistant", "content": "ok"}], state={"last": worker})
    queue.put(ids)


@pytest.fixture(params=["sqlite", "server"])
def where(request, tmp_path):
    """A SQLite file; and, when SHARDWISE_TEST_DATABASE_URL names one (e.g. a scratch PostgreSQL,
    postgresql+psycopg://user@127.0.0.1:5432/db), a server database through its SQLAlchemy URL."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    url = os.environ.get("SHARDWISE_TEST_DATABASE_URL")
    if not url:
        pytest.skip("no server database given (SHARDWISE_TEST_DATABASE_URL)")
    return url


def test_four_processes_append_to_one_session_and_no_turn_is_lost_or_interleaved(where):
    session = f"shared-{uuid.uuid4().hex[:12]}"  # a server database outlives the test
    SessionStore(where).open(session)
    ctx = mp.get_context("spawn")  # fresh interpreters, as uvicorn starts its workers
    queue, start = ctx.Queue(), ctx.Barrier(4)
    workers = [ctx.Process(target=_worker, args=(where, session, w, 15, queue, start)) for w in range(4)]
    for p in workers:
        p.start()
    ids = [i for _ in workers for i in queue.get(timeout=120)]
    for p in workers:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(ids) == len(set(ids)) == 4 * 15 * 2  # no id handed out twice
    assert sorted(int(i[1:]) for i in ids) == list(range(1, 121))
    stored = SessionStore(where).load(session)
    turns = stored.turns()
    assert len(turns) == 60 and all(len(t) == 2 and t[0]["role"] == "user" for t in turns)  # turns never interleave
    assert sorted(t[0]["content"] for t in turns) == sorted(f"w{w}-t{i}" for w in range(4) for i in range(15))
    # each worker's own turns are stored in the order it made them
    for w in range(4):
        mine = [int(t[0]["content"].split("-t")[1]) for t in turns if t[0]["content"].startswith(f"w{w}-")]
        assert mine == list(range(15))
    assert stored.state["last"] in range(4)


def test_the_basic_operations_on_either_database(where):
    store = SessionStore(where)
    name = f"team-{uuid.uuid4().hex[:12]}"
    store.open(name)
    store.open(name)  # opening again keeps it
    assert store.exists(name) and name in {sid for sid, _ in store.list_sessions()}
    assert store.append_turn(name, [{"role": "user", "content": "ünïcode ✓"}], state={"gpu": "h100"}) == 1
    assert store.next_result_ids(name, 3) == ["R1", "R2", "R3"]
    loaded = SessionStore(where).load(name)
    assert loaded.turns() == [[{"role": "user", "content": "ünïcode ✓"}]] and loaded.state == {"gpu": "h100"}
    store.delete(name)
    assert not store.exists(name)
    with pytest.raises(KeyError):
        store.next_result_ids(name)


def test_an_unreachable_server_database_is_a_clear_error():
    with pytest.raises(ShardwiseInputError, match=r"cannot open the session database postgresql\+psycopg://u:\*\*\*@127.0.0.1:9/x"):
        SessionStore("postgresql+psycopg://u:secret@127.0.0.1:9/x")  # the discard port: refused at once


def test_the_store_is_in_wal_mode_with_a_busy_timeout(tmp_path):
    """What lets several worker processes share the file: readers never block the writer, and a
    writer that finds the lock taken waits instead of failing."""
    import sqlite3
    from contextlib import closing

    from shardwise.agent.sessions import BUSY_TIMEOUT_S

    store = SessionStore(tmp_path / "s.db")
    with closing(sqlite3.connect(tmp_path / "s.db")) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
    with store.engine.connect() as db:
        assert db.exec_driver_sql("PRAGMA busy_timeout").scalar() == int(BUSY_TIMEOUT_S * 1000) >= 5000
