"""Bundled plans that reproduce published studies (`dbscale recipes`, `dbscale run --recipe NAME`).
Each is a plan file here, with the seed study's parameters as written and a `quick` section that
shrinks it to a few minutes on a small machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import yaml

from dbscale.errors import PlanError
from dbscale.plan.document import PlanDocument, load_plan_text


@dataclass(frozen=True)
class RecipeInfo:
    name: str
    description: str
    seed_study: str


def recipe_names() -> list[str]:
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".yaml")
    )


def recipe_text(name: str) -> str:
    if name not in recipe_names():
        raise PlanError(
            f"unknown recipe {name!r}; recipes: {', '.join(recipe_names())}",
            "`dbscale recipes` lists them with what they reproduce",
        )
    return resources.files(__name__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def load_recipe(name: str) -> PlanDocument:
    return load_plan_text(recipe_text(name), f"recipe {name}")


def recipe_info(name: str) -> RecipeInfo:
    data = yaml.safe_load(recipe_text(name)) or {}
    return RecipeInfo(
        name=name,
        description=" ".join(str(data.get("description", "")).split()),
        seed_study=" ".join(str(data.get("seed_study", "")).split()),
    )
