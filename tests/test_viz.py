"""Every plot returns a fixed-size Figure from plain history/sample dicts; explorers respond to their controls."""
import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from magrpo_edu import viz  # noqa: E402
from magrpo_edu.tasks.coding import explorer as coding_views  # noqa: E402
from magrpo_edu.tasks.coding import figures as coding_figures  # noqa: E402

HISTORY = [dict(step=s, reward=0.1 * s, reward_std=0.05, reward_min=0.0, reward_max=0.2 * s, **{"reward/structure": 0.5,
           "loss/agent_0": 0.1, "loss/agent_1": -0.1, "completions/mean_length/agent_0": 10.0,
           "completions/mean_length/agent_1": 20.0}) for s in range(1, 13)]
SAMPLE = dict(step=3, completions=[["a", "bb"], ["ccc", "d"]], table=[[0, 0], [1, 1]], rewards=[1.0, 0.0], advantages=[0.5, -0.5])


@pytest.mark.parametrize("make", [
    lambda: viz.plot_rewards(HISTORY), lambda: viz.plot_components(HISTORY), lambda: viz.plot_agents(HISTORY),
    lambda: viz.plot_group(SAMPLE), lambda: viz.plot_joint_actions(3), lambda: viz.plot_joint_actions(2, rewards=[[1, 2], [3, 4]]),
    lambda: viz.plot_comparison([dict(method="a", reward=1.0), dict(method="b", reward=2.0)], "reward"),
    lambda: viz.plot_runs({"a": HISTORY, "b": HISTORY[:6]}),
    lambda: coding_figures.plot_pass_at_k([{"method": "m", "pass_or_not@1": 0.1, "pass_or_not@5": 0.3, "accuracy@1": 0.4, "accuracy@5": 0.6}]),
])
def test_plots_return_fixed_size_figures(make):
    fig = make()
    assert isinstance(fig, matplotlib.figure.Figure) and fig.get_size_inches()[1] == pytest.approx(viz.FIGSIZE[1])
    assert any(ax.has_data() for ax in fig.axes)


def test_a_component_the_reward_does_not_pay_is_drawn_as_a_diagnostic():
    history = [dict(step=s, **{"reward/tests": 0.5, "reward/load_bearing": 0.2}) for s in range(1, 6)]
    ax, right = viz.plot_components(history, maxima={"tests": 1.0}).axes
    assert [line.get_label() for line in ax.get_lines()] == ["tests (max 1)"] and ax.get_ylabel().startswith("points")
    (share,) = right.get_lines()          # a share of answers, on its own 0-1 axis, not on the points axis
    assert share.get_label() == "load_bearing (diagnostic, not paid; right axis)" and share.get_linestyle() == ":"
    assert right.get_ylim() == (-0.02, 1.02) and right.get_ylabel().startswith("share")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["tests (max 1)", share.get_label()]


def test_rollout_tree_draws_every_node_and_edge():
    import torch

    from magrpo_edu.algorithm import Node, Rollout, assign_advantages, joint_actions
    from magrpo_edu.config import MAGRPOConfig

    table = joint_actions(2, 2)
    root = Node(0, ["p1", "p2"], [[], []], completions=[["a", "b"], ["c", "d"]], table=table,
                rewards=torch.tensor([1.0, 0.0]))
    kids = [Node(1, ["q1", "q2"], [[], []], completions=[["e", "f"], ["g", "h"]], table=table,
                 rewards=torch.tensor([0.5, 2.0 + j])) for j in range(2)]
    root.children = dict(enumerate(kids))
    ro = Rollout(root=root, levels=[[root], kids], completions=[])
    assign_advantages(ro, MAGRPOConfig(num_generations=2))
    fig = viz.plot_rollout_tree(ro, agent_texts=10)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.startswith("turn ") for t in texts) == 3 and {"j=0", "j=1"} <= set(texts)
    assert any(f"R = {1.0 + 0.9 * 1.25:.2f}" in t for t in texts)  # R_0 = r_0 + gamma * mean(child's returns)


def test_smooth():
    assert viz.smooth([1.0, 3.0, 5.0, 7.0], window=2) == [1.0, 2.0, 4.0, 6.0]


def test_group_explorer_responds_to_the_slider_and_agent_picker():
    samples = [dict(SAMPLE, step=1), dict(SAMPLE, step=2, completions=[["xx", "yy"], ["zz", "ww"]])]
    w = viz.group_explorer(samples)
    slider, agents = w.children[0].children
    html = w.children[1]
    assert "step 2" in html.value and "zz" in html.value
    slider.value = 0
    assert "step 1" in html.value and "ccc" in html.value
    agents.value = (0,)
    assert "ccc" not in html.value and "agent 1" in html.value and "agent 2" not in html.value


