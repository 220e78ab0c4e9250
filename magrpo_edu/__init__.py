"""magrpo_edu: learn and run MAGRPO (Multi-Agent Group Relative Policy Optimization).

Liu, Liang, Lyu, Amato, "LLM Collaboration With Multi-Agent Reinforcement Learning",
arXiv 2508.04652 (AAAI 2026). Start with `magrpo_edu.algorithm` (the paper's steps) and the
notebooks; `magrpo-edu train` runs the main job, and so does Python:

    from magrpo_edu import run_training
    results = run_training(task="tldr", max_steps=300, out="runs/tldr")   # any registered task
"""
from ._version import __version__

import warnings

# peft (0.21) calls transformers' deprecated `is_gradient_checkpointing` when a LoRA model is built; the
# FutureWarning says nothing about the user's code and filled every notebook's output. Only that one.
warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)

from .agents import (Agent, checkpoint_activations, heterogeneous_agents, leash_to_adapters, load_lora_agents,  # noqa: E402
                     lora_agents, separate_agents)
from .algorithm import (RewardFunctionError, group_advantages, joint_actions, magrpo_step,  # noqa: E402
                        policy_loss)
from .config import MAGRPOConfig  # noqa: E402
from .quality import mean_repetition, naturalness, repetition  # noqa: E402
from .run.experiment import run_eval, run_training  # noqa: E402
from .run.plan import config_for  # noqa: E402
from .trainer import MAGRPOTrainer, TrainerCallback  # noqa: E402

__all__ = ["__version__", "Agent", "lora_agents", "load_lora_agents", "leash_to_adapters", "separate_agents", "heterogeneous_agents",
           "checkpoint_activations", "MAGRPOConfig",
           "MAGRPOTrainer", "TrainerCallback", "group_advantages", "joint_actions", "magrpo_step",
           "policy_loss", "RewardFunctionError", "repetition", "mean_repetition", "naturalness", "run_training",
           "run_eval", "config_for"]
