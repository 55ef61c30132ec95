"""PRIME (Cui et al. 2025, "Process Reinforcement through Implicit Rewards") on TRL: an implicit PRM that scores
every generated token and is updated online, after every RL step, on that step's rollouts and their outcomes.

The implicit PRM is a causal LM ``pi_phi`` read against a frozen reference ``pi_ref``: token ``t``'s reward is
``beta * log(pi_phi(y_t) / pi_ref(y_t))`` (:func:`prm.scoring.implicit_scorer.token_log_ratios`, with the
reference floor an LM-head PRM's recipe names). Each RL step (PRIME's Algorithm 1):

1. the policy samples a group per prompt; the outcome verifier grades each completion (the arm's reward
   function, a :class:`~prm.rl.process_grpo.RecordingRewarder` that also records the reward PRM's step scores
   for the logs);
2. the implicit PRM takes one optimizer step on the batch: PRIME's cross-entropy of
   ``sigmoid(beta * sum of the completion's token log-ratios)`` against the outcome
   (``prm.training.implicit``'s ``labels="outcome"`` loss), optionally with a replay of step-labelled rows;
3. the updated PRM scores every token; the advantage (:func:`prime_advantages`) is the outcome's
   leave-one-out advantage plus the process returns (token rewards, minus the group's leave-one-out mean
   token reward, summed from each token on), each normalised over the batch.

Two starts (:attr:`PrimeConfig.start`): the step-trained LM-head PRM in the run's PRM folder (its reference,
beta and floor), or the policy itself against itself, as PRIME starts. The reading through token ids needs the
PRM to share the policy's tokenizer; both starts check it.

Pinned to TRL 1.16 as :mod:`prm.rl.process_grpo` (``prompt_ids``/``prompt_mask``/``completion_ids``/
``completion_mask``/``advantages`` in ``_generate_and_score_completions``' output). TRL is imported when the
trainer class is first built (:func:`prime_trainer_class`).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from prm.implicit_recipe import check_beta, check_reference_tokenizer, read_recipe, read_scoring_rule, tokenizer_digest
from prm.scoring import (
    Encoded,
    encode_solution,
    implicit_scores,
    implicit_step_rewards,
    is_lm_head_folder,
    token_log_ratios,
    token_logprobs,
)
from prm.settings import check_learning_rate, check_range, check_seed, check_weight_decay

PRIME_STARTS = ("prm", "policy")  # PrimeConfig.start
WHITEN_EPS = 1e-8  # verl's masked_whiten: (x - mean) * rsqrt(var + eps)
SCORE_BATCH = 16  # rows per no-grad forward pass
# Weight of each whitened advantage (process, outcome) in the prime arms' sum: verl's default is 1; a whitened
# advantage is of order 1, so a weight of 100 already makes the policy's update 100x the configured learning rate.
MAX_PRIME_COEF = 100.0

# (prompt token ids, completion token ids, outcome 1.0 right / 0.0 wrong): one rollout as the PRM reads it.
Rollout = tuple[Sequence[int], Sequence[int], float]


@dataclass(frozen=True)
class PrimeConfig:
    """How the ``prime`` arms' implicit PRM starts and learns online.

    >>> PrimeConfig(start="ref")
    Traceback (most recent call last):
    ...
    ValueError: start='ref' must be one of ('prm', 'policy'): the step-trained LM-head PRM or the policy itself
    """

    # "prm": the step-trained LM-head PRM of the run (its own reference, beta and reference floor); "policy": the
    # policy against itself, PRIME's own start (every token reward starts at 0 and only outcomes shape it).
    start: str = "prm"
    beta: float = 0.05  # start="policy": PRIME's reward scale (start="prm" keeps the PRM's recipe's beta)
    ref_floor: float | None = None  # start="policy": PRIME reads log(pi / pi_ref) with no floor
    # The PRM's optimizer. PRIME trains it at the policy's learning rate; RLRunConfig.learning_rate is 1e-4.
    learning_rate: float = 1e-4
    weight_decay: float = 0.0
    process_coef: float = 1.0  # weight of the normalised process returns (verl's reward_dpo_coef)
    outcome_coef: float = 1.0  # weight of the normalised outcome advantage (verl's reward_gt_coef)
    # Replay of a step-labelled training set (DeepSeekMath's iterative RL replays 10% old data): a JSONL of
    # train_prm rows ({"prompt", "completions", "labels"}); replay_share x batch rows join each online update.
    replay_file: str | None = None
    replay_share: float = 0.0
    seed: int = 0  # the replay draw

    def __post_init__(self) -> None:
        if self.start not in PRIME_STARTS:
            raise ValueError(f"start={self.start!r} must be one of {PRIME_STARTS}: the step-trained LM-head PRM or the "
                             "policy itself")
        check_beta(self.beta)
        if self.ref_floor is not None:
            check_range("ref_floor", self.ref_floor, low=0.0, high=1.0, low_open=True, high_open=True,
                        why="a probability floor; None for no floor")
        check_learning_rate("learning_rate", self.learning_rate)
        check_weight_decay("weight_decay", self.weight_decay)
        for name in ("process_coef", "outcome_coef"):
            check_range(name, getattr(self, name), low=0.0, high=MAX_PRIME_COEF,
                        why="a weight of a whitened advantage; verl's default is 1")
        if not (self.process_coef or self.outcome_coef):
            raise ValueError("process_coef and outcome_coef must not both be 0: the advantage would be 0")
        check_range("replay_share", self.replay_share, low=0.0, high=1.0, why="a share of each online batch")
        if (self.replay_share > 0) != bool(self.replay_file):
            raise ValueError(f"replay_share={self.replay_share} must be > 0 exactly when a replay_file is given")
        check_seed("seed", self.seed)


def _rollout_inputs(rollouts: Sequence[Rollout]) -> list[Encoded]:
    """Prompt + completion ids with the completion's span: the tokens the policy generated."""
    out = []
    for prompt, completion, _ in rollouts:
        ids = [int(t) for t in prompt] + [int(t) for t in completion]
        out.append(Encoded(ids, [(len(prompt), len(ids))]))
    return out


