"""LeNet in the manner of the "Neural Networks" tutorial, written for PyTorch: Conv2d, max pooling with
a tuple and with an int window, torch.flatten(x, 1), print(net), list(net.parameters()), a backward with
a given upstream gradient, net.zero_grad(), MSELoss, the grad_fn chain, a manual SGD update, optim.SGD.

Weights, input and target are set here (from sines of aranges), so both libraries start from the same
numbers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


def wave(*shape, scale=1.0, phase=0.0):
    """A deterministic stand-in for torch.randn: sines of a running index."""
    n = 1
    for s in shape:
        n *= s
    return scale * torch.sin(torch.arange(n, dtype=torch.float32) * 1.618 + phase).reshape(shape)


net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight
with torch.no_grad():
    for i, p in enumerate(params):
        p.copy_(wave(*p.shape, scale=1.0 / p[0].numel() ** 0.5, phase=i))

input = wave(1, 1, 32, 32, phase=0.5)
out = net(input)
print(out)

net.zero_grad()
out.backward(wave(1, 10, scale=0.1, phase=2.0))
print(net.conv1.bias.grad)

output = net(input)
target = wave(10, phase=3.0)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)
# the tutorial follows loss backwards through a few nodes (addresses cut: they differ run to run)
print(repr(loss.grad_fn).split(" object")[0])  # MSELoss
print(repr(loss.grad_fn.next_functions[0][0]).split(" object")[0])  # Linear
print(repr(loss.grad_fn.next_functions[0][0].next_functions[0][0]).split(" object")[0])  # its bias

net.zero_grad()  # zeroes the gradient buffers of all parameters
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print("after a manual step:", round(criterion(net(input), target).item(), 6))

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    # in your training loop:
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # Does the update
    print(f"step {step}: loss {loss.item():.6f}")
