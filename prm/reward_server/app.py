"""The reward server: a PRM folder behind HTTP, with dynamic batching, for RL frameworks on other machines.

Endpoints (all JSON; request-level problems are a 4xx with a ``detail`` message, never a 5xx):

* ``POST /get_reward``: OpenRLHF's remote reward protocol (``--remote_rm_url http://host:port/get_reward``).
  Request ``{"query": [prompt + response, ...], "prompts": [...], "labels": [gold, ...]}``; response
  ``{"rewards": [...], "scores": [...], "extra_logs": {name: [...]}}``, one entry per query. OpenRLHF from v0.9.1
  sends one sample per request and drops the sample when the request fails; up to v0.9.0 it posts the whole
  rollout batch (``max_samples``, scored ``CHUNK_SAMPLES`` at a time) and stops training after 5 failed tries.
  So every sample gets a reward: one the server cannot score (a scoring error, more than ``max_steps`` steps,
  a question it cannot find, an unusable label) gets the reward of a completion with no steps (or a wrong
  outcome), and ``extra_logs["reward_error"]`` = 1 (the error is logged). A prompt rendered through a chat
  template is read back to its question (:mod:`prm.rewards.adapters.chat_template`). The reply is
  what :func:`prm.rewards.adapters.openrlhf.remote_payload` (the file-style ``reward_func``) computes: a
  sample without a label has outcome 0 when the reward mixes the outcome in (logged as a warning).
* ``POST /score``: one scalar for verl's ``compute_score`` (``{"prompt", "completion", "ground_truth"}`` ->
  ``{"score", "extras": {name: number}, "error"}``); a missing ground truth is a 422 when the reward mixes
  the outcome in.
* ``POST /steps``: per-step scores with ``[start, end)`` character spans into the completion as sent, for
  dense-reward managers (same request -> ``{"reward", "n_steps", "scored", "steps": [{"start", "end",
  "score", "off_policy"}], "extras", "error"}``; ``off_policy`` is true for a step far from what the PRM was
  trained on, null where the PRM has no such rule, and the reward scores such a step as wrong unless the
  reward config says ``off_policy="keep"``). A completion /score gives the no-step reward without scoring it (over
  ``max_steps``, a scoring error) gets the same reward here, ``"scored": false``, no steps and the reason in
  ``error``.
* ``GET /health`` (the process serves; batching counters, request-body bytes in service and bodies waiting
  to be read, completions not scored because their question was not found) and ``GET /ready`` (200 once the
  model is loaded, 503 while loading or after a failed load). Every reward endpoint answers 503 with
  ``Retry-After`` until the model is loaded.

Rewards are computed by :class:`prm.rewards.rewarder.Rewarder`, the code the TRL/verl/OpenRLHF adapters
run, so the server and the adapters agree. Each sample runs in a thread of its own; its PRM forward passes
go through one worker thread (:class:`~prm.reward_server.batching.DynamicBatcher`), where concurrent samples
share them, and the event loop stays free for parsing and health checks.

A hostile or broken client costs the others little: :mod:`prm.reward_server.http_limits` bounds what it may send
and hold (body, headers, time to send, connections, bodies in service); a completion past the PRM's context
is fitted in its own thread and never fails a batch; and a sample's reply waits ``ServerConfig.pace`` times
what it cost, so padding costs its sender time instead of costing everyone throughput.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from prm.format import ContextOverflowError
from prm.reward_server.batching import BatchingConfig, DynamicBatcher
from prm.reward_server.constants import (
    DEFAULT_MAX_CHARS_PER_TOKEN,
    DEFAULT_MAX_SAMPLES,
    DEFAULT_MAX_STEPS,
    DEFAULT_PACE,
)
from prm.reward_server.http_limits import BodyLimit, ByteBudget, HttpLimits, uvicorn_config
from prm.rewards import UNCONDITIONED, RewardConfig, Rewarder, ScoredCompletion, outcome_rewards
from prm.rewards.adapters.chat_template import ChatMarkers, markers_from_tokenizer
from prm.rewards.adapters.messages import label_answer, problem_text
from prm.rewards.adapters.openrlhf import remote_payload
from prm.scoring import Scorer, StepAssessment, assess_batch

__all__ = ["RewardEngine", "SampleResult", "ServerConfig", "ServerThread", "create_app"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerConfig:
    """What the server scores with and the bounds it enforces.

    >>> ServerConfig(max_steps=0)
    Traceback (most recent call last):
    ...
    ValueError: max_steps=0 must be >= 1 (steps scored per completion)
    """

    reward: RewardConfig = field(default_factory=RewardConfig)  # shaping, outcome mix, PROF filter, pad texts
    batching: BatchingConfig = field(default_factory=BatchingConfig)  # max_batch 64, max_wait_ms 10
    http: HttpLimits = field(default_factory=HttpLimits)  # body 32 MiB, headers 64 KiB, 30 s to send, 1024 clients
    max_samples: int = DEFAULT_MAX_SAMPLES  # per /get_reward request (see the constant: OpenRLHF <= v0.9.0's batch)
    max_steps: int = DEFAULT_MAX_STEPS  # per completion; more gets the no-step reward without being tokenized
    # Prompt + steps longer than this many characters per token of PRM context are past it without being
    # tokenized (see the constant's reason).
    max_chars_per_token: int = DEFAULT_MAX_CHARS_PER_TOKEN
    # A sample's reply is sent no sooner than this many times what the sample cost: the CPU time of its thread
    # (stripping, segmenting, tokenizing, grading), plus the forward pass of a completion past the PRM's
    # context. A client that pads its requests waits for its padding instead of taking others' turns: sending
    # one request after another, it gets at most 1 / (1 + pace) of a CPU (and of the PRM, past the context).
    # An honest sample costs ~1 ms of its thread, less than 1/pace of its batching wait, so it is not slowed.
    # 0 turns pacing off.
    pace: float = DEFAULT_PACE
    # A tokenizer (a registered name or a folder) whose chat template the frameworks render prompts with; its
    # markers are tried before the PRM's own template and the common families (prm.rewards.adapters.chat_template)
    # when a prompt is read back to its question. None: the PRM's tokenizer and the families.
    chat_template: str | None = None

    def __post_init__(self) -> None:
        bounds = {"max_samples": "samples per request", "max_steps": "steps scored per completion",
                  "max_chars_per_token": "characters per token of context"}
        for name, what in bounds.items():
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 1 ({what})")
        if not (math.isfinite(self.pace) and self.pace >= 0):
            raise ValueError(f"pace={self.pace} must be a finite number >= 0 (0 turns pacing off)")

    @property
    def needs_gold(self) -> bool:
        """Whether a reward needs a gold answer (the outcome is mixed in or the PROF filter reads it)."""
        return self.reward.outcome_weight > 0 or self.reward.prof_filter


@dataclass(frozen=True)
class SampleResult:
    """One completion's reward, the step scores it was shaped from, and why it was not scored (``error``)."""

    scored: ScoredCompletion
    error: str | None = None

    @property
    def reward(self) -> float:
        return self.scored.reward

    def extras(self) -> dict[str, float]:
        """Numbers for a framework's logs: the shaped reward's parts, unread steps, a 0/1 error flag."""
        return {**self.scored.shaped.extras(), "unread_steps": float(self.scored.steps.unread),
                "reward_error": float(self.error is not None)}


