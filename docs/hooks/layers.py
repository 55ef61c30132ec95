"""The layer picture of README and the asset-graph page, drawn from the import-linter contracts in ``pyproject.toml``
(the ones ``lint-imports`` enforces), so a package added to a contract shows up in the docs by ``make docs``.
"""

from __future__ import annotations

import tomllib
from typing import Any


def _contracts(pyproject: str) -> list[dict[str, Any]]:
    contracts = tomllib.loads(pyproject).get("tool", {}).get("importlinter", {}).get("contracts", [])
    if not contracts:
        raise ValueError("pyproject.toml has no [[tool.importlinter.contracts]]: the layers cannot be drawn")
    return contracts


def _units(layer: str) -> list[str]:
    return [u.strip() for u in layer.replace(":", "|").split("|") if u.strip()]


def layers_text(pyproject: str) -> str:
    """The layers as a text fence: the top-level layers contract, each package that another layers contract splits
    into its own layers drawn indented under it, then the names of the forbidden contracts.

    >>> toml = '''[[tool.importlinter.contracts]]
    ... name = "top"
    ... type = "layers"
    ... layers = ["app", "lib", "base | util"]
    ... [[tool.importlinter.contracts]]
    ... name = "inside lib"
    ... type = "layers"
    ... layers = ["lib.b", "lib.a | lib.c"]
    ... [[tool.importlinter.contracts]]
    ... name = "lib never imports app"
    ... type = "forbidden"
    ... '''
    >>> print(layers_text(toml))
    ```text
    # each line imports only from the lines below it; names on one line (a | b) never import each other
    app
    lib
      lib.b
      lib.a | lib.c
    base | util
    # and: lib never imports app
    ```
    """
    contracts = _contracts(pyproject)
    layered = [c for c in contracts if c.get("type") == "layers" and c.get("layers")]
    if not layered:
        raise ValueError("pyproject.toml has no layers contract: the layers cannot be drawn")
    # The outermost contract: the one whose layers no other contract nests (its units have no dotted parent).
    top = next((c for c in layered if all("." not in u for layer in c["layers"] for u in _units(layer))), layered[0])
    inner = {}
    for c in layered:
        if c is top:
            continue
        parents = {u.split(".")[0] for layer in c["layers"] for u in _units(layer)}
        if len(parents) == 1:
            inner[parents.pop()] = c["layers"]
    lines = ["```text", "# each line imports only from the lines below it; names on one line (a | b) never import "
                        "each other"]
    for layer in top["layers"]:
        lines.append(" | ".join(_units(layer)))
        if layer.strip() in inner:
            lines += ["  " + " | ".join(_units(sub)) for sub in inner[layer.strip()]]
    lines += [f"# and: {c['name']}" for c in contracts if c.get("type") == "forbidden" and c.get("name")]
    return "\n".join([*lines, "```"])
