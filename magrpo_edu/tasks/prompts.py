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


def with_other(prompt: str, other: str) -> str:
    """Agent prompt with the other agent's answer shown first (sequential and discussion baselines)."""
    return f"The other agent wrote: {other.strip()}\n{prompt}"
