"""Adversarial examples in the manner of the "Adversarial Example Generation" (FGSM) tutorial, written for
PyTorch: a small conv net with F.log_softmax and F.nll_loss in eval mode, `data.requires_grad = True`,
`data.grad.data`, fgsm_attack (`data_grad.sign()`, `image + epsilon * sign`, `torch.clamp(perturbed, 0, 1)`),
the denorm helper (`torch.tensor(mean).to(device)`, `std.view(1, -1, 1, 1)`), predictions by
`output.max(1, keepdim=True)[1]`, `init_pred.item() != target.item()`, accuracy as `correct / float(len(...))`,
and adversarial examples kept as `.squeeze().detach().cpu().numpy()`.

Every weight and every image is made here from fixed numbers.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)
epsilons = [0, .05, .1, .2]
use_cuda = False
device = torch.device("cuda" if use_cuda and torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 6, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(6 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


model = Net().to(device)
with torch.no_grad():  # the tutorial loads pretrained weights; these are fixed numbers instead
    for k, p in enumerate(model.parameters()):
        p.copy_(0.4 * torch.sin(torch.arange(p.numel(), dtype=torch.float) * (0.9 + 0.31 * k)).view(p.shape))
model.eval()

# a "test set" of 8x8 one-channel images, normalized as the tutorial's MNIST loader does
images = (torch.cos(torch.arange(12 * 64, dtype=torch.float) * 0.13).view(12, 1, 8, 8) + 1) / 2
with torch.no_grad():
    labels = model((images - 0.1307) / 0.3081).argmax(1)
labels[::4] = (labels[::4] + 1) % 3  # a few the model gets wrong to start with
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset((images - 0.1307) / 0.3081, labels), batch_size=1, shuffle=False)


def fgsm_attack(image, epsilon, data_grad):
    # Collect the element-wise sign of the data gradient
    sign_data_grad = data_grad.sign()
    # Create the perturbed image by adjusting each pixel of the input image
    perturbed_image = image + epsilon * sign_data_grad
    # Adding clipping to maintain [0,1] range
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    return perturbed_image


def denorm(batch, mean=[0.1307], std=[0.3081]):
    if isinstance(mean, list):
        mean = torch.tensor(mean).to(device)
    if isinstance(std, list):
        std = torch.tensor(std).to(device)
    return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)


def test(model, device, test_loader, epsilon):
    correct = 0
    adv_examples = []
    for data, target in test_loader:
        data, target = data.to(device), target.to(device)
        data.requires_grad = True
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]  # get the index of the max log-probability
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data.grad.data
        data_denorm = denorm(data)
        perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
        perturbed_data_normalized = (perturbed_data - 0.1307) / 0.3081  # transforms.Normalize in the tutorial
        output = model(perturbed_data_normalized)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
            if epsilon == 0 and len(adv_examples) < 2:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        else:
            if len(adv_examples) < 2:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
    final_acc = correct / float(len(test_loader))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
    return final_acc, adv_examples


accuracies = []
examples = []
for eps in epsilons:
    acc, ex = test(model, device, test_loader, eps)
    accuracies.append(acc)
    examples.append(ex)
print(accuracies)
for ex in examples:
    for orig, adv, img in ex:
        print(f"{orig} -> {adv}", img.shape, img.dtype, round(float(img.sum()), 3), float(np.abs(img).max()))
data, target = next(iter(test_loader))
data.requires_grad = True
F.nll_loss(model(data), target).backward()
print(data.grad.sum(), data.grad.data.sign().sum(), data.grad.abs().max())
