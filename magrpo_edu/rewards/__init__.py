"""The joint rewards of the shipped tasks, by name: each lives in its task's folder
(`tasks/writing/reward.py`, `tasks/coding/reward.py`); this is where the notebooks import them from."""
from ..tasks.coding.reward import coding_joint_reward, coding_levels, coding_reward, single_agent_coding_reward
from ..tasks.writing.reward import (arxiv_joint_reward, arxiv_levels, arxiv_reward, coherence_T, jaccard,
                                    length_ratio_joint_reward, length_ratio_reward, tldr_joint_reward, tldr_levels,
                                    tldr_reward, transition_categories, unique_words, word_count)

__all__ = ["tldr_reward", "tldr_levels", "tldr_joint_reward", "arxiv_reward", "arxiv_levels",
           "arxiv_joint_reward", "length_ratio_reward", "length_ratio_joint_reward", "coherence_T",
           "jaccard", "transition_categories", "unique_words", "word_count", "coding_reward",
           "coding_levels", "coding_joint_reward", "single_agent_coding_reward"]
