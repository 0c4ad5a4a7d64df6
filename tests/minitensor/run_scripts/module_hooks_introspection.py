"""Module hooks and introspection in the manner of the "Modules" note of the PyTorch documentation and the
feature-extraction recipes built on it, written for PyTorch: activations captured into a dict by
register_forward_hook (`activation[name] = output.detach()`), a register_forward_pre_hook that rewrites the
input, register_full_backward_hook printing grad_input/grad_output shapes, a Tensor.register_hook that
scales a gradient, handle.remove(), named_modules(), named_children(), named_buffers(), get_submodule,
`model.apply(init_weights)` under @torch.no_grad() switching on `type(m) == nn.Linear`, an extra_repr,
register_buffer(..., persistent=False) absent from state_dict(), load_state_dict(strict=False) and its
missing_keys / unexpected_keys, nn.ModuleDict and nn.ParameterList, parameters_to_vector /
vector_to_parameters, and zero_grad(set_to_none=True).

Every weight is set here from fixed numbers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
        self.register_buffer('calls', torch.zeros((), dtype=torch.long))
        self.register_buffer('last_mean', torch.zeros(()), persistent=False)

    def forward(self, x):
        self.calls += 1
        self.last_mean = x.mean().detach()
        return x * self.factor

    def extra_repr(self):
        return f'factor={self.factor}'


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), Scale(0.5))
        self.heads = nn.ModuleDict({'cls': nn.Linear(5, 3), 'reg': nn.Linear(5, 1)})
        self.gates = nn.ParameterList([nn.Parameter(torch.ones(3)), nn.Parameter(torch.full((1,), 2.0))])

    def forward(self, x):
        h = self.block(x)
        return self.heads['cls'](h) * self.gates[0], self.heads['reg'](h) * self.gates[1]


@torch.no_grad()
def init_weights(m):
    if type(m) == nn.Linear:  # noqa: E721 (the documentation's own test)
        m.weight.copy_(torch.sin(torch.arange(m.weight.numel(), dtype=torch.float) * 0.9).view(m.weight.shape))
        m.bias.fill_(0.01)
        print('initialised', m)


net = Net()
net.apply(init_weights)
print(net)
print([name for name, _ in net.named_modules()])
print([(name, type(m).__name__) for name, m in net.named_children()])
print(list(dict(net.named_buffers())), list(net.state_dict()))
print(net.get_submodule('block.2'), net.get_submodule('heads.cls').out_features)

activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()
    return hook


def double_input(module, args):
    return (args[0] * 2,)


grads = []


def backward_hook(module, grad_input, grad_output):
    grads.append((type(module).__name__, [None if g is None else tuple(g.shape) for g in grad_input],
                  [tuple(g.shape) for g in grad_output], grad_output[0].sum().item()))


h1 = net.block[0].register_forward_hook(get_activation('fc1'))
h2 = net.block.register_forward_hook(get_activation('block'))
h3 = net.heads['cls'].register_forward_pre_hook(double_input)
h4 = net.heads['cls'].register_full_backward_hook(backward_hook)
x = torch.linspace(-1, 1, 8).view(2, 4).requires_grad_()
x.register_hook(lambda grad: grad * 10)
cls, reg = net(x)
print(sorted(activation), activation['fc1'], activation['block'].requires_grad)
(cls.sum() + reg.sum()).backward()
print(grads)
print(x.grad)
print(net.block[2].calls, net.block[2].last_mean)

for h in (h1, h2, h3, h4):
    h.remove()
activation.clear()
net.zero_grad(set_to_none=True)
print(net.heads['cls'].weight.grad, x.grad is None)
cls2, reg2 = net(x)
print(activation, grads[-1][0], len(grads), cls2)

# checkpoints with a different set of names
state = net.state_dict()
print(type(state).__name__, [k for k in state if 'calls' in k or 'last_mean' in k])
state['extra.weight'] = torch.zeros(1)
del state['heads.reg.bias']
net2 = Net()
result = net2.load_state_dict(state, strict=False)
print(result.missing_keys, result.unexpected_keys)
print(result)
print(torch.equal(net2.block[0].weight, net.block[0].weight), net2.block[2].calls)
try:
    Net().load_state_dict(state)
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])

vec = parameters_to_vector(net.parameters())
print(vec.shape, vec.sum())
vector_to_parameters(vec * 0 + 0.1, net2.parameters())
print(net2.heads['reg'].weight, F.relu(net2.block[0].bias).sum())
print(sum(p.numel() for p in net.parameters()), sum(1 for _ in net.modules()), net.training,
      net.eval().block[2].training)
