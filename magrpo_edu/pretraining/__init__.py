"""How the embedded tiny models were made, apart from the algorithm (`magrpo-edu pretrain`, `pretrain-code`).

    corpus.py      the tiny model's synthetic pretraining corpus, seeded: the mix of the tasks' own documents
                   (`tasks/writing/corpus.py`: posts, abstracts, summaries; `tasks/coding/corpus/pretraining.py`:
                   helper/main programs, tested code, call chains)
    pretrain.py    BPE tokenizer, a small Llama, packed next-token training; writes the model card's facts
    code_model.py  `magrpo-edu pretrain-code`: `tiny` trained further on the coding task's own corpus
                   (`tasks/coding/corpus/`: helper/main programs and second-turn documents) into weights/tiny-code/

Nothing in MAGRPO itself imports this subpackage; the models it made ship in `weights/tiny/`,
`weights/tiny-code/` and `weights/tiny-code-2turn/`.
"""
