"""Fixed numbers of the reward server, each with its reason."""

from __future__ import annotations

# File descriptors the reward server keeps out of its connection cap: the model's files, the tokenizer, the
# thread pools' pipes, logs. A loaded 7B PRM holds a few dozen; 256 leaves room without a measurement per model.
FD_HEADROOM = 256

# Characters per token of PRM context a prompt + steps may hold before they count as past the context without
# being tokenized, so a request costs about one context's worth of tokenizing however much it sent. English BPE
# averages ~4 characters per token and character tokenizers 1; 32 leaves room for runs of long tokens
# (indentation, rules of dashes) while a megabyte-long step is never tokenized.
DEFAULT_MAX_CHARS_PER_TOKEN = 32

# The reward server answers a sample no sooner than this many times what it cost (its thread's CPU time, plus
# the forward pass of a completion past the PRM's context), so a client sending one padded request after
# another gets at most 1/21 of a CPU. Measured on the arith-policy PRM: an honest sample costs 0.7 ms (1.6 at
# most) of its thread, 14-32 ms at 20x, within its batching wait (10 ms) and forward pass (~8 ms alone);
# a megabyte of padding costs ~6 ms, a completion 1,000 steps past the context ~50 ms plus a full-context pass.
DEFAULT_PACE = 20.0

# Samples per /get_reward request. OpenRLHF after v0.9.0 sends one; up to v0.9.0 it posts the whole rollout batch
# split over its servers (rollout_batch_size 1024 x n_samples_per_prompt, 1 by default, 8 common), retries a refusal
# 5 times and stops training. The app scores a request CHUNK_SAMPLES at a time, so this bounds a request's time.
DEFAULT_MAX_SAMPLES = 8192

# Steps per completion the PRM is asked to score. A 4k-token PRM context holds at most ~1,000 steps of four
# tokens; a completion with more is degenerate (a policy padding steps) and gets the no-step reward untokenized.
DEFAULT_MAX_STEPS = 1024
