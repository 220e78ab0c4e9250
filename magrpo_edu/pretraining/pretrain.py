"""Pretrain the embedded tiny model: corpus -> byte-level BPE -> a ~3.1M-parameter Llama.

    magrpo-edu pretrain --out weights/tiny                                   # the shipped run (the defaults)
    magrpo-edu pretrain --out /tmp/tiny --max-steps 5 --anneal-steps 2 --cooldown-steps 2   # a smoke run (CI)

Steps:
1. `magrpo_edu.pretraining.corpus.documents` writes the synthetic corpus (seeded; never filtered by a reward).
2. `train_tokenizer` trains a byte-level BPE with the `tokenizers` library; specials <|pad|>,
   <|bos|>, <|eos|>; BOS is prepended by the post-processor; saved as a standard tokenizer.json.
3. `build_model` makes a `LlamaForCausalLM` from a config (tied embeddings, 6 layers, width 192).
4. `pretrain` packs the tokenised documents (BOS doc EOS BOS doc EOS ...) into fixed-length blocks
   and trains next-token prediction with AdamW and a cosine schedule, on CUDA when present, until a
   step or time budget runs out.
5. `anneal` (a second phase, as in the data-mix annealing of larger LMs): `anneal_steps` steps at a
   constant learning rate on batches where `anneal_coding_share` of the documents are coding
   documents (helper and main functions, `tasks.coding.corpus.pretraining.coding_documents`), the rest the
   ordinary corpus, padded per batch (no packing), so every document starts at position 0 as a task prompt does.
   Why: the coding task's main agent must copy an entry point it has never seen (`def filter_short(`)
   from its prompt. After step 4 the model copies every token of such a name but the first one after
   `def`; the denser coding mix teaches that first token too, and because helper documents are in
   the mix the helper keeps writing `aux`. But long arXiv paragraphs then drift into code.
6. `cooldown`: `cooldown_steps` packed steps (as in step 4, long documents whole) with a learning
   rate decaying linearly to 0, on a mix of `cooldown_arxiv_share` arXiv documents,
   `cooldown_coding_share` coding documents and the ordinary corpus: it gives the long text back and
   keeps the copy. The model card's attempts (8)-(11) measure each phase and the width.
   Nothing is selected by a reward: the mixes only change how often each kind of document is seen.
   Then model + tokenizer are written with `save_pretrained` (safetensors), with a loss curve
   (loss.png, loss.csv; the steps of 5 and 6 follow the main ones) and a summary
   (pretrain_summary.json) with the command, wall time and final losses.
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

PAD, BOS, EOS = "<|pad|>", "<|bos|>", "<|eos|>"


def train_tokenizer(docs: list[str], vocab_size: int = 2048):
    """Byte-level BPE (GPT-2 style) trained on `docs`; returns a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, BOS, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(docs, trainer)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A $B",
                                                       special_tokens=[(BOS, tok.token_to_id(BOS))])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
                                   padding_side="left", model_max_length=1024)


def build_model(vocab_size: int, tokenizer=None, hidden_size: int = 192, layers: int = 6, heads: int = 4,
                intermediate_size: int | None = None, max_positions: int = 1024, seed: int = 0):
    """A small Llama (RMSNorm, RoPE, SwiGLU), ~3.1M parameters at the defaults with a 2k vocabulary.
    Smaller ones were tried (model card): with 4 layers and width 128 (~1.1M) it never learned to copy a
    name from the prompt; with 6 layers and width 128 (~1.5M) it copied, but MAGRPO hardly raised the
    held-out coding reward and the quickstart's length reward.
    The SwiGLU width defaults to 11/4 of `hidden_size` (352 at width 128, 528 at width 192)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if intermediate_size is None:
        intermediate_size = 11 * hidden_size // 4

    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=intermediate_size,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                      max_position_embeddings=max_positions, tie_word_embeddings=True, rope_theta=10000.0)
    if tokenizer is not None:
        cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg)


def pack(tokenizer, docs: list[str], block: int) -> torch.Tensor:
    """Tokenise and concatenate BOS doc EOS ... into rows of `block` tokens (the tail is dropped)."""
    ids: list[int] = []
    eos = tokenizer.eos_token_id
    for enc in tokenizer(docs)["input_ids"]:
        ids.extend(enc)
        ids.append(eos)
    n = len(ids) // block
    return torch.tensor(ids[: n * block]).view(n, block)


def _optimizer_step(model, opt, loss) -> None:
    """One AdamW update with the gradient norm clipped to 1 (steps 4, 5 and 6)."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


def _mean_last(values: list[float], n: int = 50) -> float:
    """Mean of the last `n` losses (0.0 when there are none), the figure the summary reports."""
    tail = values[-n:]
    return sum(tail) / max(1, len(tail))


