"""Request bodies -> engine calls -> the engine's result objects. No HTTP in here.

The one difference from the CLI: a web request never names a file. `model` is a catalog id or a
config.json given inline (object or text); a string that looks like a path is looked up in the
catalog like any other name, so a client cannot make the server read its own files.
"""

from __future__ import annotations

import json

from ..engine.cluster import Cluster
from ..engine.errors import ShardwiseInputError
from ..engine.model_spec import ModelSpec
from ..engine.validity.whole_mesh import require_whole_mesh
from .schemas import (EvaluateRequest, ExplainRequest, ExportRequest, ExportResponse, RecommendRequest, ScenarioRequest,
                      WhatIfRequest)


def resolve_model(req: ScenarioRequest) -> ModelSpec:
    from ..engine.hf_config import model_from_hf_config
    from ..engine.inputs import parse_count
    from ..engine.model_catalog import get_model
    from ..engine.synthetic import model_from_param_count

    model, params = req.model, req.params
    if model is not None and params is not None:
        raise ShardwiseInputError("give either model or params (a bare parameter count), not both")
    if params is not None:
        return model_from_param_count(parse_count(params, "params"))
    if model is None or (isinstance(model, str) and not model.strip()):
        raise ShardwiseInputError("no model given: set model to a catalog id (GET /api/models), "
                                  "a config.json object, or set params such as 70e9")
    if isinstance(model, dict):
        return model_from_hf_config(model)
    text = model.strip()
    if len(text) > 200_000:
        raise ShardwiseInputError(f"model text is {len(text):,} characters; a config.json is a few thousand")
    if text.startswith("{"):
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise ShardwiseInputError(f"model looks like config.json text but is not valid JSON: {exc.msg} "
                                      f"at line {exc.lineno} column {exc.colno}") from None
        return model_from_hf_config(text)
    return get_model(text)


def cluster(req: ScenarioRequest) -> Cluster:
    from ..engine.inputs import build_cluster

    return build_cluster(req.gpu, req.gpus, req.gpus_per_node, req.network)


def evaluate(req: EvaluateRequest):
    from ..engine.evaluate import evaluate as engine_evaluate

    model, on, setup, strategy = resolve_model(req), cluster(req), req.setup(), req.strategy()
    require_whole_mesh(model, on, setup, strategy)  # no rounded-down DP for degrees that do not divide
    return engine_evaluate(model, on, setup, strategy, **req.cost_args(setup.global_batch_tokens), profile=req.profile)


def recommend(req: RecommendRequest):
    from ..engine.search import recommend as engine_recommend

    setup = req.setup()
    rec = engine_recommend(resolve_model(req), cluster(req), setup, top_k=req.top_k, headroom=req.headroom,
                           profile=req.profile, export_format=req.export_format, list_exports=True,
                           **(req.constraints or {}))
    return with_cost(rec, **req.cost_args(setup.global_batch_tokens))


def with_cost(rec, train_tokens: float | None, price_per_gpu_hour: float | None):
    """Each plan's cost for the body's token budget and price, as `recommend --train-tokens … --json` gives it
    (the search ranks without them; the same cost_report the CLI's cli/recommend.with_cost calls)."""
    from ..engine.cost import cost_report

    if train_tokens is None and price_per_gpu_hour is None:
        return rec
    plans = [p.model_copy(update={"cost": cost_report(p.throughput.tokens_per_s, p.cluster.num_gpus, p.cluster.gpu,
                                                      train_tokens, price_per_gpu_hour)}) for p in rec.plans]
    return rec.model_copy(update={"plans": plans})


def explain(req: ExplainRequest):
    """`shardwise explain --json`: the plans given, or the winner and runner-up the CLI would pick."""
    from ..engine.explain import explain as engine_explain
    from ..engine.explain_pair import winner_and_runner_up

    model, on, setup = resolve_model(req), cluster(req), req.setup()
    given = req.plans()
    for which, plan in zip(("a", "b"), given or ()):
        if plan is not None:
            require_whole_mesh(model, on, setup, plan, f"plan {which}")
    pair = given or winner_and_runner_up(model, on, setup, headroom=req.headroom, profile=req.profile)
    if pair is None:
        raise ShardwiseInputError("no plan fits, so there is nothing to compare; POST /api/recommend shows what "
                                  "would fit, or give a plan as a")
    return engine_explain(model, on, setup, *pair, headroom=req.headroom, profile=req.profile)


def what_if(req: WhatIfRequest):
    """`shardwise what-if --json`: the recommendation before and after the change."""
    from ..engine.whatif import what_if as engine_what_if

    batch_set = req.global_batch is not None or req.global_batch_tokens is not None  # else the default follows
    return engine_what_if(resolve_model(req), cluster(req), req.setup(), req.change, top_k=req.top_k,
                          headroom=req.headroom, profile=req.profile, batch_set=batch_set,
                          **(req.constraints or {}))


def export(req: ExportRequest) -> ExportResponse:
    from ..engine.export import export_plan

    result = export_plan(req.format, resolve_model(req), cluster(req), req.setup(), req.strategy())
    from ..engine.calibration.profile import NOT_IN_EXPORTS

    return ExportResponse(format=result.format, filename=result.filename, text=result.text,
                          warnings=list(result.warnings) + ([NOT_IN_EXPORTS] if req.profile is not None else []))


def default_filename(fmt: str) -> str:
    return {"deepspeed": "ds_config.json", "torchtitan": "torchtitan.toml", "fsdp": "fsdp2_snippet.py",
            "accelerate": "accelerate_config.yaml", "megatron": "megatron_args.sh",
            "megatron-bridge": "megatron_bridge_overrides.txt", "nanotron": "nanotron.yaml",
            "launch": "launch.sh"}.get(fmt, f"{fmt}.txt")


def list_models() -> list[dict]:
    """Exactly what `shardwise models --json` prints."""
    from ..present import model_record
    from ..engine.model_catalog import list_catalog

    return [model_record(e.spec, e.id, e.aliases) for e in list_catalog()]


def list_gpus() -> list:
    from ..engine.hardware_catalog import list_gpus as catalog_gpus

    return list(catalog_gpus())


def list_networks() -> list:
    from ..engine.hardware_catalog import list_networks as catalog_networks

    return list(catalog_networks())
