"""Transfer learning in the manner of the "Transfer Learning for Computer Vision" tutorial, written for PyTorch:
a "pretrained" backbone whose head is replaced (`num_ftrs = model_ft.fc.in_features`,
`model_ft.fc = nn.Linear(num_ftrs, 2)`), fine-tuning with SGD and momentum under `lr_scheduler.StepLR`,
then the fixed feature extractor (`param.requires_grad = False` for every parameter, a new head, and
`optim.SGD(model_conv.fc.parameters(), ...)`); train_model with train and val phases, `model.train()` /
`model.eval()`, `torch.set_grad_enabled(phase == 'train')`, `_, preds = torch.max(outputs, 1)`,
`running_corrects += torch.sum(preds == labels.data)`, `running_corrects.double() / dataset_sizes[phase]`,
the best weights saved in a TemporaryDirectory with `torch.save(model.state_dict(), path)` and loaded back
with `torch.load(path, weights_only=True)`, beside `copy.deepcopy(model.state_dict())`.

Every weight and image is made here from fixed numbers, and the loaders do not shuffle (the libraries'
shuffles draw differently).
"""
import copy
import os
from tempfile import TemporaryDirectory

import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class TinyResNet(nn.Module):
    """Stands in for models.resnet18(weights='IMAGENET1K_V1'): a conv stem, a residual block, a pool, .fc."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(nn.Conv2d(6, 6, 3, padding=1, bias=False), nn.BatchNorm2d(6))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(6, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(x + self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def pretrained():
    model = TinyResNet()
    with torch.no_grad():
        for k, (name, p) in enumerate(model.named_parameters()):
            p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.5 + 0.17 * k)).view(p.shape))
    return model


class_names = ['ants', 'bees']
images = torch.sin(torch.arange(20 * 3 * 6 * 6, dtype=torch.float64) * 0.05).view(20, 3, 6, 6).float()
labels = (images[:, 0].mean(dim=(1, 2)) > images[:, 2].mean(dim=(1, 2))).long()
image_datasets = {'train': TensorDataset(images[:12], labels[:12]), 'val': TensorDataset(images[12:], labels[12:])}
dataloaders = {x: DataLoader(image_datasets[x], batch_size=4, shuffle=False) for x in ['train', 'val']}
dataset_sizes = {x: len(image_datasets[x]) for x in ['train', 'val']}
print(dataset_sizes, labels.tolist())


def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
    with TemporaryDirectory() as tempdir:
        best_model_params_path = os.path.join(tempdir, 'best_model_params.pt')
        torch.save(model.state_dict(), best_model_params_path)
        best_acc = 0.0
        for epoch in range(num_epochs):
            print(f'Epoch {epoch}/{num_epochs - 1}')
            print('-' * 10)
            for phase in ['train', 'val']:
                if phase == 'train':
                    model.train()  # Set model to training mode
                else:
                    model.eval()   # Set model to evaluate mode
                running_loss = 0.0
                running_corrects = 0
                for inputs, labels in dataloaders[phase]:
                    inputs = inputs.to(device)
                    labels = labels.to(device)
                    optimizer.zero_grad()
                    # track history if only in train
                    with torch.set_grad_enabled(phase == 'train'):
                        outputs = model(inputs)
                        _, preds = torch.max(outputs, 1)
                        loss = criterion(outputs, labels)
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == 'train':
                    scheduler.step()
                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]
                print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
                if phase == 'val' and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    torch.save(model.state_dict(), best_model_params_path)
            print()
        print(f'Best val Acc: {best_acc:4f}', repr(best_acc))
        model.load_state_dict(torch.load(best_model_params_path, weights_only=True))
    return model


# Finetuning the ConvNet
model_ft = pretrained()
num_ftrs = model_ft.fc.in_features
model_ft.fc = nn.Linear(num_ftrs, len(class_names))
with torch.no_grad():
    model_ft.fc.weight.copy_(torch.tensor([[0.2, -0.1, 0.0, 0.1, -0.2, 0.3], [-0.3, 0.2, 0.1, 0.0, 0.1, -0.1]]))
    model_ft.fc.bias.zero_()
model_ft = model_ft.to(device)
criterion = nn.CrossEntropyLoss()
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.1)
model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=3)
print(exp_lr_scheduler.get_last_lr(), model_ft.bn1.running_mean, model_ft.bn1.num_batches_tracked)

# ConvNet as fixed feature extractor
model_conv = pretrained()
for param in model_conv.parameters():
    param.requires_grad = False
best_model_wts = copy.deepcopy(model_conv.state_dict())
num_ftrs = model_conv.fc.in_features
model_conv.fc = nn.Linear(num_ftrs, 2)
with torch.no_grad():
    model_conv.fc.weight.copy_(torch.linspace(-0.3, 0.3, 12).view(2, 6))
    model_conv.fc.bias.fill_(0.05)
optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.1, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=7, gamma=0.1)
print(sum(p.numel() for p in model_conv.parameters() if p.requires_grad), len(optimizer_conv.param_groups[0]['params']))
model_conv = train_model(model_conv, criterion, optimizer_conv, exp_lr_scheduler, num_epochs=2)
criterion(model_conv(images[:4]), labels[:4]).backward()  # the frozen layers get no gradient
print(model_conv.conv1.weight.grad, model_conv.fc.weight.grad.abs().sum(), model_conv.fc.bias.grad)
print(torch.equal(best_model_wts['conv1.weight'], model_conv.conv1.weight), sorted(best_model_wts)[:3])

model_conv.eval()
with torch.no_grad():
    outputs = model_conv(images[12:16])
    _, preds = torch.max(outputs, 1)
print([class_names[preds[j]] for j in range(preds.size(0))], outputs.softmax(1)[:, 1])
