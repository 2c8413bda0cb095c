"""Time to train, GPU-hours and cost of a token budget on the recommended plan, as a tool reports them.

The engine computes them (engine/cost.py: time = tokens / tokens-per-second, GPU-hours = time x GPUs /
3600, cost = GPU-hours x price); this only rounds them for the answer and says where the price came from.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..engine.cost import cost_report
from ..engine.errors import ShardwiseInputError
from ..engine.inputs import parse_count
from ..engine.results import Evaluation
from .figures import r


class CostFacts(BaseModel):
    """A token budget on one plan: how long, how many GPU-hours, what it costs."""

    train_tokens: float | None = Field(None, description="the token budget, when given")
    days: float | None = Field(None, description="time to train the budget at the predicted throughput")
    gpu_hours: float | None = None
    total_usd: float | None = None
    price_per_gpu_hour: float = Field(description="USD per GPU-hour used")
    price_source: str = Field(description="'user-supplied' or the listed price's source")
    cluster_usd_per_hour: float
    usd_per_billion_tokens: float


def check_budget(tokens: float | None, step_tokens: int, name: str, given: object = None) -> None:
    """A token budget below one optimizer step is a unit left off ("15" for 15T), not a plan: it answered
    "15 tokens: 0.0 days, 0 GPU-hours, $0". Refused, naming the step and the units (CLI, REST and the chat's tool)."""
    if tokens is not None and tokens < step_tokens:
        raise ShardwiseInputError(f"{name} {given if given is not None else tokens!r} is {tokens:,.0f} tokens, less "
                                  f"than one optimizer step of this setup ({step_tokens:,} tokens): give the budget "
                                  f"with its unit, e.g. 15T (15·10¹² tokens), 200B or 2e12")


def cost_facts(e: Evaluation, train_tokens: str | float | None, price: float | None,
               step_tokens: int | None = None) -> CostFacts | None:
    """The budget's cost on plan `e`; None when the plan has no predicted throughput. `step_tokens`: one optimizer
    step's tokens, below which a budget is refused (check_budget), as the CLI and REST refuse it."""
    if e.throughput is None or not e.throughput.tokens_per_s:
        return None
    tokens = parse_count(train_tokens, "train_tokens") if train_tokens is not None else None
    if step_tokens is not None:
        check_budget(tokens, step_tokens, "train_tokens", train_tokens)
    c = cost_report(e.throughput.tokens_per_s, e.cluster.num_gpus, e.cluster.gpu, tokens, price)
    return CostFacts(train_tokens=tokens, days=r(c.time_to_train_days, 2), gpu_hours=r(c.gpu_hours, 0),
                     total_usd=r(c.total_cost, 0), price_per_gpu_hour=c.price_per_gpu_hour,
                     price_source=c.price_source, cluster_usd_per_hour=r(c.cluster_cost_per_hour, 2),
                     usd_per_billion_tokens=r(c.cost_per_billion_tokens, 2))
