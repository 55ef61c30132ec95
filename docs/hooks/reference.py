"""Reference pages generated from the code when the site builds: the asset graph (a picture and tables, from the
Dagster definitions in ``pipelines/definitions.py``), every CLI's help (from its argparse parser or click group) and
one API page per package (mkdocstrings, from each package's ``__all__``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import html
import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs.hooks.results_io import table

GROUP_COLORS = {"problems": "#bbdefb", "generation": "#c8e6c9", "labeling": "#fff59d", "verification": "#f8bbd0",
                "prm": "#d1c4e9", "rl": "#b2ebf2", "search": "#ffe0b2", "flywheel": "#d7ccc8"}


@dataclass(frozen=True)
class AssetInfo:
    """One asset as the reference shows it."""

    name: str
    group: str
    description: str
    deps: tuple[str, ...]
    partitioned: str
    checks: tuple[tuple[str, bool, str], ...]  # (name, blocking, description)


def load_assets() -> tuple[list[AssetInfo], Any]:
    """Every asset of the code location with its checks, and the ``Definitions`` object itself."""
    from pipelines.definitions import defs  # imported here: dagster loads only when the reference is built

    checks: dict[str, list[tuple[str, bool, str]]] = {}
    for group in defs.asset_checks or []:
        for spec in group.check_specs:
            checks.setdefault(spec.asset_key.to_user_string(), []).append(
                (spec.name, spec.blocking, _first_line(spec.description)))
    infos = []
    for a in defs.assets or []:
        for spec in a.check_specs:
            checks.setdefault(spec.asset_key.to_user_string(), []).append(
                (spec.name, spec.blocking, _first_line(spec.description)))
        for spec in a.specs:
            name = spec.key.to_user_string()
            parts = type(a.partitions_def).__name__ if a.partitions_def else "-"
            infos.append(AssetInfo(name, spec.group_name or "default", _first_line(spec.description),
                                   tuple(sorted(d.asset_key.to_user_string() for d in spec.deps)), parts,
                                   tuple(checks.get(name, ()))))
    infos = [AssetInfo(i.name, i.group, i.description, i.deps, i.partitioned, tuple(checks.get(i.name, ())))
             for i in infos]
    return infos, defs


def _first_line(text: str | None) -> str:
    paragraph = (text or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split()).replace("|", "\\|")


def layers(assets: list[AssetInfo]) -> list[list[str]]:
    """Assets in rows by longest path from a root, each row ordered by its parents' mean position.

    >>> a = [AssetInfo("x", "g", "", (), "-", ()), AssetInfo("y", "g", "", ("x",), "-", ())]
    >>> layers(a)
    [['x'], ['y']]
    """
    deps = {a.name: [d for d in a.deps if d != a.name] for a in assets}
    depth: dict[str, int] = {}

    def visit(name: str) -> int:
        if name not in depth:
            depth[name] = 1 + max((visit(d) for d in deps.get(name, []) if d in deps), default=-1)
        return depth[name]

    for name in deps:
        visit(name)
    rows: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    group = {a.name: a.group for a in assets}
    for name in sorted(deps, key=lambda n: (group[n], n)):
        rows[depth[name]].append(name)
    for i in range(1, len(rows)):
        where = {n: k for k, n in enumerate(rows[i - 1])}
        for j in range(i - 1):
            where.update({n: k for k, n in enumerate(rows[j])})
        rows[i].sort(key=lambda n: sum(where.get(d, 0) for d in deps[n]) / max(len(deps[n]), 1))
    return rows


def components(assets: list[AssetInfo]) -> list[list[AssetInfo]]:
    """The graph's weakly connected parts, the largest first (the flywheel is drawn beside the main graph).

    >>> a = [AssetInfo("x", "g", "", (), "-", ()), AssetInfo("y", "g", "", (), "-", ())]
    >>> [[i.name for i in c] for c in components(a)]
    [['x'], ['y']]
    """
    parent = {a.name: a.name for a in assets}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for a in assets:
        for d in a.deps:
            if d in parent:
                parent[root(d)] = root(a.name)
    groups: dict[str, list[AssetInfo]] = {}
    for a in assets:
        groups.setdefault(root(a.name), []).append(a)
    return sorted(groups.values(), key=lambda c: (-len(c), min(a.name for a in c)))


def asset_graph_svg(assets: list[AssetInfo]) -> str:
    """A top-down SVG of the asset graph, boxes colored by group; no JavaScript, so it renders offline."""
    group = {a.name: a.group for a in assets}
    char_w, box_h, gap_x, gap_y, pad, part_gap = 7.8, 30, 24, 46, 20, 60
    widths = {n: len(n) * char_w + 24 for n in group}
    pos: dict[str, tuple[float, float]] = {}
    left, n_rows = pad, 0
    for part in components(assets):
        rows = layers(part)
        row_w = [sum(widths[n] for n in row) + gap_x * (len(row) - 1) for row in rows]
        for i, row in enumerate(rows):
            x = left + (max(row_w) - row_w[i]) / 2
            for n in row:
                pos[n] = (x, pad + i * (box_h + gap_y))
                x += widths[n] + gap_x
        left += max(row_w) + part_gap
        n_rows = max(n_rows, len(rows))
    legend_w = 150
    width = left - part_gap + pad + legend_w
    height = pad * 2 + n_rows * (box_h + gap_y) - gap_y
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="13">',
           '<rect width="100%" height="100%" fill="white"/>']
    for a in assets:
        x2, y2 = pos[a.name]
        for d in a.deps:
            if d not in pos or d == a.name:
                continue
            x1, y1 = pos[d]
            sx, sy, ex, ey = x1 + widths[d] / 2, y1 + box_h, x2 + widths[a.name] / 2, y2
            mid = (sy + ey) / 2
            out.append(f'<path d="M{sx:.0f},{sy:.0f} C{sx:.0f},{mid:.0f} {ex:.0f},{mid:.0f} {ex:.0f},{ey - 4:.0f}" '
                       'fill="none" stroke="#78909c" stroke-width="1.2"/>')
            out.append(f'<path d="M{ex - 4:.0f},{ey - 8:.0f} L{ex:.0f},{ey:.0f} L{ex + 4:.0f},{ey - 8:.0f}" '
                       'fill="#78909c" stroke="none"/>')
    for n, (x, y) in pos.items():
        color = GROUP_COLORS.get(group[n], "#eeeeee")
        out.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{widths[n]:.0f}" height="{box_h}" rx="6" fill="{color}" '
                   'stroke="#455a64"/>')
        out.append(f'<text x="{x + widths[n] / 2:.0f}" y="{y + 20:.0f}" text-anchor="middle">{html.escape(n)}</text>')
    lx = width - pad - legend_w + 20
    for k, g in enumerate(sorted({a.group for a in assets})):
        y = pad + k * 24
        out.append(f'<rect x="{lx:.0f}" y="{y}" width="16" height="16" rx="3" fill="{GROUP_COLORS.get(g, "#eee")}" '
                   'stroke="#455a64"/>')
        out.append(f'<text x="{lx + 24:.0f}" y="{y + 13}">{html.escape(g)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def assets_page(assets: list[AssetInfo], defs: Any) -> str:
    """The asset reference: the picture, then every asset, check, job, schedule, sensor and resource."""
    out = ["# Assets and checks", "", "Generated from the Dagster definitions (`pipelines/definitions.py`) when the "
           "site is built.", "", "![the asset graph](../assets/asset-graph.svg)", "", "## Assets", "",
           table(["asset", "group", "reads", "partitions", "what it is"],
                 [[f"`{a.name}`", a.group, ", ".join(f"`{d}`" for d in a.deps) or "-", a.partitioned, a.description]
                  for a in sorted(assets, key=lambda a: (a.group, a.name))]), "", "## Checks", "",
           "A blocking check stops the run's downstream steps when it fails; the others warn.", "",
           table(["asset", "check", "blocking", "what it checks"],
                 [[f"`{a.name}`", f"`{c[0]}`", "yes" if c[1] else "no", c[2]]
                  for a in sorted(assets, key=lambda a: (a.group, a.name)) for c in a.checks])]
    out += ["", "## Jobs", "", table(["job", "what it runs"],
                                     [[f"`{j.name}`", _first_line(j.description)] for j in defs.jobs or []])]
    out += ["", "## Schedules", "", table(["schedule", "cron (UTC)", "job", "default"],
                                          [[f"`{s.name}`", f"`{s.cron_schedule}`", f"`{s.job_name}`",
                                            str(s.default_status.value).lower()] for s in defs.schedules or []])]
    out += ["", "## Sensors", "", table(["sensor", "what it does"],
                                        [[f"`{s.name}`", _first_line(s.description)] for s in defs.sensors or []])]
    out += ["", "## Resources", "", table(["resource", "type", "default settings"],
                                          [[f"`{k}`", f"`{type(v).__name__}`", f"`{_settings(v)}`"]
                                           for k, v in (defs.resources or {}).items()])]
    return "\n".join(out) + "\n"


def _settings(resource: Any) -> str:
    fields = getattr(resource, "model_dump", lambda: {})()
    return ", ".join(f"{k}={v!r}" for k, v in fields.items() if v not in ("", [], None)).replace("|", "\\|")


# (invocation, module, attribute): every command a user types, with the object that parses its arguments.
CLIS: tuple[tuple[str, str, str], ...] = (
    ("prm-pipeline", "pipelines.cli", "main"),
    ("prm-warehouse", "warehouse.cli", "main"),
    ("prm-reward", "prm.reward_server.cli", "main"),
    ("python -m pipelines.demo", "pipelines.demo", "main"),
    ("python -m pipelines.flywheel", "pipelines.flywheel", "main"),
    ("python -m pipelines.recovery", "pipelines.recovery", "main"),
    ("python -m prm.training", "prm.training.__main__", "main"),
    ("python -m prm.policy", "prm.policy.__main__", "main"),
    ("python -m prm.search", "prm.search.__main__", "main"),
    ("python -m prm.rl", "prm.rl.__main__", "main"),
    ("python -m prm.judge_training", "prm.judge_training.__main__", "main"),
)


class _Captured(Exception):  # a control-flow signal: the parser, caught before it parses
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


@contextlib.contextmanager
def _capturing(prog: str) -> Iterator[None]:
    """Within it, the first ``parse_args`` raises :class:`_Captured` holding its parser; ``sys.argv[0]`` is ``prog``
    so parsers without a ``prog`` name themselves as the user types them."""
    originals = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args
    argv = sys.argv

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign]
    sys.argv = [prog]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = originals
        sys.argv = argv


def argparse_parser(prog: str, module: str, attr: str) -> argparse.ArgumentParser:
    """The parser that ``module.attr`` builds, taken from its first ``parse_args`` call (nothing else runs)."""
    entry = getattr(importlib.import_module(module), attr)
    with _capturing(prog):
        try:
            entry([])
        except _Captured as caught:
            return caught.parser
    raise RuntimeError(f"{module}.{attr} returned without parsing arguments; the CLI reference cannot read it")


def _argparse_sections(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, str]]:
    sections = [(name, parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                sections += _argparse_sections(sub, f"{name} {sub_name}")
    return sections


def _click_sections(command: Any, name: str, parent: Any = None) -> list[tuple[str, str]]:
    import click

    ctx = click.Context(command, info_name=name.split()[-1] if parent else name, parent=parent,
                        terminal_width=100, max_content_width=100)
    sections = [(name, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for sub_name, sub in sorted(command.commands.items()):
            sections += _click_sections(sub, f"{name} {sub_name}", ctx)
    return sections


def cli_sections(prog: str, module: str, attr: str) -> list[tuple[str, str]]:
    """(command, help text) for a CLI and each of its subcommands."""
    entry = getattr(importlib.import_module(module), attr)
    if hasattr(entry, "get_help"):  # a click command or group
        return _click_sections(entry, prog)
    return _argparse_sections(argparse_parser(prog, module, attr), prog)


def cli_page() -> str:
    """The CLI reference: every command's help, as its parser prints it."""
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal width; fix it so the page does not vary
    out = ["# Command line", "", "Generated from each command's argparse parser or click group when the site is built: "
           "what `--help` prints.", ""]
    for prog, module, attr in CLIS:
        for name, text in cli_sections(prog, module, attr):
            out += [f"## `{name}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(out)


def public_packages(repo: Path) -> list[tuple[str, list[str]]]:
    """(package, its ``__all__``) for every package of prm/, verifiers/ and warehouse/ (its subpackages included)
    that declares one."""
    found = []
    inits = [repo / "verifiers/__init__.py", repo / "warehouse/__init__.py",
             *sorted(repo.glob("warehouse/*/__init__.py")), *sorted(repo.glob("prm/*/__init__.py"))]
    for init in inits:
        tree = ast.parse(init.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                package = ".".join(init.parent.relative_to(repo).parts)
                found.append((package, list(ast.literal_eval(node.value))))
    return found


def api_page(package: str, names: list[str], repo: Path) -> str:
    """One API page: the package's docstring and each name of its ``__all__``. A name griffe cannot follow
    statically (bound by tuple unpacking, say) is shown with its value, imported at build time."""
    import griffe

    loaded = griffe.load(package, search_paths=[str(repo)], resolve_aliases=True, resolve_external=False)
    out = [f"# `{package}`", "", f"::: {package}", "    options:", "      members: false",
           "      show_root_heading: false", ""]
    values = []
    for name in names:
        member = loaded.members.get(name)
        try:
            if member is None:
                raise KeyError(name)
            _ = member.target if member.is_alias else member
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            value = repr(getattr(importlib.import_module(package), name))
            values.append([f"`{name}`", f"`{value[:100]}`".replace("|", "\\|")])
            continue
        out += [f"::: {package}.{name}", ""]
    if values:
        out += ["## Constants", "", table(["name", "value"], values), ""]
    return "\n".join(out)


# The reward server's limits: each flag of `prm-reward serve`, and what a client meets past it.
LIMITS: tuple[tuple[str, str], ...] = (
    ("max_body_bytes", "413"),
    ("max_inflight_body_bytes", "the next body waits unread in its socket until the bodies in service shrink"),
    ("max_header_bytes", "431 and the connection closed, counted as bytes arrive"),
    ("header_timeout", "408 and the connection closed: a new connection must send its request's head within it"),
    ("read_timeout", "408 and the connection closed: a request must arrive whole within it; idle keep-alive "
     "connections close after uvicorn's own timeout"),
    ("max_connections", "at the cap a newcomer takes the place of a connection that has not sent a whole request "
     "(one still sending its head before one sending its body, the longest waiting first, whatever its address; "
     "a 408 says why); it is itself closed "
     "on arrival only when every connection holds a request in service; lowered to `ulimit -n` less a margin"),
    ("max_samples", "413 (queries per `/get_reward`)"),
    ("max_steps", "the no-step reward with the reason in `error` (`/steps`: `\"scored\": false`)"),
    ("max_chars_per_token", "prompt + steps longer than the PRM's context x this many characters count as past the "
     "context without being tokenized"),
    ("pace", "a sample is answered no sooner than this many times the CPU time its thread spent on it: a client "
     "padding its requests waits for its padding; 0 turns it off"),
)


def limits_page() -> str:
    """The reward server's limits, each default read from `prm-reward serve`'s own options."""
    from prm.reward_server.cli import main as reward_cli

    options = {p.name: p for p in reward_cli.commands["serve"].params}
    rows = []
    for name, past in LIMITS:
        opt = options[name]
        rows.append([f"`{opt.opts[0]}`", f"`{opt.default}`", " ".join((opt.help or "").split()), past])
    return "\n".join([
        "# Reward server limits", "",
        "What one client can cost the others is bounded. Each limit is a field of `ServerConfig` "
        "(`prm/reward_server/app.py`) or of its `HttpLimits` (`prm/reward_server/http_limits.py`) and a flag of "
        "`prm-reward serve`; the defaults below are read from the command's options when the site is built.", "",
        table(["flag", "default", "what it bounds", "past it"], rows), "",
        "Measured behaviour under honest and hostile clients: [results: reward server](../results/reward-server.md).",
    ]) + "\n"
