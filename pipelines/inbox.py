"""Recipes in the inbox: the sidecar ``<source>.yaml`` beside a dropped file, the refusal of a file no policy of
the run can solve, and the staging of a recipe's dataset as an inbox file (what ``prm-pipeline run`` does)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from pipelines.recipe import DatasetSpec, Recipe, RecipeError, dump_recipe, load_recipe
from prm.models import ARITH_POLICY_NAME
from prm.tasks import BUILTIN_SOURCES, FILE_SUFFIXES, file_rows

SIDECAR_SUFFIX = ".yaml"


def sidecar_path(inbox: Path, source: str) -> Path:
    """Where the recipe of ``source``'s inbox file lives: ``<inbox>/<source>.yaml``."""
    return inbox / f"{source}{SIDECAR_SUFFIX}"


def sidecar_recipe(inbox: Path, source: str) -> Recipe | None:
    """The sidecar recipe of ``source`` (its dataset is the inbox file beside it), or None when there is none.

    >>> import tempfile
    >>> inbox = Path(tempfile.mkdtemp())
    >>> _ = (inbox / "mine.yaml").write_text("policy: {model: smollm2-135m-instruct}\\n")
    >>> sidecar_recipe(inbox, "mine").policy
    PolicySpec(model='smollm2-135m-instruct', backend=None, base_url=None, max_model_len=None, kv_cache_gib=None)
    """
    path = sidecar_path(inbox, source)
    if not (path.is_symlink() or path.exists()):  # a directory or a broken link there is refused, not skipped
        return None
    recipe = load_recipe(path)
    data = recipe.dataset
    if data.reads_file() or data.fields or data.order != "file":
        raise RecipeError(f"sidecar {path}: a sidecar's dataset is the inbox file beside it, so dataset.path, "
                          "dataset.hub, dataset.fields and dataset.order cannot be set there; drop them (rename the "
                          "file's columns to question/answer/solution), or run the recipe with `prm-pipeline run`, "
                          "which rewrites the file")
    if data.source not in (None, source):
        raise RecipeError(f"sidecar {path}: dataset.source is {data.source!r} but the file names source {source!r}; "
                          "drop dataset.source or rename the files")
    return replace(recipe, dataset=DatasetSpec(source=source, limit=data.limit, kind=data.kind,
                                               reference=data.reference, task=data.task))


def unsuited_policy(source: str, model: str) -> str | None:
    """Why ``model`` must not sample ``source`` without a recipe, or None when it may.

    >>> unsuited_policy("arith", "arith-policy") is None, unsuited_policy("gsm8k", "smollm2-135m-instruct") is None
    (True, True)
    >>> print(unsuited_policy("gsm8k", "arith-policy"))
    source 'gsm8k' has no recipe, so the default policy 'arith-policy' would sample it: ...
    """
    if source in BUILTIN_SOURCES or model != ARITH_POLICY_NAME:
        return None
    return (f"source {source!r} has no recipe, so the default policy {ARITH_POLICY_NAME!r} would sample it: a "
            "char-level model trained only on generated arithmetic, which writes garbage on dataset problems and "
            f"grades none right. Put a recipe beside the file as {source}{SIDECAR_SUFFIX} (e.g. copy "
            "recipes/smollm2-gsm8k.yaml and set policy.model), or run it with `prm-pipeline run RECIPE.yaml`")


def inbox_request(inbox: Path, source: str, model: str) -> tuple[dict, list[str] | None]:
    """(refresh run config, asset selection) of an inbox source: its sidecar's, else the code location's defaults;
    a RecipeError when its sidecar is broken or no recipe makes ``model`` fit for it."""
    recipe = sidecar_recipe(inbox, source)
    if recipe is not None:
        from pipelines.run_config import recipe_run_config, recipe_selection  # the assets' configs, on use

        return recipe_run_config(recipe, "refresh"), recipe_selection(recipe, "refresh")
    why = unsuited_policy(source, model)
    if why is not None:
        raise RecipeError(why)
    return {}, None


