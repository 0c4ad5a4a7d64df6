"""Optimizers (see issue: minitensor.nn, optim)."""
