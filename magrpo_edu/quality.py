"""Text quality beside the reward: is the learning something a reader would call better writing?

A reward can be gamed: an agent that learns to write "w w w w ..." may score well on a length or
structure reward while producing nothing readable. Two numbers per agent make that visible:

* repetition(text): the share of REPEATED word 3-grams. For the word list w_1..w_m, the 3-grams are
  g_k = (w_k, w_k+1, w_k+2), k = 1..m-2, and

      repetition = 1 - #distinct 3-grams / #3-grams        (0 for a text of fewer than 3 words)

  0 means no 3-gram repeats; "w w w w w w" has 4 equal 3-grams, so 1 - 1/4 = 0.75, and a text
  that repeats one phrase forever goes to 1. Pure Python, no model: cheap enough for every step.

* naturalness(agent, completions): the mean per-token negative log-likelihood of each completion
  under the agent's FROZEN UNTRAINED model pi_ref (its backend's `reference_logprobs`,
  `magrpo_edu.backends`: LoRA agents' base with the adapters off; full-model agents' frozen copy,
  `Agent.reference`), averaged over the completions:

      naturalness = mean over completions of  -(1/T) sum_t log pi_ref(a_t | prompt, a_<t)

  in nats per token (EOS counted, like the completion length), under the reference's raw softmax
  (temperature 1, whatever the temperature the texts were sampled at: it is a property of the text,
  comparable between runs; the KL leash instead takes the reference at the sampling temperature,
  `algorithm.agent_losses`). LOWER is more natural: text the base
  model itself would write scores about its own entropy; a text drifting away from language scores
  higher. It needs one forward pass of the reference, so the trainer computes it at evaluation
  points only. It measures distance from the base model's language, not correctness.

Both are averaged over completions: each completion counts once, whatever its length.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .agents import Agent
from .backends import Completions


def repetition(text: str) -> float:
    """1 - (#distinct word 3-grams / #word 3-grams) of one text; 0.0 with fewer than 3 words.

    Words are the text's whitespace-separated pieces, compared exactly (case and punctuation kept).
    >>> repetition("w w w w w w")
    0.75
    >>> repetition("the cat sat on the mat")
    0.0
    """
    w = text.split()
    grams = [tuple(w[k:k + 3]) for k in range(len(w) - 2)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def mean_repetition(texts: Sequence[str]) -> float:
    """`repetition` averaged over texts (0.0 for no texts).

    >>> mean_repetition(["w w w w w w", "the cat sat on the mat"])
    0.375
    """
    texts = list(texts)
    return sum(repetition(t) for t in texts) / len(texts) if texts else 0.0


def token_nll(agent: Agent, completions: Completions) -> torch.Tensor:
    """Per completion, -(1/T) sum_t log pi_ref(a_t | ...): its mean token NLL under the reference, (B,)."""
    (ref,) = agent.backend.reference_logprobs([agent], [completions], 1.0)  # the raw softmax (module docstring)
    T = completions.completion_mask.sum(-1).clamp_min(1).to(ref.device)
    return -(ref.sum(-1) / T).float().cpu()


def naturalness(agent: Agent, completions: Completions) -> float:
    """Mean over completions of their mean per-token NLL under the agent's frozen untrained model.

    Lower = closer to the language of the untrained model. Raises ValueError for an agent without
    a reference (a hand-made full-model `Agent` with `reference=None`)."""
    return token_nll(agent, completions).mean().item()
