"""The "Hooks for autograd saved tensors" tutorial's examples, in this script's own words: what a node saves
(grad_fn._saved_*), a hook pair on one saved tensor, saved_tensors_hooks around a region, save_on_cpu,
saving to disk through temporary files, and hooks set by a module's own forward."""
import os
import tempfile
import uuid

import torch
import torch.nn as nn

torch.manual_seed(0)

# 1. what a node keeps: an input itself, or a copy of its output
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print("pow keeps its input:", x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self,
      y.grad_fn._saved_exponent)
y = x.exp()
print("exp keeps its result:", y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result)
print("saved result's node is y's:", y.grad_fn._saved_result.grad_fn is y.grad_fn)
a, b = torch.randn(3, requires_grad=True), torch.randn(3)
print("mul with a constant keeps only:", (a * b).grad_fn._saved_self, (a * b).grad_fn._saved_other is b)

y = x.pow(2)
y.sum().backward()
try:
    y.grad_fn._saved_self
except RuntimeError as e:
    print("after backward:", str(e)[:70])

# 2. a hook pair on one saved tensor
calls = []


def pack_once(t):
    calls.append(("pack", tuple(t.shape)))
    return t


def unpack_once(t):
    calls.append(("unpack", tuple(t.shape)))
    return t


x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_once, unpack_once)
print("read:", y.grad_fn._saved_self.equal(x))
y.sum().backward()
print("one tensor's hooks:", calls)
try:
    y.grad_fn._raw_saved_self.register_hooks(pack_once, unpack_once)
except RuntimeError as e:
    print("again after backward:", str(e)[:60])

# 3. hooks for every tensor saved in a region
counts = {"pack": 0, "unpack": 0}


def pack_count(t):
    counts["pack"] += 1
    print("  packing", tuple(t.shape))
    return t


def unpack_count(t):
    counts["unpack"] += 1
    print("  unpacking", tuple(t.shape))
    return t


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_count, unpack_count):
    y = a * b
y.sum().backward()
print("a * b:", counts)

counts.update(pack=0, unpack=0)
x = torch.linspace(-1, 1, 12).reshape(4, 3).requires_grad_()
with torch.autograd.graph.saved_tensors_hooks(pack_count, unpack_count):
    h = torch.tanh(x @ torch.linspace(0.5, -0.5, 6).reshape(3, 2)).sigmoid()
    loss = (h * 2.0 + x.sum(1, keepdim=True).exp()).sum()
loss.backward()
print("small graph:", counts, "grad", round(x.grad.sum().item(), 4))

# pack and unpack may change what is kept, as long as unpack gives back the value
x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
    y = torch.pow(x, 2)
y.sum().backward()
print("scaled hooks give the same gradient:", torch.allclose(x.grad, 2 * x))

# 4. save_on_cpu
x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    y = (x.sin() * x.cos()).sum()
y.backward()
print("save_on_cpu:", torch.allclose(x.grad, torch.cos(2 * x)))

# 5. saving to disk: each packed tensor becomes a temporary file
tmp_dir = tempfile.mkdtemp()
written = []


class TempFile:
    def __init__(self, directory):
        self.name = os.path.join(directory, str(uuid.uuid4()))

    def __del__(self):
        if os.path.exists(self.name):
            os.remove(self.name)


def pack_to_disk(t):
    f = TempFile(tmp_dir)
    torch.save(t, f.name)
    written.append(tuple(t.shape))
    return f


def unpack_from_disk(f):
    return torch.load(f.name)


x = torch.randn(6, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_to_disk, unpack_from_disk):
    y = x.pow(2).exp()
y.sum().backward()
print("on disk:", written, torch.allclose(x.grad, 2 * x * torch.exp(x ** 2)))
del y

# only large tensors go to disk
THRESHOLD = 10


def pack_large(t):
    return pack_to_disk(t) if t.numel() >= THRESHOLD else t


def unpack_large(kept):
    return unpack_from_disk(kept) if isinstance(kept, TempFile) else kept


written.clear()
x = torch.randn(4, 4, requires_grad=True)
v = torch.randn(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_large, unpack_large):
    out = x.sin().sum() + v.sin().sum()
out.backward()
print("large only:", written)


# 6. a module that sets the hooks in its own forward
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, inp):
        with torch.autograd.graph.saved_tensors_hooks(pack_large, unpack_large):
            return self.fc2(torch.relu(self.fc1(inp)))


written.clear()
model = Model()
with torch.no_grad():  # (fixed weights: the two libraries draw different random numbers)
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
inp = torch.linspace(-2, 2, 32).reshape(4, 8)
model(inp).pow(2).sum().backward()
print("module forward saved on disk:", written)
print("fc1 grad:", round(model.fc1.weight.grad.abs().sum().item(), 4))
print("left on disk:", len(os.listdir(tmp_dir)))
