"""Seconds and memory per MAGRPO step: magrpo-edu vs CoMLRL vs TRL vs a plain PyTorch floor, one run.

    python benchmarks/step_speed.py                          # CPU: tiny + SmolLM2-135M shape -> RESULTS.md
    python benchmarks/step_speed.py --models tiny --steps 8  # a quick look
    python benchmarks/step_speed.py --models qwen2.5-0.5b --device cuda --out benchmarks/results_gpu

The same workload for every method, in one invocation and one machine state: one prompt of 64
tokens per step, G = 4 completions per agent of exactly N new tokens (min_new_tokens =
max_new_tokens = N), sampling at temperature 1 / top-p 1 / no top-k, a joint reward computed from
the decoded texts, then one policy-gradient update per agent with AdamW. Weights are random (speed
does not depend on them); every model is a locally built Llama/Qwen2 with the named shape.

Methods (each runs in its own subprocess, so peak memory is per method):
  floor-1              plain PyTorch, ONE agent: generate, one forward/backward, AdamW (written below)
  floor-2              the same loop for two separate full models
  magrpo-edu-lora      magrpo-edu's default: one frozen base + one LoRA adapter per agent, both
                       agents' rows sampled in ONE generate call, full MAGRPO step (trainer.training_step)
  magrpo-edu-lora-bf16 the same with the frozen base in bfloat16 (adapters, log-softmax and optimiser in fp32):
                       NOT the same precision as the others, reported beside them, not instead of them
  magrpo-edu-lora-plain the same as magrpo-edu-lora with the plain policy (lora_agents(backend=PlainBackend())): one generate
                       and one log-prob forward PER AGENT, no batching of the agents, no shared prompt cache;
                       not in the default list (name it in --methods)
  magrpo-edu-lora-slices the same as magrpo-edu-lora with sampling's adapters added per agent through slices
                       (`backends.fast.STACKED_ADAPTERS_ON = ()`), as before the stacked adapters: on a GPU, to
                       set them against; on the CPU the same as magrpo-edu-lora; not in the default list
  magrpo-edu-separate  magrpo-edu with two full copies, full fine-tuning (the same work as CoMLRL)
  comlrl               CoMLRL's MAGRPOTrainer (PyPI comlrl), two full copies, num_turns=1,
                       rollout_buffer_size=1, temperature 1 / top_p 1 / top_k off
  trl-1                TRL's GRPOTrainer for ONE agent (full fine-tuning, gradient checkpointing off, beta=0)

Per method: median and min seconds per step over `--steps` steps after `--warmup` warm-up steps, and
peak memory (CPU: the process's peak RSS, which includes ~0.5 GB of Python + torch; CUDA: peak
allocated). CoMLRL and TRL are optional benchmark dependencies (pip install 'magrpo-edu[bench]');
a method that cannot run is reported with the reason. The script measures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METHODS = ["floor-1", "floor-2", "magrpo-edu-lora", "magrpo-edu-lora-bf16", "magrpo-edu-lora-plain", "magrpo-edu-lora-slices",
           "magrpo-edu-separate", "comlrl", "trl-1"]
DEFAULT_METHODS = [m for m in METHODS if m not in ("magrpo-edu-lora-plain", "magrpo-edu-lora-slices")]
SHAPES = {  # name -> (config class, kwargs); vocabularies as in the real models
    "tiny": ("llama", dict(hidden_size=128, intermediate_size=352, num_hidden_layers=4, num_attention_heads=4,
                           num_key_value_heads=4, vocab_size=2048, tie_word_embeddings=True)),
    "smollm2-135m": ("llama", dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                                   num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
                                   tie_word_embeddings=True, rms_norm_eps=1e-5, rope_theta=100000.0)),
    "qwen2.5-0.5b": ("qwen2", dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                   num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                   tie_word_embeddings=True, rms_norm_eps=1e-6, rope_theta=1000000.0)),
    "qwen3-1.7b": ("qwen3", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,  # the paper's model
                                 num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                                 tie_word_embeddings=True, rms_norm_eps=1e-6, rope_theta=1000000.0)),
}
G = 4
PROMPT_TOKENS = 64


# ---- shared pieces ---------------------------------------------------------------------------------
def tokenizer():
    """The embedded tiny model's tokenizer for every shape (ids it cannot decode are skipped)."""
    from magrpo_edu.models import prepare_tokenizer
    from magrpo_edu.models import tiny_model_path
    from transformers import AutoTokenizer

    return prepare_tokenizer(AutoTokenizer.from_pretrained(str(tiny_model_path())))


