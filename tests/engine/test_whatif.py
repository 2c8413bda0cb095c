"""what-if on the real models: directions a hand can vouch for, and the structure of the answer."""

from __future__ import annotations

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.training import TrainingSetup
from shardwise.engine.whatif import parse_changes, what_if


@pytest.fixture(scope="module")
def llama8b():
    return get_model("llama-3.1-8b")


def test_doubling_gpus_does_not_lower_throughput(llama8b):
    # Twice the GPUs can always run the old plan twice over (DP ×2), so the best plan can only gain.
    w = what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(seq_len=4096, global_batch=256), "gpus=16")
    assert [c.input for c in w.changes] == ["num_gpus"]
    assert w.throughput_ratio >= 1.0
    reason = next(r for r in w.reasons if r.rule == "gpu_count")
    assert reason.numbers["gpu_ratio"] == 2.0
    assert reason.numbers["scaling_efficiency"] == pytest.approx(w.throughput_ratio / 2)


def test_h200_fits_more_plans_than_h100():
    # 141 GB instead of 80 GB (datasheets): every plan that fits on an H100 fits on an H200.
    model = get_model("llama-3.1-70b")
    w = what_if(model, build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512), {"gpu": "h200"})
    assert w.after.fitting > w.before.fitting
    memory = next(r for r in w.reasons if r.rule == "gpu_memory")
    assert (memory.numbers["before_gib"], memory.numbers["after_gib"]) == (80.0, 141.0)
    assert w.fits_before and w.fits_after
    step = next(t for t in w.time if t.term == "step_s")
    assert step.delta == pytest.approx(w.after.plans[0].time.step_s - w.before.plans[0].time.step_s)


def test_longer_sequences_keep_the_tokens_per_step(llama8b):
    w = what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(seq_len=4096, global_batch=256), "seq_len=8k")
    changes = {c.input: (c.before, c.after) for c in w.changes}
    assert changes == {"seq_len": (4096, 8192), "global_batch": (256, 128)}  # 1,048,576 tokens either way


def test_nothing_fits_to_fits():
    # Llama-3.1-70B on 8 A100-40GB: 16 B/param · 70.6e9 / 8 = 131 GiB per GPU — nothing fits; QLoRA's 4-bit
    # base is 0.5 B/param · 70.6e9 / 8 ≈ 4.1 GiB per GPU plus small adapters — it fits.
    model = get_model("llama-3.1-70b")
    w = what_if(model, build_cluster("a100-40gb", 8), TrainingSetup(seq_len=2048, global_batch=64), "mode=qlora")
    assert not w.fits_before and w.fits_after
    assert w.reasons[0].rule == "now_fits"
    assert w.before.nothing_fits is not None and w.throughput_ratio is None


@pytest.mark.parametrize("change,needle", [
    ("colour=red", "what-if cannot change 'colour'"),
    ("gpu", "must look like input=value"),
    ("gpus=abc", "expects a positive whole number"),
    ("seq_len=0", "positive"),
    ("seq_len=8.3k", r"seq_len expects a sequence length such as 8192 or 8k"),  # 8.3 x 1024 = 8,499.2: not whole
    ({"mode": "grpo", "response_len": "lots"}, r"^response_len expects"),  # the change named, not seq_len
    ("gpu=h1000", "unknown gpu"),
    ({}, "needs a change"),
])
def test_bad_changes_are_clear_errors(llama8b, change, needle):
    with pytest.raises(ShardwiseInputError, match=needle):
        what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(), change)


def test_parse_changes_aliases():
    assert parse_changes("gpus=16, seq=8k,batch=64") == {"num_gpus": "16", "seq_len": "8k", "global_batch": "64"}


