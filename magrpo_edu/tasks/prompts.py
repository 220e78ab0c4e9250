"""Prompt tools every task shares: a chat-template message, the single-model baseline's part
marker, the other agent's answer shown first (sequential and discussion baselines). Each task's
own prompt texts live in its folder (`tasks/writing/prompts.py`, `tasks/coding/prompts.py`); the
pretraining corpus uses the same texts, so the embedded model has seen the instruction words it
will be given."""

SINGLE_MARKER = "###"
"""The line between the parts of the single model's one answer (writing tasks)."""


def chat_prompt(tokenizer, text: str) -> str:
    """`text` as one user message in the tokenizer's chat template, ready for the assistant's answer
    (the formatters and the single-model baseline use it when the tokenizer has a template)."""
    return tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)


def chat_next_turn(tokenizer, first_prompt: str, answer: str, message: str):
    """A chat conversation's next prompt: `first_prompt` (one user message in the tokenizer's chat template,
    as `chat_prompt` writes it), the assistant's `answer` closed as the template closes an assistant turn,
    `message` as a new user turn, and the assistant's next turn opened. Returns None where `first_prompt`
    is not in that template (a raw prompt; the caller continues it as text) or the tokenizer has none.
    The template is rendered with placeholders once per call, so any chat template works, not only
    SmolLM2's `<|im_start|>` form; the answer's own text is kept as it was generated."""
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        return None
    u, a, m = "\x00USER\x00", "\x00ANSWER\x00", "\x00MESSAGE\x00"
    opened = chat_prompt(tokenizer, u)
    whole = tokenizer.apply_chat_template([{"role": "user", "content": u}, {"role": "assistant", "content": a},
                                           {"role": "user", "content": m}], tokenize=False, add_generation_prompt=True)
    opening = opened[opened.index(u) + len(u):]  # what follows a user message: the assistant's turn opening
    if not first_prompt.endswith(opening) or a not in whole:
        return None
    after_answer = whole[whole.index(a) + len(a):]  # closes the assistant's turn, the new user turn, the next opening
    return first_prompt + answer + after_answer.replace(m, message)


def with_other(prompt: str, other: str) -> str:
    """Agent prompt with the other agent's answer shown first (sequential and discussion baselines)."""
    return f"The other agent wrote: {other.strip()}\n{prompt}"