def model_classes(kind: str):
    """(config class, model class) of a shape's architecture."""
    import transformers

    names = {"llama": ("LlamaConfig", "LlamaForCausalLM"), "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
             "qwen3": ("Qwen3Config", "Qwen3ForCausalLM")}[kind]
    return tuple(getattr(transformers, n) for n in names)


def build(shape: str, tok, dtype, device):
    """A randomly initialised causal LM of the named shape (seeded)."""
    import torch
    kind, kw = SHAPES[shape]
    cls_cfg, cls = model_classes(kind)
    cfg = cls_cfg(max_position_embeddings=2048, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                  pad_token_id=tok.pad_token_id, **kw)
    torch.manual_seed(0)
    return cls(cfg).to(dtype=dtype, device=device).eval()


def prompt_text(tok, n: int = PROMPT_TOKENS) -> str:
    """A text that the tokenizer turns into exactly `n` ids (BOS included)."""
    words = ("my roommate never cleans the kitchen and I do not know what to do about it so I left a "
             "polite note on the fridge last week").split()
    text = ""
    i = 0
    while len(tok(text)["input_ids"]) < n:
        text += words[i % len(words)] + " "
        i += 1
    while len(tok(text)["input_ids"]) > n:
        text = text[:-1]
    return text


def joint_reward_from_texts(a: str, b: str) -> float:
    """A cheap joint reward of two texts (speed does not depend on what it rewards)."""
    return -abs(len(b) - 2 * len(a)) / 100.0


def peak_memory_mb(device: str) -> float:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