def test_packing_short_documents_is_a_what_if(llama8b):
    """Attention within 256-token documents instead of the whole 8192-token sequence is strictly less
    work (the attention core's FLOPs fall 32×), so the best plan cannot get slower."""
    setup = TrainingSetup(seq_len=8192, global_batch=64)
    w = what_if(llama8b, build_cluster("h100-sxm", 8), setup, "mean_doc_len=256")
    assert [(c.input, c.before, c.after) for c in w.changes] == [("mean_doc_len", None, 256)]
    assert w.throughput_ratio > 1.0
    back = what_if(llama8b, build_cluster("h100-sxm", 8), setup.model_copy(update={"mean_doc_len": 256}),
                   "mean_doc_len=none")
    assert [(c.input, c.before, c.after) for c in back.changes] == [("mean_doc_len", 256, None)]


def test_a_count_that_is_not_a_number_is_refused_with_a_count_example():
    # It said "num_gpus expects a number such as 70e9 or 70B": a parameter count's examples for a GPU count.
    import pytest

    from shardwise.engine.errors import ShardwiseInputError
    from shardwise.engine.whatif import _parse_int

    with pytest.raises(ShardwiseInputError) as caught:
        _parse_int("num_gpus", "lots")
    assert str(caught.value) == "num_gpus expects a positive whole number such as 128, got 'lots'"
    assert _parse_int("num_gpus", "1k") == 1000 and _parse_int("global_batch", "512") == 512


def test_a_change_that_changes_nothing_names_it_as_typed(llama8b):
    # 8 H100s and `gpus=8`: it said "what-if num_gpus=8 changes nothing", a name the user never typed.
    with pytest.raises(ShardwiseInputError) as caught:
        what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(), "gpus=8")
    assert str(caught.value).startswith("what-if gpus=8 changes nothing")


def test_unknown_inputs_are_listed_as_typed(llama8b):
    with pytest.raises(ShardwiseInputError) as caught:
        parse_changes("colour=red")
    listed = str(caught.value).split("inputs: ")[1].split(", ")
    assert "gpus" in listed and "num_gpus" not in listed


@pytest.mark.parametrize("change,flags", [
    ("tp=4", ("`evaluate --tp N`", "`--tp N` on recommend or what-if")),
    ("zero=3", ("`evaluate --zero Z`", "`--zero Z` on recommend or what-if")),
    ("mb=2", ("`evaluate --micro-batch N`", "`--micro-batch N` on recommend or what-if")),
])
def test_a_plan_knob_is_sent_where_it_goes(change, flags):
    # A plan knob is no scenario input: the refusal names the commands that take it (their flags, as
    # cli/evaluate.py and cli/recommend.py spell them), not the list of inputs.
    with pytest.raises(ShardwiseInputError) as caught:
        parse_changes(change)
    text = str(caught.value)
    assert f"{change.split('=')[0]!r} is a plan knob" in text and "inputs:" not in text
    assert all(f in text for f in flags)


def test_a_change_to_qlora_moves_off_megatron_and_says_so(llama8b):
    # Megatron-LM and Megatron-Bridge have no 4-bit QLoRA (their exporters refuse it): the what-if takes the
    # PyTorch stack that runs it (DEFAULT_FRAMEWORK) and lists the framework among its changes.
    w = what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(seq_len=4096, global_batch=128), "mode=qlora")
    assert ("framework", "megatron", "fsdp") in [(c.input, c.before, c.after) for c in w.changes]
    kept = what_if(llama8b, build_cluster("h100-sxm", 8), TrainingSetup(seq_len=4096, global_batch=128),
                   "mode=qlora,framework=deepspeed")
    assert kept.after.setup.framework == "deepspeed"


def test_the_default_framework_runs_the_mode():
    from shardwise.engine.post_training.modes import default_framework, training_setup

    assert [default_framework(m) for m in ("full", "lora", "qlora", "dpo-qlora")] == \
        ["megatron", "megatron", "fsdp", "fsdp"]
    assert training_setup("qlora").framework == "fsdp"
    assert training_setup("qlora", framework="deepspeed").framework == "deepspeed"  # a framework given is kept
