"""The documented `--json` contract (README "Output contract", issues 2, 3 and 5), key by key
with types, for `evaluate`, `recommend`, `models`, `gpus` and `ask` — and the identities the
numbers must satisfy by definition (categories add up to the total, time parts to the step,
DP = GPUs / (TP·CP·PP), ...). Expectations come from the contract text, never from a run."""

from __future__ import annotations

import json
import math

import pytest

from shardwise.cli.main import main

NUMBER = (int, float)
MODEL = {"name": str, "params": int, "active_params": int, "approximate": bool}
CLUSTER = {"gpu": str, "num_gpus": int, "gpus_per_node": int, "gpu_memory_gib": NUMBER, "network": str,
           "num_nodes": int}
STRATEGY = {"tp": int, "pp": int, "vpp": int, "cp": int, "ep": int, "etp": int, "dp": int, "zero_stage": int,
            "micro_batch": int, "grad_accum": int, "recompute": str, "sequence_parallel": bool, "hsdp_replicas": int}
VIOLATION = {"rule": str, "message": str}
MEMORY = {"weights_gib": NUMBER, "gradients_gib": NUMBER, "optimizer_gib": NUMBER, "activations_gib": NUMBER,
          "other_gib": NUMBER, "total_gib": NUMBER, "capacity_gib": NUMBER, "fits": bool, "details_gib": dict}
TIME = {"step_s": NUMBER, "compute_s": NUMBER, "tp_comm_s": NUMBER, "cp_comm_s": NUMBER, "ep_comm_s": NUMBER,
        "pp_bubble_s": NUMBER, "pp_comm_s": NUMBER, "dp_comm_s": NUMBER, "optimizer_s": NUMBER,
        "optimizer_phase_s": NUMBER,
        "rollout_s": NUMBER, "reference_s": NUMBER, "old_logprob_s": NUMBER, "reward_s": NUMBER, "critic_s": NUMBER}
THROUGHPUT = {"tokens_per_s": NUMBER, "tokens_per_s_per_gpu": NUMBER, "mfu": NUMBER, "hfu": NUMBER,
              "model_tflops_per_gpu": NUMBER}
COST = {"price_per_gpu_hour": NUMBER, "price_source": str, "cluster_cost_per_hour": NUMBER,
        "cost_per_billion_tokens": NUMBER, "train_tokens": (NUMBER, type(None)), "time_to_train_s": (NUMBER, type(None)),
        "time_to_train_days": (NUMBER, type(None)), "gpu_hours": (NUMBER, type(None)),
        "total_cost": (NUMBER, type(None))}
CATEGORIES = ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "other_gib")
TIME_PARTS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_bubble_s", "pp_comm_s", "dp_comm_s",
              "optimizer_s", "optimizer_phase_s", "rollout_s", "reference_s", "old_logprob_s", "reward_s", "critic_s")
