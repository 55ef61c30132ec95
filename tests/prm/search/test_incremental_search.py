"""Search with an LM-head PRM scored from the prefix cache: the same picks and scores as full rescoring, and
fewer tokens through the PRM, counted per problem."""

from __future__ import annotations

import pytest
import torch

from prm.scoring.implicit_scorer import ImplicitPRMScorer
from prm.search import SearchConfig, beam_search, best_of_n, dvts
from tests.prm.search.scripted import ScriptedExpander, prompter

QUESTIONS = ["12+7-3*2 =", "5*5-1 ="]


def _llama(tok, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                         initializer_range=0.3, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def lm_prm() -> ImplicitPRMScorer:
    """An LM-head PRM of two random tiny Llamas over the policy's char tokenizer (a floor and an OOD rule set)."""
    from prm.policy import build_char_tokenizer

    tok = build_char_tokenizer()
    return ImplicitPRMScorer(_llama(tok, 0), _llama(tok, 1), tok, beta=0.5, how="step", ref_floor=0.05,
                             ood_ref_logprob=-6.3)


def step(done: str, i: int, j: int) -> str:
    """Six steps of varied text per path, then an answer; which text depends on the path so far and the sample."""
    depth = done.count("\n")
    if depth == 6:
        return f"Answer: {len(done) % 7}"
    return f"{depth + j}*{len(done) % 5 + j} = {(depth + j) * (len(done) % 5 + j)}"


def full_sample(question: str, j: int) -> str:
    return "\n".join(step("\n" * d, 0, j + d) for d in range(6)) + f"\nAnswer: {j}"


@pytest.mark.parametrize(("search", "n"), [(beam_search, 4), (dvts, 8), (best_of_n, 4)])
def test_prefix_cache_gives_full_rescorings_picks_with_fewer_prm_tokens(lm_prm, search, n) -> None:
    runs = {}
    for cached in (False, True):
        config = SearchConfig(n=n, m=4, prefix_cache=cached, max_steps=8)
        runs[cached] = search(QUESTIONS, prompter, ScriptedExpander(step, full_sample), lm_prm, config)
    for full, inc in zip(runs[False], runs[True], strict=True):
        assert (inc.completion, inc.answer, inc.generated_tokens) == (full.completion, full.answer,
                                                                      full.generated_tokens)
        assert max(abs(a - b) for a, b in zip(full.scores, inc.scores, strict=True)) < 1e-5
        assert full.prm_tokens > 0 and inc.prm_tokens > 0
        if search is best_of_n:  # whole samples share only their prompt, read once instead of four times
            assert full.prm_tokens > inc.prm_tokens
        else:  # seven rounds deep, each round reads its new step instead of the whole solution again
            assert full.prm_tokens > 2.5 * inc.prm_tokens


def test_beam_search_cost_compares_both_scorers_on_the_same_tree(lm_prm) -> None:
    from prm.search.cost import SyntheticExpander, beam_search_cost

    shallow, deep = (beam_search_cost(QUESTIONS, prompter, lm_prm, d, n=2, m=2) for d in (2, 6))
    for cost in (shallow, deep):
        assert cost.same_picks and cost.max_abs_score_diff < 1e-5
        assert cost.full_prm_tokens > cost.incremental_prm_tokens > 0
    # full rescoring grows with the square of the depth, the prefix cache linearly
    full_growth = deep.full_prm_tokens / shallow.full_prm_tokens
    assert full_growth > deep.incremental_prm_tokens / shallow.incremental_prm_tokens
    picked = beam_search(QUESTIONS[:1], prompter, SyntheticExpander(3), lm_prm, SearchConfig(n=2, m=2))[0]
    assert picked.completion.count("\n") == 3 and picked.answer is not None  # three steps, then the answer line
