"""Reference solutions and typical mistakes of the notebooks' exercises, one module per notebook
(`nbNN.py`: `SOLUTIONS = {"NN.name": answer}`, `MISTAKES = {"NN.name": [wrong answers]}`).
Read them after trying: the notebooks' checks say what is wrong without them."""


def written_again(fn):
    """`fn`'s rule as a learner's own function would carry it: the same code under another code object, so that a
    VARIANT built on it (a numpy return value, a sorted copy, ...) is not refused as a call into the reference
    solution, which `check` refuses in a learner's answer."""
    import types

    return types.FunctionType(fn.__code__.replace(co_name=fn.__code__.co_name + "_written_again"), fn.__globals__,
                              fn.__name__ + "_written_again", fn.__defaults__, fn.__closure__)
