"""`shardwise eval` through the real entry point, on recorded replies (no engine search needed)."""

import json

import yaml

from support.cli_runner import run



def test_list_selects_by_family(capsys):
    code, out, _ = run(capsys, "eval", "--list", "--family", "out_of_domain")
    assert code == 0 and "ood-haiku" in out and "rec-" not in out


def test_json_contract_on_recorded_replies(tmp_path, capsys):
    rec = tmp_path / "replies.yaml"
    rec.write_text(yaml.safe_dump([
        {"case": "ood-haiku", "turns": [{"answer": "I only plan distributed training parallelism."}]},
        {"case": "ood-weather", "turns": [{"answer": "It is 21 degrees and sunny."}]},
    ]))
    report = tmp_path / "report.html"
    code, out, err = run(capsys, "eval", "--target", "recorded", "--transcripts", str(rec), "--json",
                         "--report", str(report), "--min-pass-rate", "0.9")
    data = json.loads(out)
    assert code == 1 and "below --min-pass-rate" in err  # 1 of 2 passed
    assert (data["total"], data["passed"], data["pass_rate"]) == (2, 1, 0.5)
    assert data["by_family"] == {"out_of_domain": {"total": 2, "passed": 1}}
    failing = [c for c in data["cases"] if not c["passed"]]
    assert [c["id"] for c in failing] == ["ood-weather"]
    assert any("unbacked number '21'" in f for f in failing[0]["failures"])
    assert "ood-weather" in report.read_text()


def test_bad_arguments_exit_2_with_one_line(capsys):
    code, _, err = run(capsys, "eval", "--repeats", "0")
    assert code == 2 and "--repeats" in err
    code, _, err = run(capsys, "eval", "--family", "poetry")
    assert code == 2 and "no cases in family poetry" in err
    code, _, err = run(capsys, "eval", "--target", "recorded")
    assert code == 2 and "--transcripts" in err
