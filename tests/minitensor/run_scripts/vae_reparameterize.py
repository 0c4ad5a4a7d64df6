"""A variational autoencoder in the manner of PyTorch's VAE example, written for PyTorch: fc1/fc21/fc22
encoder heads, the reparameterisation mu + eps * std with std = torch.exp(0.5 * logvar) and
eps = torch.randn_like(std), torch.sigmoid decoding, F.binary_cross_entropy(recon, x, reduction='sum')
plus the KL term -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()), Adam, train/test loops over
DataLoaders, and sampling from the prior.

The libraries draw different normal numbers, so eps is drawn and then printed only by shape, and the
losses are printed from model.eval() passes that use the mean (as the test loop does, eps set to zero
through a flag); the data and the starting weights are made here.
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
rs = np.random.RandomState(2)
side = 6
prototypes = (rs.uniform(size=(3, side * side)) > 0.5).astype(np.float32)
images = np.clip(prototypes[rs.randint(0, 3, size=48)] + rs.uniform(-0.2, 0.2, (48, side * side)), 0, 1)
data = torch.tensor(images, dtype=torch.float32)
train_loader = DataLoader(TensorDataset(data[:32]), batch_size=8, shuffle=False)
test_loader = DataLoader(TensorDataset(data[32:]), batch_size=8)


class VAE(nn.Module):
    def __init__(self, sample=True):
        super(VAE, self).__init__()
        self.sample = sample
        self.fc1 = nn.Linear(side * side, 16)
        self.fc21 = nn.Linear(16, 2)
        self.fc22 = nn.Linear(16, 2)
        self.fc3 = nn.Linear(2, 16)
        self.fc4 = nn.Linear(16, side * side)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        if not self.sample:
            eps = torch.zeros_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, side * side))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, side * side), reduction='sum')
    # see Appendix B from Kingma and Welling, Auto-Encoding Variational Bayes
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE(sample=False)  # the mean path: both libraries take the same steps
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(0.3 * torch.cos(torch.arange(p.numel()) * 1.13 + k).reshape(p.shape))
optimizer = optim.Adam(model.parameters(), lr=1e-2)


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data,) in enumerate(train_loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data,) in enumerate(test_loader):
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 4)
                comparison = torch.cat([data[:n], recon_batch.view(8, side * side)[:n]])
                print(comparison.shape, comparison[n:].sum(1))
    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))


for epoch in range(1, 4):
    train(epoch)
    test(epoch)

print(model.fc22.bias.grad)
model.sample = True
recon, mu, logvar = model(data[:4])
std = torch.exp(0.5 * logvar)
eps = torch.randn_like(std)
print(eps.shape, eps.dtype, recon.shape, bool(((recon > 0) & (recon < 1)).all()))
with torch.no_grad():
    sample = torch.randn(5, 2)
    sample = model.decode(sample).cpu()
    print(sample.view(5, 1, side, side).shape, bool((sample >= 0).all() and (sample <= 1).all()))
