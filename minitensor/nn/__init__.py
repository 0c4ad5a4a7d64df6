"""Neural-network building blocks (modules are added by the nn/optim work)."""
from . import functional  # noqa: F401
