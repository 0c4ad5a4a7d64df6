"""A small transformer language model in the manner of "Language Modeling with nn.Transformer", then
"Saving and Loading Models", written for PyTorch: a PositionalEncoding module with register_buffer and
its own dropout, the causal mask torch.triu(torch.ones(sz, sz) * float('-inf'), diagonal=1),
nn.TransformerEncoder over (seq, batch, d_model) input, batchify/get_batch, clip_grad_norm_, StepLR,
math.exp(loss) as perplexity; then torch.save(model.state_dict(), path) into a temporary directory,
torch.load(path, weights_only=True), load_state_dict into a fresh model and model.eval().

Dropout is 0.0 (the libraries draw different masks); the weights are set from fixed numbers.
"""
import math
import os
import tempfile

import torch
from torch import Tensor, nn
from torch.nn import TransformerEncoder, TransformerEncoderLayer


class TransformerModel(nn.Module):

    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int,
                 nlayers: int, dropout: float = 0.5):
        super().__init__()
        self.model_type = "Transformer"
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)

        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        with torch.no_grad():
            weight = self.embedding.weight
            weight.copy_(initrange * torch.sin(torch.arange(weight.numel()) * 1.37).view_as(weight))
            self.linear.bias.zero_()
            self.linear.weight.copy_(
                initrange * torch.cos(torch.arange(self.linear.weight.numel()) * 0.83).view_as(self.linear.weight))

    def forward(self, src: Tensor, src_mask: Tensor = None) -> Tensor:
        """
        Arguments:
            src: Tensor, shape ``[seq_len, batch_size]``
            src_mask: Tensor, shape ``[seq_len, seq_len]``

        Returns:
            output Tensor of shape ``[seq_len, batch_size, ntoken]``
        """
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = generate_square_subsequent_mask(len(src))
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output


def generate_square_subsequent_mask(sz: int) -> Tensor:
    """Generates an upper-triangular matrix of ``-inf``, with zeros on and below the diagonal."""
    return torch.triu(torch.ones(sz, sz) * float("-inf"), diagonal=1)


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x: Tensor) -> Tensor:
        """
        Arguments:
            x: Tensor, shape ``[seq_len, batch_size, embedding_dim]``
        """
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


def batchify(data: Tensor, bsz: int) -> Tensor:
    """Divides the data into ``bsz`` separate sequences, removing extra elements that wouldn't cleanly fit."""
    seq_len = data.size(0) // bsz
    data = data[:seq_len * bsz]
    data = data.view(bsz, seq_len).t().contiguous()
    return data


def get_batch(source: Tensor, i: int):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


# A token stream with structure to learn: counting up by one or two, modulo the vocabulary.
ntokens = 11
stream = [0]
for k in range(1, 240):
    stream.append((stream[-1] + 1 + (k // 7) % 2) % ntokens)
train_data = batchify(torch.tensor(stream[:200], dtype=torch.long), 4)
val_data = batchify(torch.tensor(stream[200:], dtype=torch.long), 2)
print("train", tuple(train_data.shape), "val", tuple(val_data.shape))
print(generate_square_subsequent_mask(3))

bptt = 10
emsize, d_hid, nlayers, nhead, dropout = 16, 32, 2, 2, 0.0
model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout)
with torch.no_grad():
    for name, p in model.transformer_encoder.named_parameters():
        if "norm" not in name:
            p.copy_(0.15 * torch.sin(torch.arange(p.numel()) * 0.61 + len(name)).view_as(p))
print(sum(p.numel() for p in model.parameters()), "parameters;", list(model.state_dict())[:3])

criterion = nn.CrossEntropyLoss()
lr = 0.5  # learning rate
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)


def train(model: nn.Module) -> None:
    model.train()  # turn on train mode
    total_loss = 0.
    num_batches = len(train_data) // bptt
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        output = model(data)
        output_flat = output.view(-1, ntokens)
        loss = criterion(output_flat, targets)

        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()

        total_loss += loss.item()
    lr = scheduler.get_last_lr()[0]
    cur_loss = total_loss / num_batches
    ppl = math.exp(cur_loss)
    print(f"| epoch {epoch:3d} | {num_batches:5d} batches | lr {lr:02.2f} | loss {cur_loss:5.2f} | ppl {ppl:8.2f}")


def evaluate(model: nn.Module, eval_data: Tensor) -> float:
    model.eval()  # turn on evaluation mode
    total_loss = 0.
    with torch.no_grad():
        for i in range(0, eval_data.size(0) - 1, bptt):
            data, targets = get_batch(eval_data, i)
            seq_len = data.size(0)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            total_loss += seq_len * criterion(output_flat, targets).item()
    return total_loss / (len(eval_data) - 1)


with tempfile.TemporaryDirectory() as tempdir:
    best_model_params_path = os.path.join(tempdir, "best_model_params.pt")
    best_val_loss = float("inf")
    for epoch in range(1, 4):
        train(model)
        val_loss = evaluate(model, val_data)
        val_ppl = math.exp(val_loss)
        print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | valid ppl {val_ppl:8.2f}")
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            torch.save(model.state_dict(), best_model_params_path)
        scheduler.step()

    fresh = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout)
    fresh.load_state_dict(torch.load(best_model_params_path, weights_only=True))  # load best model states
    fresh.eval()

print("reloaded val loss", round(evaluate(fresh, val_data), 6), "best", round(best_val_loss, 6))
with torch.no_grad():
    prompt = torch.tensor([[0], [1], [2], [3]])
    print("next token after 0 1 2 3:", fresh(prompt)[-1].argmax(-1).item())
