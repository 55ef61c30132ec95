"""Package APIs as contracts: a module imports another package only through that package's ``__init__``.

A *unit* is one library package whose ``__init__`` is its API: each subpackage of ``prm`` (``prm.export``,
``prm.scoring``, ...), ``verifiers``, ``warehouse`` and its label-method table ``warehouse.methods`` (the units
of pyproject.toml's ``package_api`` contract, which the counts below read too). An import from any module of the
project (``assets`` and ``pipelines`` included) into a module of another unit (``prm.metrics.stats`` rather than
``prm.metrics``) reaches past the API and breaks the ``package_api`` contract, unless it is one of the contract's
named exceptions. Registered in pyproject.toml (``[tool.importlinter] contract_types``).

``python -m tests.contracts.import_contracts`` prints how many cross-package imports there are (one per importing
module and imported module, ``TYPE_CHECKING`` imports included) over every non-test module (``benchmarks`` and
``docs.hooks`` included) and how many reach past an ``__init__``, and how many names each unit exports
(``__all__``); ``--units`` names other units, e.g. ``--units 'prm.*' verifiers warehouse warehouse.methods
assets`` counts ``pipelines`` importing asset modules too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import grimp
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils

ROOTS = ("prm", "verifiers", "warehouse", "assets", "pipelines", "benchmarks", "docs")  # every non-test module
CONTRACT_TYPE = "package_api"


@dataclass(frozen=True)
class CrossImport:
    """One import of a module of another unit: who imports what, and on which lines."""

    importer: str
    imported: str
    unit: str  # the imported module's unit
    lines: tuple[int, ...]

    @property
    def deep(self) -> bool:
        """True when the import reaches past the unit's ``__init__`` into one of its modules."""
        return self.imported != self.unit


def expand_units(graph: grimp.ImportGraph, patterns: Iterable[str]) -> list[str]:
    """The units named by ``patterns``: a package name, or ``pkg.*`` for each direct subpackage of ``pkg``."""
    units: list[str] = []
    for pattern in patterns:
        if pattern.endswith(".*"):
            parent = pattern[:-2]
            units += sorted(m for m in graph.find_children(parent) if graph.find_children(m) or _is_package(m))
        else:
            units.append(pattern)
    return sorted(units, key=len, reverse=True)  # the longest (innermost) unit wins


def _is_package(module: str) -> bool:
    spec = __import__("importlib.util").util.find_spec(module)
    return bool(spec and spec.submodule_search_locations)


def unit_of(module: str, units: list[str]) -> str | None:
    """The unit ``module`` belongs to (``units`` longest first), or None for modules outside every unit."""
    return next((u for u in units if module == u or module.startswith(u + ".")), None)


def cross_imports(graph: grimp.ImportGraph, units: list[str]) -> list[CrossImport]:
    """Every direct import from a module of one unit to a module of another, sorted."""
    found: list[CrossImport] = []
    for importer in sorted(graph.modules):
        source = unit_of(importer, units) or importer.split(".")[0]  # assets, pipelines: importers only
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            target = unit_of(imported, units)
            if target is None or target == source:
                continue
            details = graph.get_import_details(importer=importer, imported=imported)
            lines = tuple(sorted({d["line_number"] for d in details}))
            found.append(CrossImport(importer, imported, target, lines))
    return found


class PackageApiContract(Contract):
    """Each unit is imported by other units only through its ``__init__``.

    Configuration options:
        - units: the packages whose ``__init__`` is the API (``pkg.*`` for each direct subpackage of ``pkg``).
        - ignore_imports: named exceptions (import expressions, ``*`` and ``**`` allowed). (Optional.)
    """

    type_name = CONTRACT_TYPE

    units = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)
    unmatched_ignore_imports_alerting = fields.EnumField(
        contract_utils.AlertLevel, default=contract_utils.AlertLevel.ERROR
    )

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        warnings = contract_utils.remove_ignored_imports(
            graph=graph,
            ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=self.unmatched_ignore_imports_alerting,  # type: ignore[arg-type]
        )
        units = expand_units(graph, self.units)  # type: ignore[arg-type]
        deep = [c for c in cross_imports(graph, units) if c.deep]
        return ContractCheck(kept=not deep, warnings=warnings, metadata={"deep": deep})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for c in check.metadata["deep"]:
            output.print_error(f"{c.importer} -> {c.imported} (l. {', '.join(map(str, c.lines))}): "
                               f"import it from {c.unit} (add the name to {c.unit}.__all__)", bold=False)
            output.new_line()


def contract_units(root: Path) -> list[str]:
    """The units of the ``package_api`` contract in ``root``'s pyproject.toml ("x.*": every direct subpackage of x):
    the ones ``lint-imports`` holds to the rule are the ones counted."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c["units"] for c in contracts if c.get("type") == CONTRACT_TYPE]
    if len(found) != 1:
        raise ValueError(f"{root / 'pyproject.toml'} holds {len(found)} {CONTRACT_TYPE} contracts, not one")
    return list(found[0])


def exports(units: Iterable[str]) -> dict[str, int]:
    """How many names each unit's ``__init__`` exports (its ``__all__``)."""
    return {u: len(getattr(importlib.import_module(u), "__all__", ())) for u in sorted(units)}


def count(root: Path, roots: Iterable[str] = ROOTS, patterns: Iterable[str] | None = None) -> dict[str, object]:
    """Cross-package imports under ``root``, the share that reaches past an ``__init__``, and each unit's exports
    (``patterns``: the units; default the contract's)."""
    sys.path.insert(0, str(root))
    graph = grimp.build_graph(*roots, cache_dir=None)
    units = expand_units(graph, contract_units(root) if patterns is None else patterns)
    found = cross_imports(graph, units)
    deep = [c for c in found if c.deep]
    by_unit: dict[str, list[int]] = {}
    for c in found:
        by_unit.setdefault(c.unit, [0, 0])[c.deep] += 1
    return {"cross_package_imports": len(found), "past_init": len(deep),
            "share_past_init": round(len(deep) / max(len(found), 1), 3),
            "by_unit": {u: {"through_init": a, "past_init": b} for u, (a, b) in sorted(by_unit.items())},
            "exports": exports(units),
            "importers": sorted({c.importer for c in found}),
            "past_init_list": [f"{c.importer} -> {c.imported}" for c in deep]}


def main(argv: list[str] | None = None) -> int:
    """Print the counts as JSON (``--list`` adds every import that reaches past an ``__init__``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--units", nargs="+", help="the units (default: the package_api contract's)")
    parser.add_argument("--list", action="store_true", help="list every import that reaches past an __init__")
    args = parser.parse_args(argv)
    result = count(args.root, patterns=args.units)
    if not args.list:
        result.pop("past_init_list")
        result.pop("importers")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
