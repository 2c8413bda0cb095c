"""The page names a setting by the label of the form control the user sees, never by its REST name.

The engine writes settings `{moe_dispatcher}` (engine/setting_text.py); REST says `moe_dispatcher`, the CLI
`--moe-dispatcher`, the page “MoE dispatcher” (web/setting_labels.py). The labels are checked against the
form's own <label> elements, and the settings against the ones the engine's messages really name (read from
the engine's source by tests/cli/test_setting_flags.py), so neither side is a hand-written copy.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import shardwise
from shardwise.web.app import create_app
from shardwise.web.pages import DEFAULT_FORM
from shardwise.web.setting_labels import FORM_LABELS, label_for
from shardwise.web.settings import Settings

FORM = Path(shardwise.__file__).parent / "web" / "templates" / "_form.html"
# Settings one control sets under another name: the GPU count, and the batch in either unit.
CONTROL_OF = {"num_gpus": "gpus", "global_batch": "batch", "global_batch_tokens": "batch"}


def _form_labels() -> dict[str, str]:
    """control name -> its <label> text, from the template."""
    html = FORM.read_text(encoding="utf-8")
    labels = {}
    for control_id, text in re.findall(r'<label[^>]*for="([^"]+)"[^>]*>(.*?)</label>', html, re.S):
        named = re.search(rf'id="{re.escape(control_id)}"[^>]*name="([^"]+)"', html)
        if named:
            labels[named.group(1)] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip()
    return labels


def _engine_setting_names() -> set[str]:
    path = Path(__file__).parent.parent / "cli" / "test_setting_flags.py"
    spec = importlib.util.spec_from_file_location("setting_flags_for_page", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return set(module.engine_setting_names())


def test_each_label_is_the_forms_own():
    labels = _form_labels()
    for setting, label in FORM_LABELS.items():
        assert labels.get(CONTROL_OF.get(setting, setting)) == label, setting


def test_every_setting_the_engine_names_that_the_form_has_is_spelled_by_its_label():
    labels = _form_labels()
    for setting in _engine_setting_names():
        if CONTROL_OF.get(setting, setting) in labels:
            assert label_for(setting) == f"“{labels[CONTROL_OF.get(setting, setting)]}”", setting
        elif setting == "format":  # an export format is a tab of the results, not a control of the form
            assert label_for(setting) == "the config tab"
        else:  # no control: named as the API field it is, not as if the form had it
            assert label_for(setting) == f"the API field {setting}", setting


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def test_the_moe_note_names_the_dispatcher_control(client):
    # engine/validity/experts.py: "if you run DeepEP, pass {moe_dispatcher} deepep" and "(pass {moe_a2a_overlap} …)"
    form = {**DEFAULT_FORM, "model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": "32", "seq_len": "4096",
            "batch": "4M", "batch_unit": "tokens"}
    r = client.post("/ui/results", data=form)
    assert r.status_code == 200
    note = next(li for li in re.findall(r"<li><strong>Note:</strong>(.*?)</li>", r.text, re.S) if "DeepEP" in li)
    assert "pass “MoE dispatcher” deepep" in note and "pass “Expert A2A overlap”" in note
    assert "pass moe_dispatcher" not in note


def test_an_input_error_names_the_controls(client):
    # engine/inputs.py build_cluster: "{gpus_per_node} 64 is larger than the cluster ({gpus} 32) …"
    form = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "32", "gpus_per_node": "64"}
    r = client.post("/ui/results", data=form)
    assert r.status_code == 400
    assert "“GPUs per node” 64 is larger than the cluster (“GPUs” 32)" in r.text.replace("&#34;", '"')


def test_a_bound_refused_by_the_request_schema_names_the_control(client):
    # RecommendRequest: gpus >= 1 (pydantic's own words); the page names the control, the field stays marked.
    form = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "0"}
    r = client.post("/ui/results", data=form)
    assert r.status_code == 400
    assert "“GPUs”: Input should be greater than or equal to 1" in r.text.replace("&#34;", '"')
    assert "gpus: Input" not in r.text


def test_a_document_longer_than_the_sequence_names_the_packed_docs_control(client):
    # engine/training.py: "valid {mean_doc_len}: 1-8,192"; the page said the API field "mean_doc_len".
    form = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "8192",
            "mean_doc_len": "9000"}
    r = client.post("/ui/results", data=form)
    assert r.status_code == 400
    assert "valid “Packed docs (mean tokens)”: 1-8,192" in r.text.replace("&#34;", '"')
    assert "mean_doc_len:" not in r.text


def test_qlora_on_the_forms_default_framework_is_not_megatron(client):
    # The form's framework select starts on "Default": QLoRA then runs as FSDP2 (Megatron has no 4-bit QLoRA),
    # as /api/recommend without a framework does.
    form = {**DEFAULT_FORM, "model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "4096",
            "batch": "128", "batch_unit": "sequences", "mode": "qlora"}
    assert DEFAULT_FORM["framework"] == ""
    r = client.post("/ui/results", data=form)
    assert r.status_code == 200 and "qlora" in r.text.lower()
    api = client.post("/api/recommend", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096,
                                              "global_batch": 128, "mode": "qlora", "top_k": 1}).json()
    assert api["setup"]["framework"] == "fsdp"
    assert re.search(r'class="context setup">[^<]*fsdp', r.text, re.I)
