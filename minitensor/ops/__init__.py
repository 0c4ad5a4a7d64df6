"""Every op, grouped by kind; `table.py` lists them and gives `Tensor` its methods."""
from . import table

table.attach()
