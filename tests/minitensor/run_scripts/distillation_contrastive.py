"""Knowledge distillation in the manner of the "Knowledge Distillation Tutorial", and a SimCLR-style
contrastive loss, written for PyTorch: a teacher in eval mode under torch.no_grad(), soft targets from
`nn.functional.softmax(teacher_logits / T, dim=-1)` against `log_softmax(student_logits / T, dim=-1)` scaled
by `T**2` (by hand and as `nn.KLDivLoss(reduction="batchmean")`, also with log_target=True), the cosine loss
variant with `nn.CosineEmbeddingLoss()` on `F.avg_pool1d`-reduced hidden states and
`torch.ones(inputs.size(0))`, the AMP recipe's `torch.autocast(..., enabled=use_amp)` and
`torch.amp.GradScaler(enabled=use_amp)` with scale/step/update, then an InfoNCE loss:
`F.normalize(z, dim=1)`, `z @ z.T / tau` with its diagonal masked through `torch.eye(n, dtype=torch.bool)`
and `masked_fill`, `F.cross_entropy(logits, torch.arange(n))` on the positives' indices; and nn.init's
initialisers (kaiming_uniform_, xavier_normal_, trunc_normal_, orthogonal_, calculate_gain, eye_, dirac_),
shown only through facts that do not depend on the random numbers.

Every weight and input is made here from fixed numbers, and the student trains without dropout (the
libraries' dropout masks draw differently); the teacher keeps its dropout layer, in eval mode.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(42)
device = "cuda" if torch.cuda.is_available() else "cpu"
use_amp = torch.cuda.is_available()


class DeepNN(nn.Module):
    def __init__(self, num_classes=3):
        super(DeepNN, self).__init__()
        self.features = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU())
        self.classifier = nn.Sequential(nn.Linear(8, 12), nn.ReLU(), nn.Dropout(0.1), nn.Linear(12, num_classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x)


class LightNN(nn.Module):
    def __init__(self, num_classes=3, dropout=0.1):
        super(LightNN, self).__init__()
        self.features = nn.Sequential(nn.Linear(6, 4), nn.ReLU())
        self.classifier = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, num_classes))

    def forward(self, x, return_hidden=False):
        hidden = self.features(x)
        out = self.classifier(hidden)
        return (out, hidden) if return_hidden else out


def set_fixed(model, scale):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(scale * torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.61 + 0.29 * k)).view(p.shape))
    return model


inputs_all = torch.sin(torch.arange(24 * 6, dtype=torch.float64) * 0.37).view(24, 6).float()
labels_all = (inputs_all[:, 0] > 0).long() + (inputs_all[:, 1] > 0.5).long()
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(inputs_all, labels_all), batch_size=8)
teacher = set_fixed(DeepNN(num_classes=3).to(device), 0.5)
new_student = lambda: set_fixed(LightNN(num_classes=3, dropout=0.0).to(device), 0.6)  # noqa: E731


def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T, soft_target_loss_weight,
                                 ce_loss_weight, device):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)
    teacher.eval()  # Teacher set to evaluation mode
    student.train()  # Student to train mode
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            # Forward pass with the teacher model - do not save gradients here as we do not change the teacher's weights
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            soft_targets_loss = (torch.sum(soft_targets * (soft_targets.log() - soft_prob))
                                 / soft_prob.size()[0] * (T**2))
            label_loss = ce_loss(student_logits, labels)
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")


def test(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, labels in loader:
            outputs = model(inputs)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    accuracy = 100 * correct / total
    print(f"Test Accuracy: {accuracy:.2f}%")
    return accuracy


student = new_student()
train_knowledge_distillation(teacher=teacher, student=student, train_loader=train_loader, epochs=3,
                             learning_rate=0.01, T=2, soft_target_loss_weight=0.25, ce_loss_weight=0.75, device=device)
test(student, train_loader)

# the same soft-target loss as nn.KLDivLoss, in both of its target forms
T = 2
kl = nn.KLDivLoss(reduction="batchmean")
with torch.no_grad():
    t_logits, s_logits = teacher(inputs_all[:8]), student(inputs_all[:8])
by_hand = torch.sum(F.softmax(t_logits / T, dim=-1) * (F.log_softmax(t_logits / T, dim=-1)
                                                        - F.log_softmax(s_logits / T, dim=-1))) / 8 * T * T
by_kl = kl(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1)) * T * T
by_log = nn.KLDivLoss(reduction="batchmean", log_target=True)(F.log_softmax(s_logits / T, dim=-1),
                                                              F.log_softmax(t_logits / T, dim=-1)) * T * T
print(by_hand, by_kl, by_log, torch.allclose(by_hand, by_kl), F.kl_div(s_logits.log_softmax(1), t_logits.softmax(1),
                                                                      reduction="sum"))

# the cosine loss variant: the student's hidden state against the teacher's, pooled to the same width
cosine_loss = nn.CosineEmbeddingLoss()
student = new_student()
optimizer = optim.SGD(student.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device, enabled=use_amp)
for inputs, labels in train_loader:
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16, enabled=use_amp):
        with torch.no_grad():
            teacher_hidden = F.avg_pool1d(teacher.features(inputs).unsqueeze(1), kernel_size=2).squeeze(1)
        logits, student_hidden = student(inputs, return_hidden=True)
        hidden_rep_loss = cosine_loss(student_hidden, teacher_hidden, target=torch.ones(inputs.size(0)).to(device))
        loss = 0.25 * hidden_rep_loss + 0.75 * F.cross_entropy(logits, labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(f"{hidden_rep_loss.item():.6f} {loss.item():.6f}", loss.dtype, teacher_hidden.shape)
print(scaler.is_enabled(), scaler.get_scale(), student.features[0].weight.grad.sum())

# InfoNCE: two views of each sample, the other view is the positive
tau = 0.5
projector = set_fixed(nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4)), 0.7)
x = inputs_all[:6]
views = torch.cat([x, x.flip(1) * 0.9 + 0.05], dim=0)
z = F.normalize(projector(views), dim=1)
n = z.shape[0]
sim = z @ z.T / tau
mask = torch.eye(n, dtype=torch.bool)
sim = sim.masked_fill(mask, float('-inf'))
pos = torch.arange(n).roll(n // 2)
loss = F.cross_entropy(sim, pos)
loss.backward()
print(z.norm(dim=1), sim[0], loss)
print(projector[0].weight.grad.sum(), (sim.argmax(1) == pos).float().mean())
print(F.cosine_similarity(z[:3], z[6:9]), F.pairwise_distance(z[:2], z[6:8]))

# initialisers: only what holds whatever the random numbers
w = torch.empty(6, 10)
nn.init.kaiming_uniform_(w, a=math.sqrt(5))
bound = 1 / math.sqrt(10)
print(w.abs().max().item() <= bound, nn.init.calculate_gain('relu'), nn.init.calculate_gain('leaky_relu', 0.2),
      nn.init.calculate_gain('tanh'))
nn.init.orthogonal_(w)
print(torch.allclose(w @ w.T, torch.eye(6), atol=1e-5))
nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
print(w.min().item() >= -0.04, w.max().item() <= 0.04)
nn.init.xavier_normal_(w, gain=nn.init.calculate_gain('relu'))
print(w.shape, w.dtype, w.requires_grad)
nn.init.eye_(w)
print(w.sum(), w.diagonal().sum())
c = torch.empty(2, 2, 3, 3)
nn.init.dirac_(c)
print(F.conv2d(torch.arange(18.).view(1, 2, 3, 3), c, padding=1).equal(torch.arange(18.).view(1, 2, 3, 3)))
