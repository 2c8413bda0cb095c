"""What a tool is: a name, a description, a pydantic Args model, a pydantic Result model and
a function from one to the other. Results carry an `id` ("R3") that answers cite."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .scenario import Args


class Result(BaseModel):
    """Base of every tool result. `id` is filled in by the dispatcher."""

    model_config = ConfigDict(frozen=True)

    id: str = Field("", description="cite this id, e.g. [R3], beside every number taken from this result")

    def for_model(self) -> dict:
        """What the LLM reads: the result minus bulky fields it must not copy (config text)."""
        return self.model_dump(mode="json", exclude=self.hidden_from_model())

    def hidden_from_model(self) -> set[str]:
        return set()

    def summary(self) -> str:
        """One line for the UI's tool-activity list."""
        return ""

    def attachments(self) -> dict[str, str]:
        """Config text the server attaches to the answer: format -> text."""
        return {}

    def plan_evaluation(self):
        """The Evaluation of the plan this result recommends or evaluates, if any."""
        return None


A = TypeVar("A", bound=Args)
R = TypeVar("R", bound=Result)


@dataclass(frozen=True)
class Tool(Generic[A, R]):
    name: str
    description: str
    args: type[A]
    result: type[R]
    run: Callable[[A], R]
    # The scenario this call used, for the session to carry into the next turn.
    scenario_of: Callable[[A], object] | None = field(default=None)
