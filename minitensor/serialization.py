"""Saving and loading state dicts (filled in by the nn/optim work)."""


def save(obj, path):
    raise NotImplementedError("minitensor.save is not written yet")


def load(path):
    raise NotImplementedError("minitensor.load is not written yet")
