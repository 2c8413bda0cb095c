"""--recompute-modules, --grad-reduce-in-bf16, --fp8-param-gather: setup flags like --cuda-graphs — the values as
typed land in the JSON `setup`, invalid use is the engine's one-line message (exit 2), export --from-plan reads
them back, what-if changes them, and BF16 gradients halve the gradient memory by a hand count."""

import json

import pytest

from support.cli_runner import run

DENSE = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--tp", "2"]
GIB = 2 ** 30


def _setup(capsys, *flags) -> dict:
    code, out, err = run(capsys, "evaluate", *DENSE, *flags, "--json")
    assert code == 0, err
    return json.loads(out)["setup"]


def test_flags_land_in_the_json_setup_as_typed(capsys):
    s = _setup(capsys, "--precision", "fp8", "--recompute-modules", "core_attn,layernorm", "--grad-reduce-in-bf16",
               "--fp8-param-gather")
    assert s["recompute_modules"] == ["core_attn", "layernorm"]
    assert s["grad_reduce_dtype"] == "bf16"
    assert s["fp8_param_gather"] is True


def test_without_the_flags_the_setup_says_the_defaults(capsys):
    s = _setup(capsys)
    assert s["recompute_modules"] is None and s["grad_reduce_dtype"] == "fp32" and s["fp8_param_gather"] is False


@pytest.mark.parametrize("flags,message", [
    # the settings spelled as the flags that set them (they read "leave grad_reduce_dtype fp32")
    (["--framework", "fsdp", "--grad-reduce-in-bf16"], "drop --grad-reduce-in-bf16 (the bf16 reduction) with fsdp"),
    (["--framework", "deepspeed", "--recompute-modules", "core_attn"], "leave --recompute-modules unset with deepspeed"),
    (["--fp8-param-gather"], "needs --framework megatron and --precision fp8, not megatron / bf16"),
    (["--framework", "nanotron", "--precision", "fp8", "--fp8-param-gather"], "not nanotron / fp8"),
    (["--recompute-modules", "core_attn,mlp"], "recompute module(s) mlp are not modelled; valid: core_attn, layernorm"),
    (["--recompute-modules", ","], "expected module names separated by commas"),
])
@pytest.mark.parametrize("command", ["evaluate", "recommend", "explain", "export", "calibrate"])
def test_invalid_use_is_one_line_exit_2(capsys, command, flags, message):
    extra = {"export": ["--format", "megatron"], "calibrate": ["--measured-step-s", "2"]}.get(command, [])
    scenario = DENSE if command in ("evaluate", "export", "calibrate") else DENSE[:6]  # recommend/explain choose the plan
    code, out, err = run(capsys, command, *scenario, *extra, *flags)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err


def test_bf16_gradients_halve_the_gradient_memory_by_hand(capsys):
    """Llama-3.2-1B (config.json: hidden 2048, 16 layers, 32 heads / 8 KV heads of 64, FFN 8192, vocab 128256,
    tied embeddings): embedding 128256·2048 = 262,668,288; per layer q,o 2·2048² + k,v 2·2048·512 = 10,485,760,
    MLP 3·2048·8192 = 50,331,648, 2 norms 4,096 -> 60,821,504 · 16 = 973,144,064; final norm 2,048;
    total 1,235,814,400. TP=PP=1, ZeRO-1 (gradients not sharded, docs/memory.md): the rank holds every gradient,
    4 B (fp32 main_grad) -> 2 B (--grad-reduce-in-bf16, param_and_grad_buffer.py allocates it in the param dtype)."""
    params = 128256 * 2048 + 16 * (2 * 2048 ** 2 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048) + 2048
    assert params == 1_235_814_400
    base = ["--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--zero", "1", "--global-batch", "64", "--json"]
    mem = {}
    for flag in ([], ["--grad-reduce-in-bf16"]):
        code, out, err = run(capsys, "evaluate", *base, *flag)
        assert code == 0, err
        mem[bool(flag)] = json.loads(out)["memory"]
    assert mem[False]["gradients_gib"] == pytest.approx(4 * params / GIB, rel=1e-9)
    assert mem[True]["gradients_gib"] == pytest.approx(2 * params / GIB, rel=1e-9)
    assert mem[False]["weights_gib"] == mem[True]["weights_gib"]  # only the gradients change


def test_the_json_setup_round_trips_through_export_from_plan(tmp_path, capsys):
    code, out, err = run(capsys, "recommend", *DENSE[:6], "--precision", "fp8", "--fp8-param-gather",
                         "--grad-reduce-in-bf16", "--recompute-modules", "core_attn,layernorm", "--json", "--top", "1")
    assert code == 0, err
    d = json.loads(out)
    assert d["setup"]["recompute_modules"] == ["core_attn", "layernorm"]
    path = tmp_path / "plan.json"
    path.write_text(out)
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path)
    assert code == 0, err
    assert "--fp8-param-gather" in out and "--grad-reduce-in-bf16" in out
    if d["plans"][0]["strategy"]["recompute"] == "selective":
        assert "--recompute-modules core_attn layernorm" in " ".join(out.split())


def test_what_if_changes_each_option(capsys):
    small = ["--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--global-batch", "64"]
    for change, line in [("grad_reduce_dtype=bf16", "grad_reduce_dtype: fp32 → bf16"),
                         ("recompute_modules=core_attn,layernorm", "recompute_modules: default → core_attn,layernorm")]:
        code, out, err = run(capsys, "what-if", *small, "--change", change)
        assert code == 0, err
        assert line in out
    code, out, err = run(capsys, "what-if", *small, "--precision", "fp8", "--change", "fp8_param_gather=true")
    assert code == 0, err
    assert "fp8_param_gather: False → True" in out
    code, out, err = run(capsys, "what-if", *small, "--change", "grad_reduce_dtype=fp16")
    assert code == 2 and err.count("\n") == 1 and "'fp32' or 'bf16'" in err
    code, out, err = run(capsys, "what-if", *small, "--change", "fp8_param_gather=true")
    assert code == 2 and err.count("\n") == 1 and "needs framework megatron and precision fp8" in err


def test_the_text_setup_line_names_the_options(capsys):
    code, out, err = run(capsys, "evaluate", *DENSE, "--precision", "fp8", "--fp8-param-gather", "--grad-reduce-in-bf16",
                         "--recompute-modules", "core_attn,layernorm")
    assert code == 0, err
    assert "megatron, recompute modules core_attn+layernorm, BF16 gradients, FP8 weights" in out


def test_export_says_the_modules_are_unused_without_selective_recompute(capsys):
    code, out, err = run(capsys, "export", "--format", "megatron", *DENSE, "--recompute", "full",
                         "--recompute-modules", "core_attn,layernorm")
    assert code == 0, err
    assert "--recompute-modules apply to selective recompute" in err
    assert "--recompute-modules" not in out.split("note:")[0].split("RECOMPUTE_ARGS=(")[1].split(")")[0]


def test_the_a2a_overlap_refusal_names_the_flag_the_user_typed(capsys):
    # It read "moe_a2a_overlap is a Megatron-Core option …: leave moe_a2a_overlap off with fsdp" after
    # `--moe-a2a-overlap`; REST and the chat keep the body's name (tests/engine/validity/test_moe_a2a_overlap_not_applied.py).
    code, out, err = run(capsys, "evaluate", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "16",
                         "--framework", "fsdp", "--moe-a2a-overlap")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("shardwise: error: --moe-a2a-overlap is a Megatron-Core option")
    assert "leave --moe-a2a-overlap off with fsdp" in err
