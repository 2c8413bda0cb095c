"""Fuzz the CLI's argument space (hypothesis): whatever is typed, `shardwise` exits 0 or 2 and
never with a traceback; on 2 stderr is one line; on 0 with --json the memory categories add up
to total_gib and the time parts to step_s (the README's contract).

Values mix the valid (catalog names, divisors, 8k) with what people mistype or push too far
(0, -1, 1.5, 'abc', 1e15 parameters, TP 3 on 64 heads, VPP without PP, EP on a dense model,
seq-len 1, global batch smaller than DP, 1 or 16,384 GPUs). Derandomised, so a failure
reproduces; bounded examples keep it to a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardwise.cli.main import main

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

JUNK = ["", " ", "abc", "-1", "0", "1.5", "nan", "inf", "-inf", "1e999", "0x10", "½", "8k", "4M", "1_024", "1e3",
        "--json", "null", "true", "[]", "{}"]
CONFIG = json.dumps({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 8,
                     "num_key_value_heads": 2, "intermediate_size": 2816, "vocab_size": 32000})
MODELS = ["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite", "gemma-2-2b",
          "mpt-125m", "Llama 3.1 8B", "meta-llama/Llama-3.1-8B-Instruct", "nope", "llama", CONFIG,
          '{"model_type": "llama"}', '{"model_type": "t5"}', "{bad json", "/no/such/config.json", "/etc"]
PARAMS = ["1e9", "7B", "70e9", "1e6", "999999", "1e14", "1e15", "0", "-5", "abc", "nan", "inf", "3.5b", "12T"]
GPUS = ["h100", "H100 80GB", "h100-sxm5", "a100-40gb", "mi300x", "rtx-4090", "gb200", "l40s", "nope", "",
        '{"name": "x"}', '{"name": "x", "memory_gib": 24, "bf16_tflops": 100, "hbm_bandwidth_gbs": 900, '
                         '"intra_node": "pcie4"}']
NETWORKS = ["ib-ndr", "roce-400g", "eth-25g", "nope", '{"id": "n", "name": "n", "bandwidth_gbs": 0, "latency_us": 1}']
COUNTS = [1, 2, 3, 4, 7, 8, 16, 24, 64, 72, 128, 1000, 16384, 1048577]


def mostly(good: st.SearchStrategy, bad: st.SearchStrategy, one_in: int = 12) -> st.SearchStrategy:
    """Usually a sensible value, sometimes a bad one: a run with a dozen flags must often get past
    argparse to reach the engine, and each flag still gets its share of junk."""
    # hypothesis leans towards 0 (the "simplest" draw), so 0 is the sensible value
    return st.integers(0, one_in - 1).flatmap(lambda i: bad if i == one_in - 1 else good)


def count(values=(1, 2, 3, 4, 8, 16, 64, 128)) -> st.SearchStrategy[str]:
    return mostly(st.one_of(st.sampled_from([str(v) for v in values]), st.integers(1, 300).map(str)),
                  st.one_of(st.integers(-3, 0).map(str), st.sampled_from(JUNK)))


def option(flag: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), values.map(lambda v: [flag, v]))


def choice(good: list[str], bad: list[str]) -> st.SearchStrategy[str]:
    return mostly(st.sampled_from(good), st.sampled_from(bad))


SCENARIO = st.tuples(
    mostly(st.one_of(choice(MODELS[:7], MODELS[7:]).map(lambda m: ["--model", m]),
                     choice(PARAMS[:7], PARAMS[7:]).map(lambda p: ["--params", p])), st.just([])),
    mostly(choice(GPUS[:8], GPUS[8:]).map(lambda g: ["--gpu", g]), st.just([])),
    mostly(count(COUNTS).map(lambda n: ["--gpus", n]), st.just([])),
    option("--gpus-per-node", count((1, 3, 4, 8, 72, 1000))),
    option("--network", choice(NETWORKS[:3], NETWORKS[3:])),
    option("--seq-len", st.one_of(count((1, 2, 4096, 8192, 131072)),
                                  choice(["8k", "1.5k", "32K", "1e4"], ["0k", "1e9", "16777217", "k"]))),
    st.one_of(option("--global-batch", count((1, 7, 63, 256, 1024, 10**10))),
              option("--global-batch-tokens", choice(["4M", "4e6", "512k", "1e20"], ["1", "100", "0", "-4M", "abc"]))),
    option("--mode", choice(["full", "lora", "qlora"], ["LoRA", "bogus"])),
    option("--lora-rank", count((1, 16, 64, 65537))),
    option("--precision", choice(["bf16", "fp8"], ["fp16"])),
    option("--framework", choice(["megatron", "deepspeed", "fsdp"], ["jax"])),
).map(lambda parts: [a for part in parts for a in part])

PLAN = st.tuples(*(option(f, count()) for f in ("--tp", "--pp", "--vpp", "--cp", "--ep", "--etp", "--micro-batch")),
                 option("--zero", choice(["0", "1", "2", "3"], ["4", "-1", "x"])),
                 option("--recompute", choice(["none", "selective", "full"], ["some"])),
                 st.sampled_from([[], ["--no-sp"]]),
                 option("--train-tokens", choice(["15T", "2e12", "1e30"], ["0", "abc"])),
                 option("--price-per-gpu-hour", choice(["2.5", "0"], ["-1", "nan", "x"]))
                 ).map(lambda parts: [a for part in parts for a in part])


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse exits from inside parse_args
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def check_outcome(argv: list[str], code: int, out: str, err: str) -> None:
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("shardwise: error:"), (argv, err)
        return
    if "--json" in argv:
        check_sums(json.loads(out), argv)


def evaluations(payload):
    """Every evaluate-shaped object in a payload (recommend's plans, explain's a/b/winner, what-if's
    before/after plans)."""
    if isinstance(payload, dict):
        if isinstance(payload.get("memory"), dict) and "total_gib" in payload["memory"] and "time" in payload:
            yield payload
        for value in payload.values():
            yield from evaluations(value)
    elif isinstance(payload, list):
        for value in payload:
            yield from evaluations(value)


def check_sums(payload: dict, argv) -> None:
    found = list(evaluations(payload))
    assert found or argv[0] in ("recommend", "what-if"), argv  # nothing fits: no plan to check
    for e in found:
        m = e["memory"]
        parts = m["weights_gib"] + m["gradients_gib"] + m["optimizer_gib"] + m["activations_gib"] + m["other_gib"]
        assert parts == pytest.approx(m["total_gib"], rel=1e-9, abs=1e-9), argv
        if e["time"] is not None:
            t = e["time"]
            parts = [v for k, v in t.items() if k != "step_s" and not k.endswith("_range")]  # ranges are not parts
            assert sum(parts) == pytest.approx(t["step_s"], rel=1e-9), argv


@FUZZ
@given(scenario=SCENARIO, plan=PLAN, as_json=st.booleans())
def test_evaluate_never_crashes(scenario, plan, as_json):
    argv = ["evaluate", *scenario, *plan, *(["--json"] if as_json else [])]
    check_outcome(argv, *run(argv))


# recommend searches (and, when nothing fits, probes larger clusters): keep the clusters small.
SMALL_SCENARIO = st.tuples(
    st.sampled_from([["--model", m] for m in ("llama-3.2-1b", "qwen3-0.6b", "mixtral-8x7b", "mpt-125m", "nope")]
                    + [["--params", p] for p in ("1e9", "0", "abc", "1e14")]),
    st.sampled_from([["--gpu", g] for g in ("h100", "rtx-4090", "nope")]),
    count((1, 2, 3, 4, 8, 16)).map(lambda n: ["--gpus", n]),
    option("--seq-len", st.sampled_from(["1", "2048", "8k", "0", "x"])),
    option("--global-batch", count((1, 3, 64, 256))),
    option("--framework", st.sampled_from(["megatron", "deepspeed", "fsdp"])),
    option("--mode", st.sampled_from(["full", "lora", "qlora"])),
).map(lambda parts: [a for part in parts for a in part])
CONSTRAINTS = st.tuples(
    *(option(f, choice(["1", "2", "3", "1,2", "4,8"], ["0", "x", ""])) for f in ("--tp", "--pp", "--vpp", "--ep",
                                                                                 "--micro-batch")),
    option("--zero", choice(["0", "1,3"], ["5", "x"])),
    option("--recompute", choice(["full", "none,full"], ["lots"])),
    option("--sp", st.sampled_from(["on", "off"])),
    option("--max", choice(["pp=2", "tp=1,pp=1"], ["foo=1", "tp", "tp=x"])),
    option("--max-tp", count((1, 2, 64))),
    option("--min-pp", count((1, 2, 100))),
    option("--headroom", choice(["0", "0.1", "0.99"], ["1", "-0.1", "nan", "x"])),
    option("--top", choice(["1", "3", "100"], ["0", "-1", "x"])),
).map(lambda parts: [a for part in parts for a in part])


@settings(FUZZ, max_examples=60)
@given(scenario=SMALL_SCENARIO, constraints=CONSTRAINTS, as_json=st.booleans())
def test_recommend_never_crashes(scenario, constraints, as_json):
    argv = ["recommend", *scenario, *constraints, *(["--json"] if as_json else [])]
    check_outcome(argv, *run(argv))


PLAN_TEXT = st.lists(st.sampled_from(["tp=2", "tp=3", "pp=2", "vpp=2", "cp=2", "ep=2", "zero=3", "zero=9", "mb=2",
                                      "mb=x", "recompute=full", "rc-none", "sp=off", "TP4", "ZeRO1", "foo=1", "=",
                                      "tp=", "tp=-1"]), max_size=4).map(",".join)


@settings(FUZZ, max_examples=30)
@given(a=PLAN_TEXT, b=st.one_of(st.none(), PLAN_TEXT), headroom=st.sampled_from(["0.1", "2", "x"]))
def test_explain_never_crashes(a, b, headroom):
    argv = ["explain", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--a", a,
            *(["--b", b] if b is not None else []), "--headroom", headroom, "--json"]
    check_outcome(argv, *run(argv))


CHANGES = st.lists(st.sampled_from(["gpu=h200", "gpu=nope", "gpus=16", "gpus=0", "gpus=1.5", "seq_len=8k",
                                    "seq_len=x", "mode=lora", "mode=x", "network=ib-xdr", "global_batch=7",
                                    "global_batch_tokens=10", "lora_rank=0", "foo=1", "gpu", "framework=fsdp",
                                    "precision=fp8", "gpus_per_node=3"]), min_size=1, max_size=3)


@settings(FUZZ, max_examples=25)
@given(changes=CHANGES)
def test_what_if_never_crashes(changes):
    argv = ["what-if", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--json"]
    for c in changes:
        argv += ["--change", c]
    check_outcome(argv, *run(argv))
