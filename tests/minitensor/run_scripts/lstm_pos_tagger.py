"""An LSTM part-of-speech tagger in the manner of "Sequence Models and Long Short-Term Memory Networks",
written for PyTorch: nn.LSTM fed one step at a time with a (h, c) tuple and then a whole sequence via
view(len(inputs), 1, -1), prepare_sequence with torch.tensor(idxs, dtype=torch.long), nn.Embedding,
hidden2tag on lstm_out.view(len(sentence), -1), F.log_softmax, NLLLoss, model.zero_grad(), optim.SGD.

Weights and inputs are set from fixed numbers, so both libraries compute the same.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def fill_(module, scale):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(scale * torch.cos(torch.arange(p.numel()) * 2.39 + k).reshape(p.shape))


lstm = nn.LSTM(3, 3)  # Input dim is 3, output dim is 3
fill_(lstm, 0.4)
inputs = [torch.linspace(-1, 1, 3) * (k + 1) / 5 for k in range(5)]  # make a sequence of length 5

# Printed without a grad_fn (no_grad): PyTorch names the LSTM output's node after its fused CPU kernel
# (MkldnnRnnLayerBackward0), a detail of its build that minitensor's composed LSTM has no counterpart for.
torch.set_grad_enabled(False)
# initialize the hidden state.
hidden = (torch.full((1, 1, 3), 0.1), torch.full((1, 1, 3), -0.1))
for i in inputs:
    # Step through the sequence one element at a time.
    # after each step, hidden contains the hidden state.
    out, hidden = lstm(i.view(1, 1, -1), hidden)

# alternatively, the entire sequence all at once: out holds every hidden state, hidden the last
inputs = torch.cat(inputs).view(len(inputs), 1, -1)
hidden = (torch.full((1, 1, 3), 0.1), torch.full((1, 1, 3), -0.1))  # clean out hidden state
out, hidden = lstm(inputs, hidden)
print(out)
print(hidden)
torch.set_grad_enabled(True)


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    # Tags are: DET - determiner; NN - noun; V - verb
    # For example, the word "The" is a determiner
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
]
word_to_ix = {}
# For each words-list (sentence) and tags-list in each tuple of training_data
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:  # word has not been assigned an index yet
            word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
print(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index

# These will usually be more like 32 or 64 dimensional.
EMBEDDING_DIM = 6
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):

    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.hidden_dim = hidden_dim

        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

        # The LSTM takes word embeddings as inputs, and outputs hidden states
        # with dimensionality hidden_dim.
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)

        # The linear layer that maps from hidden state space to tag space
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
fill_(model, 0.3)
fill_(model.word_embeddings, 1.0)
print(model)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.5)

# See what the scores are before training
# Note that element i,j of the output is the score for tag j for word i.
# Here we don't need to train, so the code is wrapped in torch.no_grad()
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)

for epoch in range(15):  # again, normally you would NOT do 300 epochs, it is toy data
    for sentence, tags in training_data:
        # Step 1. Remember that Pytorch accumulates gradients.
        # We need to clear them out before each instance
        model.zero_grad()

        # Step 2. Get our inputs ready for the network, that is, turn them into
        # Tensors of word indices.
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)

        # Step 3. Run our forward pass.
        tag_scores = model(sentence_in)

        # Step 4. Compute the loss, gradients, and update the parameters by
        #  calling optimizer.step()
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch}: loss {loss.item():.6f}")

# See what the scores are after training
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)

    # The sentence is "the dog ate the apple".  i,j corresponds to score for tag j
    # for word i. The predicted tag is the maximum scoring tag.
    # The predicted tag of each word is its row's largest score: DET NN V DET NN when it has learnt.
    print(tag_scores)
    print(tag_scores.argmax(dim=1))
