"""The page: a form and the chat side by side, the results below, rendered on the server with Jinja.

Without JavaScript the form posts to `/` and the whole page comes back with results. With it, the
form posts to `/ui/results` and only the results panel is swapped; the chat fills the same form
when an answer carries a scenario, so both drive one scenario.
"""

from __future__ import annotations

import json
import math
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from ..engine.errors import SettingsInputError, ShardwiseInputError
from ..engine.inputs import parse_seq_len
from ..present import likely_note, memory_band_note
from . import engine_calls
from .errors import describe_validation
from ..engine.validity import short_reason
from .schemas import RecommendRequest
from .setting_labels import page_text, page_validation_message
from .view import build_view

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.globals["memory_band_note"] = memory_band_note  # the CLI's evaluate prints the same line
templates.env.globals["likely_note"] = likely_note  # what "likely" means and its runs, once under the figures
templates.env.globals["exclusion_words"] = short_reason  # the "Not shown" line's reasons in words (Rule.short)
templates.env.globals["page_text"] = page_text  # notes name settings by the form's labels, not REST names
log = logging.getLogger("shardwise.web")
router = APIRouter(include_in_schema=False)

# What the form shows before anyone types: a common pre-training question.
DEFAULT_FORM = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "64", "nodes": "", "gpus_per_node": "", "network": "",
                "seq_len": "8192", "batch": "4M", "batch_unit": "tokens", "mode": "full", "precision": "bf16",
                "framework": "", "config_json": "", "params": "", "response_len": "",
                "profile_json": "", "mean_doc_len": "", "moe_dispatcher": "alltoall", "cuda_graphs": "none",
                "grad_reduce_dtype": "fp32", "fp8_param_gather": "off", "recompute_modules": "", "moe_a2a_overlap": "off",
                "lora_rank": "", "prompt_len": "", "group_size": ""}
# Ranked plans on the page (the table is sortable; more would be noise).
PAGE_TOP_K = 10


def seq_len_value(text: str, label: str = "Sequence length") -> int:
    """'8192', '8k', '32K', '0.5k' -> tokens: the engine's reading (parse_seq_len), which the CLI's --seq-len and
    REST share; the refusal names the form's field by its label."""
    try:
        return parse_seq_len(text)
    except ShardwiseInputError:
        raise ShardwiseInputError(f"{label} expects a number such as 8192 or 8k (a positive whole number of "
                                  f"tokens), got {text!r}") from None


def form_to_request(form: dict[str, str]) -> RecommendRequest:
    """The page's form fields -> the same body POST /api/recommend takes."""
    f = {k: (v or "").strip() for k, v in form.items()}
    # "framework" empty: the form's "Default" option, the mode's (megatron; fsdp for qlora: DEFAULT_FRAMEWORK)
    body: dict[str, Any] = {"gpu": f.get("gpu", ""), "mode": f.get("mode") or "full",
                            "precision": f.get("precision") or "bf16", "framework": f.get("framework") or None,
                            "moe_dispatcher": f.get("moe_dispatcher") or "alltoall",
                            "cuda_graphs": f.get("cuda_graphs") or "none",
                            "grad_reduce_dtype": f.get("grad_reduce_dtype") or "fp32",
                            "fp8_param_gather": f.get("fp8_param_gather") == "on",
                            "moe_a2a_overlap": f.get("moe_a2a_overlap") == "on",
                            "recompute_modules": [m for m in f.get("recompute_modules", "").replace(",", " ").split()]
                            or None,
                            "top_k": PAGE_TOP_K}
    choice = f.get("model", "")
    if choice == "__config__":
        if not f.get("config_json"):
            raise ShardwiseInputError("paste the model's config.json, or pick a model from the catalog")
        if not f["config_json"].startswith("{"):  # else it was looked up as a catalog name ("unknown model '[]'")
            raise ShardwiseInputError("the pasted config.json must be a JSON object {…} (a Hugging Face model's "
                                      "config.json), or pick a model from the catalog")
        body["model"] = f["config_json"]
    elif choice == "__params__":
        body["params"] = f.get("params") or None
        if not body["params"]:
            raise ShardwiseInputError("give a parameter count such as 70B, or pick a model from the catalog")
    else:
        body["model"] = choice
    if f.get("profile_json"):
        body["profile"] = profile_json(f["profile_json"])
    if f.get("gpus_per_node"):
        body["gpus_per_node"] = _whole(f["gpus_per_node"], "GPUs per node")
    body["gpus"] = gpu_count(f, body.get("gpus_per_node"))
    if f.get("network"):
        body["network"] = f["network"]
    generates = body["mode"].split("-")[0] in ("grpo", "ppo")
    if generates and f.get("prompt_len"):
        body["prompt_len"] = seq_len_value(f["prompt_len"], "Prompt tokens")
    if generates and f.get("group_size"):
        body["group_size"] = _whole(f["group_size"], "samples per prompt")
    if generates and (f.get("response_len") or f.get("prompt_len")):  # the sequence is then prompt + response
        if f.get("response_len"):
            body["response_len"] = seq_len_value(f["response_len"], "Response tokens")
    elif f.get("seq_len"):
        body["seq_len"] = seq_len_value(f["seq_len"])
    if f.get("batch"):
        if f.get("batch_unit") == "tokens":
            body["global_batch_tokens"] = f["batch"]
        else:
            body["global_batch"] = _whole(f["batch"], "global batch")
    if f.get("lora_rank"):
        body["lora_rank"] = _whole(f["lora_rank"], "LoRA rank")
    if f.get("mean_doc_len"):
        body["mean_doc_len"] = _whole(f["mean_doc_len"], "mean document length")
    return RecommendRequest(**body)


