"""PyTorch's recipe "Zeroing out gradients in PyTorch": the CIFAR-style Net trained with SGD and
momentum, optimizer.zero_grad() before each backward; what happens without it (gradients accumulate),
zero_grad(set_to_none=False) against the default None, and model.zero_grad().

Every weight and input is made here from fixed numbers (the two libraries' generators differ)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.fc1 = nn.Linear(6 * 1 * 1, 12)
        self.fc2 = nn.Linear(12, 8)
        self.fc3 = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 6 * 1 * 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def make_net():
    net = Net()
    with torch.no_grad():
        for k, p in enumerate(net.parameters()):
            p.copy_(0.5 * torch.sin(torch.arange(p.numel(), dtype=torch.float) * 0.83 + k).view(p.shape))
    return net


# a tiny "trainloader": (inputs, labels) batches
images = torch.cos(torch.arange(4 * 4 * 3 * 10 * 10, dtype=torch.float) * 0.061).view(4, 4, 3, 10, 10)
trainloader = [(images[i], torch.tensor([i, (i + 3) % 10, (2 * i) % 10, 9 - i])) for i in range(4)]

net = make_net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(2):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 2 == 1:
            print('[%d, %5d] loss: %.5f' % (epoch + 1, i + 1, running_loss / 2))
            running_loss = 0.0

print('Finished Training')

# without zero_grad, the second backward adds to the first
net = make_net()
inputs, labels = trainloader[0]
criterion(net(inputs), labels).backward()
first = net.fc3.bias.grad.clone()
criterion(net(inputs), labels).backward()
print(torch.allclose(net.fc3.bias.grad, 2 * first), [round(v, 5) for v in first.tolist()[:4]])

# zero_grad(): None by default, zeros with set_to_none=False; the module's own zero_grad too
optimizer = optim.SGD(net.parameters(), lr=0.01)
optimizer.zero_grad(set_to_none=False)
print(net.fc3.bias.grad, all(p.grad.abs().sum() == 0 for p in net.parameters()))
optimizer.zero_grad()
print(net.fc3.bias.grad, all(p.grad is None for p in net.parameters()))
criterion(net(inputs), labels).backward()
net.zero_grad()
print(net.conv1.weight.grad)
