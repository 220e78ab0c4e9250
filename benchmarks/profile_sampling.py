"""Where the time of ONE sampling call goes, per generated token (issue 46, item 1).

    python benchmarks/profile_sampling.py --out /tmp/profile_sampling.md      # tiny + SmolLM2-135M shapes
    python benchmarks/profile_sampling.py --shapes tiny --reps 3
    python benchmarks/profile_sampling.py --device cuda --shapes qwen2.5-0.5b --teams "base x4" lora-2

One call of the fast policy's step 2 (`FastBackend.sample`): one 64-token prompt per agent, G = 4
samples, 32 new tokens, the config's default sampling (temperature 1, top_p 1, top_k 0: generate runs
no warper), and once more with warpers (temperature 0.7, top_k 50, top_p 0.9). Random weights (speed
does not depend on them): the tiny shape is the embedded tiny model's own config (the model registry's
`tiny`), the SmolLM2 shape is SmolLM2-135M's (benchmarks/step_speed.py's SHAPES, as in RESULTS.md).
LoRA targets as `magrpo-edu train` chooses them: q/v for the tiny model, all linear layers else.

Teams, each on the same base, in one process:
  base x4      the base model without peft, 4 rows: the floor for one agent
  lora-1       one LoRA agent (peft), 4 rows
  base x8      the base without peft, 8 rows: the floor for two agents in one batch
  lora-2       two LoRA agents in one batch (the fast path's default), 8 rows

Per team, wall clock seconds per generated token (median of `--reps` calls after one warm-up, no
profiler), split by timers around the library's own pieces:
  prefill      the prompt's forward (our shared prompt cache, then generate's first step)
  forward      the decode steps' model forward (attention, MLP, LoRA, lm_head; what peft adds shows as
               lora-n minus base xN)
  warpers      generate's logits processors (temperature / top-k / top-p)
  sampling     softmax + multinomial
  stop checks  generate's stopping criteria and stop check (on a GPU, the host syncs)
  generate     the rest of generate's loop and of our call (input preparation, cache bookkeeping,
               concatenation, tokenising, decoding: Python)
Then one more call under torch.profiler (slower: the profiler adds to every operator): per token, the
aten operators called (nested ones included), and as shares of that profiled call's wall time the self
CPU time of the matmuls (mm / addmm / bmm / linear / matmul), of attention (scaled_dot_product), of all
other operators, of host-sync operators (`_local_scalar_dense`: a tensor read by Python; their count per
token in brackets), and what is left: Python and dispatch overhead (the Python of generate, transformers'
and peft's modules, hooks; the profiler's own bookkeeping counts here too, so it is an upper bound). It
measures; it asserts nothing.

On a GPU (`--device cuda`) each call ends with `torch.cuda.synchronize()`; the timers around the pieces
then read the host's time to launch them (the GPU runs behind), and the profiled call adds the GPU's
busy time per token (its kernels' times summed, "GPU busy"): set against the wall time, it says how much
of a token the GPU waits for the host.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import step_speed as ss  # noqa: E402  (the SmolLM2 shape, the prompt)

N_NEW = 32
DEFAULT_GEN = dict(max_new_tokens=N_NEW, temperature=1.0, top_p=1.0, top_k=0)
WARPED_GEN = dict(max_new_tokens=N_NEW, temperature=0.7, top_p=0.9, top_k=50)
TEAMS = ["base x4", "lora-1", "base x8", "lora-2"]


DEVICE = "cpu"  # --device


def build(shape: str, tok):
    """A seeded random model of the shape: the registry's tiny config, or step_speed's SmolLM2 shape."""
    from transformers import AutoConfig, LlamaForCausalLM

    from magrpo_edu.models import tiny_model_path

    if shape == "tiny":
        cfg = AutoConfig.from_pretrained(str(tiny_model_path("tiny")))
        torch.manual_seed(0)
        return LlamaForCausalLM(cfg).eval().to(DEVICE)
    return ss.build(shape, tok, torch.float32, DEVICE)


class Timers:
    """Wall-clock accumulators around named functions (patched in place, restored by `undo`)."""

    def __init__(self):
        self.t = defaultdict(float)
        self.undo_list = []
        self.depth = 0

    def wrap(self, owner, attr, name, pick=None):
        fn = getattr(owner, attr)

        def wrapper(*a, **k):
            key = pick(a, k) if pick else name
            if self.depth:  # nested in another timed piece: counted there
                return fn(*a, **k)
            self.depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.t[key] += time.perf_counter() - t0
                self.depth -= 1
        setattr(owner, attr, wrapper)
        self.undo_list.append((owner, attr, fn))

    def undo(self):
        for owner, attr, fn in reversed(self.undo_list):
            setattr(owner, attr, fn)
        self.undo_list.clear()


def instrument(model_cls):
    """Timers on the pieces of one sampling call (see the module docstring)."""
    import transformers.generation.utils as gu
    from transformers.generation.logits_process import LogitsProcessorList
    from transformers.generation.stopping_criteria import StoppingCriteriaList

    from magrpo_edu.backends import fast as fast_path

    T = Timers()

    def fwd_kind(a, k):
        ids = k.get("input_ids", a[1] if len(a) > 1 else None)
        return "prefill" if ids is not None and ids.shape[1] > 1 else "forward"
    T.wrap(model_cls, "forward", None, pick=fwd_kind)
    T.wrap(fast_path, "_shared_prompt_cache", "prefill")
    T.wrap(LogitsProcessorList, "__call__", "warpers")
    T.wrap(gu.torch, "multinomial", "sampling")
    T.wrap(gu.nn.functional, "softmax", "sampling")
    T.wrap(StoppingCriteriaList, "__call__", "stop checks")
    for cls_name in ("StopCheck", "DeferredStopCheck"):
        if hasattr(gu, cls_name):
            T.wrap(getattr(gu, cls_name), "__call__", "stop checks")
    return T


def teams(shape, tok):
    """(label, agents, prompts per agent) of the four teams on one base."""
    from magrpo_edu import lora_agents
    from magrpo_edu.agents import Agent

    targets = ["q_proj", "v_proj"] if shape == "tiny" else "all-linear"
    p = ss.prompt_text(tok)
    base = build(shape, tok)
    plain = Agent(name="base", model=base, tokenizer=tok)
    out = [("base x4", [plain], [[p]]), ("base x8", [plain], [[p, p + " "]])]
    lora1 = lora_agents(build(shape, tok), 1, tokenizer=tok, target_modules=targets)
    lora2 = lora_agents(build(shape, tok), 2, tokenizer=tok, target_modules=targets)
    for team in (lora1, lora2):  # B = 0 at initialisation: give the adapters values, as after training
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for a in team:
                for q in a.trainable_parameters():
                    q.copy_(torch.randn(q.shape, generator=g).to(q.device) * 0.02)
    out.insert(1, ("lora-1", lora1, [[p]]))
    out.append(("lora-2", lora2, [[p], [p]]))
    return out


def one_call(agents, prompts, gen):
    from magrpo_edu.backends.fast import FastBackend

    t = time.perf_counter()
    comps = FastBackend().sample(agents, prompts, ss.G, gen)
    ss.sync(DEVICE)
    wall = time.perf_counter() - t
    n = comps[0].completion_ids.shape[1]
    return wall, n


def measure(label, agents, prompts, gen, reps):
    model_cls = type(agents[0].model.get_base_model() if agents[0].adapter else agents[0].model)
    one_call(agents, prompts, gen)  # warm-up
    walls, parts = [], []
    for _ in range(reps):
        T = instrument(model_cls)
        try:
            wall, n = one_call(agents, prompts, gen)
        finally:
            T.undo()
        if n != N_NEW:
            print(f"warning: {label} generated {n} tokens, not {N_NEW}", file=sys.stderr)
        walls.append(wall)
        parts.append(dict(T.t, wall=wall))
    i = walls.index(statistics.median_low(walls))
    med = parts[i]
    named = ("prefill", "forward", "warpers", "sampling", "stop checks")
    row = {k: med.get(k, 0.0) / N_NEW for k in named}
    row["generate"] = med["wall"] / N_NEW - sum(row.values())
    row["wall"] = med["wall"] / N_NEW
    row["wall min"] = min(walls) / N_NEW
    # one more call under the profiler, for the operators
    activities = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        pwall, _ = one_call(agents, prompts, gen)
    mm = attn = other = sync = 0.0
    calls = syncs = 0
    events = prof.key_averages()
    gpu_us = sum(e.time_range.elapsed_us() for e in prof.events()  # the kernels' own events, on the GPU
                 if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA)
    for e in events:
        if not e.key.startswith("aten::"):
            continue
        us = e.self_cpu_time_total
        calls += e.count
        if e.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul", "aten::baddbmm"):
            mm += us
        elif "scaled_dot_product" in e.key:
            attn += us
        elif e.key in ("aten::_local_scalar_dense", "aten::item", "aten::is_nonzero"):
            sync += us
            syncs += e.count if e.key == "aten::_local_scalar_dense" else 0
        else:
            other += us
    pwall *= 1e6  # us, like the profiler's times
    row.update({"ops": calls / N_NEW, "syncs": syncs / N_NEW, "matmul": mm / pwall, "attention": attn / pwall,
                "other ops": other / pwall, "sync ops": sync / pwall,
                "python+dispatch": 1 - (mm + attn + other + sync) / pwall, "profiled wall": pwall / 1e6 / N_NEW,
                "device time": gpu_us / 1e6 / N_NEW})
    return row


def static_cache_check(shape, tok, reps):
    """generate on the bare base (4 rows, default sampling) with transformers' dynamic KV cache, with
    `cache_implementation="static"`, and with the static cache and transformers' own torch.compile of the
    forward (`compile_config`, which generate applies on a GPU only unless told `_compile_all_devices`):
    ms per token, the first compiled call's seconds, and whether the tokens agree with the dynamic cache's."""
    from transformers import CompileConfig

    m = build(shape, tok)
    enc = tok([ss.prompt_text(tok)] * ss.G, return_tensors="pt").to(DEVICE)
    everywhere = CompileConfig()
    everywhere._compile_all_devices = True  # generate's switch for compiling on a CPU

    def run(impl, seed=0):
        torch.manual_seed(seed)
        kw = {} if impl is None else {"cache_implementation": "static"}
        if impl == "compiled":
            kw["compile_config"] = everywhere
        with torch.inference_mode():
            return m.generate(**enc, do_sample=True, min_new_tokens=N_NEW, pad_token_id=tok.pad_token_id,
                              output_logits=True, return_dict_in_generate=True, **DEFAULT_GEN, **kw)
    out = {}
    for impl in (None, "static", "compiled"):
        t = time.perf_counter()
        run(impl)
        out[f"{impl}-first"] = time.perf_counter() - t
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            run(impl)
            ts.append((time.perf_counter() - t) / N_NEW)
        out[impl or "dynamic"] = statistics.median(ts)
    a, b, c = run(None, 5), run("static", 5), run("compiled", 5)
    diff = lambda x, y: max((p - q).abs().max().item() for p, q in zip(x.logits, y.logits))  # noqa: E731
    return (f"| {shape} | {ms(out['dynamic'])} | {ms(out['static'])} | {torch.equal(a.sequences, b.sequences)} "
            f"| {diff(a, b):.2e} | {ms(out['compiled'])} | {out['compiled-first']:.1f} | "
            f"{torch.equal(a.sequences, c.sequences)} | {diff(a, c):.2e} |")


def ms(x):
    return f"{1000 * x:.2f}"


def pc(x):
    return f"{100 * x:.0f}%"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", nargs="+", default=["tiny", "smollm2-135m"], choices=["tiny", *ss.SHAPES])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None, help="write the markdown section here (default: print only)")
    ap.add_argument("--teams", nargs="+", default=TEAMS, choices=TEAMS)
    ap.add_argument("--default-sampling-only", action="store_true", help="leave out the run with warpers")
    ap.add_argument("--static-cache", action="store_true",
                    help="instead: the bare base's generate with the dynamic and the static KV cache, and "
                    "the static one compiled (torch.compile through transformers' compile_config)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    tok = ss.tokenizer()
    if args.static_cache:
        lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M %Z')}, {torch.get_num_threads()} torch thread(s). "
                 f"ms per token, median of {args.reps} calls.", "",
                 "| shape | dynamic cache | static cache | same tokens | max logit difference | static + compile "
                 "| its first call, s | same tokens | max logit difference |", "|---|---|---|---|---|---|---|---|---|"]
        lines += [static_cache_check(shape, tok, args.reps) for shape in args.shapes]
        text = "\n".join(lines) + "\n"
        if args.out:
            Path(args.out).write_text(text)
        print(text)
        return
    gpu = f", {torch.cuda.get_device_name(0)}" if DEVICE.startswith("cuda") else ""
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M %Z')}, {torch.get_num_threads()} torch thread(s){gpu}, torch "
             f"{torch.__version__}, transformers {__import__('transformers').__version__}, peft "
             f"{__import__('peft').__version__}. Command: `python benchmarks/profile_sampling.py "
             f"{' '.join(argv if argv is not None else sys.argv[1:])}`. Milliseconds per generated token "
             f"(one call = G {ss.G} x 32 tokens per agent; prefill spread over the 32 tokens); median of "
             f"{args.reps} calls.", ""]
    for shape in args.shapes:
        settings = (("default sampling", DEFAULT_GEN), ("temperature 0.7, top_k 50, top_p 0.9", WARPED_GEN))
        for gname, gen in settings[:1] if args.default_sampling_only else settings:
            rows = []
            for label, agents, prompts in teams(shape, tok):
                if label not in args.teams:
                    continue
                rows.append((label, measure(label, agents, prompts, gen, args.reps)))
                shares = ("matmul", "attention", "other ops", "sync ops", "python+dispatch")
                print(shape, gname, label, {k: f"{100 * v:.0f}%" if k in shares else round(v, 1) if k in ("ops", "syncs")
                                            else round(v * 1000, 3) for k, v in rows[-1][1].items()}, flush=True)
            lines += [f"**{shape}, {gname}** (ms per token)", "",
                      "| team | wall | prefill | forward | warpers | sampling | stop checks | generate (rest) "
                      "| aten ops/token | profiled wall | matmul | attention | other ops | host syncs (n/token) "
                      "| Python+dispatch | GPU busy |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for label, r in rows:
                lines.append(f"| {label} | {ms(r['wall'])} (min {ms(r['wall min'])}) | {ms(r['prefill'])} | "
                             f"{ms(r['forward'])} | {ms(r['warpers'])} | {ms(r['sampling'])} | {ms(r['stop checks'])} | "
                             f"{ms(r['generate'])} | {r['ops']:.0f} | {ms(r['profiled wall'])} | {pc(r['matmul'])} | "
                             f"{pc(r['attention'])} | {pc(r['other ops'])} | {pc(r['sync ops'])} ({r['syncs']:.1f}) | "
                             f"{pc(r['python+dispatch'])} | "
                             + (f"{ms(r['device time'])} |" if DEVICE.startswith("cuda") else "- |"))
            lines.append("")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
