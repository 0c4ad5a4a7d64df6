# ruff: noqa: E741, E721  (the tutorial's own names and checks: `l` for a loss, `type(m) == nn.Linear`)
"""Generating names with a character-level RNN, in the manner of "NLP From Scratch", written for PyTorch:
an RNN module taking (category, input, hidden) through i2h, i2o and o2o Linear layers with nn.Dropout(0.1)
and nn.LogSoftmax(dim=1), one-hot category and input tensors, target tensors built with
torch.LongTensor and unsqueeze_(-1), a summed NLLLoss over the letters, a hand-written update
p.data.add_(p.grad.data, alpha=-learning_rate), and sampling with topk under torch.no_grad().

The names are made up here, Python's `random` draws the examples, the weights come from a table of
sines, and the dropout is switched off with rnn.eval() for the training run (its masks are random draws
that differ between libraries), so both libraries compute the same numbers.
"""
import math
import random
import string
import time

import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1  # Plus EOS marker

category_lines = {
    "Italian": ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano"],
    "Russian": ["Ivanov", "Petrov", "Sokolov", "Popov", "Lebedev", "Kozlov"],
    "Spanish": ["Garcia", "Lopez", "Martinez", "Sanchez", "Perez", "Gomez"],
}
all_categories = list(category_lines)
n_categories = len(all_categories)
print("# categories:", n_categories, all_categories)


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size

        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


# Random item from a list
def randomChoice(l):
    return l[random.randint(0, len(l) - 1)]


# Get a random category and random line from that category
def randomTrainingPair():
    category = randomChoice(all_categories)
    line = randomChoice(category_lines[category])
    return category, line


# One-hot vector for category
def categoryTensor(category):
    li = all_categories.index(category)
    tensor = torch.zeros(1, n_categories)
    tensor[0][li] = 1
    return tensor


# One-hot matrix of first to last letters (not including EOS) for input
def inputTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li in range(len(line)):
        letter = line[li]
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


# ``LongTensor`` of second letter to end (EOS) for target
def targetTensor(line):
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(n_letters - 1)  # EOS
    return torch.LongTensor(letter_indexes)


# Make category, input, and target tensors from a random category, line pair
def randomTrainingExample():
    category, line = randomTrainingPair()
    category_tensor = categoryTensor(category)
    input_line_tensor = inputTensor(line)
    target_line_tensor = targetTensor(line)
    return category_tensor, input_line_tensor, target_line_tensor


random.seed(3)
c, i, t = randomTrainingExample()
print(c, i.shape, t, t.dtype)

criterion = nn.NLLLoss()
learning_rate = 0.0005 * 20

rnn = RNN(n_letters, 48, n_letters)
with torch.no_grad():
    for k, p in enumerate(rnn.parameters()):
        p.copy_(0.15 * torch.sin(torch.arange(p.numel()) * 0.61 + k).reshape(p.shape))
print(rnn)
rnn.eval()


def train(category_tensor, input_line_tensor, target_line_tensor):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()

    rnn.zero_grad()

    loss = torch.Tensor([0])  # you can also just simply use ``loss = 0``

    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])
        loss += l

    loss.backward()

    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item() / input_line_tensor.size(0)


def timeSince(since):
    now = time.time()
    s = now - since
    m = math.floor(s / 60)
    s -= m * 60
    return '%dm %ds' % (m, s)


n_iters = 150
print_every = 50
plot_every = 25
all_losses = []
total_loss = 0  # Reset every ``plot_every`` ``iters``

start = time.time()
for iter in range(1, n_iters + 1):
    output, loss = train(*randomTrainingExample())
    total_loss += loss

    if iter % print_every == 0:
        elapsed = timeSince(start)  # the times differ; the line around them is printed
        print('%s (%d %d%%) %.4f' % (elapsed[-1], iter, iter / n_iters * 100, loss))

    if iter % plot_every == 0:
        all_losses.append(total_loss / plot_every)
        total_loss = 0
print([round(v, 4) for v in all_losses])

max_length = 8


# Sample from a category and starting letter
def sample(category, start_letter='A'):
    with torch.no_grad():  # no need to track history in sampling
        category_tensor = categoryTensor(category)
        input = inputTensor(start_letter)
        hidden = rnn.initHidden()

        output_name = start_letter

        for i in range(max_length):
            output, hidden = rnn(category_tensor, input[0], hidden)
            topv, topi = output.topk(1)
            topi = topi[0][0]
            if topi == n_letters - 1:
                break
            else:
                letter = all_letters[topi]
                output_name += letter
            input = inputTensor(letter)

        return output_name


# Get multiple samples from one category and multiple starting letters
def samples(category, start_letters='ABC'):
    for start_letter in start_letters:
        print(sample(category, start_letter))


samples('Russian', 'RUS')
samples('Spanish', 'SPA')
samples('Italian', 'ITA')

rnn.train()
out, _ = rnn(categoryTensor("Italian"), inputTensor("R")[0], rnn.initHidden())


def node(fn):  # a graph node's repr without its address
    return repr(fn).split(" object")[0] + ">"


print(out.shape, node(out.grad_fn), [node(f) for f, _ in out.grad_fn.next_functions])
