"""The models a recipe names, resolved without loading any (what a dry run, and a run before it starts, checks):
each role's model, and the reward PRM of ``rl.prm``; a typo gets the closest valid name."""

from __future__ import annotations

import difflib
from pathlib import Path

from pipelines.recipe import Recipe, RecipeError
from pipelines.run_config import model_roles
from pipelines.runner import describe_model
from prm.models import ARITH_PRM_NAME

# rl.prm's names (assets.rl.RLAssetConfig.prm); anything else is a PRM folder.
REWARD_PRM_NAMES = ("trained", "shipped", ARITH_PRM_NAME)


def _closest(name: str, names: tuple[str, ...]) -> str:
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def _reward_prm(choice: str | None) -> tuple[str, str | None]:
    """(what ``rl.prm`` resolves to, the problem or None)."""
    if choice in (None, "trained"):
        return "the prm job's PRM (the prm_model asset)", None
    if choice in ("shipped", ARITH_PRM_NAME):
        from prm.training import SHIPPED_PRM_DIR

        if not SHIPPED_PRM_DIR.is_dir():
            return "", f"rl.prm {choice!r} names {SHIPPED_PRM_DIR}, which is missing; restore it with `git checkout " \
                       "-- prm/shipped/arith-prm`"
        return f"the shipped PRM {SHIPPED_PRM_DIR}", None
    folder = Path(choice).expanduser()
    if not folder.is_dir():
        return "", (f"rl.prm {choice!r:.80} is neither {' nor '.join(map(repr, REWARD_PRM_NAMES))} nor a PRM folder"
                    f"{_closest(choice, REWARD_PRM_NAMES) or '; give one of them or the folder of a trained PRM'}")
    if not (folder / "config.json").is_file():
        return "", (f"rl.prm {choice!r:.80} is a folder without config.json, so not a PRM folder; give the folder a "
                    "PRM was saved to (the one holding config.json and the weights)")
    return f"the PRM folder {folder.resolve()}", None


def model_report(recipe: Recipe) -> tuple[list[str], list[str]]:
    """(one line per role: what its model resolves to, one line per model that does not resolve); nothing is
    loaded, converted or downloaded."""
    from prm.models import REGISTERED_MODELS

    lines: list[str] = []
    problems: list[str] = []
    seen: dict[str, str | None] = {}  # name -> what it resolves to; None: it does not
    for role, key, name in model_roles(recipe):  # each named as the jobs' run configs name it
        if name not in seen:
            try:
                seen[name] = describe_model(name)
            except RecipeError as exc:
                seen[name] = None
                problems.append(f"{key} {name!r:.80}: {' '.join(str(exc).split())}"
                                f"{_closest(name, REGISTERED_MODELS)}")
        if seen[name] is not None:
            lines.append(f"{role:<14} {seen[name]}")
    where, problem = _reward_prm(recipe.rl.prm)
    if problem:
        problems.append(problem)
    else:
        lines.append(f"{'reward PRM':<14} {where}")
    return lines, problems