# Where a page user gets a profile: the CLI's file or the REST answer (both the same JSON object).
PROFILE_SOURCES = "paste the file `shardwise calibrate … --save` writes, or the body POST /api/calibrate returns"


def profile_json(text: str) -> dict:
    """The pasted calibration profile (validated by the request model like the REST body's)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ShardwiseInputError(f"the calibration profile is not JSON ({exc}); {PROFILE_SOURCES}") from None
    if not isinstance(value, dict):
        raise ShardwiseInputError(f"the calibration profile must be a JSON object; {PROFILE_SOURCES}")
    return value


def gpu_count(f: dict[str, str], per_node: int | None) -> int:
    """GPUs, or nodes × GPUs per node (the GPU's usual node size when not given); both must agree."""
    gpus = _whole(f["gpus"], "number of GPUs") if f.get("gpus") else None
    if not f.get("nodes"):
        if gpus is None:
            raise ShardwiseInputError("give the number of GPUs (or of nodes)")
        return gpus
    nodes = _whole(f["nodes"], "number of nodes")
    if nodes <= 0:
        raise ShardwiseInputError(f"number of nodes must be positive, got {nodes}")
    if per_node is None:
        from ..engine.hardware_catalog import get_gpu

        per_node = get_gpu(f.get("gpu", "")).gpus_per_node
    if gpus is not None and gpus != nodes * per_node:
        raise ShardwiseInputError(f"{gpus} GPUs is not {nodes} nodes × {per_node} GPUs per node = {nodes * per_node}; "
                                  "change one of them or leave GPUs empty")
    return nodes * per_node


def _whole(text: str, what: str) -> int:
    """'64', '1,024', '1e3', '8.0' -> int, as the CLI reads counts; '8.5', 'inf', 'abc' are refused."""
    s = text.replace(",", "").replace("_", "").strip()
    try:
        value = float(s) if any(c in s.lower() for c in ".e") else int(s)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value):
        raise ShardwiseInputError(f"{what} must be a whole number, got {text!r}")
    return int(value)


def _catalogs() -> dict[str, list]:
    out: dict[str, list] = {"models": [], "gpus": [], "networks": []}
    for key, fn in (("models", engine_calls.list_models), ("gpus", engine_calls.list_gpus),
                    ("networks", engine_calls.list_networks)):
        try:
            out[key] = fn()
        except Exception:  # noqa: BLE001 - the page still works with free-text inputs
            log.exception("catalog %s unavailable", key)
    return out


def compute_results(form: dict[str, str]) -> dict[str, Any]:
    """Template context for the results panel: a view, or an error with the fields to fix."""
    try:
        req = form_to_request(form)
        rec = engine_calls.recommend(req)
        return {"view": build_view(rec, req), "error": None, "field_errors": {}}
    except ShardwiseInputError as exc:
        return {"view": None, "error": page_text(exc), "field_errors": {}}
    except ValidationError as exc:
        raised = [(e.get("ctx") or {}).get("error") for e in exc.errors()]
        if raised and all(isinstance(r, SettingsInputError) for r in raised):
            # a check across settings (TrainingSetup's validators): named by the form's labels, as the CLI
            # names them by flags (cli/main.py), not as the API fields the plain text says
            return {"view": None, "error": "; ".join(page_text(r) for r in raised), "field_errors": {}}
        _, message, entries = describe_validation(list(exc.errors()))
        return {"view": None, "error": page_validation_message(message, entries),
                "field_errors": {e["field"]: e["message"] for e in entries}}
    except Exception:  # noqa: BLE001
        log.exception("results failed for %r", {k: v for k, v in form.items() if k != "config_json"})
        return {"view": None, "error": "internal error while computing the plan; it has been logged", "field_errors": {}}


def page_context(request: Request, form: dict[str, str], results: dict[str, Any] | None) -> dict[str, Any]:
    return {"form": {**DEFAULT_FORM, **form}, "results": results, "catalogs": _catalogs(),
            "chat_mode": request.app.state.chat_mode, "max_message_chars": request.app.state.max_message_chars}


async def _form(request: Request) -> dict[str, str]:
    """URL-encoded form fields (what a browser's form and the page's script send)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return dict(parse_qsl(body, keep_blank_values=True))


@router.get("/", response_class=HTMLResponse)
async def index(request: Request):
    form = dict(request.query_params)
    results = None
    if form.get("gpu"):
        results = await request.app.state.work_pool.run(compute_results, {**DEFAULT_FORM, **form})
    return templates.TemplateResponse(request, "index.html", page_context(request, form, results))


@router.post("/", response_class=HTMLResponse)
async def index_post(request: Request):
    form = await _form(request)
    results = await request.app.state.work_pool.run(compute_results, form)
    return templates.TemplateResponse(request, "index.html", page_context(request, form, results),
                                      status_code=200 if results["error"] is None else 400)


@router.post("/ui/results", response_class=HTMLResponse)
async def results_fragment(request: Request):
    """The results panel alone, for the page's script (same fields as the form)."""
    form = await _form(request)
    results = await request.app.state.work_pool.run(compute_results, form)
    return templates.TemplateResponse(request, "_results.html", {"results": results},
                                      status_code=200 if results["error"] is None else 400)


@router.get("/widget.js")
def widget_script() -> FileResponse:
    """The embeddable chat: `<script src="https://HOST/widget.js" defer></script>` on any allowed page."""
    return FileResponse(HERE / "static" / "widget.js", media_type="text/javascript",
                        headers={"cache-control": "public, max-age=300"})


@router.get("/embed", response_class=HTMLResponse)
def embed_help(request: Request):
    """How to put the chat widget on another site, with the snippet for this server."""
    return templates.TemplateResponse(request, "embed.html", {"base_url": str(request.base_url).rstrip("/"),
                                                              "cors": request.app.state.settings.cors_origins})
