"""PyTorch's "Model ensembling" tutorial (torch.func): the same MLP class, several models, each run on
its own minibatch or all on one; torch.func.stack_module_state, a deep copy of one model as the base
for functional_call, and vmap over the stacked parameters (in_dims=(0, 0, None) for a shared
minibatch), checked against the loop; then training the stacked parameters with an optimizer.

Every weight and input is made here from fixed numbers (the two libraries' generators differ)."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import vmap
from torch.func import functional_call, stack_module_state

torch.manual_seed(0)
device = "cpu"


class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 12)
        self.fc2 = nn.Linear(12, 12)
        self.fc3 = nn.Linear(12, 3)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


num_models = 4
data = torch.sin(torch.arange(8 * 5 * 16, dtype=torch.float) * 0.29).view(8, 5, 1, 4, 4)
targets = torch.arange(40) % 3

models = [SimpleMLP().to(device) for _ in range(num_models)]
with torch.no_grad():
    for m, model in enumerate(models):
        for k, p in enumerate(model.parameters()):
            p.copy_(0.35 * torch.cos(torch.arange(p.numel(), dtype=torch.float) * (0.7 + 0.1 * m) + k).view(p.shape))

# option 1: a different minibatch for each model
minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
# option 2: the same minibatch
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()}, buffers)
print(params["fc1.weight"].requires_grad, params["fc1.weight"].is_leaf)

# the base model's tensors are never used: functional_call swaps the stacked ones in
# (the tutorial moves it to 'meta' first, a device minitensor lacks)
base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)
print(predictions1_vmap.shape)
print(predictions1_vmap.sum(dim=(1, 2)))

predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
print(predictions2_vmap[:, 0])

# the stacked parameters are leaves: train the whole ensemble at once
optimizer = torch.optim.SGD(params.values(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    out = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    loss = sum(F.cross_entropy(o, targets[:5]) for o in out)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 5))
