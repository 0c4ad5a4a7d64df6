"""A GRU encoder and a GRU decoder with additive (Bahdanau) attention, written for PyTorch: they
learn to reverse short digit sequences, with teacher forcing on some batches, NLLLoss and Adam.

Weights and the teacher-forcing coin flips come from numpy's RandomState, so PyTorch and
minitensor start from the same numbers and take the same path: the losses printed must agree.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
PAD_token, SOS_token, EOS_token = 0, 1, 2
n_digits, MAX_LENGTH, hidden_size, batch_size = 8, 7, 24, 16
n_words = 3 + n_digits
rs = np.random.RandomState(0)


def make_pairs(n):
    """Source: digits then EOS, padded; target: the digits reversed then EOS, padded."""
    src = np.full((n, MAX_LENGTH), PAD_token, dtype=np.int64)
    tgt = np.full((n, MAX_LENGTH), PAD_token, dtype=np.int64)
    for row in range(n):
        digits = rs.randint(3, n_words, size=rs.randint(3, MAX_LENGTH))
        src[row, :len(digits) + 1] = list(digits) + [EOS_token]
        tgt[row, :len(digits) + 1] = list(digits[::-1]) + [EOS_token]
    return src, tgt


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys, pad_mask):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))  # (B, T, 1)
        scores = scores.squeeze(2).unsqueeze(1)  # (B, 1, T)
        scores = scores.masked_fill(pad_mask.unsqueeze(1), float("-inf"))
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)  # (B, 1, H)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.0):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, pad_mask, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs, pad_mask)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing: the true previous token
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # its own guess, outside the graph
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs, pad_mask):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs, pad_mask)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion, teacher_forcing_ratio):
    total_loss = 0
    for input_tensor, target_tensor in dataloader:
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        pad_mask = input_tensor == PAD_token
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        use_teacher_forcing = rs.rand() < teacher_forcing_ratio
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, pad_mask,
                                        target_tensor if use_teacher_forcing else None)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        total_loss += loss.item()
    return total_loss / len(dataloader)


encoder = EncoderRNN(n_words, hidden_size).to(device)
decoder = AttnDecoderRNN(hidden_size, n_words).to(device)
with torch.no_grad():
    for module in (encoder, decoder):
        for name, p in module.named_parameters():
            p.copy_(torch.tensor(rs.uniform(-0.3, 0.3, size=tuple(p.shape)), dtype=torch.float32))
print("parameters:", sum(p.numel() for m in (encoder, decoder) for p in m.parameters()))

src, tgt = make_pairs(64)
train_data = TensorDataset(torch.LongTensor(src).to(device), torch.LongTensor(tgt).to(device))
train_dataloader = DataLoader(train_data, batch_size=batch_size)

encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.02)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.02)
criterion = nn.NLLLoss(ignore_index=PAD_token)
for epoch in range(1, 21):
    loss = train_epoch(train_dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion, 0.5)
    print(f"epoch {epoch}: loss {loss:.5f}")

encoder.eval()
decoder.eval()
with torch.no_grad():
    input_tensor, target_tensor = train_data[:4]
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden, input_tensor == PAD_token)
    _, decoded_ids = decoder_outputs.topk(1)
    print("decoded:", decoded_ids.squeeze(-1).tolist())
    print("target: ", target_tensor.tolist())
    print("attention on the first output:", [round(a, 3) for a in attentions[0, 0].tolist()])
