"""The application around the endpoints: settings, the page, headers, secrets, `shardwise serve`."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from shardwise.cli.main import build_parser
from shardwise.cli.serve import settings_env
from shardwise.engine.errors import ShardwiseInputError
from shardwise.web.app import create_app
from shardwise.web.settings import Settings


def test_settings_from_the_environment():
    s = Settings.from_env({"SHARDWISE_CORS_ORIGINS": "https://a.example/, https://b.example",
                           "SHARDWISE_RATE_LIMIT_PER_MINUTE": "30", "SHARDWISE_MAX_BODY_BYTES": "2048",
                           "SHARDWISE_CHAT_DEADLINE_S": "5.5", "SHARDWISE_SESSION_DB": "/tmp/x.sqlite3"})
    assert s.cors_origins == ("https://a.example", "https://b.example")
    assert (s.rate_limit_per_minute, s.max_body_bytes, s.chat_deadline_s) == (30, 2048, 5.5)
    assert str(s.session_db) == "/tmp/x.sqlite3"
    assert Settings.from_env({}) == Settings(session_db=Settings().session_db)


def test_load_settings_and_a_database_url_from_the_environment():
    url = "postgresql+psycopg://shardwise:pw@db.internal:5432/sessions"
    s = Settings.from_env({"SHARDWISE_WORK_THREADS": "3", "SHARDWISE_WORK_QUEUE": "10",
                           "SHARDWISE_WORK_MAX_WAIT_S": "2.5", "SHARDWISE_MAX_CHAT_STREAMS": "40",
                           "SHARDWISE_SESSION_DB": url})
    assert (s.work_threads, s.work_queue, s.work_max_wait_s, s.max_chat_streams) == (3, 10, 2.5, 40)
    assert s.session_db == url  # a URL is kept as written (a Path would fold its "//")
    app = create_app(s, chat_service=object())
    assert (app.state.work_pool.workers, app.state.work_pool.max_queue, app.state.active_chats.limit) == (3, 10, 40)


@pytest.mark.parametrize("env,words", [({"SHARDWISE_RATE_LIMIT_PER_MINUTE": "lots"}, "must be a int"),
                                       ({"SHARDWISE_MAX_BODY_BYTES": "-1"}, "must be positive")])
def test_bad_settings_are_named(env, words):
    with pytest.raises(ShardwiseInputError, match=words):
        Settings.from_env(env)


def test_serve_flags_become_settings_for_every_worker():
    args = build_parser().parse_args(["serve", "--port", "9000", "--workers", "3", "--cors-origin", "https://a.example",
                                      "--cors-origin", "https://b.example", "--rate-limit", "60", "--llm-timeout", "20",
                                      "--session-db", "/tmp/s.sqlite3", "--max-body-bytes", "4096"])
    assert (args.port, args.workers, args.host) == (9000, 3, "127.0.0.1")
    env = settings_env(args)
    s = Settings.from_env(env)
    assert s.cors_origins == ("https://a.example", "https://b.example")
    assert (s.rate_limit_per_minute, s.llm_timeout_s, s.max_body_bytes) == (60, 20.0, 4096)


def test_serve_refuses_a_bad_port(capsys):
    from shardwise.cli.main import main

    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be at most 65535" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["serve", "--workers", "0"])


def test_page_has_the_form_the_chat_and_a_content_security_policy(scripted_chat):
    r = TestClient(create_app(Settings(), chat_service=scripted_chat)).get("/")
    assert r.status_code == 200
    for fragment in ('id="scenario"', 'name="gpus_per_node"', 'id="chat"', "/widget.js", 'value="llama-3.1-70b"'):
        assert fragment in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"


def test_form_post_renders_results_without_javascript(scripted_chat):
    client = TestClient(create_app(Settings(), chat_service=scripted_chat))
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "seq_len": "4k", "batch": "256",
            "batch_unit": "sequences", "mode": "full", "precision": "bf16", "framework": "megatron"}
    r = client.post("/", data=form)
    assert r.status_code == 200
    assert "Recommended plan" in r.text and "chart-memory" in r.text and "Alternatives" in r.text
    # The page says when other plans are closer than the model can rank (same count as the engine's).
    from shardwise.engine.inputs import build_cluster, resolve_model
    from shardwise.engine.search import recommend
    from shardwise.engine.training import TrainingSetup
    rec = recommend(resolve_model("llama-3.1-8b"), build_cluster("h100-sxm", 16),
                    TrainingSetup(seq_len=4096, global_batch=256), top_k=1)
    assert rec.near_best > 0  # this scenario has near-ties, so the note must show
    said = "1 other plan is" if rec.near_best == 1 else f"{rec.near_best:,} other plans are"
    assert f"{said} predicted within 5% of this one" in r.text
    bad = client.post("/", data={**form, "seq_len": "long"})
    assert bad.status_code == 400 and "Sequence length expects a number such as 8192 or 8k" in bad.text  # the label
    pasted = client.post("/ui/results", data={**form, "model": "__config__", "config_json": "{not json"})
    assert pasted.status_code == 400 and "not valid JSON" in pasted.text


def test_results_that_do_work_are_rate_limited_but_the_page_is_not(scripted_chat):
    client = TestClient(create_app(Settings(rate_limit_per_minute=60, rate_limit_burst=1), chat_service=scripted_chat))
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8"}
    assert client.post("/ui/results", data=form).status_code == 200
    assert client.post("/ui/results", data=form).status_code == 429
    assert client.get("/").status_code == 200
    assert client.get("/static/app.css").status_code == 200


def test_the_api_key_never_reaches_the_browser(monkeypatch, tmp_path):
    key = "sk-test-do-not-leak-4242"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("SHARDWISE_MODEL", "gpt-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SHARDWISE_SESSION_DB", str(tmp_path / "s.sqlite3"))
    client = TestClient(create_app())
    page = client.get("/")
    assert "LLM: gpt-test" in page.text  # the page says which model answers...
    for path in ("/", "/api/health", "/widget.js", "/static/app.js", "/openapi.json", "/embed"):
        body = client.get(path).text
        assert key not in body and "127.0.0.1:9" not in body, path  # ...never its key or endpoint


@pytest.mark.parametrize("fields,gpus_or_error", [
    ({"gpus": "", "nodes": "4"}, 32),  # an HGX H100 node holds 8 GPUs (the catalog's gpus_per_node)
    ({"gpus": "", "nodes": "4", "gpus_per_node": "4"}, 16),
    ({"gpus": "32", "nodes": "4"}, 32),
    ({"gpus": "64", "nodes": "4"}, "64 GPUs is not 4 nodes × 8 GPUs per node = 32"),
    ({"gpus": "", "nodes": ""}, "give the number of GPUs"),
    ({"gpus": "", "nodes": "two"}, "number of nodes must be a whole number"),
])
def test_nodes_give_the_gpu_count(fields, gpus_or_error):
    from shardwise.web.pages import form_to_request

    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", **fields}
    if isinstance(gpus_or_error, int):
        assert form_to_request(form).gpus == gpus_or_error
    else:
        with pytest.raises(ShardwiseInputError, match=gpus_or_error):
            form_to_request(form)


def test_nothing_fits_says_what_would(scripted_chat):
    client = TestClient(create_app(Settings(), chat_service=scripted_chat))
    # 405 B parameters in bf16 are 810 GB of weights alone; 8 × 24 GB cannot hold them
    r = client.post("/ui/results", data={"model": "llama-3.1-405b", "gpu": "rtx-4090", "gpus": "8"})
    assert r.status_code == 200
    assert "Nothing fits" in r.text and "What would fit" in r.text
    assert 'class="fix-fits"><th scope="row">' in r.text and " GPUs</th><td>fits</td>" in r.text


def test_form_carries_nanotron_and_packed_documents():
    from shardwise.web.pages import form_to_request

    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "framework": "nanotron", "mean_doc_len": "512"}
    req = form_to_request(form)
    assert req.framework == "nanotron" and req.mean_doc_len == 512
    assert form_to_request({**form, "mean_doc_len": ""}).mean_doc_len is None
    with pytest.raises(ShardwiseInputError, match="mean document length must be a whole number"):
        form_to_request({**form, "mean_doc_len": "short"})
