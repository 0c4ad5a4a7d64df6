"""Against PyTorch (skipped when it is not installed): names, orders, reprs, state dicts, training.

The model code below is written once and run with either library passed in as `lib`, which is the
promise of the API: tutorial code runs with only the imports changed.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402

# a comparison with PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow


def tree(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(approximate="tanh"), nn.Linear(2 * d, d))
            self.drop = nn.Dropout(0.0)
            self.register_buffer("tril", lib.tril(lib.ones(3, 3)), persistent=False)
            self.register_buffer("steps", lib.zeros(1))

        def forward(self, x):
            return x + self.drop(self.ff(self.ln(x)))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(7, 4, padding_idx=0)
            self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "aux": nn.Sequential(nn.Tanh(), nn.Linear(4, 1))})
            self.shared = self.heads["cls"]  # one module under two names
            self.out = nn.Linear(4, 7, bias=False)
            self.out.weight = self.tok.weight  # tied weights
            self.scale = nn.Parameter(lib.ones(1))
            self.act = nn.Softmax(dim=-1)
            self.idn = nn.Identity()
            self.sig = nn.Sigmoid()
            self.relu = nn.ReLU()

        def forward(self, idx):
            x = self.tok(idx)
            for b in self.blocks:
                x = b(x)
            return self.heads["cls"](x) * self.scale, self.out(x)

    return Model()


def names(pairs):
    return [n for n, _ in pairs]


def test_traversals_and_state_dict_names_equal_pytorchs():
    a, b = tree(mt), tree(torch)
    assert names(a.named_parameters()) == names(b.named_parameters())
    assert names(a.named_parameters(remove_duplicate=False)) == names(b.named_parameters(remove_duplicate=False))
    assert names(a.named_modules()) == names(b.named_modules())
    assert names(a.named_modules(remove_duplicate=False)) == names(b.named_modules(remove_duplicate=False))
    assert names(a.named_children()) == names(b.named_children())
    assert names(a.named_buffers()) == names(b.named_buffers())
    assert names(a.blocks[1].named_parameters(prefix="x")) == names(b.blocks[1].named_parameters(prefix="x"))
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    assert [tuple(v.shape) for v in sa.values()] == [tuple(v.shape) for v in sb.values()]


def test_repr_equals_pytorchs():
    assert repr(tree(mt)) == repr(tree(torch))


def test_train_eval_flags_equal_pytorchs():
    a, b = tree(mt), tree(torch)
    a.eval(), b.eval()
    a.blocks[0].train(), b.blocks[0].train()
    assert [m.training for m in a.modules()] == [m.training for m in b.modules()]


def test_state_dict_round_trip_minitensor_to_torch_to_minitensor():
    a, b = tree(mt), tree(torch)
    result = b.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in a.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    idx = np.array([[1, 2, 0], [3, 3, 6]])
    with torch.no_grad():
        out_t = [o.numpy() for o in b.eval()(torch.from_numpy(idx))]
    out_m = [o.numpy(force=True) for o in a.eval()(mt.tensor(idx))]
    for x, y in zip(out_m, out_t):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        for p in b.parameters():
            p.add_(1.0)
    back = tree(mt)
    back.load_state_dict({k: v.detach().numpy() for k, v in b.state_dict().items()})
    for (k, v), (_, w) in zip(back.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(v.numpy(force=True), w.numpy(), err_msg=k)
        assert v.dtype == w.numpy().dtype


def test_pytorch_rejects_what_we_reject():
    # A shape mismatch is an error in both libraries, and both name the key.
    sd = {k: v.detach().numpy() for k, v in tree(torch).state_dict().items()}
    sd["out.weight"] = np.zeros((7, 5), dtype=np.float32)
    for lib, load in ((torch, lambda m: m.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})),
                      (mt, lambda m: m.load_state_dict(sd))):
        with pytest.raises(RuntimeError, match="size mismatch for out.weight"):
            load(tree(lib))


def mlp(lib, d_in, d_hidden, n_classes):
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(d_in, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden), nn.Dropout(0.0),
        nn.Linear(d_hidden, d_hidden), nn.Tanh(), nn.Linear(d_hidden, n_classes),
    )


def train_losses(lib, model, x, y, steps):
    """The same training loop for both libraries: AdamW with param groups, clipping and a schedule."""
    F = lib.nn.functional
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.ndim == 2]
    no_decay = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.ndim == 2)]
    opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=0.05, betas=(0.9, 0.95), amsgrad=True)
    sched = lib.optim.lr_scheduler.SequentialLR(
        opt,
        [lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=3),
         lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps - 3)],
        milestones=[3],
    )
    losses, norms = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        norms.append(float(lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
        opt.step()
        sched.step()
        losses.append(loss.item())
    return np.array(losses), np.array(norms), {k: np.asarray(v.detach().numpy()) for k, v in model.state_dict().items()}


def test_same_training_code_gives_the_same_losses_in_float64():
    mt.set_default_dtype(mt.float64)
    try:
        mt.manual_seed(0)
        ours = mlp(mt, 5, 8, 3)
    finally:
        mt.set_default_dtype(mt.float32)
    theirs = mlp(torch, 5, 8, 3).double()
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 5)), rng.integers(0, 3, 16)
    la, na, sa = train_losses(mt, ours, mt.tensor(x), mt.tensor(y), 10)
    lb, nb, sb = train_losses(torch, theirs, torch.from_numpy(x), torch.from_numpy(y), 10)
    assert la[-1] < la[0]
    np.testing.assert_allclose(la, lb, rtol=1e-10)
    np.testing.assert_allclose(na, nb, rtol=1e-10)
    for k in sa:
        assert sa[k].dtype == np.float64
        np.testing.assert_allclose(sa[k], sb[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_the_interop_document_runs(tmp_path, monkeypatch, capsys):
    # docs/pytorch_interop.md promises its code works: run every python block in order.
    import pathlib
    import re

    doc = pathlib.Path(__file__).resolve().parents[3] / "docs" / "pytorch_interop.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)
    assert capsys.readouterr().out.split() == ["True", "True", "True"]
    back, theirs = namespace["back"], namespace["theirs"]
    for a, b in zip(back.state_dict().values(), theirs.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(force=True), b.numpy())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["from_torch.npz", "tiny.npz"]
