"""The agents' prompt texts, in one place: the writing/coding formatters and the pretraining
corpus both use them, so the embedded model has seen the instruction words it will be given.

Roles follow the paper (spec section 4): TL;DR agent 1 writes a concise summary, agent 2 a detailed
summary with more unique words and transition words; arXiv agent 1 writes background and
motivation, agent 2 methodology and implications; coding agent 1 writes a helper `aux`, agent 2 the
entry-point function, which may call `aux`.
"""

TLDR_INSTRUCTIONS = (
    "Write a concise summary of the post.",
    "Write a detailed summary of the post, with more unique words and transition words.",
)
TLDR_ANSWER_TAGS = ("Summary:", "Detailed summary:")

ARXIV_INSTRUCTIONS = (
    "Expand the abstract: write the background and motivation of the work.",
    "Expand the abstract: write the methodology of the work and its implications.",
)
ARXIV_ANSWER_TAGS = ("Background:", "Method:")

CODING_INSTRUCTIONS = (
    "Write a helper function aux that the main function can use. Only write aux.",
    "Write the main function. You may call the helper aux(...). Only write the main function.",
)


def chat_prompt(tokenizer, text: str) -> str:
    """`text` as one user message in the tokenizer's chat template, ready for the assistant's answer
    (the formatters and the single-model baseline use it when the tokenizer has a template)."""
    return tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)


def tldr_prompt(post: str, agent: int) -> str:
    """Raw prompt of TL;DR agent `agent` (0 = concise, 1 = detailed)."""
    return f"{TLDR_INSTRUCTIONS[agent]}\nPost: {post}\n{TLDR_ANSWER_TAGS[agent]}"


def arxiv_prompt(abstract: str, agent: int) -> str:
    """Raw prompt of arXiv-expansion agent `agent` (0 = background, 1 = method)."""
    return f"{ARXIV_INSTRUCTIONS[agent]}\nAbstract: {abstract}\n{ARXIV_ANSWER_TAGS[agent]}"


def coding_prompt(problem_prompt: str, agent: int) -> str:
    """Raw prompt of coding agent `agent` (0 = helper aux, 1 = main function)."""
    return f"{CODING_INSTRUCTIONS[agent]}\n{problem_prompt.rstrip()}\n"


# ---- the single-model baseline's prompts (spec section 6; each task's record names its own) -------
SINGLE_MARKER = "###"
"""The line between the parts of the single model's one answer (writing tasks)."""
TLDR_SINGLE_INSTRUCTION = ("Write a concise summary of the post, then a line with ###, then a detailed summary of the post "
                           "with more unique words and transition words.")
ARXIV_SINGLE_INSTRUCTION = ("Expand the abstract: write the background and motivation of the work, then a line with ###, "
                            "then the methodology of the work and its implications.")
CODING_SINGLE_INSTRUCTION = "Write the main function. Only write the main function."  # the entry point alone, no aux


def single_writing_prompt(instruction: str, label: str, text: str, tokenizer=None) -> str:
    """One model writes both parts, separated by SINGLE_MARKER: through the tokenizer's chat template
    when it has one, as the task's own formatters do (an instruct model given the raw prompt answers
    nonsense), else the raw `instruction / label: text / Answer:`."""
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        return chat_prompt(tokenizer, f"{instruction}\n\n{text}")
    return f"{instruction}\n{label}: {text}\nAnswer:"


def single_coding_prompt(problem_prompt: str) -> str:
    """One model writes the entry point alone (as the authors' single-agent baseline: no aux, scored
    without cooperation credit), from the raw problem prompt."""
    return f"{CODING_SINGLE_INSTRUCTION}\n{problem_prompt.rstrip()}\n"


def with_other(prompt: str, other: str) -> str:
    """Agent prompt with the other agent's answer shown first (sequential and discussion baselines)."""
    return f"The other agent wrote: {other.strip()}\n{prompt}"
