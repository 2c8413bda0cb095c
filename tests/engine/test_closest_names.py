"""The "did you mean" names: a name that begins with or contains what was typed comes first."""

from __future__ import annotations

from shardwise.engine.errors import closest_names
from shardwise.engine.model_catalog import model_ids


def test_a_shortened_name_suggests_the_name_it_begins_first():
    # `qwen3-235b` is qwen3-235b-a22b without its active-parameter tail; difflib alone put qwen3-32b (ratio
    # 2·8/19 ≈ 0.84 against 2·10/25 = 0.80: difflib.SequenceMatcher, 8 and 10 matched characters) first.
    assert closest_names("qwen3-235b", model_ids())[0] == "qwen3-235b-a22b"


def test_prefix_then_substring_then_closeness_shortest_first():
    # By hand: 'ab' begins 'abc' and 'abcd' (shorter first), is inside 'xab', and nothing else is close.
    assert closest_names("ab", ["xab", "abcd", "abc", "zzzz"]) == ["abc", "abcd", "xab"]


def test_a_misspelling_still_gets_the_close_names():
    # Neither begins nor contains 'lama-3.1-8b'; difflib finds llama-3.1-8b (one letter dropped).
    assert closest_names("lama-3.1-8b", model_ids())[0] == "llama-3.1-8b"


def test_case_is_ignored_and_the_catalog_spelling_returned():
    assert closest_names("AB", ["Abc"]) == ["Abc"]