def _replay_rows(path: str | Path) -> list[tuple[str, list[str], list[float | None]]]:
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        steps, labels = row.get("completions"), row.get("labels")
        if not isinstance(steps, list) or not isinstance(labels, list) or len(steps) != len(labels):
            raise ValueError(f"{path} line {n}: a replay row needs 'completions' and 'labels' lists of one length "
                             "(the rows prm.training.train_prm reads)")
        if steps:
            rows.append((str(row.get("prompt", "")), [str(s) for s in steps],
                         [None if x is None else float(x) for x in labels]))
    if not rows:
        raise ValueError(f"{path} holds no step-labelled rows; pass train_prm rows or set replay_share=0")
    return rows


class OnlinePRM:
    """An implicit PRM that reads rollouts token by token and learns from their outcomes (see the module doc).

    ``how``: how its steps are read for held-out step AUC (``"step"``: each step's own reward, a step-trained
    PRM; ``"prefix"``: the running sum, PRIME's Q value)."""

    def __init__(self, model: Any, ref: Any, tokenizer: Any, *, beta: float, ref_floor: float | None, how: str,
                 config: PrimeConfig | None = None) -> None:
        self.model, self.ref, self.tokenizer = model, ref.eval(), tokenizer
        self.beta, self.ref_floor, self.how = beta, ref_floor, how
        self.config = config or PrimeConfig()
        for p in self.ref.parameters():
            p.requires_grad_(False)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.config.learning_rate,
                                           weight_decay=self.config.weight_decay)
        self.replay = _replay_rows(self.config.replay_file) if self.config.replay_file else []
        self._rng = random.Random(f"prime-replay-{self.config.seed}")
        self.model.eval()

    def _sequence_logits(self, rollouts: Sequence[Rollout]) -> torch.Tensor:
        """``beta * sum of log-ratios over each completion``, with gradients into the PRM."""
        encoded = _rollout_inputs(rollouts)
        lp = token_logprobs(self.model, encoded)
        with torch.no_grad():
            ref_lp = token_logprobs(self.ref, encoded)
        return torch.stack([self.beta * token_log_ratios(a, b, self.ref_floor)[e.spans[0][0]:e.spans[0][1]].sum()
                            for e, a, b in zip(encoded, lp, ref_lp, strict=True)])

    def _replay_logits(self, n: int) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Step logits and labels of ``n`` replayed step-labelled rows (``labels="step"``'s loss)."""
        if not n or not self.replay:
            return None
        rows = [self.replay[self._rng.randrange(len(self.replay))] for _ in range(n)]
        encoded = [encode_solution(self.tokenizer, q, steps) for q, steps, _ in rows]
        lp = token_logprobs(self.model, encoded)
        with torch.no_grad():
            ref_lp = token_logprobs(self.ref, encoded)
        logits, targets = [], []
        for (_, _, labels), e, a, b in zip(rows, encoded, lp, ref_lp, strict=True):
            ratio = token_log_ratios(a, b, self.ref_floor)
            for (start, end), label in zip(e.spans, labels, strict=True):
                if label is not None:
                    logits.append(self.beta * ratio[start:end].sum())
                    targets.append(label)
        if not logits:
            return None
        stacked = torch.stack(logits)
        return stacked, torch.tensor(targets, device=stacked.device)

    def update(self, rollouts: Sequence[Rollout]) -> tuple[float, float]:
        """One optimizer step on ``rollouts``' outcomes (plus replayed step labels); returns the outcome loss and
        the share of rollouts whose sequence reward had the outcome's sign, both *before* the step (the PRM
        had not seen these rollouts: an online held-out reading)."""
        self.model.train()
        logits = self._sequence_logits(rollouts)
        targets = torch.tensor([float(o) for _, _, o in rollouts], device=logits.device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
        before = float(loss.detach())
        agree = float(((logits.detach() > 0) == (targets >= 0.5)).float().mean())
        replay = self._replay_logits(round(self.config.replay_share * len(rollouts)))
        if replay is not None:  # one mean over every logit, as prm.training.implicit stacks its batch
            all_logits = torch.cat([logits, replay[0]])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(all_logits, torch.cat([targets, replay[1]]))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.model.eval()
        return before, agree

    def token_rewards(self, rollouts: Sequence[Rollout]) -> list[list[float]]:
        """Each completion token's ``beta * log(pi_phi / pi_ref)``, in order."""
        out: list[list[float]] = []
        with torch.inference_mode():
            for i in range(0, len(rollouts), SCORE_BATCH):
                chunk = _rollout_inputs(rollouts[i:i + SCORE_BATCH])
                for e, a, b in zip(chunk, token_logprobs(self.model, chunk), token_logprobs(self.ref, chunk),
                                   strict=True):
                    start, end = e.spans[0]
                    out.append((self.beta * token_log_ratios(a, b, self.ref_floor)[start:end]).tolist())
        return out

    def sequence_scores(self, rollouts: Sequence[Rollout]) -> list[float]:
        """``sigmoid(sum of token rewards)`` per rollout: the PRM's P(right answer).

        Example (needs models)::

            online.sequence_scores([(prompt_ids, completion_ids, 0.0)])  # [0.51]
        """
        return [1.0 / (1.0 + math.exp(-max(min(sum(r), 700.0), -700.0))) for r in self.token_rewards(rollouts)]

    def step_scores(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[list[float]]:
        """P(good) of each step of (question, steps) items, read as :attr:`how` says."""
        keep = [i for i, (_, steps) in enumerate(items) if steps]
        rewards = implicit_step_rewards(self.model, self.ref, self.tokenizer,
                                        [(items[i][0], list(items[i][1])) for i in keep], beta=self.beta,
                                        ref_floor=self.ref_floor) if keep else []
        out: list[list[float]] = [[] for _ in items]
        for i, row in zip(keep, implicit_scores(rewards, self.how), strict=True):
            out[i] = row
        return out


def load_online_prm(policy_dir: str | Path, prm_dir: str | Path, config: PrimeConfig, policy_tokenizer: Any
                    ) -> OnlinePRM:
    """The implicit PRM :attr:`PrimeConfig.start` names, on the policy's device; a ValueError that says what to
    do when ``prm_dir`` is not an LM-head PRM (``start="prm"``) or the PRM reads another tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import resolve_model
    from prm.policy import default_device

    if config.start == "prm":
        if not is_lm_head_folder(prm_dir):
            raise ValueError(f"the prime arm starts from a step-trained LM-head PRM, but {prm_dir} has no "
                             "implicit_prm.json (a classification head); pass an LM-head PRM (PRMTrainConfig "
                             "head='lm') or run the prime_plain arm, which starts from the policy")
        base, beta, labels = read_recipe(prm_dir)
        floor, _ = read_scoring_rule(prm_dir)
        reference = str(resolve_model(base))
        check_reference_tokenizer(prm_dir, base, AutoTokenizer.from_pretrained(reference))
        tokenizer = AutoTokenizer.from_pretrained(str(prm_dir))
        model = AutoModelForCausalLM.from_pretrained(str(prm_dir), dtype=torch.float32)
        ref = AutoModelForCausalLM.from_pretrained(reference, dtype=torch.float32)
        how = "step" if labels == "step" else "prefix"
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(policy_dir))
        ref = AutoModelForCausalLM.from_pretrained(str(policy_dir), dtype=torch.float32)
        model = copy.deepcopy(ref)
        beta, floor, how = config.beta, config.ref_floor, "prefix"
    if tokenizer_digest(tokenizer) != tokenizer_digest(policy_tokenizer):
        raise ValueError(f"the implicit PRM ({prm_dir if config.start == 'prm' else policy_dir}) reads another "
                         "tokenizer than the policy: PRIME scores the policy's own token ids, so they must share one; "
                         "use a PRM trained from this policy, or the prime_plain arm")
    device = default_device()
    return OnlinePRM(model.to(device), ref.to(device), tokenizer, beta=beta, ref_floor=floor, how=how, config=config)


def _whiten(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``values`` centred and scaled over the masked positions (verl's masked_whiten); 0 outside the mask."""
    n = mask.sum().clamp(min=1)
    mean = (values * mask).sum() / n
    var = (((values - mean) * mask) ** 2).sum() / n
    return (values - mean) * torch.rsqrt(var + WHITEN_EPS) * mask


def prime_advantages(token_rewards: Sequence[Sequence[float]], outcomes: Sequence[float], num_generations: int,
                     width: int, *, process_coef: float = 1.0, outcome_coef: float = 1.0) -> torch.Tensor:
    """``(B, width)`` PRIME advantages of a batch whose consecutive runs of ``num_generations`` rows are groups.

    Process part: each token reward minus the mean, over the group's *other* completions, of their mean token
    reward (the leave-one-out baseline verl's PRIME recipe uses), summed from the token on (returns). Outcome
    part: the outcome minus the others' mean outcome, on every token. Each part is normalised over the batch's
    tokens, then they are added (``process_coef``, ``outcome_coef``); tokens past a completion's end get 0.

    >>> adv = prime_advantages([[0.0, 0.0], [0.0, 0.0]], [1.0, 0.0], 2, 3)
    >>> [[round(x, 3) for x in row] for row in adv.tolist()]
    [[1.0, 1.0, 0.0], [-1.0, -1.0, 0.0]]
    """
    if len(token_rewards) != len(outcomes) or len(outcomes) % num_generations:
        raise ValueError(f"{len(token_rewards)} token-reward rows and {len(outcomes)} outcomes must match and split "
                         f"into groups of {num_generations}")
    batch = len(outcomes)
    rewards = torch.zeros(batch, width, dtype=torch.float32)
    mask = torch.zeros(batch, width, dtype=torch.float32)
    for i, row in enumerate(token_rewards):
        n = min(len(row), width)
        rewards[i, :n] = torch.tensor(list(row[:n]), dtype=torch.float32)
        mask[i, :n] = 1.0
    outcome = torch.tensor([float(o) for o in outcomes], dtype=torch.float32)
    k = num_generations
    token_mean = (rewards * mask).sum(1) / mask.sum(1).clamp(min=1)
    group_sum = token_mean.view(-1, k).sum(1).repeat_interleave(k)
    process = (rewards - ((group_sum - token_mean) / (k - 1)).unsqueeze(1)) * mask
    returns = process.flip(-1).cumsum(-1).flip(-1) * mask
    outcome_sum = outcome.view(-1, k).sum(1).repeat_interleave(k)
    loo = (outcome - (outcome_sum - outcome) / (k - 1)).unsqueeze(1) * mask
    return process_coef * _whiten(returns, mask) + outcome_coef * _whiten(loo, mask)


@functools.cache
def prime_trainer_class() -> type:
    """``PrimeGRPOTrainer``: TRL's ``GRPOTrainer`` with PRIME's online implicit PRM and advantages.

    Construct it as a ``GRPOTrainer`` plus ``recorder=`` (the :class:`~prm.rl.process_grpo.RecordingRewarder`
    behind its one outcome reward function) and ``online=`` (:class:`OnlinePRM`)."""
    from accelerate.utils import gather_object
    from trl import GRPOTrainer

    from prm.rl.process_grpo import RecordingRewarder, checked_batch

    class PrimeGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, recorder: RecordingRewarder, online: OnlinePRM, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if len(self.reward_funcs) != 1:
                raise ValueError(f"the prime arm takes one reward function (the outcome reward whose rewarder "
                                 f"records the outcomes), got {len(self.reward_funcs)}")
            self.recorder, self.online = recorder, online

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            output = super()._generate_and_score_completions(inputs)
            ids, mask = checked_batch(output, len(self.recorder.scored), "prime",
                                      ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages"))
            prompt, prompt_mask = output["prompt_ids"], output["prompt_mask"]
            lengths = mask.sum(dim=1).tolist()
            local = [(prompt[i][prompt_mask[i].bool()].tolist(), ids[i, : int(n)].tolist(),
                      float(s.shaped.outcome or 0.0)) for i, (n, s) in enumerate(zip(lengths, self.recorder.scored,
                                                                                       strict=True))]
            # Every process updates its copy of the PRM on the whole batch, so the copies stay equal.
            every = gather_object(local)
            mode = "train" if self.model.training else "eval"
            if mode == "train":  # PRIME's order: update on the fresh rollouts, then score them
                loss, agree = self.online.update(every)
                self._metrics[mode]["prime/prm_loss"].append(loss)
                self._metrics[mode]["prime/prm_accuracy"].append(agree)
            rewards = self.online.token_rewards(every)
            groups = self.num_generations if mode == "train" else self.num_generations_eval
            config = self.online.config
            adv = prime_advantages(rewards, [o for _, _, o in every], groups, ids.shape[1],
                                   process_coef=config.process_coef, outcome_coef=config.outcome_coef)
            start = self.accelerator.process_index * ids.shape[0]
            output["advantages"] = adv[start:start + ids.shape[0]].to(ids.device)
            flat = [x for row in rewards for x in row]
            self._metrics[mode]["prime/token_reward_mean"].append(sum(flat) / max(len(flat), 1))
            return output

    return PrimeGRPOTrainer
