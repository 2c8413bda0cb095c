"""The form has the two settings its own notes sent users to the API for: "Expert A2A overlap" (the MoE note said
"pass the API field moe_a2a_overlap") and "LoRA rank" (LoRA/QLoRA were planned at rank 16 only on the page)."""

from __future__ import annotations

from shardwise.web.pages import DEFAULT_FORM, compute_results, form_to_request

MIXTRAL = {**DEFAULT_FORM, "model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": "32", "seq_len": "4096"}


def test_the_form_reads_both_settings():
    req = form_to_request({**MIXTRAL, "moe_a2a_overlap": "on", "lora_rank": "64"})
    assert req.moe_a2a_overlap is True and req.lora_rank == 64
    default = form_to_request(MIXTRAL)
    assert default.moe_a2a_overlap is False and default.lora_rank == 16  # the CLI's defaults
    bad = compute_results({**MIXTRAL, "mode": "lora", "lora_rank": "sixteen"})
    assert bad["view"] is None and bad["error"] == "LoRA rank must be a whole number, got 'sixteen'"


def test_the_lora_rank_reaches_the_search():
    """The rank the form gives is the rank the search used, said on the setup line."""
    lora = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpus": "8", "mode": "lora", "batch": "128",
            "batch_unit": "sequences"}
    view = compute_results({**lora, "lora_rank": "64"})["view"]
    assert view.setup.endswith("· LoRA (rank 64) · BF16 · Megatron")
    assert compute_results(lora)["view"].setup.endswith("· LoRA (rank 16) · BF16 · Megatron")


def test_the_overlap_control_is_what_the_moe_note_names():
    r = compute_results({**MIXTRAL, "batch": "4M", "batch_unit": "tokens"})
    note = next(w for w in r["view"].best.warnings if "DeepEP" in str(w))
    from shardwise.web.setting_labels import page_text

    assert "pass “Expert A2A overlap” if you run" in page_text(note)