def _write_atomic(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
        handle.write(data)
    os.replace(handle.name, path)


def _length(row: object) -> int:
    """How long a row's problem is: its text fields' characters (rows that are no object sort last)."""
    if not isinstance(row, dict):
        return 1 << 62
    return sum(len(str(row.get(k) or "")) for k in ("question", "problem", "answer", "solution"))


def _mapped_rows(path: Path, fields: dict[str, str], order: str = "file") -> bytes:
    """The rows of ``path`` as JSON lines with ``fields``' columns renamed, in ``order`` (a row that cannot be read
    keeps its text, so the loader rejects it with its reason; ValueError for a file that cannot be read at all)."""
    out = []
    for line, row, error in file_rows(path):
        if error is None and isinstance(row, dict):
            renamed = set(fields) | set(fields.values())  # the mapped columns go, under their new names only
            row = {**{k: v for k, v in row.items() if k not in renamed}, **{k: row.get(v) for k, v in fields.items()}}
        out.append((line, row))  # a row not read is its raw text (bytes)
    if order == "shortest":
        out.sort(key=lambda r: _length(r[1]))  # stable: equal lengths keep the file's order; unread rows go last
    lines, previous = [], 0
    for line, row in out:
        lines.extend([b""] * (line - previous - 1) if order == "file" else [])  # blank lines keep line numbers
        lines.append(row if isinstance(row, bytes) else json.dumps(row, default=str).encode())
        previous = line
    return b"\n".join(lines) + b"\n"


def stage_dataset(recipe: Recipe, inbox: Path) -> Path | None:
    """Put the recipe's dataset file in the inbox as ``<source><suffix>`` (columns renamed by ``dataset.fields``,
    rows in ``dataset.order``) with the recipe as its sidecar; unchanged files are not rewritten. None for a
    built-in source."""
    try:
        src = recipe.dataset.file()
    except ValueError as exc:  # a hub dataset that cannot be loaded: one line, as a dry run says it
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from None
    if src is None:
        return None
    if not src.is_file():
        raise RecipeError(f"recipe {recipe.name!r}: dataset.path {recipe.dataset.path!r} is {src}, which is not a "
                          "file; fix the path (relative paths start at the project root) or pass "
                          "--set dataset.path=/path/to/file.jsonl")
    if src.suffix not in FILE_SUFFIXES:
        raise RecipeError(f"recipe {recipe.name!r}: {src.name} is not one of {FILE_SUFFIXES}; convert it to JSONL")
    fields, order = dict(recipe.dataset.fields), recipe.dataset.order
    rewrite = bool(fields) or order != "file"
    suffix = ".jsonl" if rewrite else src.suffix
    inbox.mkdir(parents=True, exist_ok=True)
    others = [p.name for s in FILE_SUFFIXES if s != suffix and (p := inbox / f"{recipe.source}{s}").exists()]
    if others:
        raise RecipeError(f"the inbox {inbox} already holds {others} for source {recipe.source!r}; remove it or set "
                          "dataset.source to another name")
    target = inbox / f"{recipe.source}{suffix}"
    try:
        data = _mapped_rows(src, fields, order) if rewrite else src.read_bytes()
    except ValueError as exc:  # not UTF-8, not a JSON array, not Parquet: the whole file
        raise RecipeError(f"recipe {recipe.name!r}: dataset {exc}") from None
    if not target.is_file() or target.read_bytes() != data:
        _write_atomic(target, data)
    spec = recipe.dataset
    reference = spec.reference_file()  # absolute: the sidecar lives in the inbox, not beside the recipe
    sidecar = replace(recipe, dataset=DatasetSpec(limit=spec.limit, kind=spec.kind, task=spec.task,
                                                  reference=None if reference is None else str(reference)))
    text = f"# written by `prm-pipeline run` from recipe {recipe.name!r}; the sensor and schedule read it\n"
    text += dump_recipe(sidecar)
    side = sidecar_path(inbox, recipe.source)
    if not side.is_file() or side.read_text(encoding="utf-8") != text:
        _write_atomic(side, text.encode())
    return target
