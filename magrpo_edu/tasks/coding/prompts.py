"""The coding agents' prompt texts (our own short texts, not the authors' longer instructions: docs/faithfulness.md): agent 1 writes a helper `aux`, agent 2 the
entry-point function, which may call `aux`."""

CODING_INSTRUCTIONS = (
    "Write a helper function aux that the main function can use. Only write aux.",
    "Write the main function. You may call the helper aux(...). Only write the main function.",
)


def coding_prompt(problem_prompt: str, agent: int) -> str:
    """Raw prompt of coding agent `agent` (0 = helper aux, 1 = main function)."""
    return f"{CODING_INSTRUCTIONS[agent]}\n{problem_prompt.rstrip()}\n"


CODING_SINGLE_INSTRUCTION = "Write the main function. Only write the main function."  # the entry point alone, no aux


def single_coding_prompt(problem_prompt: str, tokenizer=None) -> str:
    """One model writes the entry point alone (as the authors' single-agent baseline: no aux, scored
    without cooperation credit), from the raw problem prompt; in the tokenizer's chat template when it
    has one (as `data.coding_formatters`)."""
    text = f"{CODING_SINGLE_INSTRUCTION}\n{problem_prompt.rstrip()}\n"
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        from ..prompts import chat_prompt
        return chat_prompt(tokenizer, text)
    return text
