"""The quickstart's "Build the Neural Network" and "Optimizing Model Parameters", written for PyTorch:
a map-style Dataset of synthetic 8x8 "images", DataLoaders, nn.Flatten and nn.Sequential in a Module,
print(model), named_parameters with slices of them printed, nn.Softmax(dim=1), and the train/test loops
with model.train()/model.eval(), torch.no_grad() and (pred.argmax(1) == y).type(torch.float).sum().item().

The data and the starting weights are made here, so both libraries see the same numbers.
"""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")

rs = np.random.RandomState(7)
side, classes = 8, 4


class BlobImages(Dataset):
    """Each class a bright square in its own quadrant, on noise; labels as Python ints."""

    def __init__(self, n, transform=None, target_transform=None):
        self.labels = rs.randint(0, classes, size=n)
        self.images = rs.uniform(0, 0.5, size=(n, 1, side, side)).astype(np.float32)
        for i, label in enumerate(self.labels):
            r, c = divmod(int(label), 2)
            self.images[i, 0, r * 4:r * 4 + 4, c * 4:c * 4 + 4] += 0.5
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image, label = torch.from_numpy(self.images[idx]), int(self.labels[idx])
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


training_data = BlobImages(96)
test_data = BlobImages(32, transform=lambda img: img * 1.0)
train_dataloader = DataLoader(training_data, batch_size=16)
test_dataloader = DataLoader(test_data, batch_size=16)
for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(side * side, 32),
            nn.ReLU(),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, classes),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)
with torch.no_grad():
    for name, param in model.named_parameters():
        param.copy_(torch.tensor(rs.uniform(-0.3, 0.3, size=param.shape), dtype=torch.float32))

X = torch.linspace(0, 1, side * side).reshape(1, side, side)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
print(pred_probab)

# the layers one at a time, on a minibatch of 3
input_image = torch.linspace(-1, 1, 3 * side * side).reshape(3, side, side)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=side * side, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU, negatives left: {(hidden1 < 0).sum().item()}")

print(f"Model structure: {model}\n\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")

learning_rate = 1e-1
batch_size = 16
epochs = 3


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 3 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # no_grad: no gradients are computed in test mode, and none of the memory they would take
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
