# ruff: noqa: E741, E721  (the tutorial's own names and checks: `l` for a loss, `type(m) == nn.Linear`)
"""Dive into Deep Learning's chapters written without the d2l package, for PyTorch: linear regression
from scratch (synthetic_data with torch.normal, data_iter, linreg, squared_loss, sgd updating
`param -= lr * param.grad / batch_size` under torch.no_grad), softmax regression from scratch (X.exp(),
the partition, cross_entropy picking y_hat[range(len(y_hat)), y], accuracy), weight decay (an l2_penalty),
dropout from scratch ((torch.rand(X.shape) > dropout).float()), initialization (xavier_uniform_ through
net.apply(init_weights)), batch norm from scratch (moving_mean / moving_var, torch.is_grad_enabled()),
a residual block of nn.LazyConv2d / nn.LazyBatchNorm2d, and attention scoring (masked_softmax with
repeat_interleave, torch.bmm, additive attention's features.unsqueeze, and the gradients through
masked_softmax's write into a view of the scores).

The two libraries draw different random numbers: each draw is made as the book does, then printed by
shape (or by what does not depend on it), and the numbers trained on are made here from sines.
"""
import math

import torch
from torch import nn
from torch.nn import functional as F


def fixed(*shape, scale=1.0, phase=0.0):
    n = math.prod(shape)
    return scale * torch.sin(torch.arange(n, dtype=torch.float32) * 0.73 + phase).reshape(shape)


# ---- 3.2 linear regression from scratch ----------------------------------------------------------
def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = torch.normal(0, 1, (num_examples, len(w)))
    print("drawn", X.shape, X.dtype)
    X = fixed(num_examples, len(w), scale=1.5)  # (the same numbers in both libraries)
    y = torch.matmul(X, w) + b
    y += 0.01 * fixed(*y.shape, phase=1.0)
    return X, y.reshape((-1, 1))


