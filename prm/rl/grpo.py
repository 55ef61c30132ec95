"""One arm of the RL comparison: TRL GRPO on the warm-started policy, with held-out numbers before and after.

The run is the same for every arm (policy, problems, seed, optimizer, budget, generation settings); only the
reward function differs (:data:`prm.rl.config.ARMS`). On CPU TRL generates with transformers; on CUDA it
trains in bf16 and, where vLLM imports, generates with vLLM colocated on the training GPU. The entry point
also runs under ``accelerate launch`` (see ``python -m prm.rl --help``); TRL then splits each batch over
the processes, every process evaluates the same held-out problems, and only the main one writes files.

TRL is imported when a run starts, not with the package: a Dagster code location that imports this module
does not pay TRL's import time.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci
from prm.models import local_model
from prm.policy import EvalTable, default_device, sample_solutions
from prm.rewards import RewardConfig, Rewarder, load_rewarder
from prm.rl.config import ARMS, PRIME_ARMS, PROCESS_ARMS, RLRunConfig
from prm.rl.constants import (
    ADAPTER_KEYS,
    FLAWED_PENALTY,
    POLICY_SUBDIR,
    PRIME_ACCURACY,
    PRIME_LOSS,
    RESULT_FILE,
    TOP_K,
    TOP_P,
    TRL_CLIPPED,
    TRL_ENTROPY,
    TRL_KL,
    TRL_LENGTH,
    TRL_REWARD,
    TRL_REWARD_STD,
    VLLM_GPU_SHARE,
)
from prm.rl.curve import HeldOutPoint, curve_callback, hacked_at
from prm.rl.data import dataset_rows, eval_problems, split_pool, train_problems, training_prompts
from prm.rl.flawed import flawed_ci, flawed_counts, flawed_share
from prm.rl.gold import score_heldout
from prm.rl.process_grpo import ProcessConfig
from prm.rl.verified_arms import FIRST_ERROR_THRESHOLD
from prm.scoring import cuda_bf16
from prm.tasks import ArithmeticProblem, stable_id

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Sample:
    """One completion GRPO scored: the problem, what the policy wrote, and the reward it got."""

    question: str
    completion: str
    reward: float


@dataclass(frozen=True)
class HeldOut:
    """The policy on the held-out problems: the per-difficulty table plus the hacking signals."""

    table: EvalTable  # answer accuracy, per-step error, mixed share, mean steps per difficulty (n_ops=0 pooled)
    mean_chars: float  # mean completion length in characters
    mean_min_step_score: float  # the PRM's lowest step score, averaged: it rises when steps look better to the PRM
    # Per held-out problem, (right answers with a wrong step by exact truth, right answers): prm.rl.flawed. Empty
    # without step truth (a pool with problems other than generated arithmetic) and in results saved before.
    flawed: tuple[tuple[int, int], ...] = ()

    @property
    def flawed_share(self) -> float | None:
        """Share of right answers with a wrong step (flawed positives); None without step truth or right answers."""
        return flawed_share(self.flawed)

    def flawed_ci(self) -> tuple[float, float] | None:
        """95% bootstrap interval of :attr:`flawed_share` over held-out problems."""
        return flawed_ci(self.flawed)

    @property
    def accuracy(self) -> float:
        return self.table.row(0).answer_accuracy

    @property
    def step_error(self) -> float:
        return self.table.row(0).step_error_rate

    @property
    def mean_steps(self) -> float:
        return self.table.row(0).mean_steps

    def accuracy_ci(self, *, n_boot: int = 2000, seed: int = 0) -> tuple[float, float] | None:
        """95% bootstrap interval of :attr:`accuracy`, resampling held-out *problems* (each with its share of
        right samples); None for a table written before per-problem accuracy was kept.

        >>> from prm.policy.evaluate import EvalRow
        >>> table = EvalTable((EvalRow(0, 2, 4, 0.5, 0.25, 1.0, 3.0),), 1.0, 2, (0.5, 0.5))
        >>> HeldOut(table, 40.0, 0.5).accuracy_ci()
        (0.5, 0.5)
        """
        values = self.table.problem_accuracy
        return bootstrap_mean_ci(values, n_boot=n_boot, seed=seed) if values else None


def accuracy_gain_ci(before: HeldOut, after: HeldOut, *, n_boot: int = 2000, seed: int = 0
                     ) -> tuple[float, float] | None:
    """95% paired-bootstrap interval of ``after.accuracy - before.accuracy``, resampling the held-out *problems*
    (each keeps its before and its after accuracy); None when either side lacks per-problem accuracy.

    Both sides must be the same problems with the same samples per problem (a run evaluates
    :func:`prm.rl.data.eval_problems` of one config before and after); counts that differ raise ``ValueError``.

    >>> from prm.policy.evaluate import EvalRow
    >>> held = lambda acc: HeldOut(EvalTable((EvalRow(0, 2, 4, 0.5, 0.25, 1.0, 3.0),), 1.0, 2, acc), 40.0, 0.5)
    >>> accuracy_gain_ci(held((0.0, 0.5)), held((0.5, 1.0)))
    (0.5, 0.5)
    """
    a, b = before.table, after.table
    if not a.problem_accuracy or not b.problem_accuracy:
        return None
    shape = [(t.samples_per_problem, len(t.problem_accuracy), [(r.n_ops, r.n_problems) for r in t.rows])
             for t in (a, b)]
    if shape[0] != shape[1]:
        raise ValueError(f"before and after were not evaluated on the same held-out problems (samples per problem, "
                         f"problems, per-difficulty counts: {shape[0]} vs {shape[1]}): a paired gain needs both "
                         "measured under one RLRunConfig's eval settings; rerun the arm with --fresh")
    return paired_bootstrap_diff_ci(b.problem_accuracy, a.problem_accuracy, n_boot=n_boot, seed=seed)


@dataclass(frozen=True)
class CurvePoint:
    """One logged GRPO step (TRL's log history); None where TRL logged nothing or a non-finite value."""

    step: int
    reward: float | None  # mean reward of the arm's reward function over the step's completions
    reward_std: float | None
    outcome_reward: float | None  # share of the step's completions with the right answer
    process_reward: float | None  # the arm's shaped PRM reward (min, or sum for prm_sum)
    min_step_score: float | None  # the PRM's lowest step score: the same statistic in every arm
    n_steps: float | None  # steps per completion
    completion_length: float | None  # tokens per completion (characters for the char-level policy)
    clipped_ratio: float | None  # share cut off by max_completion_length
    kl: float | None
    entropy: float | None
    prm_loss: float | None = None  # prime arms: the online PRM's outcome loss on the step's rollouts, before its update
    prm_accuracy: float | None = None  # prime arms: its share of those rollouts whose sign matched the outcome


def _point(step: int, held: HeldOut) -> HeldOutPoint:
    """A held-out curve point from a :class:`HeldOut` (no mean step score: HeldOut keeps the lowest only)."""
    return HeldOutPoint(step, held.accuracy, held.mean_steps, held.mean_chars, None, held.mean_min_step_score,
                        step_error=held.step_error, flawed_share=held.flawed_share)


@dataclass(frozen=True)
class ArmResult:
    """What one arm did: held-out numbers before and after, the reward curve, and sample batches."""

    arm: str
    reward: RewardConfig
    steps: int  # optimizer steps taken
    before: HeldOut
    after: HeldOut
    curve: tuple[CurvePoint, ...]
    first_batch: tuple[Sample, ...]  # the first generation batch: the same completions in every arm
    last_batch: tuple[Sample, ...]  # the last: where hacking shows
    train_s: float  # seconds in trainer.train()
    wall_s: float  # seconds for the whole arm (loading, evaluations, training)
    policy_dir: Path | None  # the trained policy, when saved
    # Held-out points after step 0 (every RLRunConfig.eval_every steps, and the last step's): the learning curve.
    heldout_curve: tuple[HeldOutPoint, ...] = ()

    @property
    def heldout_points(self) -> tuple[HeldOutPoint, ...]:
        """The held-out curve from step 0 (before) to the last step (after)."""
        last = () if self.heldout_curve and self.heldout_curve[-1].step == self.steps else (_point(self.steps,
                                                                                                    self.after),)
        return (_point(0, self.before), *self.heldout_curve, *last)

    @property
    def hacked_at(self) -> int | None:
        """The first step the hack rule (:func:`prm.rl.curve.hacked_at`) fired at, None when it did not: from the
        held-out curve, the start's accuracy interval and the training reward curve."""
        return hacked_at(self.heldout_points, start_ci=self.before.accuracy_ci(),
                         rewards=[(p.step, p.reward) for p in self.curve if p.reward is not None])

    def summary(self) -> dict[str, Any]:
        """One flat row of the comparison table (``*_before`` / ``*_after`` pairs, pooled over eval_ops).

        ``acc_before_ci``, ``acc_after_ci``: 95% bootstrap intervals of the accuracies; ``acc_gain_ci``: the paired
        interval of after minus before. All resample held-out problems; None for results saved without
        per-problem accuracy."""
        rewards = [p.reward for p in self.curve if p.reward is not None]
        return {
            "arm": self.arm, "steps": self.steps,
            "acc_before": self.before.accuracy, "acc_after": self.after.accuracy,
            "acc_before_ci": self.before.accuracy_ci(), "acc_after_ci": self.after.accuracy_ci(),
            "acc_gain_ci": accuracy_gain_ci(self.before, self.after),
            "step_err_before": self.before.step_error, "step_err_after": self.after.step_error,
            "steps_before": self.before.mean_steps, "steps_after": self.after.mean_steps,
            "chars_before": self.before.mean_chars, "chars_after": self.after.mean_chars,
            "prm_min_before": self.before.mean_min_step_score, "prm_min_after": self.after.mean_min_step_score,
            "reward_first": window_mean(rewards, last=False), "reward_last": window_mean(rewards, last=True),
            "train_s": round(self.train_s, 1), "wall_s": round(self.wall_s, 1),
            "hacked": self.hacked_at is not None, "hacked_at": self.hacked_at,
            # right answers with a wrong step by exact truth (None without step truth), 95% interval over problems
            "flawed_before": self.before.flawed_share, "flawed_after": self.after.flawed_share,
            "flawed_after_ci": self.after.flawed_ci(),
            "curve": [[p.step, p.accuracy] for p in self.heldout_points],  # held-out accuracy against step
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``result.json``); :meth:`from_dict` reads it back.

        >>> from prm.policy.evaluate import EvalRow
        >>> held = HeldOut(EvalTable((EvalRow(0, 1, 2, 0.5, 0.25, 1.0, 3.0),), 1.0, 2, (0.5,)), 40.0, 0.5)
        >>> r = ArmResult("outcome", RewardConfig(), 1, held, held, (CurvePoint(1, *[0.5] * 10),),
        ...               (Sample("q", "c", 1.0),), (), 2.0, 3.0, None)
        >>> ArmResult.from_dict(r.to_dict()) == r
        True
        """
        out = asdict(self)
        out["policy_dir"] = str(self.policy_dir) if self.policy_dir else None
        out["hacked"] = self.hacked_at is not None
        out["summary"] = self.summary()
        return json.loads(json.dumps(out, default=str))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArmResult:
        """The result :meth:`to_dict` wrote (extra keys such as ``summary`` and ``config`` are ignored)."""

        def held(d: Mapping[str, Any]) -> HeldOut:
            return HeldOut(EvalTable.from_dict(d["table"]), d["mean_chars"], d["mean_min_step_score"],
                           tuple((int(f), int(c)) for f, c in d.get("flawed") or ()))

        return cls(arm=data["arm"], reward=RewardConfig(**data["reward"]), steps=data["steps"],
                   before=held(data["before"]), after=held(data["after"]),
                   curve=tuple(CurvePoint(**p) for p in data["curve"]),
                   first_batch=tuple(Sample(**s) for s in data["first_batch"]),
                   last_batch=tuple(Sample(**s) for s in data["last_batch"]), train_s=data["train_s"],
                   wall_s=data["wall_s"], policy_dir=Path(data["policy_dir"]) if data["policy_dir"] else None,
                   heldout_curve=tuple(HeldOutPoint(**p) for p in data.get("heldout_curve") or ()))


def run_key(policy_dir: str | Path, prm_dir: str | Path, config: RLRunConfig, arm: str | None = None,
            problems: Sequence[ArithmeticProblem] | None = None) -> dict[str, Any]:
    """What an arm's result depends on besides the arm: the policy's and the PRM's versions and the config
    (not which other arms run beside it), plus a process arm's :class:`~prm.rl.process_grpo.ProcessConfig`
    (:meth:`RLRunConfig.process_config`) and the flawed_penalty arm's penalty, and its ``error_threshold`` only where
    it differs from the default (so results run at the default keep their key). Stored in ``result.json``;
    :func:`prm.rl.compare_arms` reuses a result only when its key is equal."""
    from prm.models import model_version

    key = {"policy": model_version(policy_dir), "prm": model_version(prm_dir), "config": _shared(config.to_dict())}
    if arm in PROCESS_ARMS:
        key["process"] = config.process_config(arm).key()  # holds the threshold only where it is not the default
    if arm in PRIME_ARMS:
        key["prime"] = asdict(PRIME_ARMS[arm])
    if arm == FLAWED_PENALTY:
        key["flawed_penalty"] = config.flawed_penalty
        if config.error_threshold != FIRST_ERROR_THRESHOLD:
            key["error_threshold"] = config.error_threshold
    if problems is not None:  # a pool (the warehouse's problems): the result holds for these problems only
        key["problems"] = stable_id("pool", *sorted(p.problem_id for p in problems))
    return key


def _shared(config: Mapping[str, Any]) -> dict[str, Any]:
    """An arm's config without the list of arms compared (adding an arm must not rerun the finished ones), without
    ``eval_every`` at its 0 (results written before the held-out curve existed keep their key), and without
    ``flawed_penalty`` and ``error_threshold`` (only the arms that read them hold them: :func:`run_key` adds them
    there)."""
    return {k: v for k, v in config.items()
            if k not in ("arms", "flawed_penalty", "error_threshold") and not (k == "eval_every" and not v)}


def load_result(out_dir: str | Path, key: Mapping[str, Any]) -> ArmResult | None:
    """The result in ``<out_dir>/result.json`` when it was run under ``key`` (:func:`run_key`), else None."""
    path = Path(out_dir) / RESULT_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    stored = data.get("key") or {}
    if "config" in stored:  # results written before the key left out the arms list
        stored = {**stored, "config": _shared(stored["config"])}
    return ArmResult.from_dict(data) if stored == json.loads(json.dumps(key)) else None


def window_mean(values: Sequence[float], last: bool, share: float = 0.1) -> float | None:
    """Mean of the first (or last) ``share`` of ``values``, at least one value: a noisy curve's start and end.

    >>> window_mean([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], last=True, share=0.2), window_mean([], last=False)
    (8.5, None)
    """
    if not values:
        return None
    k = max(1, round(len(values) * share))
    window = values[-k:] if last else values[:k]
    return sum(window) / len(window)


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def reward_curve(log_history: Iterable[Mapping[str, Any]], reward_name: str) -> tuple[CurvePoint, ...]:
    """The per-step points of TRL's ``trainer.state.log_history`` for the reward function ``reward_name``.

    >>> history = [{"step": 1, "reward": 0.5, "r/outcome_reward": 0.25, "completions/mean_length": 90.0},
    ...            {"step": 1, "train_runtime": 3.0}]
    >>> [(p.step, p.reward, p.outcome_reward, p.completion_length, p.kl) for p in reward_curve(history, "r")]
    [(1, 0.5, 0.25, 90.0, None)]
    """
    points = []
    for h in log_history:
        if TRL_REWARD not in h:  # the end-of-training summary (train_runtime, ...) carries no reward
            continue
        extra = {key: _finite(h.get(f"{reward_name}/{key}")) for key in ADAPTER_KEYS}
        points.append(CurvePoint(step=int(h["step"]), reward=_finite(h.get(TRL_REWARD)),
                                 reward_std=_finite(h.get(TRL_REWARD_STD)),
                                 completion_length=_finite(h.get(TRL_LENGTH)),
                                 clipped_ratio=_finite(h.get(TRL_CLIPPED)), kl=_finite(h.get(TRL_KL)),
                                 entropy=_finite(h.get(TRL_ENTROPY)), prm_loss=_finite(h.get(PRIME_LOSS)),
                                 prm_accuracy=_finite(h.get(PRIME_ACCURACY)), **extra))
    return tuple(points)


def evaluate_heldout(model: Any, tokenizer: Any, problems: Sequence[ArithmeticProblem], rewarder: Rewarder,
                     config: RLRunConfig) -> HeldOut:
    """Sample ``eval_samples`` completions per problem (as :func:`prm.policy.evaluate_model`) and measure
    accuracy, per-step error and steps per difficulty, mean length, and the PRM's mean lowest step score."""
    return measure_heldout(model, tokenizer, problems, rewarder, config, 0)[0]


def _online_step_reading(online: Any, problems: Sequence[Any], samples: Sequence[Sequence[str]]
                         ) -> tuple[float | None, float | None]:
    """(step AUC against exact step truth, mean step score) of an online implicit PRM on held-out samples of
    generated arithmetic (first-error convention); (None, None) where no step has truth or only one class."""
    from prm.format import first_error_of, labels_from_first_error, split_steps
    from prm.metrics import roc_auc
    from prm.tasks import step_truth

    items, labels = [], []
    for problem, texts in zip(problems, samples, strict=True):
        if not isinstance(problem, ArithmeticProblem):
            continue
        for text in texts:
            steps = split_steps(text)
            if steps:
                items.append((problem.question, steps))
                labels.append(labels_from_first_error(len(steps), first_error_of(step_truth(problem, steps))))
    if not items:
        return None, None
    scores = online.step_scores(items)
    flat = [(bool(y), x) for ys, xs in zip(labels, scores, strict=True) for y, x in zip(ys, xs, strict=True)
            if y is not None]
    mean = sum(x for _, x in flat) / len(flat) if flat else None
    return roc_auc([y for y, _ in flat], [x for _, x in flat]) if flat else None, mean


def measure_heldout(model: Any, tokenizer: Any, problems: Sequence[ArithmeticProblem], rewarder: Rewarder,
                    config: RLRunConfig, step: int, online: Any = None) -> tuple[HeldOut, HeldOutPoint]:
    """:func:`evaluate_heldout` and the held-out curve's point at ``step`` from the same samples: the reward
    PRM's mean step score, and with ``online`` (a prime arm's :class:`~prm.rl.prime.OnlinePRM`) its step AUC."""
    samples = sample_solutions(model, tokenizer, problems, config.eval_samples, config.eval_temperature, config.seed)
    table = score_heldout(problems, samples, config.eval_temperature)  # outcome alone where no step truth
    questions = [p.question for p, texts in zip(problems, samples, strict=True) for _ in texts]
    golds = [str(p.answer) for p, texts in zip(problems, samples, strict=True) for _ in texts]
    texts = [t for texts in samples for t in texts]
    scored = rewarder.score(questions, texts, golds)
    held = HeldOut(table=table, mean_chars=sum(map(len, texts)) / max(len(texts), 1),
                   mean_min_step_score=sum(s.shaped.min_step_score for s in scored) / max(len(scored), 1),
                   flawed=flawed_counts(problems, samples))
    step_scores = [x for s in scored for x in s.steps.scores if math.isfinite(x)]
    auc, online_mean = _online_step_reading(online, problems, samples) if online is not None else (None, None)
    point = HeldOutPoint(step, held.accuracy, held.mean_steps, held.mean_chars,
                         sum(step_scores) / len(step_scores) if step_scores else None, held.mean_min_step_score,
                         auc, online_mean, step_error=held.step_error, flawed_share=held.flawed_share)
    return held, point


def arm_reward(arm: str, prm_dir: str | Path, tokenizer: Any, reward: RewardConfig | None = None
               ) -> Callable[..., list[float]]:
    """The GRPO reward function of ``arm``: prm.rewards' TRL adapter over ``reward`` (default :data:`ARMS`
    ``[arm]``; :meth:`RLRunConfig.reward_config` for a run's), named after the arm (TRL logs
    ``rewards/<arm>/mean``); EOS and pad mark a finished completion, anything else is truncated and earns no
    outcome reward."""
    from prm.rewards.adapters.trl import make_trl_reward

    if arm not in ARMS:
        raise ValueError(f"arm={arm!r} is unknown; choose from {tuple(ARMS)}")
    return make_trl_reward(prm_dir, reward or ARMS[arm], name=arm,
                           eos_token_ids=[tokenizer.eos_token_id, tokenizer.pad_token_id])


def arm_trainer(arm: str, prm_dir: str | Path, tokenizer: Any, policy_dir: str | Path | None = None,
                reward: RewardConfig | None = None, process: ProcessConfig | None = None
                ) -> tuple[Callable[..., list[float]], type, dict[str, Any]]:
    """The reward function, trainer class and extra trainer kwargs of ``arm``: TRL's ``GRPOTrainer`` over
    :func:`arm_reward`, or for a process arm (:data:`prm.rl.config.PROCESS_ARMS`) the per-token trainer of
    :mod:`prm.rl.process_grpo` over the same TRL adapter, whose rewarder records the step scores, or for a prime
    arm (:data:`prm.rl.config.PRIME_ARMS`, needs ``policy_dir``) :mod:`prm.rl.prime`'s trainer and its online
    implicit PRM (kwarg ``online``). ``process``: a process arm's mix (default :data:`PROCESS_ARMS` ``[arm]``;
    :meth:`RLRunConfig.process_config` for a run's)."""
    if arm not in PROCESS_ARMS and arm not in PRIME_ARMS:
        from trl import GRPOTrainer

        return arm_reward(arm, prm_dir, tokenizer, reward), GRPOTrainer, {}
    from prm.rewards.adapters.trl import reward_function
    from prm.rl.process_grpo import RecordingRewarder, process_trainer_class

    recorder = RecordingRewarder(load_rewarder(prm_dir, ARMS[arm]))
    reward = reward_function(recorder, eos_token_ids=[tokenizer.eos_token_id, tokenizer.pad_token_id], name=arm)
    if arm in PROCESS_ARMS:
        return reward, process_trainer_class(), {"recorder": recorder, "process": process or PROCESS_ARMS[arm]}
    from prm.rl.prime import load_online_prm, prime_trainer_class

    if policy_dir is None:
        raise ValueError(f"arm {arm!r} starts its implicit PRM from the policy or the PRM; pass policy_dir")
    online = load_online_prm(policy_dir, prm_dir, PRIME_ARMS[arm], tokenizer)
    return reward, prime_trainer_class(), {"recorder": recorder, "online": online}


def _recording(reward: Callable[..., list[float]]) -> tuple[Callable[..., list[float]], list[tuple[Sample, ...]]]:
    """``reward`` plus a list that holds the first and the latest batch it scored."""
    batches: list[tuple[Sample, ...]] = []

    def recorded(prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Any = None,
                 **kwargs: Any) -> list[float]:
        rewards = reward(prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs)
        questions = kwargs.get("question") or prompts
        batch = tuple(Sample(str(q), str(c), float(r)) for q, c, r in zip(questions, completions, rewards, strict=True))
        batches[min(len(batches), 1):] = [batch]
        return rewards

    recorded.__name__ = recorded.__qualname__ = reward.__name__
    return recorded, batches


def use_vllm(config: RLRunConfig, cuda: bool) -> bool:
    """Whether TRL generates with vLLM: on CUDA only (TRL's vLLM path needs a GPU), where it imports.

    >>> use_vllm(RLRunConfig(), cuda=False), use_vllm(RLRunConfig(generation="transformers"), cuda=True)
    (False, False)
    """
    if config.generation == "transformers" or not cuda:
        if config.generation == "vllm":
            raise ValueError("generation='vllm' needs CUDA (TRL generates with vLLM on GPUs only); use 'auto' "
                             "or 'transformers' on this machine")
        return False
    from trl.import_utils import is_vllm_available

    if config.generation == "vllm" and not is_vllm_available():
        raise ValueError("generation='vllm' but vllm does not import; install trl[vllm] or use 'transformers'")
    return is_vllm_available()


def grpo_args(config: RLRunConfig, output_dir: str | Path, *, cuda: bool, vllm: bool) -> Any:
    """The ``GRPOConfig`` every arm trains with (the arm is not an argument: nothing here may differ)."""
    from trl import GRPOConfig

    # bf16 where the GPU computes it; a GPU without it (T4, V100) trains in fp32 rather than fail at startup.
    backend: dict[str, Any] = {"use_cpu": not cuda, "bf16": cuda_bf16("cuda") if cuda else False, "use_vllm": vllm}
    if vllm:
        backend |= {"vllm_mode": "colocate", "vllm_gpu_memory_utilization": VLLM_GPU_SHARE}
    return GRPOConfig(
        output_dir=str(output_dir), max_steps=config.steps, per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=1, num_generations=config.num_generations,
        max_completion_length=config.max_completion_length, temperature=config.temperature, top_k=TOP_K,
        top_p=TOP_P, learning_rate=config.learning_rate, lr_scheduler_type="constant", warmup_steps=0,
        beta=config.beta, seed=config.seed, data_seed=config.seed, logging_steps=config.logging_steps,
        save_strategy="no", report_to="none", disable_tqdm=True, dataloader_num_workers=0,
        remove_unused_columns=False, **backend)


def _progress_callback(progress: Progress | None, arm: str, steps: int) -> Any:
    from transformers import TrainerCallback

    every = max(1, steps // 10)

    class Report(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if progress and logs and TRL_REWARD in logs and (state.global_step % every == 0 or state.global_step == 1):
                progress(f"{arm}: step {state.global_step}/{steps} reward {logs[TRL_REWARD]:.3f} "
                         f"length {logs.get(TRL_LENGTH, float('nan')):.0f}")

    return Report()


def _problems(config: RLRunConfig, problems: Sequence[ArithmeticProblem] | None,
              held_out: Sequence[ArithmeticProblem] | None) -> tuple[list[ArithmeticProblem], list | None]:
    """(held-out, training) problems of a run; training None: the generator's (:func:`train_problems`)."""
    if held_out is not None:
        if problems is None:
            raise ValueError("held_out needs problems to train on; pass the training pool as problems")
        return list(held_out), training_prompts(problems, config, exclude={p.problem_id for p in held_out})
    return split_pool(problems, config) if problems is not None else (eval_problems(config), None)


def run_grpo(policy_dir: str | Path, prm_dir: str | Path, arm: str, config: RLRunConfig, out_dir: str | Path, *,
             before: HeldOut | None = None, problems: Sequence[ArithmeticProblem] | None = None,
             held_out: Sequence[ArithmeticProblem] | None = None, progress: Progress | None = None) -> ArmResult:
    """Train the policy in ``policy_dir`` with GRPO under ``arm``'s reward for ``config.steps`` steps and
    measure it on held-out problems before and after. Writes ``<out_dir>/result.json`` and, with
    ``save_policy``, the trained policy under ``<out_dir>/policy``.

    ``before``: the held-out numbers of the same policy under the same config, when already measured (every
    arm starts from the same policy, so :func:`prm.rl.compare_arms` measures it once). ``problems``: the pool
    the held-out and training problems come from (:func:`prm.rl.data.split_pool`, e.g. the warehouse's via
    :func:`prm.rl.data.warehouse_problems`); None draws them from the generator (:func:`prm.rl.data.eval_problems`).
    ``held_out``: fixed held-out problems (a flywheel measures every round on the same ones); ``problems`` are then
    all training problems (:func:`prm.rl.data.training_prompts`).

    Example (needs a policy and a PRM folder)::

        result = run_grpo(resolve_model("arith-policy"), "arith-prm", "prm_min", RLRunConfig(steps=50),
                          "models/rl/prm_min")
        print(result.summary())
    """
    if arm not in ARMS:
        raise ValueError(f"arm={arm!r} is unknown; choose from {tuple(ARMS)}")
    prm_dir = local_model(prm_dir)
    if not (Path(prm_dir) / "config.json").is_file():
        raise FileNotFoundError(f"no PRM at {prm_dir} (no config.json); pass arith-prm, models/prm (the "
                                "prm_model asset's newest version) or a folder prm.training.train_prm wrote")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    start = time.perf_counter()
    out = Path(out_dir)
    cuda = torch.cuda.is_available()
    threads = torch.get_num_threads()
    if not cuda:
        torch.set_num_threads(config.torch_threads)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(policy_dir))
        model = AutoModelForCausalLM.from_pretrained(str(policy_dir)).to(default_device())
        held, pooled = _problems(config, problems, held_out)
        rewarder = load_rewarder(prm_dir, RewardConfig())
        if before is None:
            before = evaluate_heldout(model, tokenizer, held, rewarder, config)
        train = pooled if pooled is not None else train_problems(config, exclude={p.problem_id for p in held})
        arm_fn, trainer_cls, trainer_kwargs = arm_trainer(
            arm, prm_dir, tokenizer, policy_dir, config.reward_config(arm),
            config.process_config(arm) if arm in PROCESS_ARMS else None)
        online = trainer_kwargs.get("online")
        reward, batches = _recording(arm_fn)
        points: list[HeldOutPoint] = []
        callbacks = [_progress_callback(progress, arm, config.steps)]
        if config.eval_every:
            callbacks.append(curve_callback(
                config.eval_every, config.steps,
                lambda m: measure_heldout(m, tokenizer, held, rewarder, config, trainer.state.global_step, online)[1],
                points, progress))
        trainer = trainer_cls(model=model, reward_funcs=[reward], processing_class=tokenizer,
                              args=grpo_args(config, out / "trainer", cuda=cuda, vllm=use_vllm(config, cuda)),
                              train_dataset=Dataset.from_list(dataset_rows(train, tokenizer)),
                              callbacks=callbacks, **trainer_kwargs)
        t0 = time.perf_counter()
        trainer.train()
        train_s = time.perf_counter() - t0
        after, last_point = measure_heldout(trainer.model, tokenizer, held, rewarder, config,
                                            trainer.state.global_step, online)
        if config.eval_every or online is not None:
            points.append(last_point)
        main = trainer.accelerator.is_main_process
        policy = out / POLICY_SUBDIR if config.save_policy else None
        if policy is not None and main:
            trainer.save_model(str(policy))
    finally:
        torch.set_num_threads(threads)
    result = ArmResult(arm=arm, reward=config.reward_config(arm), steps=trainer.state.global_step, before=before,
                       after=after,
                       curve=reward_curve(trainer.state.log_history, reward.__name__),
                       first_batch=batches[0] if batches else (), last_batch=batches[-1] if batches else (),
                       train_s=train_s, wall_s=time.perf_counter() - start, policy_dir=policy,
                       heldout_curve=tuple(points))
    if main:
        from prm.files import atomic_write_text

        record = {"key": run_key(policy_dir, prm_dir, config, arm, problems), **result.to_dict()}
        atomic_write_text(out / RESULT_FILE, json.dumps(record, indent=1, allow_nan=False))
    return result
