"""The team's backend: how Algorithm 1's two model-running steps are computed for a team of agents.

Step 2 samples each agent's G responses, step 6 scores them (the token log-probs under pi_i, and, for the KL leash
and the naturalness metric, under the frozen reference pi_ref). A backend is not a policy: the policies are the
agents' pi_i; the backend is the machinery that runs them. Every backend has the same three methods (`Backend`):

    backend.sample(agents, prompts, G, gen)               step 2: a_i^(1..G) ~ pi_i( . | o) for each prompt o
    backend.logprobs(agents, completions, per_token)      step 6: sum_t log pi_i(a_t | o, a_<t) per completion
    backend.reference_logprobs(agents, completions, T)    log pi_ref(a_t | o, a_<t) per token, no gradient

Two implementations, side by side, compute the same numbers (tests/test_backends.py holds them equal: sampled
tokens, log-probs and gradients); the team builders (`agents.lora_agents`, ...) pick one when they build the agents
(`Agent.backend`), the trainer looks it up once a step (`agents.team_backend`), nothing switches it at call time:

* `plain.PlainBackend`: the textbook computation, one agent at a time (one `generate`, one forward). Read it to
  see what is computed; pass `backend=PlainBackend()` to a builder to train with it.
* `fast.FastBackend` (the builders' default): the same numbers faster: LoRA agents that share one base batched
  into one generate and one forward, and each prompt computed once for its G samples.

What both share (the interface, `Completions`, the sampler's distribution, pi_ref, the context check) is in
`common.py`.
"""
from .common import (Backend, Completions, PromptTooLongError, check_prompt_lengths, completion_mask,  # noqa: F401
                     context_size, eos_token_ids, reference_model, sampled_token_logprobs, sampling_kwargs,
                     sampling_settings)
from .fast import FastBackend  # noqa: F401
from .plain import PlainBackend  # noqa: F401
