"""`shardwise serve` on a port another process holds is a one-line error, exit 2, before "serving …" is printed
(observed before: "shardwise: serving http://127.0.0.1:PORT/" and then uvicorn's "[Errno 98] … address already in
use", exit 3)."""

import socket

from support.cli_runner import run


def test_a_port_in_use_is_refused_before_serving(capsys, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = run(capsys, "serve", "--port", str(port), "--session-db", str(tmp_path / "s.sqlite3"))
    assert code == 2 and "serving" not in err
    assert err.strip() == (f"shardwise: error: cannot listen on 127.0.0.1:{port}: Address already in use (another "
                           "server may hold the port); pick another with --port")
