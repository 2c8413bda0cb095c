"""`calibrate --from-log` / `--measured-csv` on files saved as UTF-16 (Windows PowerShell 5.1's `>` redirect
writes UTF-16LE with a BOM) or UTF-8 with a BOM (Notepad; Excel's "CSV UTF-8"). Expected: the profile the
same file saved as plain UTF-8 gives (a byte-for-byte different input that must mean the same run)."""

import codecs
import json
from pathlib import Path

import pytest

from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64"]


def profile(capsys, *argv) -> dict:
    code, out, err = run(capsys, "calibrate", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("bom, encoding", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF8, "utf-8")])
def test_a_utf16_or_bom_log_gives_the_profile_its_utf8_copy_gives(capsys, tmp_path, bom, encoding):
    text = (LOGS / "megatron_lm.log").read_text()
    saved = tmp_path / "train.log"
    saved.write_bytes(bom + text.encode(encoding))
    want = profile(capsys, *SCENARIO, "--from-log", LOGS / "megatron_lm.log")
    assert profile(capsys, *SCENARIO, "--from-log", saved) == want
    # The log's arguments were read, not defaulted: seq_length 8192, global batch 512, TP4 PP4 (megatron_lm.log).
    run_ = want["runs"][0]
    assert (run_["seq_len"], run_["global_batch"]) == (8192, 512) and run_["plan"].startswith("TP4 PP4")


def test_a_csv_saved_with_a_bom_reads_its_first_column(capsys, tmp_path):
    # Before, the header's first name was "\ufeffmodel": an unknown flag --\ufeffmodel on every row.
    rows = ("model,gpu,gpus,seq_len,global_batch,tp,pp,measured_tokens_per_s_per_gpu\n"
            "llama-3.1-8b,h100,8,8192,64,2,1,7000\n")
    plain, bommed = tmp_path / "plain.csv", tmp_path / "bom.csv"
    plain.write_text(rows)
    bommed.write_bytes(codecs.BOM_UTF8 + rows.encode())
    assert profile(capsys, "--measured-csv", bommed) == profile(capsys, "--measured-csv", plain)
