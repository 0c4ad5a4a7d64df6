"""Pruning in the manner of the "Pruning Tutorial" of the PyTorch tutorials, written for PyTorch: the LeNet,
`import torch.nn.utils.prune as prune`, random_unstructured and l1_unstructured on conv1, the weight_orig
parameter, weight_mask buffer and the forward pre-hook they leave, iterative pruning with ln_structured (a
PruningContainer), the state_dict keys, prune.remove, pruning every Conv2d / Linear of a model, global pruning
with L1Unstructured and the sparsity it gives, and a custom method (FooBarPruningMethod) with its function.

Every weight is set from arange / linspace (with equal magnitudes on purpose: PyTorch's choice among ties is
part of what is printed); the random pruning prints only what does not depend on the draws.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

torch.manual_seed(0)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def fixed_lenet():
    model = LeNet()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            # a few distinct magnitudes per tensor, each shared by many entries
            p.copy_(((torch.arange(n) * (7 + i)) % 23 - 11).reshape(p.shape) / (11.0 * (i + 1)))
    return model


def sparsity(t):
    return 100. * float(torch.sum(t == 0)) / float(t.nelement())


def hook_names(module):
    return [type(h).__name__ for h in module._forward_pre_hooks.values()]


model = fixed_lenet()
x = torch.linspace(-1, 1, 2 * 32 * 32).reshape(2, 1, 32, 32)
module = model.conv1
print([name for name, _ in module.named_parameters()])
print(list(module.named_buffers()))

# prune 30% of conv1's weights at random: a mask of the same shape, the parameter moved to weight_orig
prune.random_unstructured(module, name="weight", amount=0.3)
print([name for name, _ in module.named_parameters()])
print([name for name, _ in module.named_buffers()], module.weight_mask.sum())
print(type(module.weight).__name__, isinstance(module.weight, nn.Parameter), hook_names(module))
print(torch.equal(module.weight, module.weight_orig * module.weight_mask))

# the 3 smallest biases by magnitude (several biases share the smallest one)
prune.l1_unstructured(module, name="bias", amount=3)
print([name for name, _ in module.named_buffers()])
print(module.bias_mask)
print(module.bias)
print(hook_names(module))

# iterative pruning: half of the channels along dim 0 by their L2 norm, on top of an L1 mask
model2 = fixed_lenet()
conv = model2.conv1
prune.l1_unstructured(conv, name="weight", amount=0.3)
prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
print(conv.weight_mask.sum(dim=(1, 2, 3)))
for hook in conv._forward_pre_hooks.values():
    if hook._tensor_name == "weight":  # select out the correct hook
        break
print(type(hook).__name__, [type(method).__name__ for method in hook])
print(list(model2.state_dict().keys()))

out = model2(x)
out.sum().backward()
print(out.detach().sum(), conv.weight_orig.grad.abs().sum(), (conv.weight_orig.grad[conv.weight_mask == 0] == 0).all())

# make it permanent
prune.remove(conv, "weight")
print([name for name, _ in conv.named_parameters()], [name for name, _ in conv.named_buffers()])
print(sparsity(conv.weight), hook_names(conv), prune.is_pruned(model2))

# pruning many parameters: every Conv2d by 20%, every Linear by 40%
new_model = fixed_lenet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
print(dict(new_model.named_buffers()).keys())
print([int(b.sum()) for b in new_model.buffers()], prune.is_pruned(new_model))

# global pruning: the 20% smallest weights over the whole model, not 20% of each layer
model = fixed_lenet()
parameters_to_prune = (
    (model.conv1, "weight"),
    (model.conv2, "weight"),
    (model.fc1, "weight"),
    (model.fc2, "weight"),
    (model.fc3, "weight"),
)
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
    print("Sparsity in {}.weight: {:.2f}%".format(name, sparsity(getattr(model, name).weight)))
total = sum(float(torch.sum(getattr(model, n).weight == 0)) for n in ("conv1", "conv2", "fc1", "fc2", "fc3"))
count = sum(float(getattr(model, n).weight.nelement()) for n in ("conv1", "conv2", "fc1", "fc2", "fc3"))
print("Global sparsity: {:.2f}%".format(100. * total / count))
print(model(x).detach().sum())


# a pruning method of one's own: every other entry of the (unpruned part of the) tensor
class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor
    """
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = fixed_lenet()
foobar_unstructured(model.fc3, name='bias')
print(model.fc3.bias_mask)
foobar_unstructured(model.fc3, name='bias')
print(model.fc3.bias_mask, hook_names(model.fc3))
