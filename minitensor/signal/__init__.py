"""`torch.signal`: signal processing. It holds one namespace, `windows` (the window functions)."""
from . import windows

__all__ = ["windows"]
