"""Result objects of the search: Recommendation, and NothingFits when no plan fits.

Frozen pydantic, like results.py; `shardwise recommend --json` prints a Recommendation.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .setting_text import SettingsText
from .results import ClusterSummary, Evaluation, ModelSummary, SetupSummary, StrategySummary, Violation


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class FixOption(_Result):
    """One change that might make a plan fit, and whether it does."""

    rule: Literal["more_gpus", "recompute_full", "zero3", "lora", "qlora", "larger_gpu", "inference_tp"]
    change: dict[str, Any] = Field(description="the input or constraint changed, e.g. {'mode': 'lora'}")
    applicable: bool = Field(description="False when the search already tried it or it does not apply")
    fits: bool
    lowest_memory_gib: float | None = Field(default=None, description="the least memory any valid plan needs")
    plan: StrategySummary | None = Field(default=None, description="the lowest-memory plan under the change")
    note: str = ""


class NothingFits(_Result):
    """Why no plan was recommended, and what would make one fit."""

    reason: Literal["no_valid_plan", "out_of_memory"]
    capacity_gib: float
    usable_gib: float = Field(description="capacity × (1 − headroom)")
    lowest_memory_gib: float | None = Field(default=None, description="the least memory any valid plan needs")
    lowest_memory_plan: StrategySummary | None = None
    min_gpus: int | None = Field(default=None, description="the fewest GPUs (same GPU type) at which a plan fits")
    min_gpus_plan: StrategySummary | None = None
    larger_gpu: str | None = Field(default=None, description="the smallest-memory catalog GPU on which a plan fits")
    options: list[FixOption] = Field(default_factory=list)
    blocking: list[Violation] = Field(default_factory=list,
                                      description="when no plan is valid: an example of each rule that excluded plans")


class SetAside(_Result):
    """Plans ranked faster than the last one kept that the chosen export format refuses, by cause."""

    rule: str = Field(description="the exporter's limit, e.g. 'tp_with_ulysses_cp'")
    count: int
    reason: str = Field(description="the refusal of the fastest plan set aside for this cause")
    hint: str = ""
    # reason and hint as written, naming settings `{like_this}` so the CLI can say its flags (private: not in
    # the JSON or its schema)
    _said: tuple[SettingsText, SettingsText] | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, refused, **fields) -> "SetAside":
        """From the ExportRefused of the fastest plan set aside for this cause."""
        out = cls(reason=refused.reason, hint=refused.hint, **fields)
        out._said = (refused.reason_text, refused.hint_text)
        return out

    def spelled(self, spell) -> tuple[str, str]:
        """(reason, hint) with their settings named by `spell` (the CLI: flag_for)."""
        if self._said is None:  # read back from JSON
            return self.reason, self.hint
        return self._said[0].spelled(spell), self._said[1].spelled(spell)
    fastest: StrategySummary | None = Field(default=None, description="the fastest plan set aside for this cause")
    fastest_step_s: float | None = Field(default=None, description="its predicted step time (same tokens per step "
                                                                   "as every plan, so step times compare speeds)")


class MemoryRisk(_Result):
    """The best plan fits at its point estimate, but the upper end of its 80 % memory band (intervals.memory_band) is
    above the GPU's capacity: a run of it may still go out of memory. The search ranks by
    the point estimate (the band is the model's error, not the plan's); this says so, and names the fastest plan
    within the ranking resolution of the best whose whole band fits, when there is one."""

    upper_gib: float = Field(description="the best plan's memory band, upper end (GiB)")
    usable_gib: float = Field(description="capacity × (1 − headroom)")
    capacity_gib: float
    band_fits: Evaluation | None = Field(default=None, description="the fastest plan predicted within "
                                         "ranking_resolution of the best whose band's upper end is within capacity_gib")
    band_fits_slower_percent: float | None = Field(default=None, description="its tokens/s below the best's, "
                                                                             "in percent")


class Recommendation(_Result):
    model: ModelSummary
    cluster: ClusterSummary
    setup: SetupSummary
    headroom: float
    constraints: dict[str, Any] = Field(default_factory=dict)
    plans: list[Evaluation] = Field(description="the best plans that fit, fastest first")
    searched: int = Field(description="plans enumerated")
    valid: int = Field(description="plans that break no validity rule and are not duplicates")
    fitting: int = Field(description="valid plans that fit in capacity × (1 − headroom)")
    excluded: dict[str, int] = Field(description="plans dropped, by rule name (and 'does_not_fit')")
    near_best: int = Field(default=0, description="fitting plans other than the best whose predicted throughput is "
                                                  "within the model's ranking resolution of it (see ranking_resolution)")
    ranking_resolution: float = Field(default=0.0, description="gap below which measured runs order plans little "
                                                              "better than chance (0.05 = 5 %)")
    nothing_fits: NothingFits | None = None
    export_format: str | None = Field(default=None, description="the export format asked for: `plans` holds only "
                                                                "plans it can write, fastest first")
    set_aside: list[SetAside] = Field(default_factory=list,
                                      description="with export_format: fitting plans ranked above the last plan kept "
                                                  "that the format refuses, counted by cause")
    export_checked: int = Field(default=0, description="with export_format: fitting plans tried against the format")
    memory_risk: MemoryRisk | None = Field(default=None, description="set when the best plan's memory band tops the "
                                                                     "usable memory while its point estimate fits")
