"""Every asset config is its library config: derived from it (assets.config_base.derive), or held to it here.

A field or default that differs between an asset's ``dg.Config`` (or resource) and the library dataclass it mirrors
fails :func:`test_every_pair_is_at_parity`; the planted pairs below show that it would. A knob added to a library
config reaches the asset's run-config schema and its ``to_library()`` without an edit of the asset.
"""

# No `from __future__ import annotations`: Dagster reads the asset's config annotation at definition time.
import dataclasses

import dagster as dg
import pydantic
import pytest

import assets.generation
import assets.labeling
import assets.prm
import assets.problems
import assets.processbench
import assets.resources
import assets.rl
import assets.search
import assets.verification
from assets.config_base import CheckedConfig, Mirror, derive, parity_problems
from prm.generation import GenerationRequest
from prm.labeling import MCConfig
from prm.search import SearchConfig
from prm.training import PRMTrainConfig

MODULES = (assets.generation, assets.labeling, assets.prm, assets.problems, assets.processbench, assets.resources,
           assets.rl, assets.search, assets.verification)
CLASSES = {c for m in MODULES for c in vars(m).values() if isinstance(c, type) and c.__module__ == m.__name__
           and issubclass(c, dg.Config | dg.ConfigurableResource)}


def _only(library: type, *names: str) -> Mirror:
    """A mirror of ``names`` of ``library`` alone (a class held to part of a library config)."""
    return Mirror(library, exclude=frozenset(f.name for f in dataclasses.fields(library)) - set(names))


# Classes whose knobs feed a library call rather than a config dataclass: held to the library's defaults by hand.
HELD = {
    assets.search.SearchAssetConfig: [_only(SearchConfig, "m", "aggregation")],
    # The sampling knobs become GenerationRequests; max_tokens and seed are the assets' own (768, per-asset seeds).
    assets.generation.SolutionsConfig: [_only(GenerationRequest, "temperature", "top_p", "stop")],
    assets.generation.RolloutsConfig: [_only(GenerationRequest, "temperature", "top_p", "stop")],
}
# Classes with no library config: what they hold is the asset's alone.
ASSET_ONLY = {assets.prm.PRMEvalConfig, assets.processbench.ProcessBenchAssetConfig, assets.resources.WarehouseResource}

PAIRS = [(c, m) for c in sorted(CLASSES, key=lambda c: c.__name__)
         for m in (*getattr(c, "__mirrors__", ()), *HELD.get(c, ()))]


def test_every_config_is_derived_held_or_the_assets_own() -> None:
    derived = {c for c in CLASSES if getattr(c, "__mirrors__", ())}
    assert derived | set(HELD) | ASSET_ONLY == CLASSES, sorted(c.__name__ for c in CLASSES - derived - ASSET_ONLY)
    assert len(derived) >= 15 and len(CLASSES) >= 20  # 13 of the 17 checked configs, and 2 of the 3 resources


@pytest.mark.parametrize("config,mirror", PAIRS, ids=[f"{c.__name__}-{m.library.__name__}" for c, m in PAIRS])
def test_every_pair_is_at_parity(config: type, mirror: Mirror) -> None:
    assert parity_problems(config, mirror) == []


def test_a_planted_default_or_field_that_differs_fails_parity() -> None:
    class Drifted(derive(Mirror(MCConfig))):
        n_rollouts: int = 3  # redeclared by hand, away from the library's 8

    class HandCopied(CheckedConfig):  # a copy that lost a field and retyped another
        n_rollouts: int = 8
        early_stop: bool = False
        monotone: str = "yes"

    assert parity_problems(Drifted, Mirror(MCConfig)) == ["Drifted.n_rollouts defaults to 3, MCConfig.n_rollouts to 8"]
    problems = parity_problems(HandCopied, Mirror(MCConfig))
    assert "HandCopied.adaptive_round is missing (MCConfig.adaptive_round)" in problems
    assert any(p.startswith("HandCopied.monotone is typed") for p in problems)
    assert any(p.startswith("HandCopied.monotone defaults to 'yes'") for p in problems)

    # A library default that moves away from a held class fails too.
    @dataclasses.dataclass(frozen=True)
    class MovedSearch(SearchConfig):
        m: int = 8

    assert parity_problems(assets.search.SearchAssetConfig, _only(MovedSearch, "m", "aggregation")) == [
        "SearchAssetConfig.m defaults to 4, MovedSearch.m to 8"]
    # An asset-level override declared on the mirror is parity; the same value redeclared in the body is not.
    omega = assets.labeling.OmegaPRMLabelsConfig
    assert parity_problems(omega, omega.__mirrors__[0]) == []
    assert parity_problems(omega, Mirror(omega.__mirrors__[0].library)) == [
        "OmegaPRMLabelsConfig.screen defaults to False, OmegaPRMConfig.screen to True"]