# Samples of one /get_reward request in flight at a time: enough to fill every batch the sample threads can feed,
# few enough that a 8,192-sample request holds a bounded number of futures and texts in service.
CHUNK_SAMPLES = 256
# Seconds a client is told to wait (Retry-After) while the PRM loads: a small PRM loads in seconds, a 7B in ~a minute.
RETRY_AFTER_S = 5


class ServiceUnavailable(Exception):
    """The model failed to load, so nothing can be scored (HTTP 503)."""


class Loading(ServiceUnavailable):
    """The model is still loading: every reward endpoint answers 503 with ``Retry-After`` until it is ready, never
    a reward computed without it."""


class _NoSteps:
    """A scorer that reads no step: a :class:`Rewarder` over it gives the no-step reward (outcome still mixed
    in), the defined reward of a completion the PRM could not score."""

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]], batch_size: int | None = None) -> list[list]:
        return [[] for _ in items]


class _Batched:
    """What one request's :class:`Rewarder` sees as its PRM: ``score_batch`` queues the items on the engine's
    batcher (so concurrent requests share forward passes) and waits. Before queueing, each item is encoded here,
    in the request's thread: one past the PRM's context raises ContextOverflowError (step_rewards_batch then
    finds the prefix that fits through :meth:`encode` and scores that), and text the tokenizer refuses raises
    its own error, so neither ever fails a batch of other requests' items. A completion over ``max_steps`` is
    not queued and gets no scores (the no-step reward), with the reason kept in :attr:`error`."""

    def __init__(self, engine: RewardEngine) -> None:
        self.engine, self.error = engine, None
        self.past_context = False  # some completion did not fit the PRM's context
        self.forward_s = 0.0  # seconds spent waiting for the forward passes of such a completion's prefix

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]], batch_size: int | None = None) -> list[list]:
        return [[a.score for a in row] for row in self.assess_batch(items, batch_size)]

    def assess_batch(self, items: Sequence[tuple[str, Sequence[str]]], batch_size: int | None = None
                     ) -> list[list[StepAssessment]]:
        """Each step's score and off-policy flag (:func:`prm.scoring.assess_batch`), batched on the engine."""
        engine, cap = self.engine, self.engine.config.max_steps
        queued = []
        for problem, steps in items:
            if len(steps) > cap:
                self.error = (f"{len(steps)} steps is over this server's limit of {cap} per completion "
                              "(--max-steps); given the reward of a completion with no steps")
                logger.warning("unscored completion: %s", self.error)
            elif steps:
                try:
                    self.encode(problem, steps)
                except ContextOverflowError:
                    self.past_context = True
                    raise
            queued.append((problem, list(steps)) if 0 < len(steps) <= cap else None)
        started = time.perf_counter()
        futures = [None if item is None else engine.batcher.submit(item) for item in queued]
        rows = []
        for future in futures:
            try:
                row = [] if future is None else future.result()
            except Exception as err:
                if engine.batcher.error is not None:
                    raise ServiceUnavailable(f"the PRM failed to load: {engine.batcher.error}") from err
                raise
            if not all(math.isfinite(a.score) for a in row):
                raise ValueError(f"the PRM returned non-finite step scores {[a.score for a in row[:8]]}")
            rows.append(row)
        if self.past_context:
            self.forward_s += time.perf_counter() - started
        return rows

    def encode(self, problem: str, steps: Sequence[str]) -> Any:
        """The real scorer's ``encode``; text over ``max_chars_per_token`` per token of context is over the
        context without being tokenized.

        No lock: a fast tokenizer only takes its Rust object's write borrow when a call changes truncation or
        padding, which encoding steps never asks for, so request threads tokenize beside the batch thread (and
        the tokenizer releases the GIL while it works).
        """
        size, limit = len(problem) + sum(len(s) for s in steps), self.engine.max_chars
        if limit is not None and size > limit:
            raise ContextOverflowError(f"prompt + {len(steps)} steps hold {size} characters, more than the PRM's "
                                       f"context can hold at {self.engine.config.max_chars_per_token} characters "
                                       "per token (--max-chars-per-token)")
        return self.engine.scorer.encode(problem, steps)


