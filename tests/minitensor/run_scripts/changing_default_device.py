"""PyTorch's recipe "Changing default device": torch.set_default_device and get_default_device, a
torch.device as a context manager, factory functions and modules made under
them, an explicit device= winning, and torch.set_default_dtype alongside (the CPU is the only device
here, as on a machine without CUDA)."""
import torch

torch.manual_seed(0)
print(torch.get_default_device())
torch.set_default_device('cpu')
print(torch.get_default_device())
mod = torch.nn.Linear(20, 30)
print(mod.weight.device)
print(mod(torch.ones(128, 20)).device)

# the context manager
with torch.device('cpu'):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device, torch.get_default_device())
    print(torch.zeros(2, 3).device, torch.arange(3).device, torch.empty(1).device)
print(mod(torch.ones(128, 20)).shape)

dev = torch.device('cpu')
with dev as d:
    t = torch.tensor([1.0, 2.0])
print(t.device, d, dev.type, dev.index)
with torch.device('cuda' if torch.cuda.is_available() else 'cpu'):
    print(torch.ones(1).device)

# an explicit device wins over the default
print(torch.zeros(2, device='cpu').device)

# the default dtype, often changed next to the device
torch.set_default_dtype(torch.float64)
print(torch.tensor([1.5]).dtype, torch.nn.Linear(2, 2).weight.dtype, torch.get_default_dtype())
torch.set_default_dtype(torch.float32)
print(torch.zeros(1).dtype)
torch.set_default_device(None)
print(torch.get_default_device())