true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 100)
print('features:', features[0], '\nlabel:', labels[0])


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    # The examples are read in order here (the book shuffles with random.shuffle)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
w = torch.zeros((2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    """The linear regression model."""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr, num_epochs, batch_size = 0.03, 3, 10
net, loss = linreg, squared_loss
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # Minibatch loss in `X` and `y`
        l.sum().backward()
        sgd([w, b], lr, batch_size)  # Update parameters using their gradient
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')

# ---- 4.4 softmax regression from scratch ---------------------------------------------------------
X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(X.sum(0, keepdims=True), X.sum(1, keepdims=True))


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition  # The broadcasting mechanism is applied here


X = torch.rand((2, 5))
X_prob = softmax(X)
print(X_prob.shape, torch.allclose(X_prob.sum(1), torch.ones(2)))
X_prob = softmax(fixed(2, 5))
print(X_prob, X_prob.sum(1))

y = torch.tensor([0, 2])
y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
print(y_hat[[0, 1], y])


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[range(len(y_hat)), y])


print(cross_entropy(y_hat, y))


def accuracy(y_hat, y):
    """Compute the number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


print(accuracy(y_hat, y) / len(y))

num_inputs, num_outputs = 16, 4
W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
W = fixed(num_inputs, num_outputs, scale=0.01).requires_grad_(True)
b = torch.zeros(num_outputs, requires_grad=True)


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


images = fixed(40, 1, 4, 4, phase=0.3)
targets = torch.arange(40) % 4
images = images + 0.8 * F.one_hot(targets, 16).float().view(40, 1, 4, 4)
for epoch in range(3):
    metric = [0.0, 0.0, 0]
    for i in range(0, 40, 8):
        X, y = images[i:i + 8], targets[i:i + 8]
        y_hat = net(X)
        l = cross_entropy(y_hat, y)
        l.sum().backward()
        sgd([W, b], 0.5, X.shape[0])
        l = l.detach()  # (float() of a tensor that requires grad warns in PyTorch 2.13; minitensor does not)
        metric = [metric[0] + float(l.sum()), metric[1] + accuracy(y_hat, y), metric[2] + y.numel()]
    print(f"epoch {epoch + 1}: loss {metric[0] / metric[2]:.5f}, train acc {metric[1] / metric[2]:.3f}")

# ---- 3.7 weight decay ----------------------------------------------------------------------------
def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2


n_train, num_inputs = 20, 50
train_X = fixed(n_train, num_inputs, scale=0.5, phase=2.0)
train_y = train_X @ (torch.ones(num_inputs, 1) * 0.01) + 0.05
for lambd in (0, 3):
    w = torch.zeros(num_inputs, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for epoch in range(20):
        l = squared_loss(linreg(train_X, w, b), train_y) + lambd * l2_penalty(w)
        l.sum().backward()
        sgd([w, b], 0.003, n_train)
    print(f'lambda {lambd}: L2 norm of w: {torch.norm(w).item():.6f}, loss {l.mean().item():.6f}')

# the same with the optimizer's weight_decay on the weight only
net = nn.Sequential(nn.Linear(num_inputs, 1))
for param in net.parameters():
    param.data.normal_()
    param.data.fill_(0.01)
trainer = torch.optim.SGD([{"params": net[0].weight, 'weight_decay': 3}, {"params": net[0].bias}], lr=0.003)
for epoch in range(5):
    trainer.zero_grad()
    l = nn.MSELoss(reduction='none')(net(train_X), train_y)
    l.mean().backward()
    trainer.step()
print(f'L2 norm of w: {net[0].weight.norm().item():.6f}')


# ---- 5.6 dropout from scratch ----------------------------------------------------------------------
def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    if dropout == 1:
        return torch.zeros_like(X)
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)


X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
print('dropout_p = 0:', dropout_layer(X, 0))
print('dropout_p = 1:', dropout_layer(X, 1))
half = dropout_layer(X, 0.5)
print('dropout_p = 0.5:', half.shape, bool(((half == 0) | (half == 2 * X)).all()))

# ---- 5.4 numerical stability and initialization ------------------------------------------------------
x = torch.arange(-8.0, 8.0, 1.0, requires_grad=True)
y = torch.sigmoid(x)
y.backward(torch.ones_like(x))
print([round(v, 6) for v in x.grad.tolist()[::3]])
M = torch.normal(0, 1, size=(4, 4))
print('a single matrix', M.shape)


def init_weights(module):
    if type(module) == nn.Linear:
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)


net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
net(torch.rand(2, 4))
net.apply(init_weights)
bound = math.sqrt(6 / (4 + 8))
print(net[0].weight.shape, bool(net[0].weight.abs().max() <= bound), net[0].bias, net)


def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])


# ---- 8.5 batch normalization from scratch -----------------------------------------------------------
def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    # Use is_grad_enabled to determine whether we are in training mode
    if not torch.is_grad_enabled():
        # In prediction mode, use mean and variance obtained by moving average
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            # When using a fully connected layer, calculate the mean and
            # variance on the feature dimension
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            # When using a two-dimensional convolutional layer, calculate the
            # mean and variance on the channel dimension (axis=1). Here we
            # need to maintain the shape of `X`, so that the broadcasting
            # operation can be carried out later
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        # In training mode, the current mean and variance are used
        X_hat = (X - mean) / torch.sqrt(var + eps)
        # Update the mean and variance using moving average
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta  # Scale and shift
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    # num_features: the number of outputs for a fully connected layer or the
    # number of output channels for a convolutional layer. num_dims: 2 for a
    # fully connected layer and 4 for a convolutional layer
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        # The scale parameter and the shift parameter (model parameters) are
        # initialized to 1 and 0, respectively
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        # The variables that are not model parameters are initialized to 0 and
        # 1
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        # If `X` is not on the main memory, copy `moving_mean` and
        # `moving_var` to the device where `X` is located
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        # Save the updated `moving_mean` and `moving_var`
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean,
            self.moving_var, eps=1e-5, momentum=0.1)
        return Y


bn = BatchNorm(3, num_dims=4)
X = fixed(4, 3, 5, 5, scale=2.0, phase=0.5) + 1
Y = bn(X)
Y.pow(3).sum().backward()
print(Y.mean(dim=(0, 2, 3)).abs().max() < 1e-5, bn.gamma.grad.view(-1), bn.moving_mean.view(-1))
with torch.no_grad():
    print(bn(X)[0, :, 0, 0], torch.is_grad_enabled())
reference = nn.BatchNorm2d(3, momentum=0.1)
print(torch.allclose(reference(X), Y, atol=1e-5), reference.running_mean)
bn1 = BatchNorm(6, num_dims=2)
print(bn1(fixed(5, 6)).std(dim=0, unbiased=False))


# ---- 8.6 residual networks, with lazy layers -----------------------------------------------------
class Residual(nn.Module):
    """The Residual block of ResNet models."""
    def __init__(self, num_channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1,
                                   stride=strides)
        self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1,
                                       stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.LazyBatchNorm2d()
        self.bn2 = nn.LazyBatchNorm2d()

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


blk = Residual(3)
print(blk.conv1.weight, blk.bn1)
X = fixed(4, 3, 6, 6)
print(blk(X).shape)
blk = Residual(6, use_1x1conv=True, strides=2)
print(blk(X).shape, blk.conv1, blk.bn1, blk.conv3.weight.shape)
with torch.no_grad():
    for k, p in enumerate(blk.parameters()):
        p.copy_(fixed(*p.shape, scale=0.3, phase=k))
blk.bn1.reset_running_stats()
blk.bn2.reset_running_stats()
out = blk(X)
out.sum().backward()
print(round(out.sum().item(), 3), blk.bn2.running_mean, round(blk.conv1.weight.grad.abs().sum().item(), 3))


# ---- 11.3 attention scoring functions ----------------------------------------------------------------
def masked_softmax(X, valid_lens):  # @save
    """Perform softmax operation by masking elements on the last axis."""
    # X: 3D tensor, valid_lens: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative
        # value, whose exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


print(masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3])).gt(0).sum(-1))
print(masked_softmax(fixed(2, 2, 4), torch.tensor([2, 3])))
print(masked_softmax(fixed(2, 2, 4), torch.tensor([[1, 3], [2, 4]])))
Q, K = torch.ones((2, 3, 4)), torch.ones((2, 4, 6))
print(torch.bmm(Q, K).shape)


class AdditiveAttention(nn.Module):  # @save
    """Additive attention."""
    def __init__(self, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion, shape of queries: (batch_size, no. of
        # queries, 1, num_hiddens) and shape of keys: (batch_size, 1, no. of
        # key-value pairs, num_hiddens). Sum them up with broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output of self.w_v, so we remove the last
        # one-dimensional entry from the shape. Shape of scores: (batch_size,
        # no. of queries, no. of key-value pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of values: (batch_size, no. of key-value pairs, value
        # dimension)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):  # @save
    """Scaled dot product attention."""
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    # Shape of queries: (batch_size, no. of queries, d)
    # Shape of keys: (batch_size, no. of key-value pairs, d)
    # Shape of values: (batch_size, no. of key-value pairs, value dimension)
    # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # Swap the last two dimensions of keys with keys.transpose(1, 2)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


queries = torch.normal(0, 1, (2, 1, 20))
queries = fixed(2, 1, 20, phase=0.2)
keys = torch.ones((2, 10, 2))
# The two value matrices in the values minibatch are identical
values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
valid_lens = torch.tensor([2, 6])

attention = AdditiveAttention(num_hiddens=8, dropout=0.1)
attention.eval()
attention(queries, keys, values, valid_lens)  # (the lazy layers take their sizes)
with torch.no_grad():
    for k, p in enumerate(attention.parameters()):
        p.copy_(fixed(*p.shape, scale=0.4, phase=k))
out = attention(queries, keys, values, valid_lens)  # masked_softmax writes into a view of the scores
print(out)
print(attention.attention_weights.reshape(2, 10))
# the gradients through the masked scores (X[~mask] = value on their view), with keys that differ (in float64:
# float32's rounding moves them by 1e-4 between the two libraries)
attention.double()
out = attention(queries.double(), fixed(2, 10, 2, phase=0.4).double(), values.double(), valid_lens)
(out * fixed(*out.shape, phase=0.3)).sum().backward()
for name, p in attention.named_parameters():
    print(name, " ".join(f"{v:.6g}" for v in p.grad.reshape(-1)[:4].tolist()))

queries = fixed(2, 1, 2, phase=0.9)
attention = DotProductAttention(dropout=0.5)
attention.eval()
print(attention(queries, keys, values, valid_lens))
keys = fixed(2, 10, 2, phase=0.4)
print(attention(queries, keys, values, torch.tensor([[3], [7]])))
