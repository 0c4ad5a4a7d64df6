"""PyTorch's "Reproducibility" notes, written for PyTorch: torch.manual_seed with Python's and numpy's
seeds, torch.initial_seed, torch.backends.cudnn.benchmark / .deterministic, torch.use_deterministic_algorithms
(with warn_only, and the debug mode it sets), a DataLoader with worker_init_fn=seed_worker and a seeded
torch.Generator, a generator's initial_seed, get_state / set_state, and torch.random.fork_rng.

The two libraries draw different numbers from the same seed, so what is printed is what the notes promise:
the same seed gives the same numbers, shuffles and model, run after run.
"""
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
random.seed(0)
np.random.seed(0)
print("initial seed", torch.initial_seed(), torch.random.initial_seed())

torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
print("cudnn", torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic, torch.backends.cudnn.enabled)

print(torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode())
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
      torch.get_deterministic_debug_mode())
torch.use_deterministic_algorithms(True, warn_only=True)
print(torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode())
torch.set_deterministic_debug_mode("error")
print(torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode())
torch.set_deterministic_debug_mode(0)
print(torch.are_deterministic_algorithms_enabled())
torch.use_deterministic_algorithms(True)

# deterministic ops run as usual: index_add_ and scatter_add_ on the CPU, and a small model's step
x = torch.zeros(5)
x.index_add_(0, torch.tensor([0, 2, 2, 4]), torch.tensor([1., 2., 3., 4.]))
print(x, torch.zeros(3).scatter_add_(0, torch.tensor([0, 1, 0, 2]), torch.ones(4)))


def draws(seed):
    torch.manual_seed(seed)
    return torch.rand(4), torch.randn(2, 2), torch.randint(0, 100, (3,)), torch.randperm(6)


a, b = draws(42), draws(42)
print("same numbers from the same seed:", all(torch.equal(u, v) for u, v in zip(a, b)),
      "other seed differs:", not torch.equal(draws(43)[0], a[0]))
print(torch.initial_seed(), sorted(a[3].tolist()), a[0].dtype, a[2].dtype, a[1].shape)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


g = torch.Generator()
print("fresh generator's seed", g.initial_seed())
g.manual_seed(0)
print("seeded", g.initial_seed())

train_dataset = TensorDataset(torch.arange(12.).view(12, 1), torch.arange(12) % 3)


def epoch_orders(generator_seed):
    g = torch.Generator()
    g.manual_seed(generator_seed)
    loader = DataLoader(
        train_dataset,
        batch_size=4,
        shuffle=True,
        num_workers=0,
        worker_init_fn=seed_worker,
        generator=g,
    )
    return [[batch[0].view(-1).int().tolist() for batch in loader] for _ in range(2)]


first, again = epoch_orders(0), epoch_orders(0)
print("same shuffles with the same generator seed:", first == again)
print("epochs differ:", first[0] != first[1], "every item once:", sorted(sum(first[0], [])) == list(range(12)))
print([len(b) for b in first[0]])

# a generator's state: saved, drawn from, put back, drawn again
state = g.get_state()
u = torch.rand(3, generator=g)
g.set_state(state)
print("replayed:", torch.equal(u, torch.rand(3, generator=g)))

# the global generator's state, and fork_rng, which puts it back
state = torch.get_rng_state()
u = torch.randn(3)
torch.set_rng_state(state)
print("global replayed:", torch.equal(u, torch.randn(3)))
before = torch.get_rng_state()
with torch.random.fork_rng():
    torch.manual_seed(123)
    torch.rand(10)
print("fork_rng put it back:", torch.equal(before, torch.get_rng_state()) if isinstance(before, torch.Tensor)
      else before == torch.get_rng_state())


def make_model(seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(16, 3)
    target = torch.randint(0, 2, (16,))
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
    return model, loss.item()


(m1, l1), (m2, l2) = make_model(7), make_model(7)
print("same training from the same seed:", l1 == l2,
      all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters())))
print(torch.are_deterministic_algorithms_enabled(), torch.initial_seed())
torch.use_deterministic_algorithms(False)
