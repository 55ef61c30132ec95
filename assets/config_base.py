"""The base of every asset's run config, and the one path from a library config dataclass to its ``dg.Config``.

Checked configs: numbers a user types in the launchpad (or a schedule's run config) are checked when Dagster builds
the config, before the asset does any work, as recipes are checked at their dry run. Dagster's own config schema
checks types only, so a NaN or an infinity in a float field used to reach the library config (or a training loop)
unchecked. Here a non-finite number is refused naming its field, and a config that converts to its library config
with no arguments (``to_library()``) is converted, so the library's bounds (``prm.settings``) apply at the same
moment.

Derived configs: the library dataclasses (``prm.training.PRMTrainConfig``, ``prm.labeling.MCConfig``, ...) own every
setting and its default. An asset config that exposes one is built from ``dataclasses.fields`` of it by
:func:`derive`, with the fields the asset sets itself named in ``exclude``/``fixed`` and the asset's own defaults in
``defaults`` (each commented where it is declared); ``to_library(**fixed)`` builds the library config back. A knob
added to a library config reaches the asset's launchpad schema and its library config without an edit here.
:func:`parity_problems` says where a config and its library config differ (the test over every pair).
"""

# No `from __future__ import annotations`: Dagster reads Config annotations at definition time.
import collections.abc
import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
from pydantic import model_validator


