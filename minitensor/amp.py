"""`minitensor.amp`: automatic mixed precision's entry point, as a stand-in (see `autocast`), and the loss
scaler `GradScaler` (see minitensor/_namespace.py)."""
from ._namespace import GradScaler
from ._runtime import autocast

__all__ = ["GradScaler", "autocast"]
