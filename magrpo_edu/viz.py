"""The notebooks' one name for the figures (`run/figures.py`) and the explorers (`run/explorers.py`):
`from magrpo_edu import viz; viz.plot_rewards(trainer.history)`. A task's own figures and explorer live in its folder
(coding: tasks/coding/explorer.py, figures.py) and are reached through its `Task` (`viz.task_explorer(samples, task)`)
or imported from there."""
from .display import FIGSIZE  # noqa: F401
from .run.explorers import (before_after_explorer, before_after_report, group_chart, group_explorer, group_html,
                            rollout_explorer, rollout_html, task_explorer, texts_report, tree_nodes)  # noqa: F401
from .run.figures import (LiveRewardPlot, plot_agents, plot_comparison, plot_components, plot_group,
                          plot_joint_actions, plot_quality, plot_rewards, plot_rollout_tree, plot_runs,
                          smooth)  # noqa: F401
