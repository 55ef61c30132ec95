"""The plot functions write a real PNG atomically and refuse empty input."""

from __future__ import annotations

import pytest

from prm.best_of_n import bon_curve
from prm.first_error import ScoredSolution
from prm.reports import plot_best_of_n, plot_best_of_n_by_scorer, plot_label_sources

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _solutions(prefix: str) -> list[ScoredSolution]:
    """Two problems with four solutions each; the PRM scores the correct ones higher."""
    return [ScoredSolution(f"{prefix}{p}{i}", f"{prefix}{p}", (0.9, 0.8 if i % 2 else 0.3), None, str(i % 2),
                           bool(i % 2)) for p in "ab" for i in range(4)]


def test_plot_best_of_n_writes_a_png(tmp_path):
    curve = bon_curve(_solutions("v"), _solutions("t"), ns=(1, 2, 4))
    out = plot_best_of_n(curve, tmp_path / "plots" / "bon.png")
    assert out == tmp_path / "plots" / "bon.png"
    assert out.read_bytes()[:8] == PNG_SIGNATURE and out.stat().st_size > 1000
    assert [p.name for p in out.parent.iterdir()] == ["bon.png"]  # no temporary file left behind


def test_plot_label_sources_writes_a_png_and_tolerates_missing_values(tmp_path):
    rows = [{"method": "truth", "prm_f1": 0.8, "bon_acc": 0.7}, {"method": "omegaprm", "prm_f1": 0.75,
                                                                  "bon_acc": None}]
    out = plot_label_sources(rows, tmp_path / "sources.png")
    assert out.read_bytes()[:8] == PNG_SIGNATURE and out.stat().st_size > 1000


@pytest.mark.parametrize("call, match", [
    (lambda path: plot_best_of_n([], path), "no points"),
    (lambda path: plot_label_sources([], path), "no rows"),
    (lambda path: plot_label_sources([{"method": "mc", "f1": 0.5}], path), r"no row has \['prm_f1', 'bon_acc'\]"),
])
def test_plots_refuse_empty_input(tmp_path, call, match):
    with pytest.raises(ValueError, match=match):
        call(tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_best_of_n_by_scorer_draws_every_prm_beside_the_references(tmp_path) -> None:
    sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i % 2 else 0.2,), -1, str(i % 3), bool(i % 2))
            for p in "abcd" for i in range(4)]
    curve = bon_curve(sols[:8], sols[8:], ns=(1, 2, 4))
    path = plot_best_of_n_by_scorer({"truth": curve, "omegaprm": curve}, tmp_path / "bon.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no curves"):
        plot_best_of_n_by_scorer({}, tmp_path / "x.png")
