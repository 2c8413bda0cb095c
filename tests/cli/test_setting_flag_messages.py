"""The CLI says its own flags in the engine's refusals and warnings, as before they named settings (and now
also where a message used to mix setting names and flags: the rollout refusal said `prompt_len ... --mode`).

The engine's text names settings (gpus_per_node, precision) as REST and the chat do; the CLI spells them
back as flags (cli/flags.py). Each expected line is written by hand from the message's template in the
engine file named beside it, with the flags the CLI user typed.
"""

from __future__ import annotations

from support.cli_runner import run

BASE = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8"]


def _error_line(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    return err.strip()


def test_a_cluster_refusal_names_the_flags(capsys):  # engine/inputs.py build_cluster
    assert _error_line(capsys, "evaluate", *BASE, "--gpus-per-node", "16") == (
        "shardwise: error: --gpus-per-node 16 is larger than the cluster (--gpus 8): give at most 8 GPUs per node, "
        "or more GPUs")


def test_a_model_refusal_names_the_flags(capsys):  # engine/inputs.py resolve_model
    assert _error_line(capsys, "evaluate", *BASE, "--params", "8B") == (
        "shardwise: error: give either a model (--model) or a parameter count (--params), not both")
    assert _error_line(capsys, "evaluate", "--params", "abc", "--gpu", "h100-sxm", "--gpus", "8") == (
        "shardwise: error: --params expects a number such as 70e9 or 70B, got 'abc'")


def test_a_budget_refusal_names_the_flag(capsys):  # cli/common.py -> engine/inputs.py parse_count
    assert _error_line(capsys, "evaluate", *BASE, "--train-tokens", "-5") == (
        "shardwise: error: --train-tokens must be a positive number, got '-5'")


def test_a_rollout_setting_outside_rl_names_the_flags(capsys):  # engine/post_training/modes.py
    assert _error_line(capsys, "evaluate", *BASE, "--prompt-len", "512") == (
        "shardwise: error: --prompt-len describe rollout generation and apply only to --mode grpo or ppo "
        "(and their -lora/-qlora variants), not full")


def test_export_refusals_name_the_flags(capsys):  # engine/export/megatron.py, accelerate.py, deepspeed.py
    assert _error_line(capsys, "export", "--format", "megatron", *BASE, "--mode", "lora") == (
        "shardwise: error: cannot export this plan to megatron: Megatron-LM's pretrain_gpt.py has no LoRA "
        "adapters; export --format megatron-bridge (peft=lora) or use --mode full")
    assert _error_line(capsys, "export", "--format", "deepspeed", *BASE, "--precision", "fp8") == (
        "shardwise: error: cannot export this plan to deepspeed: DeepSpeed's config has no FP8 training switch "
        "(FP8 comes from Transformer Engine layers in the model code); use --precision bf16 for DeepSpeed, or "
        "export --format megatron/torchtitan/accelerate")


def test_the_moe_pricing_warning_names_the_flags(capsys):  # engine/validity/experts.py
    code, out, _ = run(capsys, "evaluate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "64",
                       "--ep", "8", "--tp", "2")
    assert code == 0
    [line] = [x for x in out.splitlines() if x.startswith("warning: [expert_all_to_all_pricing]")]
    assert line == (
        "warning: [expert_all_to_all_pricing] EP=8 stays inside a node; expert parallelism across nodes is priced "
        "as Megatron's default alltoall dispatcher (BF16, every routed copy sent); if you run DeepEP, pass "
        "--moe-dispatcher deepep, which sends far less across nodes; not overlapped (pass --moe-a2a-overlap if you "
        "run --overlap-moe-expert-parallel-comm) — compare plans with EP across nodes under the dispatcher you run")


def test_export_notes_name_the_flags(capsys):  # engine/export/plan.py checked_plan
    code, _, err = run(capsys, "export", "--format", "torchtitan", *BASE, "--cuda-graphs", "per-layer")
    assert code == 0
    assert ("note: the plan was priced with per-layer CUDA graphs, which torchtitan does not run (a Megatron-Core "
            "option): its host launch time is back, so evaluate it again with --cuda-graphs none and --framework "
            "fsdp\n") in err


def test_json_keeps_the_setting_names(capsys):
    """--json is data, the REST contract's twin: its warnings name settings as the REST body does."""
    code, out, _ = run(capsys, "evaluate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "64",
                       "--ep", "8", "--tp", "2", "--json")
    assert code == 0 and "pass moe_dispatcher deepep" in out and "--moe-dispatcher" not in out
