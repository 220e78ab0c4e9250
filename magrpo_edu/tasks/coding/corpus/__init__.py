"""The coding task's corpus: its documents in the embedded `tiny` model's mixed pretraining corpus, the texts the
`tiny-code` models were trained on after (`magrpo-edu pretrain-code`, `pretraining/code_model.py`), and one
experiment's wider training split made from the same problems.

    composed.py     coding problems composed from parts (an aggregation, an item kind, a test or transform) and the
                    made-up names they are renamed to (name_words.txt: the words those names are built from)
    pretraining.py  the coding documents of the tiny model's corpus (`pretraining.corpus.documents` mixes them in)
    documents.py    tiny-code's corpus: helper/main programs in the two agents' prompt formats (`code_documents`)
    second_turn.py  second-turn documents: a first attempt, the task's level feedback, a better answer
    rows.py         MAGRPO training rows made from the composed problems (`composed_coding_rows`)

The held-out families of `world.py` are never composed here (tests/test_coding_model.py runs every corpus program
on their asserts); nothing in a MAGRPO run imports this folder.
"""
