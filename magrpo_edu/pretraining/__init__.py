"""How the embedded tiny model was made, apart from the algorithm (`magrpo-edu pretrain`).

    corpus.py     the synthetic pretraining corpus: posts, abstracts and coding documents from the
                  package's world (`magrpo_edu.tasks.world`, `tasks.coding_world`), seeded
    composed.py   coding problems composed from parts, and neutral names, drawn only by the corpus
    pretrain.py   BPE tokenizer, a small Llama, packed next-token training; writes the model card's facts

Nothing in MAGRPO itself imports this subpackage; the model it made ships in `magrpo_edu/models/tiny/`.
"""