# ---- the methods -----------------------------------------------------------------------------------
def run_floor(n_agents, shape, tok, dtype, device, steps, N, lr=1e-5):
    """Plain PyTorch: per agent, sample G completions with the KV cache, then one forward over
    [prompt; completion] for all G rows, -mean(A * sum log pi), backward, AdamW."""
    import torch

    models = [build(shape, tok, dtype, device) for _ in range(n_agents)]
    for m in models:
        m.requires_grad_(True)
    opts = [torch.optim.AdamW(m.parameters(), lr=lr) for m in models]
    enc = tok([prompt_text(tok)] * G, return_tensors="pt").to(device)
    times = []
    for _ in range(steps):
        sync(device)
        t = time.perf_counter()
        seqs, texts = [], []
        for m in models:
            with torch.inference_mode():
                out = m.generate(**enc, do_sample=True, temperature=1.0, top_p=1.0, top_k=0, min_new_tokens=N,
                                 max_new_tokens=N, pad_token_id=tok.pad_token_id)
            seqs.append(out.clone())
            texts.append(tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
        if n_agents == 1:
            r = torch.tensor([len(x) / 100.0 for x in texts[0]])
        else:
            r = torch.tensor([joint_reward_from_texts(a, b) for a, b in zip(texts[0], texts[1])])
        adv = (r - r.mean()).to(device)
        for m, opt, seq in zip(models, opts, seqs):
            logits = m(seq, logits_to_keep=N + 1).logits[:, :-1].float()
            logp = torch.log_softmax(logits, -1).gather(-1, seq[:, -N:, None]).squeeze(-1).sum(-1)
            loss = -(adv * logp).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sync(device)
        times.append(time.perf_counter() - t)
    return times


def run_magrpo_edu(mode, shape, tok, dtype, device, steps, N):
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents, separate_agents

    if mode == "lora-bf16":
        import torch

        dtype = torch.bfloat16
    base = build(shape, tok, dtype, device)
    if mode.startswith("lora"):
        from magrpo_edu.backends import PlainBackend

        agents = lora_agents(base, 2, tokenizer=tok, backend=PlainBackend() if mode == "lora-plain" else None)
        if mode == "lora-slices":
            import magrpo_edu.backends.fast as fast

            fast.STACKED_ADAPTERS_ON = ()
        lr = 1e-4
    else:
        agents = separate_agents(base, 2, tokenizer=tok)
        lr = 1e-5
    for a in agents:
        a.generation_kwargs = {"min_new_tokens": N}
    cfg = MAGRPOConfig(num_generations=G, max_new_tokens=N, temperature=1.0, top_p=1.0, top_k=0, learning_rate=lr,
                       max_steps=steps, progress=False, sample_log_size=0)
    p = prompt_text(tok)

    def reward(completions, row):
        return [joint_reward_from_texts(a, b) for a, b in zip(*completions)]

    tr = MAGRPOTrainer(agents, reward, [lambda r: r["p"], lambda r: r["p"]], [{"p": p}], cfg)
    times = []
    for _ in range(steps):
        sync(device)
        t = time.perf_counter()
        tr.training_step()
        sync(device)
        times.append(time.perf_counter() - t)
    return times


def run_comlrl(shape, tok, dtype, device, steps, N):
    from comlrl.trainers.reinforce import MAGRPOConfig as CConfig
    from comlrl.trainers.reinforce import MAGRPOTrainer as CTrainer

    m1 = build(shape, tok, dtype, device)
    m2 = copy.deepcopy(m1)
    for m in (m1, m2):
        m.requires_grad_(True)
    args = CConfig(num_train_epochs=1, agent_learning_rate=1e-5, num_agents=2, num_generations=G, max_new_tokens=N,
                   temperature=1.0, top_p=1.0, top_k=None, num_turns=1, rollout_buffer_size=1, eval_interval=0,
                   eval_num_samples=0, agent_devices=device)
    p = prompt_text(tok)

    def reward(c1, c2):
        return [joint_reward_from_texts(a, b) for a, b in zip(c1, c2)]

    tr = CTrainer(agents=[m1, m2], tokenizer=tok, train_dataset=[{"prompt": p}] * steps, reward_func=reward,
                  formatters=[lambda x: x["prompt"], lambda x: x["prompt"]], args=args)
    tr.verbose = False
    times = []
    inner = tr._train_step_returns

    def timed(batch_item, **kw):  # one training step = one prompt: rollout, reward, update (buffer size 1)
        sync(device)
        t = time.perf_counter()
        inner(batch_item, **kw)
        sync(device)
        times.append(time.perf_counter() - t)

    tr._train_step_returns = timed
    tr.train(min_new_tokens=N)
    return times


def run_trl(shape, tok, dtype, device, steps, N):
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model = build(shape, tok, dtype, device)
    model.requires_grad_(True)
    p = prompt_text(tok)
    times = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            sync(device)
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            sync(device)
            times.append(time.perf_counter() - self.t)

    def reward(completions, **kw):
        return [len(c) / 100.0 for c in completions]

    with tempfile.TemporaryDirectory() as out:
        args = GRPOConfig(output_dir=out, per_device_train_batch_size=G, num_generations=G, max_completion_length=N,
                          generation_kwargs={"min_new_tokens": N}, temperature=1.0, top_p=1.0, top_k=0,
                          gradient_checkpointing=False, beta=0.0, learning_rate=1e-5, max_steps=steps,
                          logging_steps=10**6, save_strategy="no", report_to=[], use_cpu=device == "cpu",
                          bf16=False, dataloader_num_workers=0, seed=0, disable_tqdm=True)
        tr = GRPOTrainer(model=model, reward_funcs=[reward], args=args,
                         train_dataset=Dataset.from_list([{"prompt": p}] * (steps * 2)), processing_class=tok,
                         callbacks=[Timer()])
        tr.train()
    return times


def sync(device: str):
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def worker(method: str, shape: str, device: str, dtype_name: str, steps: int, warmup: int, N: int) -> dict:
    import torch

    torch.manual_seed(0)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    tok = tokenizer()
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    rss_before = peak_memory_mb("cpu")
    total = steps + warmup
    if method in ("floor-1", "floor-2"):
        times = run_floor(int(method[-1]), shape, tok, dtype, device, total, N)
    elif method.startswith("magrpo-edu-"):
        times = run_magrpo_edu(method[len("magrpo-edu-"):], shape, tok, dtype, device, total, N)
    elif method == "comlrl":
        times = run_comlrl(shape, tok, dtype, device, total, N)
    elif method == "trl-1":
        times = run_trl(shape, tok, dtype, device, total, N)
    else:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    ts = times[warmup:]
    return dict(method=method, model=shape, device=device, dtype=dtype_name, steps=len(ts),
                median_s=statistics.median(ts), min_s=min(ts), all_s=[round(t, 4) for t in ts],
                peak_mb=round(peak_memory_mb(device), 1), rss_after_imports_mb=round(rss_before, 1))


# ---- the driver ------------------------------------------------------------------------------------
def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("magrpo-edu", "torch", "transformers", "peft", "comlrl", "trl"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    if out["magrpo-edu"] is None:  # run from a checkout (PYTHONPATH=.) without installing it
        try:
            import magrpo_edu

            out["magrpo-edu"] = magrpo_edu.__version__ + " (not installed: from the working tree)"
        except ImportError:
            pass
    return out


def run_one(method, shape, args) -> dict:
    cmd = [sys.executable, __file__, "--worker", method, "--models", shape, "--device", args.device,
           "--dtype", args.dtype, "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--new-tokens", str(args.new_tokens)]
    t = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "WANDB_MODE": "disabled"})
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            rec = json.loads(line)
            rec["wall_s"] = round(time.time() - t, 1)
            return rec
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return dict(method=method, model=shape, error=" | ".join(tail) or f"exit code {proc.returncode}")


