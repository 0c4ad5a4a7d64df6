"""PyTorch's "Per-sample-gradients" tutorial (torch.func), on a small CNN: the per-sample loop of
backward calls, then torch.func.functional_call with the detached parameters and buffers,
grad(compute_loss) and vmap over the batch with in_dims=(None, None, 0, 0); both agree.

Every weight and input is made here from fixed numbers (the two libraries' generators differ)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
device = "cpu"


class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(72, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


batch_size = 6
data = torch.sin(torch.arange(batch_size * 10 * 10, dtype=torch.float) * 0.37).view(batch_size, 1, 10, 10)
targets = torch.tensor([3, 7, 0, 9, 1, 3], device=device)

model = SimpleCNN().to(device=device)
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float) * 0.91 + k).view(p.shape))


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)

    prediction = model(sample)
    loss = loss_fn(prediction, target)

    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """ manually process each sample with per sample gradient """
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[1].shape)  # conv1's bias: one gradient per sample
print(per_sample_grads[1])

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)

    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
for name, g in ft_per_sample_grads.items():
    print(name, tuple(g.shape), [round(v, 5) for v in (g.flatten(1) @ torch.linspace(-1, 1, g[0].numel())).tolist()])

# the batch's mean gradient is the mean of the per-sample ones
model.zero_grad()
loss_fn(model(data), targets).backward()
print(all(torch.allclose(p.grad, ft_per_sample_grads[n].mean(0), atol=1e-6) for n, p in model.named_parameters()))
print(ft_per_sample_grads["fc2.bias"].sum(dim=1).abs().max() < 1e-6)
