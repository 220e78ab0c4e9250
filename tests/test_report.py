"""The run's report (`magrpo-edu train`: results.md and its figures) tells one truth: one figure for one
quantity (the comparison table's parallel and magrpo rows ARE the evaluations, on their very samples),
each reward component beside the most it earns, no ratio to an empty text, the single-model row's
figures explained where they would puzzle, axis labels from the run's config, and nothing cut or
covered in the figures."""
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from magrpo_edu import MAGRPOTrainer, lora_agents  # noqa: E402
from magrpo_edu.evaluation import protocols  # noqa: E402
from magrpo_edu.evaluation import table as evaluation_table  # noqa: E402
from magrpo_edu.run import figures  # noqa: E402
from magrpo_edu.run.report import of_max, single_note  # noqa: E402
from magrpo_edu.tasks.coding.figures import plot_pass_at_k  # noqa: E402
from magrpo_edu.tasks.registry import get_task  # noqa: E402
from magrpo_edu.tasks.writing import load_writing, tldr_formatters  # noqa: E402

from conftest import cfg  # noqa: E402


class A:
    """A stand-in agent: baselines only read its name (generation is monkeypatched)."""

    def __init__(self, name):
        self.name = name


# ---- char_ratio: no ratio to an empty text --------------------------------------------------------------
def test_char_ratio_leaves_out_empty_first_parts_and_is_none_when_all_are():
    assert protocols.char_ratio(["ab", "", "abcd"], ["abcd", "xyz", "ab"]) == pytest.approx(1.25)
    assert protocols.char_ratio(["", ""], ["def main(): return 1", "x"]) is None


def test_the_single_coding_row_has_no_char_ratio_and_the_table_says_why(monkeypatch):
    """The single coding baseline writes the entry point alone: agent 1's part is empty in every
    answer, so chars(main) / chars(aux) divides by nothing (it printed 90.850 once)."""
    from magrpo_edu.tasks.coding import coding_formatters, load_coding

    problem = load_coding("eval")[0]
    monkeypatch.setattr(protocols, "_gen", lambda agent, prompts, gen: (["def f():\n    return 1\n"] * len(prompts), 1, 1.0, None))
    row = protocols.run_method("single", [A("agent_0"), A("agent_1")], "coding", [problem], coding_formatters(), samples=2,
                               ks=(1,))
    assert row["len1_chars"] == 0 and row["char_ratio"] is None
    md = evaluation_table.markdown_table([row])
    body = md.splitlines()[2]
    assert "| - |" in body and not re.search(r"\| \d{2,}\.\d+ \| [\d.]+ \| [\d.]+ \|$", body)
    assert "- where every first part is empty" in md
    note = single_note([row], get_task("coding"))
    assert "at most 2.1 of 4" in note and "len1_chars 0" in note and "char_ratio" in note


def test_the_single_writing_row_says_it_never_wrote_the_separator():
    """The length task's single row earns exp(-2) = 0.135 when the one model never writes the `###`
    line: its second part is empty. results.md says so beside the table."""
    row = dict(method="single", reward=0.1353, len1_chars=98.4, len2_chars=0.0)
    note = single_note([row, dict(method="parallel", reward=0.4)], get_task("length"))
    assert "never wrote that line" in note and "`###`" in note and "0.135" in note and "len2_chars 0" in note
    assert "never wrote" not in single_note([dict(row, len2_chars=40.0)], get_task("length"))
    assert single_note([dict(method="parallel", reward=0.4)], get_task("length")) is None