@dataclasses.dataclass(frozen=True)
class PRMTrainConfigPlus(PRMTrainConfig):
    """PRMTrainConfig with one knob more, as a library change would add it."""

    grad_clip: float = 1.0


class PlusTrainConfig(derive(Mirror(PRMTrainConfigPlus, exclude={"label_kind"}))):
    """Declared as assets.prm.PRMTrainAssetConfig is, with nothing of the new knob."""


def test_a_knob_added_to_a_library_config_reaches_the_asset_untouched() -> None:
    assert PlusTrainConfig.model_fields["grad_clip"].default == 1.0
    seen = []

    @dg.asset
    def trains(config: PlusTrainConfig) -> None:
        seen.append(config.to_library(label_kind="soft"))

    # Dagster's run-config schema takes the new key (an unknown key would fail the run's config check) ...
    result = dg.materialize([trains], run_config={"ops": {"trains": {"config": {"grad_clip": 0.5, "max_steps": 7}}}})
    assert result.success
    # ... and to_library() hands it to the library with every other setting.
    assert seen == [PRMTrainConfigPlus(grad_clip=0.5, max_steps=7, label_kind="soft")]
    # The library's own checks apply at config time.
    with pytest.raises(pydantic.ValidationError, match="grad_clip=nan is not a finite number"):
        PlusTrainConfig(grad_clip=float("nan"))


def test_a_library_field_dagster_cannot_type_must_be_typed_by_the_asset() -> None:
    @dataclasses.dataclass(frozen=True)
    class Sources:
        source: str | tuple[str, ...] | None = None

    with pytest.raises(TypeError, match=r"Sources.source: Dagster's config cannot hold"):
        derive(Mirror(Sources))
    assert derive(Mirror(Sources, types={"source": str | None}))().to_library() == Sources()
    with pytest.raises(TypeError, match=r"exclude names \['sourcee'\]"):
        Mirror(Sources, exclude={"sourcee"})


def test_the_asset_configs_build_the_library_configs_the_assets_ran_with() -> None:
    """The defaults the assets ran with before they were derived (the demo's), as library configs."""
    assert assets.prm.PRMTrainAssetConfig().to_library(label_kind="soft") == PRMTrainConfig(label_kind="soft")
    data = assets.prm.PRMDataConfig().to_library()
    assert (data.method, data.val_share, data.test_share, data.source) == ("omegaprm", 0.25, 0.35, None)
    comparison = assets.prm.ComparisonAssetConfig(data={"label_kind": "soft"}).to_library()
    assert comparison.data == dataclasses.replace(data, label_kind="soft") and comparison.train.label_kind == "soft"
    rl = assets.rl.RLAssetConfig().to_library()
    assert (rl.steps, rl.batch_size, rl.train_ops, rl.eval_ops, rl.save_policy) == (6, 16, (8,), (2, 4, 8), False)
    assert assets.labeling.OmegaPRMLabelsConfig().to_library().screen is False
    judge = assets.verification.JudgeAssetConfig().to_library(model="judge-x")
    assert (judge.k, judge.temperature, judge.model) == (1, 0.0, "judge-x")
    assert assets.verification.JudgeAssetConfig(agreement_fail_below=0.3).band().fail_below == 0.3
    assert assets.generation.PolicyConfig().overrides() == {}
    assert assets.generation.PolicyConfig(max_steps=10, styles=["word"]).overrides() == {"max_steps": 10,
                                                                                          "styles": ("word",)}
    assert assets.resources.GenerationResource(base_urls=["http://a/v1"]).config().base_urls == ("http://a/v1",)
