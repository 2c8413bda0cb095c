"""The config tabs open on a file, not on a refusal."""

from shardwise.engine.strategy import Strategy
from shardwise.web.schemas import RecommendRequest
from shardwise.web.view import export_tabs


def test_formats_that_can_express_the_plan_come_first():
    request = RecommendRequest(model="llama-3.1-8b", gpu="h100-sxm", gpus=16, seq_len=4096, global_batch=256)
    # TP=2 with CP=2: DeepSpeed has no group layout for AutoTP beside Ulysses CP (docs/export.md),
    # while Megatron-LM expresses it, so at least one tab is a refusal and one a file.
    plan = Strategy(tp=2, cp=2, zero_stage=1)
    tabs = export_tabs(request, plan)
    has_file = [t.text is not None for t in tabs]
    assert any(has_file) and not all(has_file)
    assert has_file == sorted(has_file, reverse=True)  # every file before every refusal