def _packed_steps(model, data: torch.Tensor, opt, sched, steps: int, batch_size: int, g: torch.Generator,
                  device: str, desc: str, progress: bool, deadline: float | None = None) -> list[float]:
    """`steps` AdamW steps on `batch_size` random rows of the packed `data` (steps 4 and 6), `sched`
    stepped after each; stops early once `time.time()` passes `deadline`. Returns the per-step losses."""
    from ..progress import progress_bar as tqdm

    losses: list[float] = []
    ema = None
    model.train()
    bar = tqdm(range(steps), desc=desc, disable=not progress)
    for _ in bar:
        x = data[torch.randint(0, data.shape[0], (batch_size,), generator=g)].to(device)
        loss = model(input_ids=x, labels=x).loss
        _optimizer_step(model, opt, loss)
        sched.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{ema:.3f}")
        if deadline is not None and time.time() > deadline:
            break
    bar.close()
    return losses


def _draw_mix(rng: random.Random, ordinary, coding_share: float, arxiv_share: float = 0.0) -> list[str]:
    """One draw from a phase's document mix (steps 5 and 6): the documents of one coding problem
    (`tasks.coding.corpus.pretraining.coding_documents`) with probability `coding_share`, an arXiv document with
    probability `arxiv_share`, else the next document of the `ordinary` corpus iterator."""
    from ..tasks.coding.corpus.pretraining import coding_documents
    from ..tasks.writing.corpus import arxiv_document

    u = rng.random()
    if u < coding_share:
        return [prompt + completion for prompt, completion in coding_documents(rng)]
    if u < coding_share + arxiv_share:
        return [arxiv_document(rng)]
    return [next(ordinary)]


DOCS_PER_BLOCK_TOKENS = 110  # cooldown draws steps * batch_size * block / 110 documents: ~1.2x the tokens it reads


def anneal(model, tokenizer, steps: int, lr: float = 1e-3, coding_share: float = 0.6, docs_per_step: int = 12,
           max_len: int = 384, seed: int = 0, device: str = "cpu", progress: bool = True) -> list[float]:
    """Step 5: `steps` AdamW steps at a constant `lr` on batches of `docs_per_step` documents, each a
    coding document (helper or main function, `tasks.coding.corpus.pretraining.coding_documents`) with probability
    `coding_share`, else the next ordinary corpus document. Returns the per-step losses."""
    from ..progress import progress_bar as tqdm

    from .corpus import documents

    rng = random.Random(seed + 1)
    ordinary = documents(seed=seed + 7, n=steps * docs_per_step)  # a different draw from step 1's corpus
    pad_side, tokenizer.padding_side = tokenizer.padding_side, "right"
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    model.train()
    bar = tqdm(range(steps), desc="anneal", disable=not progress)
    for _ in bar:
        docs = [d for _ in range(docs_per_step) for d in _draw_mix(rng, ordinary, coding_share)]
        enc = tokenizer([tokenizer.bos_token + d + tokenizer.eos_token for d in docs], return_tensors="pt", padding=True,
                        truncation=True, max_length=max_len, add_special_tokens=False).to(device)
        labels = enc.input_ids.masked_fill(enc.attention_mask == 0, -100)
        loss = model(**enc, labels=labels).loss
        _optimizer_step(model, opt, loss)
        losses.append(loss.item())
        bar.set_postfix(loss=f"{loss.item():.3f}")
    bar.close()
    tokenizer.padding_side = pad_side
    return losses


def cooldown(model, tokenizer, steps: int, lr: float = 5e-4, coding_share: float = 0.3, arxiv_share: float = 0.4,
             batch_size: int = 6, block: int = 768, seed: int = 0, device: str = "cpu", progress: bool = True) -> list[float]:
    """Step 6: `steps` packed steps (blocks of `block` tokens, as in step 4) on a third document mix: each
    document is a coding document with probability `coding_share`, an arXiv document
    (`tasks.writing.corpus.arxiv_document`) with probability `arxiv_share`, else the next ordinary corpus
    document.
    A fresh AdamW; the learning rate warms up over 20 steps, then decays linearly from `lr` to 0.
    Returns the per-step losses."""
    from .corpus import documents

    if min(coding_share, arxiv_share) < 0 or coding_share + arxiv_share > 1:
        raise ValueError(f"cooldown: coding_share={coding_share} and arxiv_share={arxiv_share} must be >= 0 and sum "
                         "to at most 1 (the rest of the mix is the ordinary corpus); e.g. --cooldown-coding-share 0.3 "
                         "--cooldown-arxiv-share 0.4")
    rng = random.Random(seed + 1)
    ordinary = documents(seed=seed + 7, n=10**9)
    docs = [d for _ in range(steps * batch_size * block // DOCS_PER_BLOCK_TOKENS)
            for d in _draw_mix(rng, ordinary, coding_share, arxiv_share)]
    data = pack(tokenizer, docs, block)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * (1 - s / steps))
    g = torch.Generator().manual_seed(seed + 3)
    return _packed_steps(model, data, opt, sched, steps, batch_size, g, device, "cooldown", progress)