def _non_finite(value: object, where: str) -> str | None:
    """The path of a non-finite float inside ``value`` (a number, list or dict), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, list | tuple):
        return next((w for i, v in enumerate(value) if (w := _non_finite(v, f"{where}[{i}]"))), None)
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := _non_finite(v, f"{where}.{k}"))), None)
    return None


class CheckedConfig(dg.Config):
    """A ``dg.Config`` whose numbers are finite and whose library configs (every mirrored one, or a zero-argument
    ``to_library``) build."""

    @model_validator(mode="after")
    def _checked(self):
        for name in type(self).model_fields:
            where = _non_finite(getattr(self, name), name)
            if where is not None:
                raise ValueError(f"{where}={getattr(self, name)!r} is not a finite number; set a finite value")
        mirrors = getattr(type(self), "__mirrors__", ())
        for mirror in mirrors[1:]:  # the first is built by to_library below (which a subclass may extend)
            self.library(mirror.library)  # raises the library's one-line ValueError (prm.settings bounds)
        to_library = getattr(self, "to_library", None)
        if to_library is not None and not [p for p in inspect.signature(to_library).parameters.values()
                                           if p.default is inspect.Parameter.empty
                                           and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]:
            to_library()  # raises the library's one-line ValueError (prm.settings bounds) at config time
        return self


@dataclass(frozen=True)
class Mirror:
    """How an asset config exposes one library config dataclass: every field of it, less ``exclude`` and ``fixed``.

    ``defaults`` are the asset's own defaults where they differ from the library's (the demo's sizes); ``types``
    types a field Dagster's config cannot hold as the library declares it (a union of text and a tuple);
    ``prefix`` names the asset's fields (``agreement_`` + ``warn_below``); ``optional`` makes every field
    ``T | None = None``, None keeping the library's default (a config of overrides).
    """

    library: type
    exclude: frozenset[str] = frozenset()  # library fields the asset passes itself: to_library(name=value)
    fixed: Mapping[str, Any] = field(default_factory=dict)  # library fields the asset always sets, not exposed
    defaults: Mapping[str, Any] = field(default_factory=dict)  # asset-level default overrides
    types: Mapping[str, Any] = field(default_factory=dict)  # asset-level annotations of library fields
    prefix: str = ""
    optional: bool = False

    def __post_init__(self) -> None:
        names = {f.name for f in dataclasses.fields(self.library)}
        for what in ("exclude", "fixed", "defaults", "types"):
            unknown = set(getattr(self, what)) - names
            if unknown:
                raise TypeError(f"Mirror({self.library.__name__}): {what} names {sorted(unknown)}, which are not "
                                f"fields of {self.library.__name__}")
        object.__setattr__(self, "exclude", frozenset(self.exclude))

    def fields(self) -> dict[str, tuple[str, Any, Any]]:
        """asset field name -> (library field name, annotation, default; ``...`` when required)."""
        hints = typing.get_type_hints(self.library)
        out = {}
        for f in dataclasses.fields(self.library):
            if f.name in self.exclude or f.name in self.fixed or not f.init:
                continue
            where = f"{self.library.__name__}.{f.name}"
            annotation = self.types.get(f.name) or config_type(hints[f.name], where)
            if self.optional:
                annotation, default = annotation | None, None
            elif f.name in self.defaults:
                default = self.defaults[f.name]
            elif f.default is not dataclasses.MISSING:
                default = config_value(f.default)
            elif f.default_factory is not dataclasses.MISSING:
                default = config_value(f.default_factory())
            else:
                default = ...
            out[self.prefix + f.name] = (f.name, annotation, default)
        return out


_SCALARS = (str, int, float, bool)


def config_type(annotation: Any, where: str) -> Any:
    """The Dagster-config annotation of a library field's type: scalars as they are, a tuple or sequence of one
    scalar as a list of it, either of them or None; a TypeError naming ``where`` for anything else (give the field
    a ``types=`` entry)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in _SCALARS:
        return annotation
    if origin in (tuple, list, collections.abc.Sequence) and args and args[0] in _SCALARS \
            and (origin is not tuple or args[1:] in ((), (Ellipsis,))):
        return list[args[0]]
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        return config_type(inner, where) | None
    raise TypeError(f"{where}: Dagster's config cannot hold {annotation!r}; give the asset an annotation for it "
                    "(Mirror(types={...}))")


def config_value(value: Any) -> Any:
    """A library default as Dagster's config holds it (a tuple as a list)."""
    return [config_value(v) for v in value] if isinstance(value, tuple | list) else value


def library_value(value: Any) -> Any:
    """A config value as the library holds it: a list as a tuple, a nested derived config as its library config."""
    if isinstance(value, list | tuple):
        return tuple(library_value(v) for v in value)
    to_library = getattr(value, "to_library", None)
    return to_library() if isinstance(value, dg.Config) and to_library is not None else value


def _library(self, library: type, **fixed: Any) -> Any:
    """The ``library`` config (one this class mirrors) of these settings; ``fixed`` sets the excluded fields."""
    mirror = next((m for m in type(self).__mirrors__ if m.library is library), None)
    if mirror is None:
        raise TypeError(f"{type(self).__name__} mirrors no {library.__name__}")
    values = {lib_name: library_value(getattr(self, name)) for name, (lib_name, _, _) in mirror.fields().items()}
    if mirror.optional:
        values = {k: v for k, v in values.items() if v is not None}
    return library(**{**values, **mirror.fixed, **fixed})


def _to_library(self, **fixed: Any) -> Any:
    """The first mirrored library config of these settings; ``fixed`` sets the fields the asset passes itself."""
    return self.library(type(self).__mirrors__[0].library, **fixed)


def _overrides(self) -> dict[str, Any]:
    """The library fields set (not None) in a config of overrides (``Mirror(optional=True)``), as the library holds
    them."""
    mirror = type(self).__mirrors__[0]
    return {lib: library_value(v) for name, (lib, _, _) in mirror.fields().items()
            if (v := getattr(self, name)) is not None}


def derive(*mirrors: Mirror, base: type = CheckedConfig) -> type:
    """A ``base`` subclass (a ``dg.Config`` or ``dg.ConfigurableResource``) whose fields are those of ``mirrors``,
    with ``library(LibCls, **fixed)``, ``to_library(**fixed)`` (the first mirror) and, for optional mirrors,
    ``overrides()``. Subclass it to name the asset's config and add the asset's own fields and methods."""
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {}
    for mirror in mirrors:
        for name, (_, annotation, default) in mirror.fields().items():
            if name in annotations:
                raise TypeError(f"derive: field {name!r} comes from two library configs; give one a prefix")
            annotations[name] = annotation
            if default is not ...:
                namespace[name] = default
    namespace.update(__annotations__=annotations, __mirrors__=tuple(mirrors), __module__=__name__,
                     __doc__=f"The fields of {', '.join(m.library.__qualname__ for m in mirrors)}.",
                     library=_library, to_library=_to_library)
    if any(m.optional for m in mirrors):
        namespace["overrides"] = _overrides
    return type("".join(m.library.__name__ for m in mirrors) + "Fields", (base,), namespace)


def parity_problems(config: type, mirror: Mirror) -> list[str]:
    """One line per field of ``mirror``'s library config that ``config`` (a dg.Config or resource class) lacks, types
    otherwise, or defaults otherwise than the library (or the mirror's declared asset-level default)."""
    have = config.model_fields
    out = []
    for name, (lib_name, annotation, default) in mirror.fields().items():
        where = f"{config.__name__}.{name}"
        if name not in have:
            out.append(f"{where} is missing ({mirror.library.__name__}.{lib_name})")
            continue
        if have[name].annotation != annotation:
            out.append(f"{where} is typed {have[name].annotation!r}, {mirror.library.__name__}.{lib_name} "
                       f"{annotation!r}")
        mine = ... if have[name].is_required() else have[name].get_default(call_default_factory=True)
        if mine != default or type(mine) is not type(default):
            out.append(f"{where} defaults to {mine!r}, {mirror.library.__name__}.{lib_name} to {default!r}")
    return out
