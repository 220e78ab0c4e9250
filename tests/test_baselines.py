"""The prompt-level baselines: what each method shows each agent, how it splits and times, and
that the table has every column; plus the train command end to end on a few steps."""
import json
import subprocess
import sys

import pytest

from magrpo_edu import lora_agents
from magrpo_edu.evaluation import protocols
from magrpo_edu.evaluation import table as evaluation_table
from magrpo_edu.tasks.writing import in_distribution_row, load_writing, tldr_formatters

ROWS = [{"id": "a", "post": "My cat scratches the sofa every day and I do not know what to do."}]


@pytest.fixture
def fake_gen(monkeypatch):
    """Replace generation by a recorder: agent 0 answers 'short', agent 1 echoes what it was shown."""
    seen = []

    def gen(agent, prompts, cfg):
        seen.append((agent.name, list(prompts)))
        if agent.name == "agent_0" and "###" in prompts[0]:
            return ["one two three four five six seven eight ### " + "nine ten " * 8] * len(prompts), 10, 1.0, None
        texts = ["short answer with eight words in it ok" if agent.name == "agent_0" else
                 ("saw other " if "The other agent wrote" in p else "") + "a much longer detailed answer " * 3 for p in prompts]
        return texts, 5 * len(prompts), 2.0 if agent.name == "agent_1" else 1.0, None

    monkeypatch.setattr(protocols, "_gen", gen)
    return seen


class A:
    def __init__(self, name):
        self.name = name


class ChatTok:
    """A tokenizer with a chat template, as an instruct model's."""
    chat_template = "x"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        return "<user>" + messages[0]["content"] + "</user><assistant>"


class ChatAgent(A):
    tokenizer = ChatTok()


def test_chat_models_get_every_protocol_inside_their_chat_template(fake_gen):
    agents = [ChatAgent("agent_0"), ChatAgent("agent_1")]
    fmts = tldr_formatters(ChatTok())
    protocols.run_method("single", agents, "tldr", ROWS, fmts, samples=1)
    protocols.run_method("sequential", agents, "tldr", ROWS, fmts, samples=1)
    protocols.run_method("discussion", agents, "tldr", ROWS, fmts, samples=1)
    prompts = [p for _, ps in fake_gen for p in ps]
    assert all(p.startswith("<user>") and p.endswith("</user><assistant>") for p in prompts), prompts
    assert "###" in prompts[0] and ROWS[0]["post"] in prompts[0]
    shown = [p for p in prompts if "The other agent wrote" in p]
    assert len(shown) == 3 and all(p.startswith("<user>The other agent wrote: ") for p in shown)


def test_single_splits_on_marker(fake_gen):
    r = protocols.run_method("single", [A("agent_0"), A("agent_1")], "tldr", ROWS, tldr_formatters(), samples=1)
    assert r["len1_chars"] == len("one two three four five six seven eight")
    assert [name for name, _ in fake_gen] == ["agent_0"]


def test_parallel_is_concurrent_sequential_adds_up(fake_gen):
    agents = [A("agent_0"), A("agent_1")]
    par = protocols.run_method("parallel", agents, "tldr", ROWS, tldr_formatters(), samples=1)
    seq = protocols.run_method("sequential", agents, "tldr", ROWS, tldr_formatters(), samples=1)
    assert par["seconds"] == 2.0 and seq["seconds"] == 3.0  # max(1, 2) vs 1 + 2
    assert "The other agent wrote: short answer" in fake_gen[-1][1][0]  # agent 2 saw agent 1's answer
    assert seq["len2_chars"] > par["len2_chars"]


