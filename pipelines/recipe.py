"""The recipe: one YAML file that says dataset, policy, prompt, sampling, labels, PRM, RL and search.

This module owns the schema: a :class:`Recipe` is plain, validated data, and imports nothing of the assets.
:func:`pipelines.run_config.recipe_run_config` alone maps it onto the Dagster run config of each job (the library
configs, from which the assets' ``dg.Config`` classes are derived, own the knobs and their defaults: a field left out
of the recipe is left out of the run config). ``prm-pipeline run RECIPE`` runs it, and ``<source>.yaml`` beside an
inbox file attaches it to the sensor's and the schedule's runs (docs/recipes.md).

>>> recipe = parse_recipe({"policy": {"model": "smollm2-135m-instruct"}, "sampling": {"n": 2}})
>>> recipe.sampling.n, recipe.prm.base_model is None
(2, True)
>>> parse_recipe({"sampling": {"temprature": 0.7}})
Traceback (most recent call last):
...
pipelines.recipe.RecipeError: recipe: sampling.temprature is not a recipe field; sampling takes ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from pipelines.recipe_bounds import number_problems
from prm.datagen import IMPORTED_TASKS
from prm.files import YAMLRefused, load_yaml, read_yaml
from prm.models import ARITH_POLICY_NAME
from prm.tasks import BUILTIN_SOURCES, is_source_name
from warehouse import PROJECT_ROOT
from warehouse.methods import LABEL_SOURCES, method, method_names, recipe_label_assets

# labels.methods keys are the method table's, warehouse.methods.recipe_label_assets(), read on use; pipelines.run_config
# selects the asset each materializes.
# The dataset fields a mapping may rename (prm.tasks.datasets reads these names).
DATASET_FIELDS = ("question", "answer", "solution")
DATASET_ORDERS = ("file", "shortest")
# What the dataset file holds: problems the policy samples solutions for, or solutions someone already has (a
# ProcessBench/TRL/Math-Shepherd/plain file, prm.tasks.load_solutions), which the labelers label as they are.
DATASET_KINDS = ("problems", "solutions")
JOBS = ("refresh", "prm", "rl", "search", "flywheel")


class RecipeError(ValueError):
    """A recipe that cannot run: what is wrong, why, and what to write instead; ``problems`` holds one line per
    problem (a recipe's problems are all reported at once, so one edit fixes them all)."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems) or (message,)

    @classmethod
    def collected(cls, where: str, problems: Sequence[str]) -> RecipeError:
        """One error for ``problems`` of ``where``: one line each (a single one on the first line)."""
        problems = [p if len(p) <= 400 else p[:397] + "..." for p in problems]  # a quoted 1 MB value stays short
        if len(problems) == 1:
            return cls(f"{where}: {problems[0]}", problems)
        return cls(f"{where} has {len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems), problems)

    def one_line(self) -> str:
        """The message on one line (a sensor's skip reason, a log line)."""
        return str(self).replace(" problems:\n  - ", " problems: ").replace("\n  - ", "; ")


@dataclass(frozen=True)
class DatasetSpec:
    """Where the problems come from: a built-in source, a GSM8K/MATH-style file, or a dataset on the Hugging Face hub
    named as users name it (``hub: openai/gsm8k``, ``config: main``, ``split: test``)."""

    path: str | None = None  # .jsonl/.json/.parquet; a relative path is read from the project root
    # A hub dataset id (prm.datagen.hub_file: downloaded once through `datasets`, cached, one line offline); its
    # config and split. Instead of path.
    hub: str | None = None
    config: str | None = None
    split: str = "train"
    source: str | None = None  # the partition's source name; default: the file's stem (hub: the dataset's name)
    limit: int | None = None  # rows read from the file (the problems asset's limit)
    fields: tuple[tuple[str, str], ...] = ()  # (GSM8K/MATH name, the file's name), e.g. (("question", "prompt"),)
    # "file": rows in the file's order; "shortest": the shortest problems (question + gold solution) first, so a
    # small limit takes the easiest ones (a smoke test of a small model)
    order: str = "file"
    kind: str = "problems"  # one of DATASET_KINDS
    # kind solutions: a GSM8K/MATH-style problem file whose gold answers and reference solutions are joined to the
    # solutions' questions (the rollout labelers grade against them); relative paths start at the project root
    reference: str | None = None
    task: str | None = None  # kind solutions: the problems' task, "gsm8k" or "math" (SymPy checks both); None: math

    def source_name(self) -> str:
        if self.source:
            return self.source
        if self.hub:  # "HuggingFaceH4/MATH-500" -> "math-500": a partition name (is_source_name)
            return self.hub.rsplit("/", 1)[-1].lower()
        return Path(self.path).stem if self.path else "arith"

    def reads_file(self) -> bool:
        """Whether the problems come from a file (a path or a hub dataset), not a built-in generator."""
        return self.path is not None or self.hub is not None

    def file(self) -> Path | None:
        """The dataset file: a relative path taken from the project root, or the hub dataset's local copy (loaded
        on the first call; ValueError with what to do when it cannot be)."""
        if self.hub is not None:
            from prm.datagen import hub_file

            return hub_file(self.hub, self.config, self.split)
        return _from_root(self.path)

    def reference_file(self) -> Path | None:
        """The reference problem file of a solutions dataset, a relative path taken from the project root."""
        return _from_root(self.reference)


def _from_root(path: str | None) -> Path | None:
    if path is None:
        return None
    out = Path(path).expanduser()
    return out if out.is_absolute() else (PROJECT_ROOT / out).resolve()


@dataclass(frozen=True)
class PolicySpec:
    """The model that writes solutions and rollouts (and, unless set otherwise, the PRM backbone and RL policy)."""

    model: str = ARITH_POLICY_NAME  # a registered name, a local HF folder, or a hub id (prm.models.resolve_model)
    backend: str | None = None  # "vllm" (local engine) or "openai" (a server); None: the resource's default
    base_url: str | None = None  # backend "openai" only
    max_model_len: int | None = None  # question + solution tokens the engine holds
    kv_cache_gib: float | None = None


@dataclass(frozen=True)
class PromptSpec:
    """What the policy reads around the question; None: the policy's own template."""

    system_prompt: str | None = None
    instruction: str | None = None  # the answer-format instruction after the question


@dataclass(frozen=True)
class SamplingSpec:
    """How solutions are sampled; rollouts share temperature, top_p, stop and max_tokens."""

    n: int | None = None  # solutions per problem
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    max_tokens: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class LabelsSpec:
    """Which labelers run and what they may spend."""

    methods: tuple[str, ...] | None = None  # keys of recipe_label_assets(); None: every labeler of the refresh job
    rollouts: int | None = None  # N rollouts per step prefix (the rollouts asset and Math-Shepherd MC)
    omegaprm_k: int | None = None  # OmegaPRM rollouts per MC estimate
    omegaprm_searches: int | None = None  # OmegaPRM selections per question
    judge_votes: int | None = None  # the judge's k votes per solution
    # Rollouts mc and omegaprm may each charge per partition (max_rollouts_per_partition); None: no budget.
    rollout_budget: int | None = None


@dataclass(frozen=True)
class ChecksSpec:
    """When the solutions are refused for labeling (the solutions_can_be_labeled check); None: the defaults."""

    max_no_answer_share: float | None = None  # refuse above this share of solutions with no extractable answer
    min_correct: int | None = None  # refuse when fewer solutions reach the gold answer (0: off)


@dataclass(frozen=True)
class PRMSpec:
    """The PRM trained on the labels."""

    base_model: str | None = None  # None: the policy (Math-Shepherd initialises its PRM from the generator)
    head: str | None = None  # a PRM kind with a trainer (prm.scoring.PRM_KINDS): "lm" or "classifier"
    label_method: str = "omegaprm"  # the labels it trains on (warehouse.methods.LABEL_SOURCES)
    max_steps: int | None = None
    batch_size: int | None = None  # solutions per optimizer step (None: PRMTrainConfig's 16)
    compare: tuple[str, ...] = ()  # label sources for the label-source comparison; empty: no comparison


@dataclass(frozen=True)
class RLSpec:
    """GRPO on the policy with the PRM's rewards."""

    run: bool = False  # whether `prm-pipeline run` runs the rl job after the PRM
    policy: str | None = None  # None: the recipe's policy
    steps: int | None = None
    # The reward PRM: "trained" (the prm_model asset's), "shipped" or "arith-prm", or a folder; None: trained.
    prm: str | None = None


@dataclass(frozen=True)
class SearchSpec:
    """Test-time search with the PRM (the search job and ``python -m prm.search``)."""

    policy: str | None = None  # None: the recipe's policy


@dataclass(frozen=True)
class Recipe:
    """A whole run. A section left out of a recipe takes its spec's defaults; recipes/default.yaml is the demo."""

    name: str = "default"
    dataset: DatasetSpec = field(default_factory=DatasetSpec)
    policy: PolicySpec = field(default_factory=PolicySpec)
    prompt: PromptSpec = field(default_factory=PromptSpec)
    sampling: SamplingSpec = field(default_factory=SamplingSpec)
    labels: LabelsSpec = field(default_factory=LabelsSpec)
    checks: ChecksSpec = field(default_factory=ChecksSpec)
    prm: PRMSpec = field(default_factory=PRMSpec)
    rl: RLSpec = field(default_factory=RLSpec)
    search: SearchSpec = field(default_factory=SearchSpec)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def source(self) -> str:
        return self.dataset.source_name()

    def to_dict(self) -> dict:
        """The recipe as plain YAML-able data (what :func:`parse_recipe` reads back)."""
        data = dataclasses.asdict(self)
        data["dataset"]["fields"] = dict(self.dataset.fields) or None
        return _plain(data)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None and v != ()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _validate(recipe: Recipe) -> None:
    problems = _problems(recipe)
    if problems:
        raise RecipeError.collected(f"recipe {recipe.name!r}", problems)


def _problems(recipe: Recipe) -> list[str]:
    """One line per problem of ``recipe`` (empty: it can run)."""
    out = number_problems(recipe)
    source = recipe.source
    if not is_source_name(source):
        out.append(f"dataset.source {source!r} cannot name a partition; use letters, digits, '_', "
                   "'-' or '.', starting with a letter or digit")
    if recipe.dataset.path is not None and recipe.dataset.hub is not None:
        out.append(f"dataset.path and dataset.hub both name the problems ({recipe.dataset.path!r}, "
                   f"{recipe.dataset.hub!r}); keep one")
    if recipe.dataset.hub is None and recipe.dataset.config is not None:
        out.append("dataset.config names a hub dataset's configuration, but dataset.hub is not set; set both")
    if not recipe.dataset.reads_file() and source not in BUILTIN_SOURCES and recipe.dataset.fields:
        out.append("dataset.fields renames the columns of a file, but dataset.path is not set; "
                   "give the file's path")
    if recipe.dataset.reads_file() and source in BUILTIN_SOURCES:
        out.append(f"dataset.source {source!r} is a built-in generator and reads no file; name the "
                   "source of your file otherwise, e.g. its file name")
    if recipe.dataset.kind not in DATASET_KINDS:
        out.append(f"dataset.kind {recipe.dataset.kind!r} is unknown; use 'problems' (the policy "
                   "samples solutions) or 'solutions' (label the solutions in the file)")
    if recipe.dataset.kind != "solutions" and (recipe.dataset.reference or recipe.dataset.task):
        out.append("dataset.reference and dataset.task describe a solution file; set "
                   "dataset.kind: solutions, or drop them (a problem file carries its own gold answers)")
    if recipe.dataset.task not in (None, *IMPORTED_TASKS):
        out.append(f"dataset.task {recipe.dataset.task!r} is unknown; use one of {IMPORTED_TASKS}")
    if recipe.dataset.order not in DATASET_ORDERS:
        out.append(f"dataset.order {recipe.dataset.order!r} is unknown; use one of {DATASET_ORDERS}")
    for name, _ in recipe.dataset.fields:
        if name not in DATASET_FIELDS:
            out.append(f"dataset.fields maps {name!r}, which is not a dataset field; map any of "
                       f"{DATASET_FIELDS} to your file's column names")
    unknown = [m for m in recipe.labels.methods or () if m not in recipe_label_assets()]
    if unknown:
        out.append(f"labels.methods {unknown} are not labelers; choose from {sorted(recipe_label_assets())}")
    if "progress" in (recipe.labels.methods or ()) and "mc" not in recipe.labels.methods:
        out.append("labels.methods has progress but not mc; progress labels are computed from the "
                   "MC labels' rollouts, so add mc")
    if recipe.labels.methods is not None and recipe.prm.label_method not in (*recipe.labels.methods, "truth"):
        name = recipe.prm.label_method  # its recipe key runs it: z3 is run by formal, mc_early_stop by mc
        if (method(name).recipe_key if name in method_names() else name) not in recipe.labels.methods:
            out.append(f"prm.label_method {recipe.prm.label_method!r} trains on labels no labeler of "
                       f"labels.methods {list(recipe.labels.methods)} writes; add it there or pick one of them")
    for name in (recipe.prm.label_method, *recipe.prm.compare):
        if name not in LABEL_SOURCES:
            out.append(f"{name!r} is not a label source; the PRM trains on one of {LABEL_SOURCES}")
    if recipe.prm.head is not None:
        from prm.scoring import trainable_kinds  # the PRM-kind registry (loads torch: only when a head is named)

        trainable = list(trainable_kinds())
        if recipe.prm.head not in trainable:
            out.append(f"prm.head {recipe.prm.head!r} is unknown; use one of {trainable} ('lm': the policy's LM "
                       "head scores steps; 'classifier': a two-class head, vLLM-servable)")
    if recipe.policy.backend not in (None, "vllm", "openai"):
        out.append(f"policy.backend {recipe.policy.backend!r} is unknown; use 'vllm' or 'openai'")
    return out


_SPECS = {f.name: f.default_factory for f in fields(Recipe) if f.default_factory is not dataclasses.MISSING}


def parse_recipe(data: Mapping[str, Any] | None, origin: str = "recipe") -> Recipe:
    """A validated :class:`Recipe` from parsed YAML; a :class:`RecipeError` with one line per problem otherwise."""
    data = dict(data or {})
    known = {f.name for f in fields(Recipe)}
    kwargs: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in data.items():
        if key not in known:
            problems.append(f"{key!s:.60} is not a recipe section; a recipe has {sorted(known)}")
        elif key == "name":
            kwargs["name"] = _typed("name", value, str, problems)
        elif value is None:
            continue
        elif not isinstance(value, Mapping):
            problems.append(f"{key} must be a mapping of its fields (e.g. `{key}:` then indented `field: value` "
                            f"lines), not {type(value).__name__}")
        else:
            kwargs[key] = _section(key, value, type(_SPECS[key]()), problems)
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    try:
        recipe = Recipe(**kwargs)  # validated with the fields that could be read, so every problem is reported
    except RecipeError as exc:
        problems.extend(exc.problems)
    if problems:
        raise RecipeError.collected(origin, problems)
    return recipe


def _section(section: str, values: Mapping[str, Any], spec: type, problems: list[str]) -> Any:
    known = {f.name: f for f in fields(spec)}
    kwargs = {}
    for key, value in values.items():
        if key not in known:
            problems.append(f"{section}.{key!s:.60} is not a recipe field; {section} takes {sorted(known)}")
            continue
        try:
            kwargs[key] = _coerce(f"{section}.{key}", value, known[key].type)
        except RecipeError as exc:
            problems.append(str(exc))
    return spec(**kwargs)


def _coerce(key: str, value: Any, annotation: str) -> Any:
    """``value`` as the field's type (annotations are strings here: ``from __future__ import annotations``)."""
    if value is None:
        if "None" not in annotation:
            raise RecipeError(f"{key} cannot be empty; give a value or leave the key out")
        return None
    if key == "dataset.fields":
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise RecipeError(f"{key} must map dataset fields to your column names, e.g. "
                              "`fields: {question: prompt, answer: target}`")
        return tuple((str(k), v) for k, v in value.items())
    if annotation.startswith("tuple"):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, Sequence) or not all(isinstance(v, str) for v in items):
            raise RecipeError(f"{key} must be a list of strings, e.g. [a, b]; got {_short(value)}")
        return tuple(items)
    base = annotation.split(" | ")[0]
    kinds = {"str": str, "int": int, "float": float, "bool": bool}[base]
    problems: list[str] = []
    out = _typed(key, value, kinds, problems)
    if problems:
        raise RecipeError(problems[0])
    return out


def _short(value: Any) -> str:
    """``value``'s repr cut to 60 characters (a shared-alias structure's full repr is never built)."""
    if isinstance(value, Mapping | list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    return f"{value!r:.60}"


_KIND_NAMES = {int: "a whole number", float: "a number", str: "text (quote it in YAML)", bool: "true or false"}


def _typed(key: str, value: Any, kind: type, problems: list[str]) -> Any:
    """``value`` as ``kind``; None with a line in ``problems`` when it is not one."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            problems.append(f"{key} is an integer of {len(str(value))} digits, too large for a number")
            return None
    if isinstance(value, bool) and kind is not bool:
        problems.append(f"{key} is {value} (a boolean); give {_KIND_NAMES[kind]}")
        return None
    if not isinstance(value, kind):
        problems.append(f"{key} is {_short(value)}, a {type(value).__name__}; give {_KIND_NAMES[kind]}")
        return None
    return value


def apply_override(data: dict, assignment: str) -> dict:
    """``data`` with ``section.field=value`` set (the value read as YAML: ``2``, ``0.7``, ``[mc]``, ``text``).

    >>> apply_override({"sampling": {"n": 4}}, "sampling.n=2")
    {'sampling': {'n': 2}}
    >>> apply_override({}, "prompt.instruction=Answer: then the number.")
    {'prompt': {'instruction': 'Answer: then the number.'}}
    """
    key, sep, text = assignment.partition("=")
    parts = key.strip().split(".")
    if not sep or not all(parts):
        raise RecipeError(f"--set {assignment!r}: write section.field=value, e.g. --set sampling.n=2")
    try:
        value = load_yaml(text, origin=f"--set {key}") if text.strip() else None
    except YAMLRefused:
        value = text  # plain text that YAML reads otherwise, e.g. "The answer is: [x]"
    # Text with ': ' reads as a mapping in YAML; only a flow mapping `{a: b}` is meant as one.
    if isinstance(value, str) or (isinstance(value, Mapping) and not text.lstrip().startswith("{")):
        value = text
    out = dict(data)
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        node[part] = dict(child) if isinstance(child, Mapping) else {}
        node = node[part]
    node[parts[-1]] = value
    return out


def load_recipe(path: str | Path, overrides: Sequence[str] = ()) -> Recipe:
    """The recipe in the YAML file ``path`` with ``--set`` ``overrides`` applied; its name defaults to the stem."""
    path = Path(path)
    try:
        data = read_yaml(path, origin=f"recipe {path}")
    except FileNotFoundError:
        raise RecipeError(f"recipe {path} does not exist; give the path of a YAML recipe (see recipes/)") from None
    except YAMLRefused as exc:
        raise RecipeError(str(exc)) from None
    if data is not None and not isinstance(data, Mapping):
        raise RecipeError(f"recipe {path} holds a YAML {type(data).__name__}; a recipe is a mapping of sections")
    data = dict(data or {})
    for assignment in overrides:
        data = apply_override(data, assignment)
    data.setdefault("name", path.stem)
    return parse_recipe(data, origin=f"recipe {path}")


def dump_recipe(recipe: Recipe) -> str:
    """The recipe as YAML text that :func:`load_recipe` reads back to an equal recipe."""
    return yaml.safe_dump(recipe.to_dict(), sort_keys=False, allow_unicode=True)