RECOMPUTE = {"none", "selective", "full"}
# GPU ids the issue names as stable (issue 2, "CLI and output contract").
STABLE_GPU_IDS = {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h800", "h200", "b200", "gb200", "mi300x"}


def run_json(capsys, *argv):
    code = main([str(a) for a in argv] + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def has(obj: dict, keys: dict, where: str) -> None:
    assert isinstance(obj, dict), where
    for key, kind in keys.items():
        assert key in obj, f"{where}.{key} missing"
        value = obj[key]
        assert isinstance(value, kind) and not (kind in (int, NUMBER) and isinstance(value, bool)), \
            f"{where}.{key} = {value!r} is not {kind}"


def check_evaluation(e: dict, where: str = "evaluate") -> None:
    """Every documented key with its type, and the contract's identities."""
    has(e, {"model": dict, "cluster": dict, "strategy": dict, "valid": bool, "violations": list, "warnings": list,
            "memory": dict}, where)
    has(e["model"], MODEL, f"{where}.model")
    has(e["cluster"], CLUSTER, f"{where}.cluster")
    has(e["strategy"], STRATEGY, f"{where}.strategy")
    has(e["memory"], MEMORY, f"{where}.memory")
    for v in e["violations"] + e["warnings"]:
        has(v, VIOLATION, f"{where}.violations")
    for key in ("time", "throughput", "cost"):
        assert key in e, f"{where}.{key} missing (null when invalid)"
    c, s, m = e["cluster"], e["strategy"], e["memory"]
    assert e["model"]["active_params"] <= e["model"]["params"]
    assert s["recompute"] in RECOMPUTE
    assert c["num_nodes"] == math.ceil(c["num_gpus"] / c["gpus_per_node"])
    # memory: the five categories add up to the peak; details refine the categories
    assert sum(m[k] for k in CATEGORIES) == pytest.approx(m["total_gib"], rel=1e-9, abs=1e-9)
    for k in CATEGORIES:
        part = sum(v for name, v in m["details_gib"].items() if name.startswith(k.removesuffix("_gib") + "."))
        assert part == pytest.approx(m[k], rel=1e-9, abs=1e-9), k
    assert m["capacity_gib"] == c["gpu_memory_gib"]
    assert (e["valid"] is True) == (not e["violations"])
    if not e["valid"]:
        assert e["time"] is None and e["throughput"] is None
        return
    # a valid plan: DP = GPUs / (TP·CP·PP), and the global batch = DP · micro-batch · grad-accum
    assert s["dp"] * s["tp"] * s["cp"] * s["pp"] == c["num_gpus"]
    assert m["fits"] == (m["total_gib"] <= m["capacity_gib"])  # evaluate: no headroom
    has(e["time"], TIME, f"{where}.time")
    has(e["throughput"], THROUGHPUT, f"{where}.throughput")
    has(e["cost"], COST, f"{where}.cost")
    t, tp = e["time"], e["throughput"]
    assert all(t[k] >= 0 for k in TIME_PARTS) and t["step_s"] > 0
    assert sum(t[k] for k in TIME_PARTS) == pytest.approx(t["step_s"], rel=1e-9)
    assert tp["tokens_per_s_per_gpu"] * c["num_gpus"] == pytest.approx(tp["tokens_per_s"], rel=1e-9)
    assert 0 < tp["mfu"] <= tp["hfu"] <= 1
    # tokens per step = DP · micro-batch · grad-accum sequences (times the sequence length, which the
    # object does not carry: the ratio must be a whole number of tokens per sequence)
    sequences = s["dp"] * s["micro_batch"] * s["grad_accum"]
    seq_len = tp["tokens_per_s"] * t["step_s"] / sequences
    assert seq_len == pytest.approx(round(seq_len), rel=1e-9)


EVALUATE_CASES = {
    "dense TP+PP": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 16, "--tp", 2, "--pp", 2],
    "interleaved": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 16, "--pp", 4, "--vpp", 2, "--zero", 0],
    "MoE EP": ["--model", "mixtral-8x7b", "--gpu", "h100", "--gpus", 16, "--ep", 8, "--tp", 2, "--zero", 3],
    "MLA MoE": ["--model", "deepseek-v2-lite", "--gpu", "h100", "--gpus", 8, "--ep", 8],
    "fsdp CP": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 8, "--framework", "fsdp", "--zero", 3,
                "--cp", 2, "--seq-len", "16k"],
    "deepspeed qlora": ["--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--gpus", 8, "--framework", "deepspeed",
                        "--mode", "qlora", "--zero", 2],
    "fp8 full recompute": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 8, "--precision", "fp8",
                           "--recompute", "full", "--tp", 2],
    "synthetic": ["--params", "3e9", "--gpu", "l40s", "--gpus", 4],
    "train tokens": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 8, "--tp", 2, "--train-tokens", "1T"],
    # invalid but priced: 256 sequences are not divisible by DP·micro-batch = (8 / 2)·3 = 12 (degrees that do
    # not divide the GPUs, e.g. TP=3 on 8, are refused instead: tests/cli/test_plan_without_whole_dp.py)
    "invalid": ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 8, "--tp", 2, "--micro-batch", 3,
                "--global-batch", 256],
    "does not fit": ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", 8],
}


@pytest.mark.parametrize("name", EVALUATE_CASES)
def test_evaluate_json_contract(capsys, name):
    e = run_json(capsys, "evaluate", *EVALUATE_CASES[name])
    check_evaluation(e)
    assert e["valid"] == (name != "invalid")  # each case exercises what its name says
    if name != "invalid":
        assert e["memory"]["fits"] == (name != "does not fit")


def test_evaluate_echoes_the_plan_it_was_given(capsys):
    e = run_json(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 32, "--tp", 2, "--pp", 2,
                 "--cp", 2, "--zero", 2, "--micro-batch", 2, "--recompute", "full", "--no-sp", "--seq-len", 8192,
                 "--global-batch", 256)
    s = e["strategy"]
    assert (s["tp"], s["pp"], s["cp"], s["zero_stage"], s["micro_batch"], s["recompute"], s["sequence_parallel"]) \
        == (2, 2, 2, 2, 2, "full", False)
    assert s["dp"] == 32 // (2 * 2 * 2) and s["grad_accum"] == 256 // (4 * 2)  # DP 4, 256 / (DP 4 · mb 2) = 32
    assert e["throughput"]["tokens_per_s"] * e["time"]["step_s"] == pytest.approx(256 * 8192)


def test_evaluate_states_the_setup_it_ran_under(capsys):
    # the setup flags come back as given (like recommend's top-level `setup`); the plan's own JSON then
    # says which dispatcher and graphs its numbers assume
    e = run_json(capsys, "evaluate", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", 16, "--ep", 8,
                 "--zero", 1, "--micro-batch", 1, "--seq-len", 4096, "--global-batch", 64, "--precision", "fp8",
                 "--moe-dispatcher", "deepep", "--cuda-graphs", "full-iteration")
    s = e["setup"]
    assert (s["seq_len"], s["global_batch"], s["global_batch_tokens"], s["precision"], s["framework"]) \
        == (4096, 64, 64 * 4096, "fp8", "megatron")
    assert (s["moe_dispatcher"], s["cuda_graphs"], s["mode"]) == ("deepep", "full-iteration", "full")


