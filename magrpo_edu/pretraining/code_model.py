"""Make the embedded `tiny-code` model: the `tiny` model, trained further on the coding corpus.

    magrpo-edu pretrain-code --out weights/tiny-code        # the shipped run (the defaults)
    magrpo-edu pretrain-code --out weights/tiny-code-2turn --second-turn-docs 6000 --steps 1100 \
        --max-len 384 --bucket 8                                      # tiny-code-2turn (answers feedback)
    magrpo-edu pretrain-code --out /tmp/tc --steps 3 --num-docs 50      # a smoke run (CI)

Steps (continued pretraining, as a base model is adapted to code before it is fine-tuned):
1. load the shipped `tiny` model and its tokenizer (the tokenizer does not change: its BPE already
   holds the code tokens, and the copy of names `tiny` learned carries over);
2. `tasks.coding.corpus.documents.code_documents(seed)` writes the coding corpus (seeded; never filtered by a reward) and
   `corpus.second_turn.second_turn_documents(seed)` its second-turn documents (a first attempt, the task's level
   feedback, a better answer: the text a two-turn run's second prompt is);
3. `max_steps` AdamW steps on batches of `docs_per_step` whole documents, padded per batch (no packing),
   so that every document starts at position 0 as an agent's prompt does; batches are made of
   documents of similar length (8 batches' worth at a time, sorted by length, then shuffled), so the
   long second-turn documents do not pad every batch; the learning rate warms up
   over 20 steps, then follows a cosine from `learning_rate` down to a tenth of it; gradients clipped to 1;
4. model + tokenizer are written with `save_pretrained` (safetensors) with loss.csv / loss.png and a
   summary (code_pretrain_summary.json: the command, wall time, losses, the machine).

The same command, seed and thread count give the same weights on the same machine (torch's CPU
kernels may differ in the last bits between CPUs). Why continued pretraining and not a model from
scratch: `tiny` already copies about 40% of unseen entry-point names from the prompt; a run this
short (about 10 minutes on 2 cores) could not teach that again.
"""
from __future__ import annotations

import json
import math
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch

from .pretrain import _mean_last, _optimizer_step, check_settings


@dataclass
class CodePretrainArguments:
    """The settings of `pretrain_code` (and of `magrpo-edu pretrain-code`); the defaults reproduce the
    shipped `tiny-code` model."""

    out: str
    """Folder to write the model, tokenizer, loss curve and summary to."""
    base: str = "tiny"
    """The model to start from (a registry name or a folder; the shipped run starts from 'tiny')."""
    max_steps: int = field(default=900, metadata=dict(aliases=("--steps",)))
    """AdamW steps (step 3)."""
    num_docs: int = 24000
    """Corpus documents (step 2); max_steps * docs_per_step are drawn from them in a seeded order."""
    second_turn_docs: int = 0
    """Second-turn documents (step 2), added to the `num_docs` first-turn ones (tiny-code: 0; tiny-code-2turn: 6000)."""
    docs_per_step: int = 16
    """Documents per step (one padded batch)."""
    learning_rate: float = field(default=1e-3, metadata=dict(aliases=("--lr",)))
    """Peak learning rate (a cosine down to a tenth of it)."""
    max_len: int = 256
    """Longest document in tokens (longer ones are cut; the corpus has none that long: first-turn documents
    are about 80 tokens; second-turn ones 180, at most about 330: give 384 with them)."""
    bucket: int = 1
    """Batches made at a time from documents of similar length (step 3; 1: none, each batch as drawn;
    tiny-code-2turn: 8, so the long second-turn documents do not pad every batch)."""
    minutes: Optional[float] = None
    """Stop after this many minutes (None: run all the steps)."""
    seed: int = 0
    """Seed of the corpus and the batches."""
    device: Optional[str] = None
    """cpu, cuda, ...; None: cuda when available."""
    progress: bool = True
    """Show a progress bar."""

    def __post_init__(self) -> None:
        check_settings(self, positive_ints=("max_steps", "num_docs", "docs_per_step", "max_len", "bucket"),
                       positive_numbers=("learning_rate",))
        if isinstance(self.second_turn_docs, bool) or not isinstance(self.second_turn_docs, int) or self.second_turn_docs < 0:
            raise ValueError(f"second_turn_docs={self.second_turn_docs!r} must be an integer >= 0 (0: no second-turn documents).")


def encode_batch(tok, batch: list[str], max_len: int, device) -> tuple[dict, torch.Tensor]:
    """Step 3's inputs and labels: BOS + document + EOS, padded on the right. A second-turn document's
    loss is on its better answer only: its prompt (the first answer, often a faulty one, and the
    feedback) is tokenized alone, as a two-turn run tokenizes that prompt, and masked (-100), so the
    model is never taught to write the faulty first answers it is shown."""
    from ..tasks.coding.corpus.second_turn import ANSWER_AFTER

    ids, labels = [], []
    for d in batch:
        if ANSWER_AFTER in d:
            prompt, answer = d.rsplit(ANSWER_AFTER, 1)
            p_ids = tok(tok.bos_token + prompt + ANSWER_AFTER, add_special_tokens=False).input_ids
            a_ids = tok(answer + tok.eos_token, add_special_tokens=False).input_ids
            x, y = p_ids + a_ids, [-100] * len(p_ids) + a_ids
        else:
            x = tok(tok.bos_token + d + tok.eos_token, add_special_tokens=False).input_ids
            y = list(x)
        ids.append(x[:max_len])
        labels.append(y[:max_len])
    width = max(map(len, ids))
    pad = tok.pad_token_id
    input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids], device=device)
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids], device=device)
    lab = torch.tensor([y + [-100] * (width - len(y)) for y in labels], device=device)
    return dict(input_ids=input_ids, attention_mask=mask), lab


