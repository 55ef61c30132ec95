"""A seed no engine accepts is refused where the generation library takes it, naming the seed: vLLM's worker once
reported it as "vLLM could not load model" (issue 53 item 5)."""

from __future__ import annotations

import pytest

from prm.generation import GenerationConfig, GenerationRequest
from prm.generation.backend import request_error


@pytest.mark.parametrize("seed", [-1, 2**32, 2**70, 1.5, True])
def test_an_engine_seed_out_of_range_is_refused_naming_it(seed: object) -> None:
    with pytest.raises(ValueError, match=rf"^seed={seed!r} must be"):
        GenerationConfig(seed=seed)  # type: ignore[arg-type]


def test_the_largest_seed_is_accepted() -> None:
    assert GenerationConfig(seed=2**32 - 1).seed == 2**32 - 1


@pytest.mark.parametrize(("seed", "error"), [(None, None), (0, None), (2**32 - 1, None),
                                             (-1, "seed=-1 must be in [0, 4294967295]"),
                                             (2**70, f"seed={2**70} must be in [0, 4294967295]")])
def test_a_request_seed_out_of_range_is_an_error_row(seed: int | None, error: str | None) -> None:
    got = request_error(GenerationRequest(prompt="1+1=", seed=seed))
    assert got == error if error is None else got.startswith(error)