def test_train_tokens_fill_the_cost(capsys):
    e = run_json(capsys, *["evaluate", *EVALUATE_CASES["train tokens"]])
    assert e["cost"]["train_tokens"] == 1e12 and e["cost"]["time_to_train_s"] > 0


RECOMMEND_TOP = {"model": dict, "cluster": dict, "setup": dict, "headroom": NUMBER, "constraints": dict,
                 "plans": list, "searched": int, "valid": int, "fitting": int, "excluded": dict,
                 "nothing_fits": (dict, type(None))}
SETUP = {"seq_len": int, "global_batch": int, "global_batch_tokens": int, "mode": str, "lora_rank": int,
         "precision": str, "framework": str}


@pytest.mark.parametrize("argv", [
    ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", 8, "--top", 3],
    ["--model", "mixtral-8x7b", "--gpu", "h100", "--gpus", 16, "--top", 2, "--framework", "fsdp"],
], ids=["dense", "moe"])
def test_recommend_json_contract(capsys, argv):
    r = run_json(capsys, "recommend", *argv)
    has(r, RECOMMEND_TOP, "recommend")
    has(r["setup"], SETUP, "recommend.setup")
    has(r["model"], MODEL, "recommend.model")
    has(r["cluster"], CLUSTER, "recommend.cluster")
    assert 1 <= len(r["plans"]) <= int(argv[argv.index("--top") + 1]) and r["nothing_fits"] is None
    for i, plan in enumerate(r["plans"]):
        check_evaluation(plan, f"recommend.plans[{i}]")
        assert plan["valid"] and plan["memory"]["total_gib"] <= plan["memory"]["capacity_gib"] * (1 - r["headroom"])
    steps = [p["time"]["step_s"] for p in r["plans"]]
    assert steps == sorted(steps)  # fastest first
    assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in r["excluded"].items())
    assert r["searched"] == sum(r["excluded"].values()) + r["fitting"]  # docs/search.md
    assert r["fitting"] <= r["valid"] <= r["searched"]


def test_recommend_json_nothing_fits(capsys):
    r = run_json(capsys, "recommend", "--model", "llama-3.1-405b", "--gpu", "rtx-4090", "--gpus", 8)
    has(r, RECOMMEND_TOP, "recommend")
    assert r["plans"] == [] and r["fitting"] == 0
    n = r["nothing_fits"]
    has(n, {"reason": str, "capacity_gib": NUMBER, "usable_gib": NUMBER, "options": list, "blocking": list},
        "nothing_fits")
    assert n["reason"] in ("no_valid_plan", "out_of_memory")
    for o in n["options"]:
        has(o, {"rule": str, "change": dict, "applicable": bool, "fits": bool}, "nothing_fits.options")


def test_models_json_contract(capsys):
    models = run_json(capsys, "models")
    assert isinstance(models, list) and len(models) >= 25  # issue 2: at least 25 popular models
    for m in models:
        has(m, {"id": str, "params": int, "active_params": int}, f"models[{m.get('id')}]")
        assert 0 < m["active_params"] <= m["params"]
    ids = [m["id"] for m in models]
    assert len(ids) == len(set(ids))
    # every id is what --model accepts
    for model_id in ids[:: max(1, len(ids) // 8)]:
        assert run_json(capsys, "models", model_id)["id"] == model_id


def test_gpus_json_contract(capsys):
    gpus = run_json(capsys, "gpus")
    assert isinstance(gpus, list)
    for g in gpus:
        has(g, {"id": str, "memory_gib": NUMBER, "bf16_tflops": NUMBER, "hbm_bandwidth_gbs": NUMBER,
                "gpus_per_node": int}, f"gpus[{g.get('id')}]")
        assert g["id"] == g["id"].lower()
    assert STABLE_GPU_IDS <= {g["id"] for g in gpus}
    for alias in ("H100", "H100 80GB", "h100-sxm5"):  # forgiving aliases (issue 2)
        assert run_json(capsys, "gpus", alias)["id"] == "h100-sxm"


@pytest.fixture
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for var in ("SHARDWISE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SHARDWISE_CONFIG", "SHARDWISE_SESSION_DB",
                "SHARDWISE_LLM_FALLBACK"):
        monkeypatch.delenv(var, raising=False)


def test_ask_json_contract(capsys, offline):
    a = run_json(capsys, "ask", "Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step")
    has(a, {"answer": str, "session": str, "tool_calls": list, "plan": (dict, type(None)), "configs": dict}, "ask")
    assert a["answer"] and a["session"]
    for call in a["tool_calls"]:
        has(call, {"name": str, "arguments": dict}, "ask.tool_calls")
        assert "result" in call
    assert a["plan"] is not None
    check_evaluation(a["plan"], "ask.plan")
    assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in a["configs"].items())


def test_ask_json_without_a_plan(capsys, offline):
    a = run_json(capsys, "ask", "hello")
    assert a["plan"] is None and a["configs"] == {} and isinstance(a["tool_calls"], list)