class RewardEngine:
    """A PRM loaded in the batcher's thread, and the rewards of completions computed by
    :class:`~prm.rewards.rewarder.Rewarder` (the TRL/verl/OpenRLHF adapters' code) over it, batched.

    ``load`` returns a scorer (:class:`prm.scoring.PRMScorer`, or anything with its ``score_batch`` and
    ``encode``); the batcher calls it once, before the first batch, in its own thread. Each sample runs in
    a request thread (segmenting, grading, shaping) and only its PRM forward passes go through the batcher.
    """

    def __init__(self, load: Callable[[], Any], config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.scorer: Scorer | None = None
        self.markers: tuple[ChatMarkers, ...] = ()  # chat templates prompts are read back through
        self.max_chars: int | None = None  # characters past the PRM's context (see ServerConfig.max_chars_per_token)
        self._load = load
        self.batcher: DynamicBatcher[tuple[str, list[str]], list[StepAssessment]] = DynamicBatcher(
            self._score_batch, self.config.batching, setup=self._setup, name="prm-reward-batcher")
        # Enough threads for every sample a full batch holds plus the next batch's, so the batcher is never
        # starved by a small thread pool (asyncio's default has min(32, cpus + 4)).
        self._threads = ThreadPoolExecutor(max_workers=4 * self.config.batching.max_batch,
                                           thread_name_prefix="prm-reward-sample")

    def _setup(self) -> None:
        started = time.perf_counter()
        self.scorer = self._load()
        self.markers = self._chat_markers()
        context = getattr(self.scorer, "max_length", None)  # a PRMScorer's context in tokens; None: unbounded
        self.max_chars = context * self.config.max_chars_per_token if context else None
        logger.info("PRM loaded in %.1f s", time.perf_counter() - started)
        if self.config.needs_gold:
            # A fraction is not a plain number, so this starts Math-Verify's worker pool now (seconds under
            # load) instead of in the first request that needs it, which would wait past a client's timeout.
            outcome_rewards(["Answer: \\frac{1}{2}"], ["0.5"])

    def _chat_markers(self) -> tuple[ChatMarkers, ...]:
        """The named tokenizer's template markers, then the PRM's own (each only where it has a template)."""
        tokenizers = []
        if self.config.chat_template:
            from prm.models import load_tokenizer

            tokenizers.append(load_tokenizer(self.config.chat_template))
        tokenizers.append(getattr(self.scorer, "tokenizer", None))
        found = tuple(m for m in (markers_from_tokenizer(t) for t in tokenizers if t is not None) if m is not None)
        if self.config.chat_template and not found[:1]:
            logger.warning("%s has no chat template whose markers could be read; prompts are read back through the "
                           "common families only", self.config.chat_template)
        return found

    def _score_batch(self, items: list[tuple[str, list[str]]]) -> list[list[StepAssessment]]:
        # The scorer's own batch_size (ScorerConfig.batch_size, the CLI's --forward-batch) splits a gathered
        # batch into forward passes: on a GPU one pass takes the whole batch; on a CPU, where a pass costs
        # about the same per item at any size, small passes keep activations in cache.
        return assess_batch(self.scorer, items)

    def start(self) -> RewardEngine:
        self.batcher.start()
        return self

    def stop(self) -> None:
        self.batcher.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(batched, *args)`` in a sample thread; the answer waits until ``pace`` times what it cost passed."""
        if self.batcher.error is not None:
            raise ServiceUnavailable(f"the PRM failed to load: {self.batcher.error}")
        if not self.batcher.ready:
            raise Loading("the PRM is loading")
        loop = asyncio.get_running_loop()
        started = loop.time()
        result, cost = await loop.run_in_executor(self._threads, self._costed, fn, *args)
        delay = self.config.pace * cost - (loop.time() - started)
        if delay > 0:  # on the event loop: a paced reply holds no thread
            await asyncio.sleep(delay)
        return result

    def _costed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        """``fn(batched, *args)`` and its cost in seconds: this thread's CPU time, plus the forward passes of a
        completion past the PRM's context (which the thread only waits for)."""
        batched, started = _Batched(self), time.thread_time()
        result = fn(batched, *args)
        return result, time.thread_time() - started + batched.forward_s

    async def evaluate(self, problem: str, completion: str, gold: str | None) -> SampleResult:
        """The reward of ``completion`` answering ``problem``; never raises on bad text or a scoring error."""
        return await self._in_thread(self._evaluate, problem, completion, gold)

    async def openrlhf(self, query: str, prompt: str, label: Any) -> dict[str, Any]:
        """OpenRLHF's reply for one sample, by :func:`~prm.rewards.adapters.openrlhf.remote_payload` (what its
        file-style ``reward_func`` returns), with ``extra_logs["reward_error"]`` added."""
        return await self._in_thread(self._openrlhf, query, prompt, label)

    def _evaluate(self, batched: _Batched, problem: str, completion: str, gold: str | None) -> SampleResult:
        try:
            scored = Rewarder(batched, self.config.reward).score([problem or None], [completion], [gold])[0]
            if math.isfinite(scored.reward):
                return SampleResult(scored, batched.error or scored.error)
            raise ValueError(f"the shaped reward is {scored.reward}")  # JSON cannot carry it
        except ServiceUnavailable:
            raise
        except Exception as err:
            error = self._failed(err, completion)
        return SampleResult(Rewarder(_NoSteps(), self.config.reward).score([problem], [completion], [gold])[0], error)

    def _openrlhf(self, batched: _Batched, query: str, prompt: str, label: Any) -> dict[str, Any]:
        try:
            payload = remote_payload(Rewarder(batched, self.config.reward), [query], [prompt], [label],
                                     markers=self.markers)
            if not all(math.isfinite(x) for x in payload["rewards"]):
                raise ValueError(f"the shaped reward is {payload['rewards']}")
            error = batched.error
        except ServiceUnavailable:
            raise
        except Exception as err:
            error = self._failed(err, query)
            payload = remote_payload(Rewarder(_NoSteps(), self.config.reward), [query], [prompt], [label],
                                     markers=self.markers)
        logs = payload["extra_logs"]
        logs["reward_error"] = [max(logs["reward_error"][0], float(error is not None))]
        return payload

    @staticmethod
    def _failed(err: Exception, text: str) -> str:
        logger.error("scoring a completion of %d characters failed; it gets the no-step reward", len(text),
                     exc_info=err)
        return f"scoring failed ({type(err).__name__}: {str(err)[:200]}); given the no-step reward"


# ---- HTTP schemas ---------------------------------------------------------------------------------------
# A gold answer as frameworks send it: OpenRLHF passes the dataset's --label_key column as is (a string, a number, a
# one-element list, a dict); prm.rewards.adapters.messages.label_answer reads it, and an unusable one is a per-sample
# reward_error, never a 422 that fails the batch.
Label = Any


class _Strict(BaseModel):
    # strict: a number where text belongs is an error, not silently str()-ed; unknown fields are ignored,
    # since OpenRLHF forks add their own (datasources, metadata) to the same request.
    model_config = ConfigDict(strict=True, extra="ignore")


class OpenRLHFRequest(_Strict):
    query: list[str]  # prompt + response, decoded as OpenRLHF's rollout did (special tokens kept)
    prompts: list[str] | None = None  # the prompt of each query; without them the whole query is the completion
    labels: list[Label] | None = None  # gold answers (OpenRLHF's --label_key); "" or null means none


class SampleRequest(_Strict):
    prompt: str  # the problem the PRM is conditioned on (problem_text: a plain prompt's suffix is cut)
    completion: str  # the model's response only
    ground_truth: Label = None  # the gold answer; required when the server mixes in the outcome


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def _describe(exc: RequestValidationError) -> tuple[int, str]:
    """A 400 for a body that is not JSON, else a 422 naming each bad field."""
    problems = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            where = err.get("ctx", {}).get("error", "")
            return 400, f"the request body is not valid JSON ({where}); send a JSON object"
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        got = err.get("input")
        if loc == "body" and isinstance(got, bytes | str):  # FastAPI hands over raw bytes it did not read as JSON
            return 400, "the request body is not JSON; send a JSON object with Content-Type: application/json"
        kind = "missing" if err.get("type") == "missing" else f"got {type(got).__name__}"
        problems.append(f"{loc}: {err.get('msg', 'invalid')} ({kind})")
    return 422, "invalid request: " + "; ".join(problems[:8]) + (" ..." if len(problems) > 8 else "")


# ---- the app ---------------------------------------------------------------------------------------------
def create_app(engine: RewardEngine, *, model_name: str = "") -> FastAPI:
    """The FastAPI app over ``engine``; its lifespan starts the engine (the model loads in the background)."""
    from contextlib import asynccontextmanager

    config = engine.config

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        engine.start()
        try:
            yield
        finally:
            await asyncio.to_thread(engine.stop)

    app = FastAPI(title="prm-reward", lifespan=lifespan,
                  description="Process-reward-model rewards for RL: OpenRLHF, verl, and per-step scores.")
    app.state.engine = engine
    bodies = ByteBudget(config.http.max_inflight_body_bytes)
    app.add_middleware(BodyLimit, max_bytes=config.http.max_body_bytes, inflight=bodies)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(*_describe(exc))

    @app.exception_handler(ServiceUnavailable)
    async def _unavailable(_: Request, exc: ServiceUnavailable) -> JSONResponse:
        if isinstance(exc, Loading):
            reply = _error(503, f"{exc}; retry after {RETRY_AFTER_S} s, or poll /ready until it answers 200")
            reply.headers["Retry-After"] = str(RETRY_AFTER_S)
            return reply
        return _error(503, f"{exc}; check the server log and restart it with a loadable --model")

    def need_gold(gold: str | None) -> JSONResponse | None:
        if gold is None and config.needs_gold:
            mix = f"outcome_weight={config.reward.outcome_weight}, prof_filter={config.reward.prof_filter}"
            return _error(422, f"ground_truth is missing or empty, but this server mixes the outcome reward in "
                               f"({mix}); send the gold answer, or restart the server with --outcome-weight 0 for "
                               "PRM-only rewards")
        return None

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "ready": engine.batcher.ready, "batching": engine.batcher.stats.as_dict(),
                "bodies": {"bytes": bodies.used, "waiting": bodies.waiting},
                # completions given the no-step reward because their question was not found (per process)
                "unconditioned": UNCONDITIONED.count}

    @app.get("/ready")
    async def ready() -> JSONResponse:
        if engine.batcher.ready:
            return JSONResponse({"ready": True, "model": model_name})
        if engine.batcher.error is not None:
            return _error(503, f"the PRM failed to load: {engine.batcher.error}")
        reply = _error(503, "the PRM is loading; poll /ready until it answers 200")
        reply.headers["Retry-After"] = str(RETRY_AFTER_S)
        return reply

    @app.post("/get_reward")
    async def get_reward(req: OpenRLHFRequest) -> JSONResponse:
        n = len(req.query)
        if n > config.max_samples:
            return _error(413, f"{n} queries in one request is over this server's limit of {config.max_samples} "
                               "(--max-samples); split them over several requests")
        for name in ("prompts", "labels"):
            got = getattr(req, name)
            if got is not None and len(got) != n:
                return _error(422, f"{name} has {len(got)} entries for {n} queries; send one per query")
        prompts = req.prompts if req.prompts is not None else [""] * n
        labels = req.labels if req.labels is not None else [None] * n
        # One sample per call (OpenRLHF after v0.9.0 sends one per request anyway), so a sample that cannot be
        # scored gets its own defined reward without taking its request-mates down with it; a whole rollout batch
        # (OpenRLHF up to v0.9.0) runs CHUNK_SAMPLES at a time.
        samples, parts = list(zip(req.query, prompts, labels, strict=True)), []
        for at in range(0, n, CHUNK_SAMPLES):
            parts += await asyncio.gather(*(engine.openrlhf(q, p, label) for q, p, label in
                                            samples[at:at + CHUNK_SAMPLES]))
        keys = list(parts[0]["extra_logs"]) if parts else []
        return JSONResponse({"rewards": [x for p in parts for x in p["rewards"]],
                             "scores": [x for p in parts for x in p["scores"]],
                             "extra_logs": {k: [x for p in parts for x in p["extra_logs"][k]] for k in keys}})

    async def evaluate(req: SampleRequest) -> Any:
        """The sample's evaluation, or the 422 response saying its gold answer is missing."""
        gold, unusable = label_answer(req.ground_truth)
        if unusable is None and (bad := need_gold(gold)) is not None:
            return bad
        if unusable is not None:  # a per-sample error, not a 422: graded as a wrong answer where the outcome counts
            logger.warning("unusable ground_truth: %s", unusable)
            result = await engine.evaluate(problem_text(req.prompt, engine.markers), req.completion,
                                           "" if config.needs_gold else None)
            return SampleResult(result.scored, result.error or f"unusable ground_truth: {unusable}")
        return await engine.evaluate(problem_text(req.prompt, engine.markers), req.completion, gold)

    @app.post("/score")
    async def score(req: SampleRequest) -> JSONResponse:
        r = await evaluate(req)
        if isinstance(r, JSONResponse):
            return r
        return JSONResponse({"score": r.reward, "extras": r.extras(), "error": r.error})

    @app.post("/steps")
    async def steps(req: SampleRequest) -> JSONResponse:
        r = await evaluate(req)
        if isinstance(r, JSONResponse):
            return r
        steps = r.scored.steps
        # An unscored completion (over a limit, a scoring error: "error" says which) has spans but no scores.
        flags = steps.off_policy or (None,) * len(steps.scores)
        rows = ([{"start": a, "end": b, "score": x, "off_policy": f}
                 for (a, b), x, f in zip(steps.spans, steps.scores, flags, strict=True)] if steps.scored else [])
        return JSONResponse({"reward": r.reward, "n_steps": len(steps.spans), "scored": steps.scored,
                             "steps": rows, "extras": r.extras(), "error": r.error})

    return app


# ---- serving ---------------------------------------------------------------------------------------------
class ServerThread:
    """uvicorn serving ``app`` in a daemon thread on a socket bound here (port 0 picks a free one).

    For tests and benchmarks; the CLI runs uvicorn in the main thread. Both apply the app's HTTP limits
    (:func:`~prm.reward_server.http_limits.uvicorn_config`).
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning") -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.host, self.port = host, self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn_config(app, app.state.engine.config.http, log_level=log_level,
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url} within {timeout} s; see its log above")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
