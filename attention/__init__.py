"""attention: self-attention and multi-head attention built only from minitensor's public API."""
