"""The chat's scenario carries the Megatron-Core options the page and the CLI set (grad_reduce_dtype,
fp8_param_gather, recompute_modules): without them the page's chat priced its plan at their defaults."""

from __future__ import annotations

import json

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup
from shardwise.tools import dispatch
from shardwise.tools.scenario import Scenario

BASE = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16}
GIB = 2 ** 30
LLAMA_31_8B_PARAMS = 8_030_261_248  # Meta's model card / HF safetensors total for Llama-3.1-8B


def memory(scenario: dict, plan: dict):
    out = dispatch("evaluate_plan", json.dumps({"scenario": scenario, "plan": plan}), result_id="R1")
    assert out.ok, out.errors
    return out.result.evaluation.memory


def test_the_options_reach_the_training_setup():
    setup = Scenario(**BASE, precision="fp8", grad_reduce_dtype="bf16", fp8_param_gather=True,
                     recompute_modules=["core_attn", "layernorm"]).resolve().setup
    assert (setup.grad_reduce_dtype, setup.fp8_param_gather, setup.recompute_modules) == \
        ("bf16", True, ("core_attn", "layernorm"))
    default = Scenario(**BASE).resolve().setup
    assert (default.grad_reduce_dtype, default.fp8_param_gather, default.recompute_modules) == ("fp32", False, None)


@pytest.mark.parametrize("dtype, bytes_per_grad", [("fp32", 4), ("bf16", 2)])
def test_the_gradient_buffer_is_in_the_reduce_dtype(dtype, bytes_per_grad):
    # TP=1 PP=1 ZeRO-1: Megatron keeps the whole main-gradient buffer on every rank, one element per parameter
    m = memory({**BASE, "grad_reduce_dtype": dtype}, {"tp": 1, "zero": 1})
    assert m.gradients_gib == pytest.approx(LLAMA_31_8B_PARAMS * bytes_per_grad / GIB, rel=1e-3)


def test_fp8_param_gather_is_priced_as_the_engine_prices_it():
    plan = {"tp": 1, "zero": 1}
    scenario = {**BASE, "precision": "fp8", "fp8_param_gather": True}
    direct = evaluate(get_model("llama-3.1-8b"), build_cluster("h100", 16),
                      TrainingSetup(precision="fp8", fp8_param_gather=True), Strategy(tp=1, zero_stage=1))
    assert memory(scenario, plan).weights_gib == direct.memory.weights_gib
    assert memory(scenario, plan).weights_gib < memory({**BASE, "precision": "fp8"}, plan).weights_gib


def test_an_unknown_recompute_module_is_one_clear_line():
    out = dispatch("evaluate_plan", json.dumps({"scenario": {**BASE, "recompute_modules": ["attn"]}, "plan": {}}),
                   result_id="R1")
    assert not out.ok and len(out.errors) == 1
    assert "attn" in out.errors[0] and "core_attn, layernorm, mla_up_proj, moe_act" in out.errors[0]


def test_the_pages_options_survive_a_chat_what_if(make_service_page):
    """The page seeds the chat with its form (web/chat.seed_scenario); "what if H200s?" keeps the options."""
    service, session = make_service_page({**BASE, "grad_reduce_dtype": "bf16", "recompute_modules": ["core_attn"]})
    done = next(e for e in service.stream("what if we had h200s?", session) if type(e).__name__ == "DoneEvent")
    scenarios = [c["arguments"].get("scenario") or {} for c in done.tool_calls]
    assert scenarios and all(s.get("grad_reduce_dtype") == "bf16" and s.get("recompute_modules") == ["core_attn"]
                             for s in scenarios)


@pytest.fixture
def make_service_page(tmp_path):
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService
    from shardwise.web.chat import seed_scenario

    def make(scenario: dict):
        service = ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3", model=None))
        return service, seed_scenario(service, None, scenario)
    return make
