"""How the embedded tiny model was made, apart from the algorithm (`magrpo-edu pretrain`).

    corpus.py     the synthetic pretraining corpus: posts, abstracts and coding documents from the
                  tasks' worlds (`tasks/writing/world.py`, `tasks/coding/world.py`), seeded
    composed.py   coding problems composed from parts, and neutral names, drawn only by the corpus
    pretrain.py   BPE tokenizer, a small Llama, packed next-token training; writes the model card's facts
    code_corpus.py   the coding corpus of `tiny-code`: helper/main programs in the two agents' prompt formats
    code_model.py    `magrpo-edu pretrain-code`: `tiny` trained further on that corpus (weights/tiny-code/)
    coding_rows.py   MAGRPO training rows made from that corpus's composed problems (one experiment's wider split)

Nothing in MAGRPO itself imports this subpackage; the models it made ship in
`weights/tiny/` and `weights/tiny-code/`.
"""
