"""The chat's recommendation says plainly when the plan may not fit (session 13): the top of its 80 % memory band is
above the GPU's capacity while its point estimate fits (engine/memory_risk.py; the engine's figures are checked by hand
in tests/engine/test_memory_risk.py). The tool result carries it as data (RecommendResult.memory_risk), and the answer
quotes it and names the safer plan, or says none is as fast."""

from __future__ import annotations

from support.chat import turns


def test_the_answer_says_may_not_fit_and_names_the_plan_whose_band_fits(make_service):
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. best plan?")
    result = done.tool_calls[0]["result"]
    risk, best = result["memory_risk"], result["best"]
    assert risk["upper_gib"] == best["memory_gib_likely"][1] > risk["capacity_gib"] == 80.0
    assert result["usable_gib"] == 72.0 >= best["memory_gib"]  # it fits the search's test (80 GiB less 10 % headroom)
    safer = risk["band_fits"]
    assert safer["memory_gib_likely"][1] <= 80.0 and 0 < risk["band_fits_slower_percent"] < result["ranking_resolution_percent"]
    assert f"**May not fit:** up to {risk['upper_gib']:.1f} GiB at the top of its 80 % memory band, above the GPU's 80 GiB" \
        in done.answer
    assert f"`{safer['label']}` keeps its whole band within the 80 GiB (up to {safer['memory_gib_likely'][1]:.1f} GiB) " \
           f"for {risk['band_fits_slower_percent']:.1f}% fewer tokens/s" in done.answer
    assert done.answer.index("**Recommended plan:**") < done.answer.index("**May not fit:**")  # the best stays first


def test_no_note_when_the_band_fits(make_service):
    [done] = turns(make_service(), "llama 3.1 8b on 64 h100, 2k, gbs 64. best plan?")
    result = done.tool_calls[0]["result"]
    assert result["memory_risk"] is None and result["best"]["memory_gib_likely"][1] <= 80.0
    assert "May not fit" not in done.answer


def test_none_as_fast_is_said(make_service, monkeypatch):
    import shardwise.engine.memory_risk as memory_risk_module

    monkeypatch.setattr(memory_risk_module, "RANKING_RESOLUTION", 0.0)  # no other plan is "as fast": none to name
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. best plan?")
    risk = done.tool_calls[0]["result"]["memory_risk"]
    assert risk is not None and risk["band_fits"] is None
    assert "No plan within 5.0% of its speed keeps its whole band within the 80 GiB" in done.answer