def test_three_agents_wait_for_and_discuss_with_every_other(fake_gen):
    """n = 3: sequential shows agent k the answers of agents 1..k-1; discussion shows each agent the
    other two's round-1 answers; single splits one answer into three parts."""
    from magrpo_edu.tasks.registry import Task

    three = Task("three", "", lambda split: ROWS, lambda tokenizer=None: [lambda r, k=k: f"agent {k}: {r['post']}" for k in range(3)],
                 lambda c, r: [0.0] * len(c[0]), max_reward=1.0, max_new_tokens=8, prompt_field="post",
                 levels=lambda a, b, c: {"total": float(bool(a and b and c))}, num_agents=3,
                 single_prompt=lambda row, tok=None: "### " + row["post"])
    agents = [A("agent_0"), A("agent_1"), A("agent_2")]
    seq = protocols.run_method("sequential", agents, three, ROWS, samples=1)
    third = fake_gen[-1][1][0]
    assert third.startswith("The other agent wrote: short answer with eight words in it ok\nsaw other a much longer")
    assert seq["seconds"] == 1.0 + 2.0 + 1.0 and "len3_chars" in seq and "repetition3" in seq
    fake_gen.clear()
    protocols.run_method("discussion", agents, three, ROWS, samples=1)
    assert len(fake_gen) == 6 and fake_gen[3][1][0].count("\n") == 2  # agent 1 sees agents 2 and 3, one line each
    single = protocols.run_method("single", agents, three, ROWS, samples=1)
    assert single["len1_chars"] == len("one two three four five six seven eight") and single["len3_chars"] == 0


def test_discussion_scores_round_two(fake_gen):
    r = protocols.run_method("discussion", [A("agent_0"), A("agent_1")], "tldr", ROWS, tldr_formatters(), samples=1)
    assert len(fake_gen) == 4 and all("The other agent wrote" in p[0] for _, p in fake_gen[2:])
    assert r["seconds"] == 4.0 and r["tokens"] == 20


@pytest.mark.slow
def test_real_models_produce_full_table(make_model, small_tokenizer):
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    table = [protocols.run_method(m, agents, "tldr", ROWS * 2, tldr_formatters(), samples=1, max_new_tokens=6)
             for m in ("single", "parallel", "sequential", "discussion", "magrpo")]
    assert [r["method"] for r in table] == ["single", "parallel", "sequential", "discussion", "magrpo"]
    for r in table:
        assert 0 <= r["normalised"] <= 1 and r["tokens"] > 0 and r["seconds"] > 0
        assert 0 <= r["repetition1"] <= 1 and 0 <= r["repetition2"] <= 1
        assert r["naturalness1"] > 0 and r["naturalness2"] > 0  # NLL of sampled text under the (LoRA-off) base
    md = evaluation_table.markdown_table(table)
    assert md.count("\n|") >= 6 and "concurrent" in md and "naturalness2" in md


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown method"):
        protocols.run_method("debate", [], "tldr", ROWS)
    with pytest.raises(ValueError, match="the length task has 2 agents; got 1"):
        protocols.run_method("parallel", [A("agent_0")], "length", ROWS)
    with pytest.raises(ValueError, match="magrpo_2turn answers again after the task's transition, and the tldr task has none"):
        protocols.run_method("magrpo_2turn", [A("agent_0"), A("agent_1")], "tldr", ROWS)


@pytest.mark.slow
def test_train_command_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "magrpo_edu.run.cli", "train", "--task", "tldr", "--steps", "3", "--eval-rows", "2",
                        "--max-new-tokens", "16", "--out", str(out), "--no-progress"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "past_key_values" not in r.stderr  # the libraries' deprecation notice a user cannot act on is quieted
    for f in ("history.json", "history.csv", "samples.json", "reward.png", "components.png", "agents.png",
              "comparison.png", "results.json", "results.md"):
        assert (out / f).is_file(), f
    res = json.loads((out / "results.json").read_text())
    assert [row["method"] for row in res["comparison"]] == ["single", "parallel", "sequential", "discussion", "magrpo"]
    assert len(json.loads((out / "history.json").read_text())) == 3
    # results.md shows the texts and the quality measures next to the reward
    md = (out / "results.md").read_text()
    assert "## Before and after" in md and "naturalness agent_0" in md and "beta=0.0" in md
    ex = res["examples"]
    assert len(ex) == 2 and all(len(e["before"]) == 2 and len(e["after"]) == 2 for e in ex)
    assert all(e["before"][0].strip() in md for e in ex if e["before"][0].strip())
    assert res["beta"] == 0.0 and "texts" not in res["comparison"][0]
    # beside the held-out rows, one new row of the training data's own world (issue 27: texts explained)
    ind = res["in_distribution_example"]
    assert ind["id"].startswith("tldr-world-") and len(ind["before"]) == 2 and len(ind["after"]) == 2
    assert "### In distribution" in md and ind["input"][:200] in md
    assert ind["input"] not in {r["post"] for r in load_writing("tldr", "train")}