def gpu_driver():
    """The NVIDIA driver's version (nvidia-smi), None where it cannot be read."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def ratio(results, shape, a, b, factor=1.0, key="median_s"):
    ra = next((r for r in results if r["model"] == shape and r["method"] == a and key in r), None)
    rb = next((r for r in results if r["model"] == shape and r["method"] == b and key in r), None)
    return None if ra is None or rb is None else ra[key] / (factor * rb[key])


RATIOS = [  # (label, numerator, denominator, factor, key)
    ("magrpo-edu LoRA / CoMLRL (time)", "magrpo-edu-lora", "comlrl", 1.0, "median_s"),
    ("magrpo-edu separate / CoMLRL (time, same work)", "magrpo-edu-separate", "comlrl", 1.0, "median_s"),
    ("magrpo-edu LoRA / (2 x TRL 1-agent)", "magrpo-edu-lora", "trl-1", 2.0, "median_s"),
    ("magrpo-edu LoRA 2-agent / floor 1-agent", "magrpo-edu-lora", "floor-1", 1.0, "median_s"),
    ("magrpo-edu separate / floor 2-agent", "magrpo-edu-separate", "floor-2", 1.0, "median_s"),
    ("magrpo-edu LoRA / two full copies (magrpo-edu separate)", "magrpo-edu-lora", "magrpo-edu-separate", 1.0,
     "median_s"),
    ("magrpo-edu LoRA / floor 2-agent", "magrpo-edu-lora", "floor-2", 1.0, "median_s"),
    ("magrpo-edu LoRA, stacked adapters / per-agent slices (time)", "magrpo-edu-lora", "magrpo-edu-lora-slices", 1.0,
     "median_s"),
    ("magrpo-edu LoRA / CoMLRL (peak memory)", "magrpo-edu-lora", "comlrl", 1.0, "peak_mb"),
    ("magrpo-edu LoRA, bf16 base / CoMLRL fp32 (time)", "magrpo-edu-lora-bf16", "comlrl", 1.0, "median_s"),
    ("magrpo-edu LoRA, bf16 base / floor 1-agent fp32", "magrpo-edu-lora-bf16", "floor-1", 1.0, "median_s"),
    ("magrpo-edu LoRA, bf16 base / CoMLRL fp32 (peak memory)", "magrpo-edu-lora-bf16", "comlrl", 1.0, "peak_mb"),
    ("magrpo-edu LoRA, batched fast path / plain path (time)", "magrpo-edu-lora", "magrpo-edu-lora-plain", 1.0, "median_s"),
]


def write_report(results, meta, out: Path):
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, results=results), indent=2))
    mem = "peak allocated, MB" if meta["device"].startswith("cuda") else "peak RSS, MB"
    lines = [f"# Seconds per MAGRPO step: magrpo-edu vs CoMLRL vs TRL vs plain PyTorch ({meta['device']}, {meta['dtype']})", "",
             f"Measured {meta['date']} on {meta['machine']}: {meta['cpu']}, {meta['threads']} torch threads"
             + (f", {meta['gpu']} (driver {meta.get('gpu_driver')}, CUDA {meta.get('cuda')})" if meta.get("gpu") else "")
             + ".  ",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v) + ".  ",
             f"Command: `{meta['command']}`", "",
             f"Workload: one {PROMPT_TOKENS}-token prompt per step, G = {G} completions per agent of exactly "
             f"{meta['new_tokens']} new tokens, temperature 1 / top-p 1 / no top-k, random weights. Median (min) "
             f"seconds per step over {meta['steps']} steps after {meta['warmup']} warm-up steps; {mem}. "
             "Each method ran in its own process, one after the other, in this one invocation.", "",
             "| model | method | agents | trains | median s/step | min s/step | " + mem + " |",
             "|---|---|---|---|---|---|---|"]
    what = {"floor-1": (1, "full"), "floor-2": (2, "full"), "magrpo-edu-lora": (2, "LoRA r=8, shared base"),
            "magrpo-edu-lora-bf16": (2, "LoRA r=8, shared bf16 base"),
            "magrpo-edu-lora-plain": (2, "LoRA r=8, shared base, plain path"),
            "magrpo-edu-lora-slices": (2, "LoRA r=8, shared base, per-agent slices"),
            "magrpo-edu-separate": (2, "full, 2 copies"), "comlrl": (2, "full, 2 copies"), "trl-1": (1, "full")}
    for r in results:
        n, trains = what[r["method"]]
        if "error" in r:
            lines.append(f"| {r['model']} | {r['method']} | {n} | {trains} | not run: {r['error'][:160]} | | |")
        else:
            lines.append(f"| {r['model']} | {r['method']} | {n} | {trains} | {r['median_s']:.3f} | {r['min_s']:.3f} | "
                         f"{r['peak_mb']:.0f} |")
    lines += ["", "Ratios (median over median; below 1 means magrpo-edu is faster or smaller):", "",
              "| model | ratio | value |", "|---|---|---|"]
    for shape in dict.fromkeys(r["model"] for r in results):
        for label, a, b, f, key in RATIOS:
            v = ratio(results, shape, a, b, f, key)
            if v is None and b in ("magrpo-edu-lora-plain", "magrpo-edu-lora-slices"):
                continue  # not asked for
            lines.append(f"| {shape} | {label} | {'n/a' if v is None else f'{v:.2f}'} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["tiny", "smollm2-135m"], choices=list(SHAPES))
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=METHODS)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--steps", type=int, default=None, help="timed steps (default 10 on the tiny model, 5 otherwise)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--out", default=str(HERE / "RESULTS"), help="writes OUT.md and OUT.json")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.worker:
        print(json.dumps(worker(args.worker, args.models[0], args.device, args.dtype, args.steps, args.warmup,
                                args.new_tokens)))
        return 0
    results = []
    for shape in args.models:
        a = argparse.Namespace(**vars(args))
        a.steps = args.steps or (10 if shape == "tiny" else 5)
        for method in args.methods:
            rec = run_one(method, shape, a)
            print(json.dumps({k: v for k, v in rec.items() if k != "all_s"}), flush=True)
            results.append(rec)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M %Z"), machine=platform.machine(), cpu=cpu,
                threads=torch.get_num_threads(), device=args.device, dtype=args.dtype,
                gpu=torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None,
                gpu_driver=gpu_driver() if args.device.startswith("cuda") else None,
                cuda=torch.version.cuda if args.device.startswith("cuda") else None,
                python=platform.python_version(), versions=versions(), new_tokens=args.new_tokens,
                steps=args.steps or "10 (tiny) / 5", warmup=args.warmup,
                command="python benchmarks/step_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(write_report(results, meta, Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
