"""Mistakes a type checker must report against minitensor's types (never run). Each line marked
`# E: <text>` must get an error whose message contains <text>, and no other line may get one:
tests/typing/test_typecheck.py runs mypy on this file, so the check itself can be seen to fail."""
import attention
import minitensor
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import Tensor, optim

x = minitensor.randn(2, 3)
x.sum().nonexistent  # E: "Tensor" has no attribute "nonexistent"
x.sofmax(-1)  # E: "Tensor" has no attribute "sofmax"
nn.Linear("a", 2)  # E: Argument 1 to "Linear" has incompatible type "str"
x.view("2", -1)  # E: Argument 1 to "view" of "Tensor" has incompatible type "str"
x.sum(dim=1.5)  # E: Argument "dim" to "sum" of "Tensor" has incompatible type "float"
n: str = x.item()  # E: Incompatible types in assignment
rows: str = x.shape[0]  # E: Incompatible types in assignment
nn.Linear(3, 2)(x, x)  # E: Too many arguments
F.linear(x)  # E: Missing positional argument "weight"
optim.AdamW(model=None)  # E: Unexpected keyword argument "model"
attention.MultiHeadAttention(d_model=6, num_heads="two")  # E: Argument "num_heads" to "MultiHeadAttention" has incompatible type "str"
minitensor.zeros(2, 3, dtype=minitensor.float32).backward(retain_graph="yes")  # E: Argument "retain_graph" to "backward" of "Tensor"
y: Tensor = x.max(dim=0)  # E: Incompatible types in assignment
x.T()  # E: "Tensor" not callable
