"""Upper bounds of a search run: each refuses a request that no machine this project targets can serve.

The first round of beam search sends ``n * m`` expansion requests at once (the token budget stops only new
rounds), so width is bounded before anything is generated, not by the budget.
"""

from __future__ import annotations

MAX_N = 1024  # beams / samples: search-and-learn's largest setting is N=256; 4x that leaves room
MAX_M = 64  # expansions per beam: search-and-learn uses 4; past 64 siblings of one step repeat each other
MAX_CANDIDATES = 4096  # n * m, one round's expansion requests: N=1024 x M=4 (1M were asked for with 1024 x 1024)
MAX_PROBLEMS = 10_000  # problems per run: GSM8K's test split is 1,319 and MATH500 500; 10^8 needed ~160 GB
