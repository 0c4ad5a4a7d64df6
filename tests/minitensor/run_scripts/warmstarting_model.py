"""PyTorch's recipe "Warmstarting model using parameters from a different model": save netA's
state_dict, load it into netB (which has an extra layer) with load_state_dict(strict=False), and see
which keys were missing or unexpected; then renaming keys to load into a model with other names.

Every weight and input is made here from fixed numbers (the two libraries' generators differ)."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


class NetA(nn.Module):
    def __init__(self):
        super(NetA, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


netA = NetA()


class NetB(nn.Module):
    def __init__(self):
        super(NetB, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.fc4 = nn.Linear(10, 4)  # the extra layer netA lacks

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return self.fc4(x)


netB = NetB()
with torch.no_grad():
    for k, p in enumerate(netA.parameters()):
        p.copy_(0.1 * torch.sin(torch.arange(p.numel(), dtype=torch.float) * 0.37 + k).view(p.shape))

with tempfile.TemporaryDirectory() as d:
    # Specify a path to save to
    PATH = os.path.join(d, "model.pt")
    torch.save(netA.state_dict(), PATH)
    result = netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result)
print(result.missing_keys, result.unexpected_keys)
print(all(torch.equal(netB.state_dict()[k], v) for k, v in netA.state_dict().items()))

x = torch.cos(torch.arange(2 * 3 * 32 * 32, dtype=torch.float) * 0.01).view(2, 3, 32, 32)
print(torch.allclose(netB.fc3(F.relu(netB.fc2(F.relu(netB.fc1(
    netB.pool(F.relu(netB.conv2(netB.pool(F.relu(netB.conv1(x)))))).view(-1, 400)))))), netA(x)))
print(netA(x))

# strict=True refuses the mismatch
try:
    netB.load_state_dict(netA.state_dict())
except RuntimeError as e:
    print("RuntimeError:", e)


# loading into a model whose layers have other names: rename the keys
class NetC(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2))


netC = NetC()
state = {k.replace("conv1", "features.0"): v for k, v in netA.state_dict().items() if k.startswith("conv1")}
print(netC.load_state_dict(state))
print(torch.equal(netC.features[0].weight, netA.conv1.weight))
# a shape mismatch is an error even with strict=False
try:
    netC.load_state_dict({"features.0.weight": netA.conv2.weight}, strict=False)
except RuntimeError as e:
    print("RuntimeError:", e)
