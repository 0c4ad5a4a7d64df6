"""Module mechanics: registration, traversal order, modes, buffers, state dicts, repr, apply, hooks."""
import copy

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("mask", mt.ones(d, d), persistent=False)
        self.register_buffer("count", mt.zeros(1))

    def forward(self, x):
        return self.proj(self.norm(x))


class Net(nn.Module):
    """A tree using every container; the expected names below follow PyTorch's rules by hand."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 4)
        self.scale = nn.Parameter(mt.ones(1))
        self.blocks = nn.ModuleList([Block(4), Block(4)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3, bias=False)})
        self.drop = nn.Dropout(0.5)


# ---- registration ---------------------------------------------------------------------------------
def test_assignment_registers_parameters_modules_and_plain_attributes():
    m = nn.Module()
    m.w = nn.Parameter(mt.zeros(2))
    m.child = nn.Linear(2, 2)
    m.plain = mt.zeros(3)  # a bare Tensor is not a parameter (as in PyTorch)
    m.n = 7
    assert list(m._parameters) == ["w"]
    assert list(m._modules) == ["child"]
    assert [n for n, _ in m.named_parameters()] == ["w", "child.weight", "child.bias"]
    assert m.n == 7 and isinstance(m.plain, mt.Tensor)


def test_reassigning_a_name_moves_it_between_kinds():
    m = nn.Module()
    m.x = nn.Linear(1, 1)
    m.x = nn.Parameter(mt.zeros(1))
    assert "x" not in m._modules and "x" in m._parameters
    m.register_buffer("b", mt.zeros(1))
    m.b = mt.ones(1)  # assigning a Tensor to a buffer name updates the buffer
    assert m._buffers["b"].numpy(force=True)[0] == 1
    del m.x
    assert "x" not in m._parameters
    with pytest.raises(AttributeError):
        m.x


def test_assignment_errors_are_clear():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.zeros(1))  # before super().__init__()

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Early()
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="parameter 'weight'"):
        m.weight = mt.zeros(2, 2)
    with pytest.raises(TypeError, match="buffer"):
        m.register_buffer("buf", np.zeros(2))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("weight", mt.zeros(1))
    with pytest.raises(KeyError, match='"."'):
        m.register_buffer("a.b", mt.zeros(1))
    with pytest.raises(KeyError):
        m.add_module("forward", nn.ReLU())
    with pytest.raises(TypeError, match="unexpected arguments"):
        class Wrong(nn.Module):
            def __init__(self):
                super().__init__(4)

        Wrong()


def test_parameter_shares_memory_and_is_a_leaf():
    t = mt.randn(3, requires_grad=True)
    y = t * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.requires_grad and p.numpy(force=True) is y.numpy(force=True)
    assert not nn.Parameter(mt.zeros(2), requires_grad=False).requires_grad
    assert repr(nn.Parameter(mt.zeros(1))).startswith("Parameter containing:\n")
    assert nn.Parameter([1.0, 2.0]).dtype == mt.get_default_dtype()


# ---- traversal order --------------------------------------------------------------------------------
def test_named_parameters_modules_children_buffers_follow_pytorch_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "embed.weight",
        "blocks.0.norm.weight", "blocks.0.norm.bias", "blocks.0.proj.weight", "blocks.0.proj.bias",
        "blocks.1.norm.weight", "blocks.1.norm.bias", "blocks.1.proj.weight", "blocks.1.proj.bias",
        "heads.a.weight", "heads.a.bias", "heads.b.weight",
    ]
    assert [n for n, _ in net.named_modules()] == [
        "", "embed", "blocks", "blocks.0", "blocks.0.norm", "blocks.0.proj", "blocks.1", "blocks.1.norm",
        "blocks.1.proj", "heads", "heads.a", "heads.b", "drop",
    ]
    assert [n for n, _ in net.named_children()] == ["embed", "blocks", "heads", "drop"]
    assert [n for n, _ in net.named_buffers()] == ["blocks.0.mask", "blocks.0.count", "blocks.1.mask", "blocks.1.count"]
    assert len(list(net.parameters())) == 13 and len(list(net.modules())) == 13
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.blocks.named_parameters(prefix="blocks")][:1] == ["blocks.0.norm.weight"]


def test_shared_modules_and_tied_parameters():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    # Traversals list a shared object once ...
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    # ... but the state dict names it at every path, as PyTorch's does.
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]

    emb, head = nn.Embedding(6, 3), nn.Linear(3, 6, bias=False)
    head.weight = emb.weight
    tied = nn.Sequential(emb, head)
    assert [n for n, _ in tied.named_parameters()] == ["0.weight"]
    assert list(tied.state_dict()) == ["0.weight", "1.weight"]
    sd = {"0.weight": mt.full((6, 3), 2.0), "1.weight": mt.full((6, 3), 2.0)}
    tied.load_state_dict(sd)
    assert head.weight is emb.weight and float(head.weight.numpy(force=True)[0, 0]) == 2.0


def test_get_submodule():
    net = Net()
    assert net.get_submodule("blocks.1.proj") is net.blocks[1].proj
    assert net.get_submodule("") is net
    with pytest.raises(AttributeError, match="nope"):
        net.get_submodule("blocks.nope")


# ---- modes, grads, apply ------------------------------------------------------------------------------
def test_train_eval_propagate_to_every_descendant():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.blocks.train()
    assert net.blocks[1].norm.training and not net.training and not net.heads.a.training
    with pytest.raises(ValueError):
        net.train("yes")


def test_train_calls_each_childs_own_train():
    # A child overriding train() (e.g. to keep a frozen part in eval) must be honoured.
    class Frozen(nn.Linear):
        def train(self, mode=True):
            return super().train(False)

    net = nn.Sequential(nn.Linear(1, 1), Frozen(1, 1))
    net.train()
    assert net[0].training and not net[1].training


def test_dropout_follows_eval():
    mt.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = mt.ones(1000)
    y = drop(x).numpy(force=True)
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    drop.eval()
    assert drop(x) is x


def test_zero_grad_to_none_and_to_zeros():
    lin = nn.Linear(3, 2)
    lin(mt.randn(4, 3)).sum().backward()
    g = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is g and not g.numpy(force=True).any()  # zeroed in place
    lin(mt.randn(4, 3)).sum().backward()
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_apply_visits_children_before_parents():
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU(), nn.Tanh()))
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Tanh", "Sequential", "Sequential"]

    def init_linear(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)

    net.apply(init_linear)
    assert not net[0].weight.numpy(force=True).any()


def test_forward_hooks_and_missing_forward():
    lin = nn.Linear(2, 2)
    captured = []
    handle = lin.register_forward_hook(lambda mod, inp, out: captured.append(out.shape))
    lin(mt.randn(3, 2))
    handle.remove()
    lin(mt.randn(3, 2))
    assert captured == [(3, 2)]
    lin.register_forward_pre_hook(lambda mod, inp: (inp[0] * 0,))
    assert not (lin(mt.ones(1, 2)) - lin.bias).numpy(force=True).any()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_to_double_casts_parameters_and_buffers():
    b = Block(3).double()
    assert all(t.dtype == mt.float64 for t in list(b.parameters()) + list(b.buffers()))


def test_deepcopy_copies_parameters():
    net = Net()
    other = copy.deepcopy(net)
    other.blocks[0].proj.weight.data[...] = 0
    assert net.blocks[0].proj.weight.numpy(force=True).any()
    assert [n for n, _ in other.named_parameters()] == [n for n, _ in net.named_parameters()]


# ---- state dicts ------------------------------------------------------------------------------------
def test_state_dict_has_parameters_and_persistent_buffers_only():
    sd = Block(4).state_dict()
    # A module's own entries come before its children's.
    assert list(sd) == ["count", "norm.weight", "norm.bias", "proj.weight", "proj.bias"]
    assert sd["proj.weight"].shape == (4, 4) and not sd["proj.weight"].requires_grad


def test_load_state_dict_copies_in_place_and_round_trips():
    src, dst = Net(), Net()
    weight = dst.blocks[0].proj.weight
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert dst.blocks[0].proj.weight is weight  # same Parameter object: optimizers keep working
    for (n, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(force=True), b.numpy(force=True), err_msg=n)
    # The loaded arrays are copies, not aliases of the source.
    src.embed.weight.data[...] = 0
    assert dst.embed.weight.numpy(force=True).any()


def snapshot(model):
    return {k: v.numpy(force=True).copy() for k, v in model.state_dict().items()}


def assert_unchanged(model, before):
    after = snapshot(model)
    assert list(after) == list(before)
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)


def test_load_state_dict_names_every_problem_and_changes_nothing():
    net = Net()
    before = snapshot(net)
    bad = {k: mt.zeros(*v.shape) for k, v in net.state_dict().items()}
    del bad["scale"], bad["heads.b.weight"]
    bad["extra.weight"] = mt.zeros(1)
    bad["blocks.0.proj.weight"] = mt.zeros(4, 5)
    bad["blocks.1.count"] = np.zeros(1, dtype=np.complex64)  # (an integer value is cast, as PyTorch)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(bad)
    msg = str(err.value)
    for needle in ['"scale"', '"heads.b.weight"', '"extra.weight"', "size mismatch for blocks.0.proj.weight",
                   "Size([4, 5])", "dtype mismatch for blocks.1.count"]:
        assert needle in msg
    assert msg.index("Missing") < msg.index("Unexpected") < msg.index("size mismatch")
    assert_unchanged(net, before)


def test_strict_false_returns_missing_and_unexpected_but_still_checks_shapes():
    lin = nn.Linear(3, 2)
    result = lin.load_state_dict({"weight": mt.ones(2, 3), "other": mt.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert (lin.weight.numpy(force=True) == 1).all()
    before = snapshot(lin)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        lin.load_state_dict({"weight": mt.ones(3, 3)}, strict=False)
    assert_unchanged(lin, before)


def test_load_state_dict_accepts_numpy_and_casts_float_precision():
    lin = nn.Linear(2, 2)
    lin.load_state_dict({"weight": np.full((2, 2), 0.5, dtype=np.float64), "bias": np.zeros(2)})
    assert lin.weight.dtype == mt.float32 and (lin.weight.numpy(force=True) == 0.5).all()
    with pytest.raises(RuntimeError, match="dtype mismatch for bias"):
        lin.load_state_dict({"weight": np.zeros((2, 2)), "bias": np.array(["a", "b"])})
    with pytest.raises(TypeError):
        lin.load_state_dict([("weight", np.zeros((2, 2)))])


def test_load_state_dict_of_swapped_aliases():
    # Values that alias the model's own arrays must still land where their names say.
    seq = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
    a, b = seq[0].weight.numpy(force=True).copy(), seq[1].weight.numpy(force=True).copy()
    sd = seq.state_dict()
    seq.load_state_dict({"0.weight": sd["1.weight"], "1.weight": sd["0.weight"]})
    np.testing.assert_array_equal(seq[0].weight.numpy(force=True), b)
    np.testing.assert_array_equal(seq[1].weight.numpy(force=True), a)


def test_assign_true_swaps_in_the_given_tensors():
    lin = nn.Linear(2, 1)
    w = np.full((1, 2), 3.0, dtype=np.float64)
    lin.load_state_dict({"weight": w, "bias": np.zeros(1)}, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.dtype == mt.float64 and lin.weight.requires_grad


# ---- repr ---------------------------------------------------------------------------------------
def test_repr_nests_like_pytorch():
    expected = (
        "Net(\n"
        "  (embed): Embedding(5, 4)\n"
        "  (blocks): ModuleList(\n"
        "    (0-1): 2 x Block(\n"
        "      (norm): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        "      (proj): Linear(in_features=4, out_features=4, bias=True)\n"
        "    )\n"
        "  )\n"
        "  (heads): ModuleDict(\n"
        "    (a): Linear(in_features=4, out_features=2, bias=True)\n"
        "    (b): Linear(in_features=4, out_features=3, bias=False)\n"
        "  )\n"
        "  (drop): Dropout(p=0.5, inplace=False)\n"
        ")"
    )
    assert repr(Net()) == expected
    assert repr(nn.Module()) == "Module()"
    assert repr(nn.ModuleList()) == "ModuleList()"
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(1, 2))
    assert "(0): Linear" in repr(seq) and "(2): Linear" in repr(seq)  # Sequential does not group


def test_multiline_extra_repr():
    class Two(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Two()) == "Two(\n  a=1\n  b=2\n)"


def test_reading_a_registered_name_always_sees_the_stores():
    """`module.weight` is read through a descriptor the class gets when an instance registers the
    name (to skip the failed lookup that reaching __getattr__ costs): it must behave exactly as
    __getattr__ did. The stores stay the truth, a plain attribute of another instance wins, a
    deleted name is gone, and nothing leaks onto Module itself or onto the class level."""

    class Two(nn.Module):
        def __init__(self, as_parameter, early=False):
            if early:
                self.scale  # before Module.__init__: no stores yet
            super().__init__()
            if as_parameter:
                self.scale = nn.Parameter(mt.ones(1))
            else:
                self.scale = 0.5

    a, b = Two(True), Two(False)
    assert isinstance(a.scale, nn.Parameter) and a.scale is a._parameters["scale"]
    assert b.scale == 0.5 and "scale" not in b._parameters
    replacement = nn.Parameter(mt.zeros(1))
    a._parameters["scale"] = replacement  # a store changed directly is seen at once
    assert a.scale is replacement
    del a.scale
    with pytest.raises(AttributeError, match="'Two' object has no attribute 'scale'"):
        a.scale
    with pytest.raises(AttributeError):
        Two.scale  # no class attribute to read, as before
    with pytest.raises(AttributeError, match="scale"):
        Two(True, early=True)
    block = Block(4)
    assert block.mask is block._buffers["mask"] and block.proj is block._modules["proj"]
    block.proj = None  # a child set to None reads as None
    assert block.proj is None
    bare = nn.Module()
    bare.w = nn.Parameter(mt.zeros(2))
    assert bare.w is bare._parameters["w"] and "w" not in vars(nn.Module)