# ---- component maxima ------------------------------------------------------------------------------------
def test_every_component_is_printed_beside_its_maximum():
    coding = get_task("coding").component_max()
    assert coding["aux_defined"] == 0.4 and coding["tests"] == 1.0 and coding["aux_result_ignored"] == -0.5
    assert sum(v for v in coding.values() if v > 0) == pytest.approx(get_task("coding").max_reward)
    writing = get_task("tldr").component_max()
    assert writing["structure"] == 0.5 and writing["length_ratio"] == 1.0 and writing["uniqueness"] == 0.5
    assert writing["structure"] + writing["length_ratio"] + writing["uniqueness"] + writing["style"] == 3.0
    assert get_task("length").component_max() == {}  # no components: nothing to print
    assert of_max(0.4, 0.4) == "0.400 of 0.4" and of_max(-0.05, -0.5) == "-0.050 of -0.5" and of_max(0.5, None) == "0.500"
    md = evaluation_table.markdown_table([dict(method="parallel", reward=1.0, structure=0.5, tests=0.25)],
                                  {"structure": 0.5, "tests": 1.0})
    assert "| structure (of 0.5) |" in md and "| tests (of 1) |" in md


# ---- figures: labels from the run, nothing clipped or covered ---------------------------------------------
HISTORY = [{"step": s, "reward": 0.1 * s, "reward_std": 0.1, "reward_min": 0.0, "reward_max": 1.0,
            "loss/agent_0": 0.1, "loss/agent_1": -0.1, "completions/mean_length/agent_0": 20.0,
            "completions/mean_length/agent_1": 40.0} for s in range(1, 6)]


def test_the_reward_axis_says_how_many_prompts_a_step_took():
    assert figures.plot_rewards(HISTORY).axes[0].get_xlabel() == "training step (one prompt, one group per step)"
    fig = figures.plot_rewards(HISTORY, prompts_per_step=2, eval_label="held-out evaluation (2 rows x 4 samples)",
                               evals=[{"step": 0, "eval/reward": 0.3}])
    assert fig.axes[0].get_xlabel() == "training step (2 prompts, 2 groups per step)"
    assert "held-out evaluation (2 rows x 4 samples)" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def _inside(fig, artist) -> bool:
    fig.canvas.draw()
    box, whole = artist.get_window_extent(), fig.bbox
    return box.x0 >= whole.x0 - 0.5 and box.x1 <= whole.x1 + 0.5 and box.y0 >= whole.y0 - 0.5 and box.y1 <= whole.y1 + 0.5


def test_agents_figure_keeps_its_labels_and_has_a_legend_for_both_panels():
    fig = figures.plot_agents(HISTORY)
    a1, a2 = fig.axes
    assert _inside(fig, a1.yaxis.label) and _inside(fig, a2.yaxis.label)
    legends = fig.legends + [a.get_legend() for a in (a1, a2) if a.get_legend() is not None]
    assert len(fig.legends) == 1 and len(legends) == 1, "one legend, for both panels"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["agent_0", "agent_1"]
    assert _inside(fig, fig.legends[0])
    for a in (a1, a2):  # an agent has one colour in both panels
        assert [line.get_color() for line in a.get_lines()] == ["C0", "C1"]


def test_pass_at_k_legend_covers_no_curve_and_the_y_label_fits():
    table = [{"method": m, "pass_or_not@1": 0.1 * i, "pass_or_not@5": 0.2 * i, "accuracy@1": 0.3 * i, "accuracy@5": 0.4 * i}
             for i, m in enumerate(("single", "parallel", "sequential", "discussion", "magrpo"))]
    fig = plot_pass_at_k(table)  # the coding task's report figure (tasks/coding/figures.py)
    ax = fig.axes[0]
    assert _inside(fig, ax.yaxis.label)
    legend = ax.get_legend()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # beside the axes, not over the data
    assert {"PassOrNot@k", "Accuracy@k"} <= {t.get_text() for t in legend.get_texts()}