@pytest.mark.slow
def test_train_command_coding_two_turns(tmp_path):
    out = tmp_path / "coding"
    r = subprocess.run([sys.executable, "-m", "magrpo_edu.run.cli", "train", "--task", "coding", "--turns", "2", "--steps", "2",
                        "--eval-rows", "2", "--max-new-tokens", "16", "-G", "2", "--out", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    hist = json.loads((out / "history.json").read_text())
    assert len(hist) == 2 and hist[-1]["nodes"] == 3.0 and "reward/tests" in hist[-1] and "reward/turn_2" in hist[-1]
    res = json.loads((out / "results.json").read_text())
    assert [r["method"] for r in res["comparison"]][-2:] == ["magrpo", "magrpo_2turn"]
    assert "pass_or_not@1" in res["comparison"][-1] and (out / "comparison.png").is_file()
    # every file the run wrote is one --overwrite removes (the task's own figure too: Task.report_files)
    from magrpo_edu.run.folders import output_files

    assert (out / "pass_at_k.png").is_file() and {p.name for p in out.iterdir()} <= set(output_files())


@pytest.mark.slow
def test_a_single_turn_coding_run_reports_no_second_turn(tmp_path):
    """A run trained on one turn gets no `magrpo_2turn` row (its agents were never trained to answer feedback;
    the row read as a result of the run)."""
    out = tmp_path / "coding"
    r = subprocess.run([sys.executable, "-m", "magrpo_edu.run.cli", "train", "--task", "coding", "--steps", "1",
                        "--eval-rows", "2", "--max-new-tokens", "16", "-G", "2", "--out", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    methods = [row["method"] for row in json.loads((out / "results.json").read_text())["comparison"]]
    assert methods[-1] == "magrpo" and "magrpo_2turn" not in methods, methods
    assert "magrpo_2turn" not in (out / "results.md").read_text()


def test_coding_metrics_by_hand():
    from magrpo_edu.tasks.coding import coding_metrics

    def lv(passed, aux=0.4, calls=0.0, syntax=0.5, main=0.6):
        return dict(passed=passed, total_asserts=4, aux_defined=aux, main_defined=main, calls_aux=calls, syntax=syntax, total=0.0)
    per = [[lv(1), lv(4, calls=0.5), lv(0, aux=0.0)],  # problem 1: first full pass at sample 2
           [lv(2), lv(3), lv(0, aux=0.0, main=0.0, syntax=0.0)]]  # problem 2: never fully passes
    m = coding_metrics(per, ks=(1, 2, 3))
    assert m["pass_or_not@1"] == 0.0 and m["pass_or_not@2"] == 0.5 and m["pass_or_not@3"] == 0.5
    assert m["accuracy@1"] == pytest.approx((0.25 + 0.5) / 2) and m["accuracy@2"] == pytest.approx((1.0 + 0.75) / 2)
    assert m["cooperation_rate"] == pytest.approx(1 / 6) and m["syntax_rate"] == pytest.approx(5 / 6)
    assert m["structure_rate"] == pytest.approx(5 / 6)  # answers that define main (aux is optional)


def test_single_coding_baseline_writes_the_entry_point_alone(monkeypatch):
    # The paper's single-agent coding baseline: one answer, only its entry point is scored, no
    # cooperation credit (max 2.1). An answer holding aux + a main that calls it therefore earns
    # 0.6 + 0.5 + 1/4 (only count_vowels('') passes without aux), not 4.0.
    from magrpo_edu.tasks.coding import coding_formatters, load_coding

    problem = next(r for r in load_coding("train") if r["entry_point"] == "count_vowels")
    answer = ("def aux(c):\n    return c.lower() in 'aeiou'\n\ndef count_vowels(s):\n    n = 0\n    for c in s:\n"
              "        if aux(c):\n            n += 1\n    return n\n")
    shown = []

    def gen(agent, prompts, cfg):
        shown.extend(prompts)
        return [answer] * len(prompts), 1, 1.0, None

    monkeypatch.setattr(protocols, "_gen", gen)
    r = protocols.run_method("single", [A("agent_0"), A("agent_1")], "coding", [problem], coding_formatters(),
                             samples=1, ks=(1,))
    assert "Only write the main function." in shown[0] and "aux" not in shown[0].split("def count_vowels")[0]
    assert r["reward"] == pytest.approx(0.6 + 0.5 + 0.25) and r["calls_aux"] == 0.0 and r["aux_defined"] == 0.0


def test_coding_baselines_table(make_model, small_tokenizer):
    from magrpo_edu.tasks.coding import coding_formatters, load_coding

    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    rows = load_coding("eval")[:2]
    table = [protocols.run_method(m, agents, "coding", rows, coding_formatters(), samples=2, max_new_tokens=6, ks=(1, 2))
             for m in ("single", "parallel", "sequential", "discussion", "magrpo", "magrpo_2turn")]
    assert [r["method"] for r in table] == ["single", "parallel", "sequential", "discussion", "magrpo", "magrpo_2turn"]
    for r in table:
        assert {"pass_or_not@1", "accuracy@2", "cooperation_rate", "syntax_rate", "structure_rate"} <= set(r)
    assert table[-1]["tokens"] > table[1]["tokens"]  # two turns generate more
    assert "pass_or_not@1" in evaluation_table.markdown_table(table)


def test_in_distribution_row_is_new_and_from_the_generator():
    """results.md's in-distribution example: the train split's generator, never a training row."""
    for task, field in (("tldr", "post"), ("arxiv", "abstract")):
        row = in_distribution_row(task)
        assert row[field] and row[field] not in {r[field] for r in load_writing(task, "train")}
        assert row == in_distribution_row(task)  # seeded: every run shows the same row
    with pytest.raises(ValueError, match="unknown writing task"):
        in_distribution_row("coding")


def test_run_method_samples_as_the_task_does_unless_told(monkeypatch):
    """Issue 59: the baselines' sampling follows the order a run's settings follow (MAGRPOConfig's plain sampling <
    the task's `sampling` < what the call gives): coding as the authors sample, tldr plainly, a value given wins."""
    from magrpo_edu.tasks.registry import get_task

    seen = []

    def gen(agent, prompts, cfg):
        seen.append({k: cfg[k] for k in ("temperature", "top_p", "top_k")})
        raise StopIteration  # the settings are all this test needs

    monkeypatch.setattr(protocols, "_gen", gen)
    coding = get_task("coding")
    rows = coding.load("eval")[:1]
    for kw in ({}, dict(top_k=3)):
        with pytest.raises(StopIteration):
            protocols.run_method("parallel", [A("agent_0"), A("agent_1")], coding, rows, [lambda r: "x"] * 2, **kw)
    with pytest.raises(StopIteration):
        protocols.run_method("parallel", [A("agent_0"), A("agent_1")], "tldr", ROWS, [lambda r: "x"] * 2)
    assert coding.sampling == dict(temperature=0.7, top_p=0.9, top_k=50)
    assert seen == [coding.sampling, dict(coding.sampling, top_k=3), dict(temperature=1.0, top_p=1.0, top_k=0)]
    assert coding.sampling_settings(top_p=None) == coding.sampling
    with pytest.raises(TypeError, match="temperature, top_p and top_k"):
        coding.sampling_settings(top_q=0.5)
