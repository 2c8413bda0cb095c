"""A profile measured on another GPU applies on neither side of a what-if that changes the GPU: both sides are the
shipped calibration, so the ratio is like with like and no "applies differently" warning is due (it was printed
because the two "not applied" reasons name different GPUs)."""

import json

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k", "--global-batch", "512"]
A100_PROFILE = {"gpu": "a100-80gb", "precision": "bf16", "framework": "megatron", "compute_scale": 0.9}


def test_a_profile_applied_on_neither_side_gives_no_warning(capsys, tmp_path):
    path = tmp_path / "a100.json"
    path.write_text(json.dumps(A100_PROFILE))
    code, out, err = run(capsys, "what-if", *SCENARIO, "--change", "gpu=h200", "--profile", path)
    assert code == 0, err
    assert out.count("profile not applied") == 2 and "applies differently" not in out


def test_the_chat_says_a_profile_applied_on_neither_side(tmp_path):
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService
    from shardwise.engine.calibration.profile import CalibrationProfile

    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"), profile=CalibrationProfile(**A100_PROFILE))
    done = list(service.stream("70B on 64 H100s, 8k, gbs 512: what if we had H200s?", None))[-1]
    assert "applies on neither side" in done.answer and "applies differently" not in done.answer
