"""The number extractor: what counts as a stated quantity, and when a tool value backs it."""

from shardwise.evals.numbers import backed_by, extract, numbers_in


def texts(text):
    return [q.text for q in extract(text)]


def test_units_suffixes_and_separators():
    qs = {q.text: q for q in extract("71.3 GiB, 4,120 ms, 1.2k tokens/s, MFU 43%, 4M tokens, 0.43, 989 TFLOP/s")}
    assert qs["71.3 GiB"].unit == "gib" and qs["71.3 GiB"].value == 71.3
    assert qs["4,120 ms"].value == 4120 and qs["4,120 ms"].unit == "ms"
    assert qs["1.2k tokens/s"].value == 1.2 and 1000.0 in qs["1.2k tokens/s"].scales
    assert qs["43%"].unit == "%"
    assert qs["4M"].scales == (1e6, 2**20)
    assert qs["989 TFLOP/s"].unit == "tflops"


def test_names_ordinals_and_list_markers_are_not_quantities():
    text = ("1. Llama-3-70B on H100 in bf16, 1F1B schedule, 3D parallelism, 4-bit NF4, the 2nd plan.\n"
            "2) A100-80GB and MI300X.")
    assert texts(text) == []


def test_catalog_names_with_spaces_are_masked():
    from shardwise.evals.names import name_pattern

    pats = [name_pattern("Llama-3.1-70B"), name_pattern("Qwen3-30B-A3B")]
    assert texts("Llama 3.1 70B and qwen3 30b a3b") != []  # without the catalog, the digits read as numbers
    assert [q.text for q in extract("Llama 3.1 70B and qwen3 30b a3b", pats)] == []


def test_plan_degrees_are_quantities_with_labels():
    qs = extract("TP=8, PP 4, ZeRO-1, micro-batch 2, ZeRO stage 3, 8x H100, tp8")
    assert [(q.label, q.value) for q in qs if q.unit == "degree"] == [
        ("tp", 8), ("pp", 4), ("zero", 1), ("micro_batch", 2), ("zero", 3), ("tp", 8)]
    assert any(q.unit == "x" and q.value == 8 for q in qs)


def test_percent_matches_a_fraction_and_ms_matches_seconds():
    (pct,) = extract("43%")
    assert backed_by(pct, [0.4312]) and backed_by(pct, [43.1]) and not backed_by(pct, [0.47])
    (ms,) = extract("412 ms")
    assert backed_by(ms, [0.4121]) and not backed_by(ms, [0.5])
    (s,) = extract("4.12 s")
    assert backed_by(s, [4123.0])  # a step_ms field


def test_rounding_to_the_written_precision_is_accepted_but_capped():
    (q,) = extract("71 GiB")
    assert backed_by(q, [71.4])  # rounded to the unit written
    (k,) = extract("1.2k tokens/s")
    assert backed_by(k, [1249.0]) and not backed_by(k, [1300.0])
    (hundred,) = extract("100 ms")  # a bare round number cannot claim 50..150
    assert not backed_by(hundred, [0.13])


def test_k_may_be_binary_or_decimal():
    (q,) = extract("32k")
    assert backed_by(q, [32768]) and backed_by(q, [32000])


def test_gb_and_gib_are_both_readings():
    (q,) = extract("80 GB")
    assert backed_by(q, [79.6]) and backed_by(q, [74.5])


def test_numbers_in_a_tool_result_walk_numbers_and_strings():
    result = {"id": "R1", "step_ms": 412.3, "fits": True, "label": "TP=8 PP=2 ZeRO-1", "terms": [{"value": 3.5}]}
    values = numbers_in(result)
    assert 412.3 in values and 3.5 in values and 8.0 in values and 2.0 in values
    assert 1.0 in values  # ZeRO-1 from the label; True is not a number


def test_a_field_named_in_billions_backs_a_b_suffixed_size():
    # lookup_model's catalog returns params_billion: 6.74 (Llama-2-7B, 6.74e9 parameters); an answer
    # writes it "6.74 B", which the extractor reads as 6.74 x 1e9. A field without a scale word does not.
    (stated,) = extract("`llama-2-7b`: 6.74 B")
    assert backed_by(stated, numbers_in({"catalog": [{"id": "llama-2-7b", "params_billion": 6.74}]}))
    assert not backed_by(stated, numbers_in({"catalog": [{"id": "llama-2-7b", "params": 6.74}]}))