@dataclass
class PretrainArguments:
    """The settings of `pretrain` (and of `magrpo-edu pretrain`, whose options these fields are); the
    defaults reproduce the shipped tiny model."""

    out: str
    """Folder to write the model, tokenizer, loss curve and summary to."""
    num_docs: int = field(default=60000, metadata=dict(aliases=("--docs",)))
    """Corpus documents (step 1)."""
    vocab_size: int = field(default=2048, metadata=dict(aliases=("--vocab",)))
    """BPE vocabulary size (step 2)."""
    layers: int = 6
    """Transformer layers (step 3; the shipped model has 6)."""
    hidden_size: int = field(default=192, metadata=dict(aliases=("--width",)))
    """Hidden size (step 3; the shipped model has 192)."""
    block: int = 768
    """Tokens per training row (a whole arXiv document fits in one)."""
    batch_size: int = 6
    """Rows per step (steps 4 and 6)."""
    learning_rate: float = field(default=3e-3, metadata=dict(aliases=("--lr",)))
    """Peak learning rate of the main steps (step 4)."""
    max_steps: int = 1600
    """Main (packed, cosine-schedule) steps (step 4)."""
    minutes: Optional[float] = None
    """Stop the main steps after this many minutes (None: no time limit)."""
    anneal_steps: int = 1500
    """Steps on a coding-heavy mix after the main ones (step 5; 0: none)."""
    anneal_lr: float = 1e-3
    """Learning rate while annealing (constant)."""
    anneal_coding_share: float = 0.6
    """Share of coding documents while annealing."""
    cooldown_steps: int = 300
    """Last packed steps, the learning rate decaying to 0, on an arXiv-heavy mix (step 6; 0: none)."""
    cooldown_lr: float = 5e-4
    """Learning rate at the start of the cooldown."""
    cooldown_coding_share: float = 0.3
    """Share of coding documents in the cooldown."""
    cooldown_arxiv_share: float = 0.4
    """Share of arXiv documents in the cooldown."""
    seed: int = 0
    """Seed of the corpus, the initial weights and the batches."""
    device: Optional[str] = None
    """cpu, cuda, ...; None: cuda when available."""
    progress: bool = True
    """Show progress bars."""

    def __post_init__(self) -> None:
        check_settings(self, positive_ints=("num_docs", "vocab_size", "layers", "hidden_size", "block", "batch_size", "max_steps"),
                       positive_numbers=("learning_rate", "anneal_lr", "cooldown_lr"))
        bad = _refusal(self)
        for name in ("anneal_steps", "cooldown_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise bad(name, "an integer >= 0 (0: no such phase)")
        for name in ("anneal_coding_share", "cooldown_coding_share", "cooldown_arxiv_share"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise bad(name, "a share in [0, 1]")
        if self.cooldown_coding_share + self.cooldown_arxiv_share > 1:
            raise bad("cooldown_arxiv_share", f"at most 1 - cooldown_coding_share = {1 - self.cooldown_coding_share:g}")


def _refusal(settings):
    """`bad(name, allowed)`: the ValueError naming the settings class, the field, its value and what is allowed."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"{type(settings).__name__}.{name}={getattr(settings, name)!r} is not allowed: "
                          f"{name} must be {allowed}.")
    return bad


def check_settings(settings, positive_ints=(), positive_numbers=()) -> None:
    """The checks every pretraining settings class shares: integers >= 1, finite numbers > 0, and
    `minutes` None or a finite number > 0 (PretrainArguments, code_model.CodePretrainArguments)."""
    bad = _refusal(settings)
    for name in positive_ints:
        v = getattr(settings, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise bad(name, "an integer >= 1")
    for name in positive_numbers:
        v = getattr(settings, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
            raise bad(name, "a finite number > 0")
    m = settings.minutes
    if m is not None and (isinstance(m, bool) or not isinstance(m, (int, float)) or not 0 < m < math.inf):
        raise bad("minutes", "None or a finite number > 0")


def pretrain(out: str | Path, command: str | None = None, **settings) -> dict:
    """Run steps 1-6 above and write everything to `out`; `settings` are `PretrainArguments`' fields
    (the defaults there reproduce the shipped model). Returns a summary dict. `minutes` bounds step 4
    only (steps 5 and 6 always run their `anneal_steps` and `cooldown_steps`)."""
    a = PretrainArguments(out=str(out), **settings)
    num_docs, vocab_size, block, batch_size, lr, max_steps, minutes, seed, device, progress = (
        a.num_docs, a.vocab_size, a.block, a.batch_size, a.learning_rate, a.max_steps, a.minutes, a.seed, a.device, a.progress)
    anneal_steps, anneal_lr, anneal_coding_share = a.anneal_steps, a.anneal_lr, a.anneal_coding_share
    cooldown_steps, cooldown_lr, cooldown_coding_share, cooldown_arxiv_share = (
        a.cooldown_steps, a.cooldown_lr, a.cooldown_coding_share, a.cooldown_arxiv_share)
    model_kwargs = dict(layers=a.layers, hidden_size=a.hidden_size)
    from .corpus import documents

    t0 = time.time()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    random.seed(seed)
    torch.manual_seed(seed)
    docs = list(documents(seed=seed, n=num_docs))
    tokenizer = train_tokenizer(docs, vocab_size)
    data = pack(tokenizer, docs, block)
    model = build_model(len(tokenizer), tokenizer, seed=seed, **model_kwargs).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = min(100, max_steps // 10 + 1)
    # The schedule is defined over max_steps; with a time budget we stop early, so pick max_steps
    # to be about what the budget allows (the shipped run's card records both). A LambdaLR, not
    # transformers' get_cosine_with_min_lr_schedule_with_warmup: that one starts the cosine after the
    # warm-up, and `magrpo-edu pretrain` must reproduce the shipped model, which was trained with this one.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, max_steps) / max_steps))))
    g = torch.Generator().manual_seed(seed)
    main_losses = _packed_steps(model, data, opt, sched, max_steps, batch_size, g, device, "pretrain", progress,
                                deadline=None if minutes is None else t0 + 60 * minutes)
    main_steps = len(main_losses)
    final_main = _mean_last(main_losses)
    anneal_losses = anneal(model, tokenizer, anneal_steps, lr=anneal_lr, coding_share=anneal_coding_share, seed=seed,
                           device=device, progress=progress) if anneal_steps else []
    cool_losses = cooldown(model, tokenizer, cooldown_steps, lr=cooldown_lr, coding_share=cooldown_coding_share,
                           arxiv_share=cooldown_arxiv_share, batch_size=batch_size, block=block, seed=seed,
                           device=device, progress=progress) if cooldown_steps else []
    losses = list(enumerate(main_losses + anneal_losses + cool_losses))  # (step, loss), the phases one after another
    model.eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    wall = time.time() - t0
    with open(out / "loss.csv", "w") as fh:
        fh.write("step,loss\n" + "".join(f"{s},{l:.5f}\n" for s, l in losses))
    _plot_losses(losses, out / "loss.png", anneal_from=main_steps if anneal_losses else None,
                 cooldown_from=main_steps + len(anneal_losses) if cool_losses else None)
    final = _mean_last(cool_losses or anneal_losses or main_losses)  # the last phase that ran
    summary = dict(params=n_params, steps=main_steps, max_steps=max_steps, minutes=minutes, wall_s=round(wall, 1),
                   final_loss_main_mean_last_50=round(final_main, 4), anneal_steps=len(anneal_losses),
                   anneal_lr=anneal_lr, anneal_coding_share=anneal_coding_share,
                   cooldown_steps=len(cool_losses), cooldown_lr=cooldown_lr, cooldown_coding_share=cooldown_coding_share,
                   cooldown_arxiv_share=cooldown_arxiv_share,
                   final_loss_mean_last_50=round(final, 4), tokens_seen=main_steps * batch_size * block,
                   corpus_docs=num_docs, corpus_tokens=int(data.numel()), vocab_size=len(tokenizer),
                   block=block, batch_size=batch_size, lr=lr, seed=seed, device=device,
                   torch=torch.__version__, python=platform.python_version(), machine=platform.machine(),
                   threads=torch.get_num_threads(), command=command or " ".join(sys.argv))
    (out / "pretrain_summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _plot_losses(losses, path, anneal_from=None, cooldown_from=None):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    s = [a for a, _ in losses]
    v = [b for _, b in losses]
    ax.plot(s, v, lw=0.6, alpha=0.5, label="loss")
    if len(v) > 20:
        w = 20
        sm = [sum(v[i - w:i]) / w for i in range(w, len(v) + 1)]
        ax.plot(s[w - 1:], sm, lw=1.5, label="moving mean (20)")
    if anneal_from is not None:
        ax.axvline(anneal_from, color="k", ls=":", lw=1, label="annealing (coding-heavy mix) starts")
    if cooldown_from is not None:
        ax.axvline(cooldown_from, color="k", ls="--", lw=1, label="cooldown (packed, lr to 0) starts")
    ax.set_xlabel("step")
    ax.set_ylabel("next-token loss (nats)")
    ax.set_title("Embedded tiny model: pretraining loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
