"""No library user sees a deprecation notice from transformers or peft on our calls (issue 46, item 4):
a short sampling call of each policy path and one training step of a LoRA team (with the KL leash,
so the reference log-probs run too) and of a separate pair, in a fresh process, as a user's script
would run them: every warning shown every time, the package's own import-time filters on top, and
transformers' logger (its `warning_once` notices go to stderr) read back.

The fast path passes the KV cache to `generate` and the forward under transformers' current name
(`cache=`); `past_key_values=` raised a FutureWarning on every call and a logged notice."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(r"""
    import warnings
    warnings.simplefilter("always")  # every warning, every time: before magrpo_edu adds its own filters
    import torch
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents, separate_agents
    from magrpo_edu.backends.fast import FastBackend
    from magrpo_edu.models import load_model
    from magrpo_edu.backends import PlainBackend

    rows = [{"text": f"post number {i} about something"} for i in range(4)]
    fm = [lambda r: "Summary: " + r["text"], lambda r: "Details: " + r["text"]]
    reward = lambda c, r: [-abs(len(b) - 2 * len(a)) / 50 for a, b in zip(*c)]
    gen = dict(max_new_tokens=5, temperature=1.0, top_p=1.0, top_k=0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        import magrpo_edu, importlib
        importlib.reload(magrpo_edu)  # its import-time filters, on top, as a user has them
        model, tok = load_model("tiny")
        team = lora_agents(model, 2, tokenizer=tok)
        FastBackend().sample(team, [["a b", "c"], ["d"]], 3, gen)   # shared prompt cache, batched agents
        PlainBackend().sample(team, [["a b"], ["d"]], 2, gen)
        MAGRPOTrainer(team, reward, fm, rows, MAGRPOConfig(max_steps=1, max_new_tokens=5, num_generations=3,
                                                           beta=0.05, progress=False)).train()
        model, tok = load_model("tiny")
        pair = separate_agents(model, 2, tokenizer=tok)
        MAGRPOTrainer(pair, reward, fm, rows, MAGRPOConfig(max_steps=1, max_new_tokens=5, num_generations=3,
                                                           beta=0.05, progress=False)).train()
    bad = [w for w in seen if issubclass(w.category, (FutureWarning, DeprecationWarning))]
    for w in bad:
        print(f"WARNING {w.category.__name__} {w.filename}:{w.lineno}: {w.message}")
    print("checked", len(seen), "warnings")
""")


@pytest.mark.slow
def test_sampling_and_a_training_step_emit_no_deprecation_notice():
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TRANSFORMERS_VERBOSITY="warning")
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "checked" in r.stdout
    warned = [line for line in r.stdout.splitlines() if line.startswith("WARNING")]
    assert not warned, "\n".join(warned)
    logged = [line for line in r.stderr.splitlines() if "deprecat" in line.lower()]
    assert not logged, "\n".join(logged)
