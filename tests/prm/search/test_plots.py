"""The accuracy-against-budget figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.search.plots import plot_accuracy_vs_budget


def test_writes_a_png_per_benchmark_rows(tmp_path: Path) -> None:
    rows = [{"method": m, "budget": b, "accuracy": 0.5, "accuracy_ci": [0.4, 0.6], "mean_generated_tokens": b - 10}
            for m in ("best_of_n", "dvts") for b in (100, 200)]
    out = plot_accuracy_vs_budget(rows, tmp_path / "search.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_rows_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no rows"):
        plot_accuracy_vs_budget([], tmp_path / "x.png")
