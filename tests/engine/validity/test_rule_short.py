"""Every validity rule that leaves plans out says why in a few words, on the rule itself (Rule.short): the page's "Not
shown" line reads them through short_reason (it printed the rule ids, "57,600 tp cp pp divides gpus", and a rule
without a phrase showed by its id, "1,400: per_layer_graphs_without_full_recompute"). The phrases used to live in a
separate table in web/ (web/exclusion_words.py), which a new rule could miss."""

from __future__ import annotations

import pytest

from shardwise.engine.validity import DOES_NOT_FIT, RULES, short_reason
from shardwise.engine.validity.rule import Rule


def test_every_rule_that_leaves_plans_out_has_a_short_phrase():
    # error rules, and the one warning the search drops plans for (ZeRO with nothing to shard: a duplicate of ZeRO-0)
    for rule in [r for r in RULES if r.severity == "error"] + [r for r in RULES if r.name == "zero_without_dp"]:
        assert rule.short and short_reason(rule.name) == rule.short, rule.name
        assert "_" not in rule.short, rule.name  # words, not an id


def test_an_error_rule_without_a_phrase_cannot_be_defined():
    with pytest.raises(ValueError, match="needs its `short` phrase"):
        Rule("new_rule", "error", "layout", lambda s, g: None, lambda s, p: "")


def test_the_searchs_own_reason_and_an_unknown_id():
    assert short_reason(DOES_NOT_FIT) == "too large for the GPU's memory"
    assert short_reason("a_rule_from_elsewhere") == "a_rule_from_elsewhere"  # shown by its id, never dropped