def test_before_after_explorer_shows_the_static_reports_row():
    texts, before, after = ["p0", "p1"], [["b0", "c0"], ["b1", "c1"]], [["a0", "d0"], ["a1", "d1"]]
    w = viz.before_after_explorer(texts, before, after, [0.1, 0.2], [0.9, 0.8])
    pick, html = w.children
    assert "b0" in html.value and "a0" in html.value and "0.90" in html.value and "b1" not in html.value
    pick.value = 1
    assert "b1" in html.value and "d1" in html.value and "0.80" in html.value and "b0" not in html.value
    # the widget draws exactly the static report's row (one renderer), numbered as in the report
    assert html.value == viz.before_after_report(texts[1:], before[1:], after[1:], [0.2], [0.8], numbers=[1])
    assert "<b>row 1</b>" in html.value
    assert "agent_0" in html.value and "agent_1" in html.value


# ---- every explorer saves a static copy of what it shows (GitHub and nbviewer draw no widget) --------
def _tree():
    import torch

    from magrpo_edu.algorithm import Node, Rollout, assign_advantages, joint_actions
    from magrpo_edu.config import MAGRPOConfig

    table = joint_actions(2, 2)
    root = Node(0, ["p1", "p2"], [[], []], completions=[["a", "b"], ["c", "d"]], table=table,
                rewards=torch.tensor([1.0, 0.0]))
    kids = [Node(1, [f"feedback on j={j} for agent 0", "q2"], [[], []], completions=[[f"e{j}", "f"], ["g", "h"]],
                 table=table, rewards=torch.tensor([0.5, 2.0 + j])) for j in range(2)]
    root.children = dict(enumerate(kids))
    ro = Rollout(root=root, levels=[[root], kids], completions=[])
    assign_advantages(ro, MAGRPOConfig(num_generations=2))
    return ro


def _levels(passed, calls):
    return dict(aux_defined=0.4, main_defined=0.6, syntax=0.5, tests=passed / 4, calls_aux=0.5 * calls,
                not_thin_wrapper=1.0 * calls, aux_result_ignored=0.0, passed=passed, total_asserts=4,
                total_reward=1.5 + passed / 4 + 1.5 * calls)


CODING = coding_views.coding_sample(["def aux(x):\n    return x + 1", "def aux(x):\n    return 0"],
                           ["def f(x):\n    return aux(x) * 2", "def f(x):\n    return 7"],
                           [_levels(4, True), _levels(1, False)], title="held-out f")


@pytest.mark.parametrize("make", [
    lambda: viz.group_explorer([SAMPLE]),
    lambda: viz.before_after_explorer(["p0"], [["b0", "c0"]], [["a0", "d0"]], [0.1], [0.9]),
    lambda: coding_views.coding_explorer([CODING]),
    lambda: viz.rollout_explorer(_tree()),
])
def test_every_explorer_saves_a_static_html_copy_of_what_it_shows(make):
    import ipywidgets as W

    w = make()
    assert isinstance(w, W.VBox)
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # a kernel draws the live widget
    shown = [c.value for c in w.children if isinstance(c, W.HTML) and c.value]
    assert shown and all(v in bundle["text/html"] for v in shown)  # without one, the same content as HTML


def test_group_explorer_plots_the_groups_rewards_and_advantages_beside_its_texts():
    samples = [dict(SAMPLE, step=1), dict(SAMPLE, step=2, rewards=[0.25, 0.75], advantages=[-0.25, 0.25])]
    w = viz.group_explorer(samples)
    html = w.children[1]
    assert html.value.count("<img src='data:image/png;base64,") == 1
    assert "rewards 0.25, 0.75; mean 0.50; advantages -0.25, +0.25" in html.value  # the chart's alt text
    w.children[0].children[0].value = 0
    assert "rewards 1.00, 0.00; mean 0.50; advantages +0.50, -0.50" in html.value
    assert "sample #0" in w._repr_mimebundle_()["text/html"]  # the static copy follows the selection


def test_coding_explorer_shows_each_joint_actions_levels_and_code():
    w = coding_views.coding_explorer([dict(CODING, step=0), CODING])
    slider, pick = w.children[0].children
    html = w.children[1]
    assert pick.value == 0 and "4/4" in html.value and "1/4" in html.value  # tests as passed/asserts, every row
    assert "return aux(x) * 2" in html.value and "return 7" not in html.value  # the best joint action's code
    pick.value = 1
    assert "return 7" in html.value and "return aux(x) * 2" not in html.value
    slider.value = 0
    assert "step 0" in html.value
    # trainer samples carry the levels as reward components
    trained = dict(SAMPLE, completions=[["def aux(): return 1", "x"], ["def f(): return aux()", "y"]],
                   components={k: [v, 0.0] for k, v in coding_views.CODING_LEVEL_MAX.items()})
    assert "joint action 0" in coding_views.coding_html(trained) and "+0.50" in coding_views.coding_html(trained)  # its advantage
    with pytest.raises(ValueError, match="no coding levels"):
        coding_views.coding_explorer([SAMPLE])


