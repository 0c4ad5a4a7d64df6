"""The shape of PyTorch's scaled-dot-product-attention tutorial, on the CPU and small: time SDPA with
torch.utils.benchmark under each kernel choice, build a causal self-attention block on it, compile it,
and profile both with torch.profiler. Times differ from run to run; the text around them does not."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.benchmark as benchmark
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)


def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
    t0 = benchmark.Timer(stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f})
    return t0.blocked_autorange(min_run_time=0.05).mean * 1e6


batch_size, max_sequence_len, num_heads, embed_dimension = 2, 16, 2, 8
dtype = torch.float32
query = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)
key = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)
value = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)

print(f"The default implementation runs in {benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value):.3f} microseconds")  # noqa: E501

with sdpa_kernel(SDPBackend.MATH):
    math_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
    print(f"The math implementation runs in {math_time:.3f} microseconds")

with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    try:
        flash_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
        print(f"The flash attention implementation runs in {flash_time:.3f} microseconds")
    except RuntimeError:
        print("FlashAttention is not supported. See warnings for reasons.")

with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    try:
        efficient_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
        print(f"The memory efficient implementation runs in {efficient_time:.3f} microseconds")
    except RuntimeError:
        print("EfficientAttention is not supported. See warnings for reasons.")


class CausalSelfAttention(nn.Module):
    def __init__(self, num_heads: int, embed_dimension: int, bias: bool = False, is_causal: bool = False,
                 dropout: float = 0.0):
        super().__init__()
        assert embed_dimension % num_heads == 0
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        self.is_causal = is_causal

    def forward(self, x):
        query_projected = self.c_attn(x)
        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)
        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        dropout = self.dropout if self.training else 0.0
        is_causal = self.is_causal
        y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout, is_causal=is_causal)
        y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)
        y = self.resid_dropout(self.c_proj(y))
        return y


model = CausalSelfAttention(num_heads=4, embed_dimension=16, bias=False, is_causal=True, dropout=0.1).to(device)
model.eval()
print(model)

x = torch.rand(batch_size, max_sequence_len, 16, device=device, dtype=dtype)
print(f"The non compiled module runs in  {benchmark_torch_function_in_microseconds(model, x):.3f} microseconds")

compiled_model = torch.compile(model)
compiled_model(x)  # the first call compiles (or records)
print(f"The compiled module runs in  {benchmark_torch_function_in_microseconds(compiled_model, x):.3f} microseconds")
print("same outputs:", torch.allclose(model(x), compiled_model(x)))

activities = [ProfilerActivity.CPU]
if device == "cuda":
    activities.append(ProfilerActivity.CUDA)

with profile(activities=activities, record_shapes=False) as prof:
    with record_function(" Non-Compilied Causal Attention"):
        for _ in range(5):
            model(x)
table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=10)
print(table.splitlines()[1].split())  # the table's column names
print(" Non-Compilied Causal Attention" in table, table.splitlines()[-1].split(":")[0])

with profile(activities=activities, record_shapes=False) as prof:
    with record_function("Compiled Causal Attention"):
        for _ in range(5):
            compiled_model(x)
print("Compiled Causal Attention" in prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
out = sys.argv[1] if len(sys.argv) > 1 else "."
prof.export_chrome_trace(os.path.join(out, "compiled_causal_attention_trace.json"))
print("trace written:", os.path.exists(os.path.join(out, "compiled_causal_attention_trace.json")))

# causal masks for queries and keys of different lengths (the tutorial's last CPU section)
from torch.nn.attention.bias import causal_lower_right, causal_upper_left  # noqa: E402

sequence_length_q, sequence_length_kv = 2, 10
query = torch.rand(batch_size, num_heads, sequence_length_q, embed_dimension, device=device, dtype=dtype)
key = torch.rand(batch_size, num_heads, sequence_length_kv, embed_dimension, device=device, dtype=dtype)
value = torch.rand(batch_size, num_heads, sequence_length_kv, embed_dimension, device=device, dtype=dtype)
upper_left_bias = causal_upper_left(sequence_length_q, sequence_length_kv)
lower_right_bias = causal_lower_right(sequence_length_q, sequence_length_kv)
print(type(upper_left_bias).__name__, upper_left_bias.variant, lower_right_bias.variant)
print(lower_right_bias)
out_upper_left = F.scaled_dot_product_attention(query, key, value, upper_left_bias)
out_lower_right = F.scaled_dot_product_attention(query, key, value, lower_right_bias)
out_is_causal = F.scaled_dot_product_attention(query, key, value, is_causal=True)
assert torch.allclose(out_upper_left, out_is_causal)
assert not torch.allclose(out_upper_left, out_lower_right)
print("upper left is is_causal; lower right differs")