def code_batches(tokenizer, docs: list[str], steps: int, docs_per_step: int, seed: int, bucket: int = 1):
    """The documents of each step: the corpus in a seeded shuffled order, reshuffled after each pass.
    With `bucket` > 1 each run of `bucket` batches is cut from `bucket * docs_per_step` documents sorted
    by length, the batches' order shuffled (less padding, the same documents); with 1, each batch as
    drawn (shuffling a single batch draws no random number, so the order is the plain one)."""
    rng = random.Random(seed + 11)
    order: list[int] = []
    pending: list[list[int]] = []
    for _ in range(steps):
        if not pending:
            while len(order) < bucket * docs_per_step:
                more = list(range(len(docs)))
                rng.shuffle(more)
                order += more
            chunk, order = order[:bucket * docs_per_step], order[bucket * docs_per_step:]
            if bucket > 1:
                chunk.sort(key=lambda j: len(docs[j]))
            pending = [chunk[k:k + docs_per_step] for k in range(0, len(chunk), docs_per_step)]
            rng.shuffle(pending)
        yield [docs[j] for j in pending.pop()]


def pretrain_code(out: str | Path, command: str | None = None, **settings) -> dict:
    """Steps 1-4 of the module docstring; `settings` are `CodePretrainArguments`' fields. Returns the summary."""
    from tqdm.auto import tqdm

    from ..models import load_model
    from ..tasks.coding.corpus.documents import code_documents
    from ..tasks.coding.corpus.second_turn import second_turn_documents

    a = CodePretrainArguments(out=str(out), **settings)
    t0 = time.time()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    model, tok = load_model(a.base, dtype=torch.float32, device=device)
    docs = list(code_documents(seed=a.seed, n=a.num_docs)) + second_turn_documents(seed=a.seed, n=a.second_turn_docs)
    tok.padding_side = "right"
    opt = torch.optim.AdamW(model.parameters(), lr=a.learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, a.max_steps) / a.max_steps))))
    losses: list[float] = []
    model.train()
    deadline = None if a.minutes is None else t0 + 60 * a.minutes
    bar = tqdm(code_batches(tok, docs, a.max_steps, a.docs_per_step, a.seed, a.bucket), total=a.max_steps, desc="pretrain-code",
               disable=not a.progress)
    for batch in bar:
        enc, labels = encode_batch(tok, batch, a.max_len, device)
        loss = model(**enc, labels=labels).loss
        _optimizer_step(model, opt, loss)
        sched.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{loss.item():.3f}")
        if deadline is not None and time.time() > deadline:
            break
    bar.close()
    model.eval()
    tok.padding_side = "left"
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    wall = time.time() - t0
    with open(out / "loss.csv", "w") as fh:
        fh.write("step,loss\n" + "".join(f"{s},{v:.5f}\n" for s, v in enumerate(losses)))
    _plot(losses, out / "loss.png")
    sample = random.Random(a.seed).sample(docs, min(len(docs), 2000))  # both kinds of document, in proportion
    n_tokens = sum(len(x) for x in tok(sample)["input_ids"]) / len(sample)
    summary = dict(base=a.base, params=sum(p.numel() for p in model.parameters()), steps=len(losses), max_steps=a.max_steps,
                   docs_per_step=a.docs_per_step, lr=a.learning_rate, corpus_docs=a.num_docs,
                   second_turn_docs=a.second_turn_docs, max_len=a.max_len, bucket=a.bucket,
                   mean_doc_tokens=round(n_tokens, 1), docs_seen=len(losses) * a.docs_per_step,
                   first_loss_mean_first_20=round(sum(losses[:20]) / max(1, len(losses[:20])), 4),
                   final_loss_mean_last_50=round(_mean_last(losses), 4), wall_s=round(wall, 1), seed=a.seed,
                   device=device, torch=torch.__version__, python=platform.python_version(),
                   machine=platform.machine(), threads=torch.get_num_threads(),
                   command=command or " ".join(sys.argv))
    (out / "code_pretrain_summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _plot(losses: list[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(len(losses)), losses, lw=0.6, alpha=0.5, label="loss")
    if len(losses) > 20:
        sm = [sum(losses[i - 20:i]) / 20 for i in range(20, len(losses) + 1)]
        ax.plot(range(19, len(losses)), sm, lw=1.5, label="moving mean (20)")
    ax.set_xlabel("step")
    ax.set_ylabel("next-token loss (nats)")
    ax.set_title("tiny-code: continued pretraining on the coding corpus")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
