"""`minitensor.amp`: automatic mixed precision's entry point, as a stand-in (see `autocast`)."""
from ._runtime import autocast

__all__ = ["autocast"]
