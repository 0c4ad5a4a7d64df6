"""A word-level LSTM language model in the style of PyTorch's word_language_model example, written
for PyTorch: a Dictionary and Corpus, batchify, truncated backprop through time with the hidden
state repackaged (detached) between batches, tied encoder/decoder weights, gradient clipping,
plain SGD by hand on p.data, and the learning rate cut when validation stops improving.

The corpus is made up by a tiny grammar, and weights come from numpy's RandomState, so PyTorch
and minitensor start from the same numbers: the losses printed must agree.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rs = np.random.RandomState(0)


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, train_lines, valid_lines):
        self.dictionary = Dictionary()
        self.train = self.tokenize(train_lines)
        self.valid = self.tokenize(valid_lines)

    def tokenize(self, lines):
        """Each line's words then <eos>, as one long LongTensor of ids."""
        ids = []
        for line in lines:
            for word in line.split() + ["<eos>"]:
                ids.append(self.dictionary.add_word(word))
        return torch.tensor(ids, dtype=torch.int64)


def sentence():
    subject = rs.choice(["the cat", "the dog", "a bird", "my friend"])
    verb = rs.choice(["sees", "likes", "follows"])
    obj = rs.choice(["the cat", "the dog", "a bird", "the ball"])
    return f"{subject} {verb} {obj}" + (" today" if rs.rand() < 0.3 else "")


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    """Cut the id stream into bsz columns (dropping the remainder): shape (len // bsz, bsz)."""
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def evaluate(data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(epoch):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        # If we didn't, the model would try backpropagating all the way to start of the dataset.
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % log_interval == 0 and batch > 0:
            cur_loss = total_loss / log_interval
            print("| epoch {:3d} | {:3d} batches | lr {:02.2f} | loss {:5.3f} | ppl {:8.3f}".format(
                epoch, batch, lr, cur_loss, math.exp(cur_loss)))
            total_loss = 0.0


corpus = Corpus([sentence() for _ in range(120)], [sentence() for _ in range(20)])
batch_size, eval_batch_size, bptt, clip, log_interval = 4, 2, 8, 0.25, 10
train_data = batchify(corpus.train, batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
ntokens = len(corpus.dictionary)
print("vocabulary:", ntokens, "train:", tuple(train_data.shape), "valid:", tuple(val_data.shape))

model = RNNModel("LSTM", ntokens, 16, 16, 2, dropout=0.0, tie_weights=True).to(device)
with torch.no_grad():
    for name, p in model.named_parameters():
        p.copy_(torch.tensor(rs.uniform(-0.3, 0.3, size=tuple(p.shape)), dtype=torch.float32))
criterion = nn.NLLLoss()

lr, best_val_loss = 5.0, None
for epoch in range(1, 5):
    train(epoch)
    val_loss = evaluate(val_data)
    print("| end of epoch {:3d} | valid loss {:5.3f} | valid ppl {:8.3f}".format(epoch, val_loss, math.exp(val_loss)))
    if not best_val_loss or val_loss < best_val_loss:
        best_val_loss = val_loss
    else:
        lr /= 4.0  # anneal the learning rate when validation did not improve

# Greedy generation from the trained model, one word at a time, carrying the hidden state.
model.eval()
hidden = model.init_hidden(1)
input = torch.tensor([[corpus.dictionary.word2idx["the"]]], dtype=torch.long)
words = ["the"]
with torch.no_grad():
    for _ in range(12):
        output, hidden = model(input, hidden)
        word_idx = output[-1].argmax().item()
        input.fill_(word_idx)
        words.append(corpus.dictionary.idx2word[word_idx])
print("generated:", " ".join(words))