def test_a_task_brings_its_own_explorer_and_report_figures():
    """The coding task's explorer and PassOrNot@k figure are reached through its `Task` (tasks/coding/), so the run
    wing names no task: `task_explorer` picks the task's own view, a task without one gets `group_explorer`."""
    from magrpo_edu.tasks.registry import get_task

    coding, tldr = get_task("coding"), get_task("tldr")
    assert coding.explorer is coding_views.coding_explorer and tldr.explorer is None
    w = viz.task_explorer([CODING], coding)
    assert "4/4" in w.children[1].value  # the coding view: tests as passed/asserts
    assert "joint action" not in viz.task_explorer([SAMPLE], tldr).static_html()  # the generic group view
    table = [{"method": "magrpo", "pass_or_not@1": 0.25, "accuracy@1": 0.5}]
    (name, fig), = coding.report_figures(table, "coding", "28 held-out rows x 4 samples")
    assert name == "pass_at_k" and "28 held-out rows x 4 samples" in fig.axes[0].get_title()
    assert coding.report_figures([{"method": "magrpo", "reward": 1.0}], "coding", "") == []  # no k-metrics: no figure
    assert tldr.report_figures is None


def test_coding_level_names_are_the_rewards():
    from magrpo_edu.tasks.coding.reward import LEVELS

    assert tuple(coding_views.CODING_LEVEL_MAX) == LEVELS


def test_rollout_explorer_walks_the_real_tree():
    ro = _tree()
    w = viz.rollout_explorer(ro)
    picture, pick, html = w.children
    assert "data:image/png;base64," in picture.value
    assert [label.split(" (")[0] for label, _ in pick.options] == ["0: root", "1: root > j=0", "2: root > j=1"]
    root_R = ro.root.returns.tolist()
    assert f"{root_R[0]:.2f}" in html.value and "1.00 + gamma x 1.25" in html.value  # R_0 = r_0 + gamma * mean(child R)
    assert f"{ro.root.advantages[0].item():+.2f}" in html.value
    pick.value = 2
    assert "feedback on j=1" in html.value and "e1" in html.value and "e0" not in html.value
    assert f"{ro.levels[1][1].advantages[1].item():+.2f}" in html.value
    with pytest.raises(ValueError, match="the tree has 3 nodes"):
        viz.rollout_html(ro, 3)


def test_measured_points_are_not_joined_and_cross_cells_are_drawn_as_selected():
    # Issue 61: two evaluations joined by a line read as a measured trend; a cross grid drawn in the colour of
    # unselected cells reads as empty.
    hist = [dict(step=k, reward=0.1 * k, **{"quality/repetition/a": 0.0}) for k in range(1, 6)]
    evals = [{"step": 0, "eval/reward": 0.2, "eval/naturalness/a": 1.0}, {"step": 5, "eval/reward": 0.6, "eval/naturalness/a": 2.0}]
    fig = viz.plot_quality(hist, evals)
    marked = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(marked) == 2 and all(ln.get_linestyle() == "None" for ln in marked)
    # one agent: its own reward, not a "joint" one; legends sit below the panels, off the data
    assert fig.axes[0].get_title() == "reward"
    assert all(ax.get_legend() is None or ax.get_legend().get_bbox_to_anchor().y0 < ax.get_window_extent().y0
               for ax in fig.axes)
    two = [dict(h, **{"quality/repetition/b": 0.0}) for h in hist]
    assert viz.plot_quality(two, evals).axes[0].get_title() == "joint reward"
    fig = viz.plot_joint_actions(G=3)
    aligned, cross = fig.axes[0].images[0], fig.axes[1].images[0]
    on = aligned.cmap(aligned.norm(1.0))
    assert all(tuple(cross.cmap(cross.norm(v))) == tuple(on) for v in cross.get_array().ravel())


def test_a_rate_is_compared_on_its_whole_range():
    """A share (cooperation_rate, load_bearing_rate) drawn from 0 to 1, so two near rates do not look far apart;
    a reward keeps matplotlib's own range."""
    rates = viz.plot_comparison([dict(method="a", cooperation_rate=0.91), dict(method="b", cooperation_rate=0.93)],
                                "cooperation_rate")
    assert rates.axes[0].get_ylim() == (0, 1.08) and "0-1" in rates.axes[0].get_ylabel()
    reward = viz.plot_comparison([dict(method="a", reward=2.0), dict(method="b", reward=3.5)], "reward")
    assert reward.axes[0].get_ylim()[1] > 3.5 and reward.axes[0].get_ylabel() == "reward"