# ---- one figure for one quantity ---------------------------------------------------------------------------
def test_a_table_row_from_an_evaluation_is_that_evaluation(make_model, small_tokenizer):
    """`evaluate(return_samples=True)` draws the same numbers as `evaluate()`, and the table row built from
    its samples has the evaluation's reward, naturalness and repetition: one figure, not two."""
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    task = get_task("length")
    rows = load_writing("tldr", "eval")[:3]
    trainer = MAGRPOTrainer(agents, task.joint_reward, tldr_formatters(), rows, cfg(num_generations=3, max_new_tokens=8),
                            eval_dataset=rows)
    plain = trainer.evaluate()
    metrics, drawn = trainer.evaluate(return_samples=True)
    assert metrics == plain
    assert drawn["per_row"] == 3 and drawn["rows"] == 3 and all(len(t) == 9 for t in drawn["texts"])
    assert drawn["tokens"] > 0 and drawn["seconds"] > 0 and len(drawn["rewards"]) == 9
    row = protocols.row_from_evaluation("parallel", task, rows, metrics, drawn, [a.name for a in agents], keep_texts=True)
    assert row["evaluation"] is True and row["samples"] == 9
    assert row["reward"] == pytest.approx(metrics["eval/reward"], abs=1e-6)
    assert f"{row['reward']:.3f}" == f"{metrics['eval/reward']:.3f}"
    assert row["naturalness1"] == metrics["eval/naturalness/agent_0"]
    assert row["repetition2"] == pytest.approx(metrics["eval/repetition/agent_1"])
    assert row["pair_rewards"] == pytest.approx(drawn["rewards"])
    with pytest.raises(ValueError, match="samples are of 3 rows x 3; the table has 2 rows"):
        protocols.row_from_evaluation("parallel", task, rows[:2], metrics, drawn, ["agent_0", "agent_1"])


def test_the_report_gives_one_figure_for_each_quantity(tmp_path):
    """A run's results.md: the untrained and trained figures of the evaluation table are the comparison
    table's parallel and magrpo rows (the same samples: the header says how many), the single row is
    explained, and the figures are written."""
    from magrpo_edu.run.experiment import run_training

    out = tmp_path / "run"
    res = run_training(task="length", max_steps=2, num_generations=3, max_new_tokens=8, eval_rows=2, out=str(out),
                       progress=False, device="cpu")
    md = (out / "results.md").read_text()
    table = {r["method"]: r for r in res["comparison"]}
    assert f"{table['parallel']['reward']:.3f}" == f"{res['eval_before']['eval/reward']:.3f}"
    assert f"{table['magrpo']['reward']:.3f}" == f"{res['eval_after']['eval/reward']:.3f}"
    assert table["parallel"]["evaluation"] and table["magrpo"]["evaluation"]
    assert all(r["samples"] == 2 * 3 for r in res["comparison"])  # every method: 2 rows x G = 3 samples
    assert "## Baselines vs MAGRPO (2 held-out rows x 3 samples, as above)" in md
    assert f"| untrained | {res['eval_before']['eval/reward']:.3f} |" in md
    assert f"| parallel | {table['parallel']['reward']:.3f} |" in md
    assert f"| magrpo | {table['magrpo']['reward']:.3f} |" in md
    assert "`parallel` (the untrained agents) is the evaluation `untrained` above" in md
    assert "`single`: one model writes every part, split at a line `###`" in md
    assert "Evaluated on 2 held-out rows, 3 joint samples each" in md
    for name in ("reward.png", "agents.png", "comparison.png"):
        assert (out / name).is_file()


def test_every_number_a_row_carries_is_a_column():
    """The table's columns come from its rows (a cold maintainer's review found tldr's `style` level and coding's
    load_bearing_rate dropped by a fixed list): a task's new component and a metric appear, bookkeeping does not."""
    rows = [dict(method="parallel", reward=1.0, order=0.25, samples=4, passed=3, total_asserts=4, len1_chars=10,
                 len2_chars=20, seconds=1.5),
            dict(method="magrpo", reward=2.0, order=0.5, load_bearing_rate=0.75, style=1.0, samples=4, seconds=1.0)]
    head = evaluation_table.markdown_table(rows, maxima={"order": 1.0}).splitlines()[0]
    assert head == ("| method | reward | order (of 1) | load_bearing_rate | style | len1_chars | len2_chars | seconds |")
    assert "| magrpo | 2.000 | 0.500 | 0.750 | 1.000 | - | - | 1.000 |" in evaluation_table.markdown_table(rows)
