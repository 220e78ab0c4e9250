"""Make the embedded `tiny-code` model: the `tiny` model, trained further on the coding corpus.

    magrpo-edu pretrain-code --out magrpo_edu/models/tiny-code        # the shipped run (the defaults)
    magrpo-edu pretrain-code --out /tmp/tc --steps 3 --num-docs 50      # a smoke run (CI)

Steps (continued pretraining, as a base model is adapted to code before it is fine-tuned):
1. load the shipped `tiny` model and its tokenizer (the tokenizer does not change: its BPE already
   holds the code tokens, and the copy of names `tiny` learned carries over);
2. `code_corpus.code_documents(seed)` writes the coding corpus (seeded; never filtered by a reward);
3. `max_steps` AdamW steps on batches of `docs_per_step` whole documents, padded per batch (no packing),
   so that every document starts at position 0 as an agent's prompt does; the learning rate warms up
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
    docs_per_step: int = 16
    """Documents per step (one padded batch)."""
    learning_rate: float = field(default=1e-3, metadata=dict(aliases=("--lr",)))
    """Peak learning rate (a cosine down to a tenth of it)."""
    max_len: int = 256
    """Longest document in tokens (longer ones are cut; the corpus has none that long)."""
    minutes: Optional[float] = None
    """Stop after this many minutes (None: run all the steps)."""
    seed: int = 0
    """Seed of the corpus and the batches."""
    device: Optional[str] = None
    """cpu, cuda, ...; None: cuda when available."""
    progress: bool = True
    """Show a progress bar."""

    def __post_init__(self) -> None:
        check_settings(self, positive_ints=("max_steps", "num_docs", "docs_per_step", "max_len"),
                       positive_numbers=("learning_rate",))


def code_batches(tokenizer, docs: list[str], steps: int, docs_per_step: int, seed: int):
    """The documents of each step: the corpus in a seeded shuffled order, reshuffled after each pass."""
    rng = random.Random(seed + 11)
    order: list[int] = []
    for _ in range(steps):
        if len(order) < docs_per_step:
            more = list(range(len(docs)))
            rng.shuffle(more)
            order += more
        batch, order = order[:docs_per_step], order[docs_per_step:]
        yield [docs[j] for j in batch]


def pretrain_code(out: str | Path, command: str | None = None, **settings) -> dict:
    """Steps 1-4 of the module docstring; `settings` are `CodePretrainArguments`' fields. Returns the summary."""
    from tqdm.auto import tqdm

    from ..models import load_model
    from .code_corpus import code_documents

    a = CodePretrainArguments(out=str(out), **settings)
    t0 = time.time()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    model, tok = load_model(a.base, dtype=torch.float32, device=device)
    docs = list(code_documents(seed=a.seed, n=a.num_docs))
    tok.padding_side = "right"
    opt = torch.optim.AdamW(model.parameters(), lr=a.learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, a.max_steps) / a.max_steps))))
    losses: list[float] = []
    model.train()
    deadline = None if a.minutes is None else t0 + 60 * a.minutes
    bar = tqdm(code_batches(tok, docs, a.max_steps, a.docs_per_step, a.seed), total=a.max_steps, desc="pretrain-code",
               disable=not a.progress)
    for batch in bar:
        enc = tok([tok.bos_token + d + tok.eos_token for d in batch], return_tensors="pt", padding=True, truncation=True,
                  max_length=a.max_len, add_special_tokens=False).to(device)
        labels = enc.input_ids.masked_fill(enc.attention_mask == 0, -100)
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
    n_tokens = sum(len(x) for x in tok(docs[: min(len(docs), 2000)])["input_ids"]) / min(len(docs), 2000)
    summary = dict(base=a.base, params=sum(p.numel() for p in model.parameters()), steps=len(losses), max_steps=a.max_steps,
                   docs_per_step=a.docs_per_step, lr=a.learning_rate, corpus_docs=a.num_docs,
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
