"""DCGAN in miniature, in the manner of the "DCGAN Tutorial", written for PyTorch: a Generator of
nn.ConvTranspose2d, nn.BatchNorm2d, nn.ReLU(True) and nn.Tanh, a Discriminator of nn.Conv2d,
nn.LeakyReLU(0.2, inplace=True) and nn.Sigmoid, weights_init(m) switching on m.__class__.__name__ with
nn.init.normal_ and nn.init.constant_, nn.BCELoss, torch.full((b_size,), real_label, dtype=torch.float),
label.fill_(fake_label), fake.detach(), two Adam optimizers with betas=(0.5, 0.999), D(x) and D(G(z))
printed as output.mean().item(), and the fixed noise run under torch.no_grad() with .detach().cpu().

weights_init draws from a normal distribution, which the libraries draw differently: it runs, and then
every weight is set from fixed numbers; the noise and the "real images" are made here too.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

manualSeed = 999
torch.manual_seed(manualSeed)
rs = np.random.RandomState(0)

ngpu = 0
nc, nz, ngf, ndf = 1, 4, 4, 4
batch_size, image_size = 6, 8
lr, beta1 = 0.0002, 0.5
device = torch.device("cuda:0" if (torch.cuda.is_available() and ngpu > 0) else "cpu")

# "real" images: bright diagonals on a dark ground, scaled to [-1, 1] as the tutorial's Normalize does
real_images = -np.ones((batch_size * 2, nc, image_size, image_size), np.float32)
for i in range(batch_size * 2):
    np.fill_diagonal(real_images[i, 0], 1.0)
    real_images[i, 0] = np.roll(real_images[i, 0], i % 3, axis=1)
dataloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(real_images)),
                                         batch_size=batch_size, shuffle=False)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


def fixed_weights_init(m):
    """weights_init's scales, with a table of cosines for the normal draws."""
    classname = m.__class__.__name__
    with torch.no_grad():
        if classname.find('Conv') != -1:
            w = m.weight
            w.copy_(0.2 * torch.cos(torch.arange(w.numel()) * 0.7).reshape(w.shape))
        elif classname.find('BatchNorm') != -1:
            m.weight.copy_(1.0 + 0.02 * torch.cos(torch.arange(m.weight.numel()) * 1.3))
            nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is Z, going into a convolution
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # state size. (ngf*2) x 4 x 4
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh()
            # state size. (nc) x 8 x 8
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is (nc) x 8 x 8
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf) x 4 x 4
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf*2) x 2 x 2
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input)


netG = Generator(ngpu).to(device)
netG.apply(weights_init)
netG.apply(fixed_weights_init)
print(netG)
netD = Discriminator(ngpu).to(device)
netD.apply(weights_init)
netD.apply(fixed_weights_init)
print(netD)

criterion = nn.BCELoss()
noise_table = torch.sin(torch.arange(4 * batch_size * nz, dtype=torch.float) * 0.37).view(4, batch_size, nz, 1, 1)
fixed_noise = noise_table[0, :2]
real_label = 1.
fake_label = 0.
optimizerD = optim.Adam(netD.parameters(), lr=lr * 50, betas=(beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=lr * 50, betas=(beta1, 0.999))

G_losses = []
D_losses = []
iters = 0
num_epochs = 2
print("Starting Training Loop...")
for epoch in range(num_epochs):
    for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        netD.zero_grad()
        real_cpu = data[0].to(device)
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = noise_table[iters % 4][:b_size]  # torch.randn(b_size, nz, 1, 1, device=device) in the tutorial
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
              % (epoch, num_epochs, i, len(dataloader),
                 errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        G_losses.append(errG.item())
        D_losses.append(errD.item())
        iters += 1

with torch.no_grad():
    fake = netG(fixed_noise).detach().cpu()
print(fake.shape, fake[0, 0, 0])
print(netD.main[3].running_mean, netD.main[3].num_batches_tracked)
netG.eval()
print(netG(fixed_noise)[1, 0, :2])
