"""Spatial Transformer Networks, in the manner of PyTorch's tutorial, written for PyTorch: a localization
net (Conv2d, MaxPool2d, ReLU) and a regressor fc_loc whose last layer starts at the identity transform
(weight.data.zero_(), bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))),
F.affine_grid(theta, x.size()) and F.grid_sample(x, grid), then the classifier with F.dropout and
F.log_softmax, trained with SGD and F.nll_loss; a test loop with reduction='sum' and argmax, and
convert_image_np's transpose and clip on the transformed batch.

The 28x28 "digits" are made here from sines, and the weights too (the generators differ); dropout is
off while training (model.eval() then model.train() only for the mode prints).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# synthetic "MNIST": a bright bar whose place depends on the label, plus a texture
n = 24
labels = torch.arange(n) % 4
yy, xx = torch.meshgrid(torch.arange(28.), torch.arange(28.), indexing="ij")
images = torch.stack([torch.sin(xx * 0.3 + 0.2 * i) * 0.2 + (abs(yy - 6 - 5 * int(labels[i])) < 2).float()
                      for i in range(n)]).unsqueeze(1)
images = (images - 0.1307) / 0.3081
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:16], labels[:16]),
                                           batch_size=8, shuffle=False)
test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[16:], labels[16:]),
                                          batch_size=8, shuffle=False)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(128, 20)
        self.fc2 = nn.Linear(20, 4)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(4, 5, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(5 * 3 * 3, 16),
            nn.ReLU(True),
            nn.Linear(16, 3 * 2)
        )

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 5 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)

        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)

        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 128)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net().to(device)
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(0.3 / (1 + p[0].numel()) ** 0.5 * torch.sin(torch.arange(p.numel()) * 0.71 + k).view(p.shape))
# Initialize the weights/bias with identity transformation
model.fc_loc[2].weight.data.zero_()
model.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
model.fc_loc[2].weight.data.add_(0.01 * torch.cos(torch.arange(6 * 16.)).view(6, 16))

optimizer = optim.SGD(model.parameters(), lr=0.05)

# the grid on its own: the identity, a zoom and a shift, and what grid_sample makes of them
theta = torch.tensor([[[1., 0, 0], [0, 1, 0]], [[0.5, 0, 0], [0, 0.5, 0]], [[1, 0, 0.5], [0, 1, 0]]])
grid = F.affine_grid(theta, (3, 1, 4, 4), align_corners=False)
print(grid.shape, grid[0, 0])
small = torch.arange(16.).view(1, 1, 4, 4).expand(3, 1, 4, 4)
print(F.grid_sample(small, grid, align_corners=False).squeeze(1))
print(F.grid_sample(small, F.affine_grid(theta, (3, 1, 3, 3), align_corners=True), mode="nearest",
                    padding_mode="border", align_corners=True).squeeze(1))
print(F.grid_sample(small, grid, padding_mode="reflection", align_corners=False)[2])


def train(epoch):
    model.eval()  # (dropout's masks are random: both libraries draw differently)
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)

        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 1 == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)

            # sum up batch loss
            test_loss += F.nll_loss(output, target, size_average=False).item()
            # get the index of the max log-probability
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()

        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
              .format(test_loss, correct, len(test_loader.dataset),
                      100. * correct / len(test_loader.dataset)))


def convert_image_np(inp):
    """Convert a Tensor to numpy image."""
    inp = inp.numpy().transpose((1, 2, 0))
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    inp = std * inp + mean
    inp = np.clip(inp, 0, 1)
    return inp


for epoch in range(1, 3):
    train(epoch)
    test()

print(model.fc_loc[2].bias.data)
with torch.no_grad():
    data = next(iter(test_loader))[0].to(device)
    input_tensor = data.cpu()
    transformed_input_tensor = model.stn(data).cpu()
    in_grid = convert_image_np(input_tensor[0].expand(3, 28, 28))
    out_grid = convert_image_np(transformed_input_tensor[0].expand(3, 28, 28))
    print(in_grid.shape, round(float(in_grid.mean()), 5), round(float(out_grid.mean()), 5))

# grid_sample's gradients reach both the image and the grid (a theta whose points fall between pixels:
# on a pixel, bilinear sampling has a kink, and float rounding would pick the side)
x = images[:2].clone().requires_grad_()
th = torch.tensor([[[0.913, 0.087, 0.0517], [-0.1033, 0.817, 0.0291]], [[0.5, 0, 0], [0, 0.5, 0]]],
                  requires_grad=True)
out = F.grid_sample(x, F.affine_grid(th, x.size(), align_corners=False), align_corners=False)
(out * torch.cos(torch.arange(out.numel()) * 0.1).view(out.shape)).sum().backward()
print(round(x.grad.abs().sum().item(), 4), th.grad)
