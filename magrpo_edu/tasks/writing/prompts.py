"""The writing agents' prompt texts (our own short texts: docs/faithfulness.md): TL;DR agent 1 writes a concise summary, agent 2
a detailed summary with more unique words and transition words; arXiv agent 1 writes background
and motivation, agent 2 methodology and implications."""
from ..prompts import chat_prompt

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


def tldr_prompt(post: str, agent: int) -> str:
    """Raw prompt of TL;DR agent `agent` (0 = concise, 1 = detailed)."""
    return f"{TLDR_INSTRUCTIONS[agent]}\nPost: {post}\n{TLDR_ANSWER_TAGS[agent]}"


def arxiv_prompt(abstract: str, agent: int) -> str:
    """Raw prompt of arXiv-expansion agent `agent` (0 = background, 1 = method)."""
    return f"{ARXIV_INSTRUCTIONS[agent]}\nAbstract: {abstract}\n{ARXIV_ANSWER_TAGS[agent]}"


TLDR_SINGLE_INSTRUCTION = ("Write a concise summary of the post, then a line with ###, then a detailed summary of the post "
                           "with more unique words and transition words.")
ARXIV_SINGLE_INSTRUCTION = ("Expand the abstract: write the background and motivation of the work, then a line with ###, "
                            "then the methodology of the work and its implications.")


def single_writing_prompt(instruction: str, label: str, text: str, tokenizer=None) -> str:
    """One model writes both parts, separated by SINGLE_MARKER: through the tokenizer's chat template
    when it has one, as the task's own formatters do (an instruct model given the raw prompt answers
    nonsense), else the raw `instruction / label: text / Answer:`."""
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        return chat_prompt(tokenizer, f"{instruction}\n\n{text}")
    return f"{instruction}\n{label}: {text}\nAnswer:"
