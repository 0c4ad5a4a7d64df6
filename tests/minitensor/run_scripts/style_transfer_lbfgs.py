"""Neural style transfer in miniature, in the manner of the "Neural Transfer Using PyTorch" tutorial, written
for PyTorch: gram_matrix (`input.size()`, `features.view(a * b, c * d)`, `torch.mm(features, features.t())`,
`G.div(a * b * c * d)`), ContentLoss and StyleLoss modules that keep `F.mse_loss(...)` as `self.loss` and
return their input, a Normalization module with `torch.tensor(mean).view(-1, 1, 1)`, a model rebuilt with
`nn.Sequential().add_module(name, layer)` while walking `cnn.children()` with isinstance checks,
`nn.ReLU(inplace=False)`, trimming with `len(model) - 1, -1, -1`, `input_img.requires_grad_(True)`,
`model.eval()`, `model.requires_grad_(False)`, `optim.LBFGS([input_img])` with a closure, and
`with torch.no_grad(): input_img.clamp_(0, 1)` around each step.

The "pretrained features" are a small conv stack whose weights are set here from fixed numbers (cosines
taken in float64: numpy's and PyTorch's float32 cos may differ in the last bit, which L-BFGS magnifies), and
the weights of the two losses are passed to suit these tiny features.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
device = torch.device("cpu")
imsize = 8


class ContentLoss(nn.Module):

    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used to dynamically compute the gradient
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size(=1), b=number of feature maps, (c,d)=dimensions of a f. map
    features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL
    G = torch.mm(features, features.t())  # compute the gram product
    # we 'normalize' the values of the gram matrix by dividing by the number of element in each feature maps.
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):

    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can directly work with image Tensor
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3, padding=1),
                    nn.ReLU(inplace=True), nn.MaxPool2d(2, 2), nn.Conv2d(4, 6, 3, padding=1),
                    nn.ReLU(inplace=True), nn.Conv2d(6, 6, 3, padding=1)).eval()
with torch.no_grad():
    for k, p in enumerate(cnn.parameters()):
        p.copy_(0.03 * torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.7 + 0.23 * k)).view(p.shape))
cnn_normalization_mean = [0.485, 0.456, 0.406]
cnn_normalization_std = [0.229, 0.224, 0.225]
content_layers_default = ['conv_3']
style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4']


def get_style_model_and_losses(cnn, normalization_mean, normalization_std, style_img, content_img,
                               content_layers=content_layers_default, style_layers=style_layers_default):
    cnn = copy.deepcopy(cnn)
    normalization = Normalization(normalization_mean, normalization_std)
    content_losses = []
    style_losses = []
    model = nn.Sequential(normalization)
    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
            # The in-place version doesn't play very nicely with the ContentLoss and StyleLoss we insert below.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = 'pool_{}'.format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = 'bn_{}'.format(i)
        else:
            raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)
    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break
    model = model[:(i + 1)]
    return model, style_losses, content_losses


def run_style_transfer(cnn, normalization_mean, normalization_std, content_img, style_img, input_img,
                       num_steps=6, style_weight=1000000, content_weight=1):
    print('Building the style transfer model..')
    model, style_losses, content_losses = get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                                                                     style_img, content_img)
    # We want to optimize the input and not the model parameters so we update all the requires_grad fields
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = optim.LBFGS([input_img], max_iter=4)
    print(model)
    print('Optimizing..')
    run = [0]
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0
            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss
            style_score *= style_weight
            content_score *= content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            if run[0] % 3 == 0:
                print("run {}:".format(run))
                print('Style Loss : {:4f} Content Loss: {:4f}'.format(style_score.item(), content_score.item()))
            return style_score + content_score

        optimizer.step(closure)
    # a last correction...
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


style_img = (torch.sin(torch.arange(3 * imsize * imsize, dtype=torch.float64) * 0.41).float()
             .view(1, 3, imsize, imsize) + 1) / 2
content_img = torch.linspace(0, 1, 3 * imsize * imsize).view(1, 3, imsize, imsize)
assert style_img.size() == content_img.size(), "we need to import style and content images of the same size"
input_img = content_img.clone()
output = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std, content_img, style_img, input_img,
                            style_weight=100000, content_weight=1000)
print(output.shape, output.requires_grad, output.is_leaf, output.min().item(), output.max().item())
print(output.sum(), gram_matrix(output[:, :2]).diagonal())
print(all(not p.requires_grad for p in cnn.parameters()), next(cnn.parameters()).requires_grad)
