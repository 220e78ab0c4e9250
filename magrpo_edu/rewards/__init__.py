"""Joint rewards: the paper's writing rewards and its coding reward, as the authors' code computes them."""
from .coding import coding_joint_reward, coding_levels, coding_reward, single_agent_coding_reward
from .writing import (arxiv_joint_reward, arxiv_levels, arxiv_reward, coherence_T, jaccard,
                      length_ratio_joint_reward, length_ratio_reward, tldr_joint_reward, tldr_levels,
                      tldr_reward, transition_categories, unique_words, word_count)

__all__ = ["tldr_reward", "tldr_levels", "tldr_joint_reward", "arxiv_reward", "arxiv_levels",
           "arxiv_joint_reward", "length_ratio_reward", "length_ratio_joint_reward", "coherence_T",
           "jaccard", "transition_categories", "unique_words", "word_count", "coding_reward",
           "coding_levels", "coding_joint_reward", "single_agent_coding_reward"]
