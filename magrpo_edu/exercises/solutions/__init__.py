"""Reference solutions and typical mistakes of the notebooks' exercises, one module per notebook
(`nbNN.py`: `SOLUTIONS = {"NN.name": answer}`, `MISTAKES = {"NN.name": [wrong answers]}`).
Read them after trying: the notebooks' checks say what is wrong without them."""
