"""How the embedded tiny models were made, apart from the algorithm (`magrpo-edu pretrain`, `pretrain-code`).

    corpus.py      the tiny model's synthetic pretraining corpus: posts, abstracts and coding documents from the
                   tasks' worlds (`tasks/writing/world.py`, `tasks/coding/world.py`, composed coding problems
                   from `tasks/coding/corpus/composed.py`), seeded
    pretrain.py    BPE tokenizer, a small Llama, packed next-token training; writes the model card's facts
    code_model.py  `magrpo-edu pretrain-code`: `tiny` trained further on the coding task's own corpus
                   (`tasks/coding/corpus/`: helper/main programs and second-turn documents) into weights/tiny-code/

Nothing in MAGRPO itself imports this subpackage; the models it made ship in `weights/tiny/`,
`weights/tiny-code/` and `weights/tiny-code-2turn/`.
"""
