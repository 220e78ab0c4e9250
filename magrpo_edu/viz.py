"""The notebooks' one name for the figures (`run/figures.py`) and the explorers (`run/explorers.py`):
`from magrpo_edu import viz; viz.plot_rewards(trainer.history)`."""
from .run.explorers import (CODING_LEVEL_MAX, before_after_explorer, before_after_report, coding_explorer,
                            coding_html, coding_sample, group_chart, group_explorer, group_html,
                            rollout_explorer, rollout_html, texts_report, tree_nodes)  # noqa: F401
from .run.figures import (FIGSIZE, LiveRewardPlot, plot_agents, plot_comparison, plot_components, plot_group,
                          plot_joint_actions, plot_pass_at_k, plot_quality, plot_rewards, plot_rollout_tree,
                          plot_runs, smooth)  # noqa: F401
