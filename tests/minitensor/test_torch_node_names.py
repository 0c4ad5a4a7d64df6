"""grad_fn names as PyTorch prints them (`tensor(..., grad_fn=<MseLossBackward0>)`), where a tutorial prints
them: indexing named by its key, Sum/Mean by their overload, and composite ops by PyTorch's one node."""
import pytest

import minitensor as mt
import minitensor.nn.functional as mF

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.slow


def _x(lib):
    return lib.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()


CASES = {  # name: f(lib, F, x) -> a tensor made from x
    "select": lambda lib, F, x: x[0], "select_last": lambda lib, F, x: x[0:2, 1],
    "slice": lambda lib, F, x: x[:2], "slice_then_full": lambda lib, F, x: x[1:, :],
    "full_then_select": lambda lib, F, x: x[:, 1], "ellipsis_select": lambda lib, F, x: x[..., -1],
    "unsqueeze_key": lambda lib, F, x: x[0, None], "alias": lambda lib, F, x: x[0:3, 0:4],
    "int_tensor_key": lambda lib, F, x: x[lib.tensor([2, 0])], "list_key": lambda lib, F, x: x[[1, 1]],
    "mask_key": lambda lib, F, x: x[x > 0], "0d_index_key": lambda lib, F, x: x[lib.tensor(1)],
    "narrow": lambda lib, F, x: x.narrow(1, 0, 2),
    "sum": lambda lib, F, x: x.sum(), "sum_dim": lambda lib, F, x: x.sum(1), "mean": lambda lib, F, x: x.mean(),
    "mean_keepdim": lambda lib, F, x: x.mean(0, keepdim=True),
    "mse_loss": lambda lib, F, x: F.mse_loss(x, x.detach() * 0.5),
    "mse_loss_none": lambda lib, F, x: F.mse_loss(x, x.detach() * 0.5, reduction="none"),
    "bce_with_logits": lambda lib, F, x: F.binary_cross_entropy_with_logits(x, (x > 0).float()),
    "bce": lambda lib, F, x: F.binary_cross_entropy(lib.sigmoid(x), (x > 0).float(), reduction="sum"),
    "nll_loss": lambda lib, F, x: F.nll_loss(x, lib.tensor([0, 3, 1])),
    "nll_loss_none": lambda lib, F, x: F.nll_loss(x, lib.tensor([0, 3, 1]), reduction="none"),
    "smooth_l1": lambda lib, F, x: F.smooth_l1_loss(x, x.detach().flip(0)),
    "huber": lambda lib, F, x: F.huber_loss(x, x.detach().flip(0), delta=0.5),
    "stack": lambda lib, F, x: lib.stack([x, x], 1), "unsqueeze": lambda lib, F, x: x.unsqueeze(-1),
    "t": lambda lib, F, x: x.t(), "transpose": lambda lib, F, x: lib.transpose(x, 0, 1),
    # activations
    "relu": lambda lib, F, x: F.relu(x), "relu_method": lambda lib, F, x: x.relu(),
    "silu": lambda lib, F, x: F.silu(x), "gelu": lambda lib, F, x: F.gelu(x),
    "gelu_tanh": lambda lib, F, x: F.gelu(x, approximate="tanh"), "leaky_relu": lambda lib, F, x: F.leaky_relu(x, 0.1),
    "elu": lambda lib, F, x: F.elu(x), "selu": lambda lib, F, x: F.selu(x), "celu": lambda lib, F, x: F.celu(x),
    "softplus": lambda lib, F, x: F.softplus(x), "hardtanh": lambda lib, F, x: F.hardtanh(x),
    "relu6": lambda lib, F, x: F.relu6(x), "mish": lambda lib, F, x: F.mish(x),
    "hardswish": lambda lib, F, x: F.hardswish(x), "hardsigmoid": lambda lib, F, x: F.hardsigmoid(x),
    "logsigmoid": lambda lib, F, x: F.logsigmoid(x), "softsign": lambda lib, F, x: F.softsign(x),
    "tanhshrink": lambda lib, F, x: F.tanhshrink(x), "prelu": lambda lib, F, x: F.prelu(x, lib.tensor([0.25])),
    "glu": lambda lib, F, x: F.glu(x), "F_sigmoid": lambda lib, F, x: F.sigmoid(x),
    "F_tanh": lambda lib, F, x: F.tanh(x),
    "softmax": lambda lib, F, x: F.softmax(x, -1), "log_softmax": lambda lib, F, x: F.log_softmax(x, -1),
    "softmax_method": lambda lib, F, x: x.softmax(0), "softmin": lambda lib, F, x: F.softmin(x, 1),
    "normalize": lambda lib, F, x: F.normalize(x, dim=1),
    # linear algebra
    "linear_2d": lambda lib, F, x: F.linear(x, lib.ones(5, 4), lib.ones(5)),
    "linear_2d_nobias": lambda lib, F, x: F.linear(x, lib.ones(5, 4)),
    "linear_1d": lambda lib, F, x: F.linear(x[0], lib.ones(5, 4), lib.ones(5)),
    "linear_1d_nobias": lambda lib, F, x: F.linear(x[0], lib.ones(5, 4)),
    "linear_3d": lambda lib, F, x: F.linear(x.reshape(1, 3, 4), lib.ones(5, 4), lib.ones(5)),
    "linear_3d_nobias": lambda lib, F, x: F.linear(x.reshape(1, 3, 4), lib.ones(5, 4)),
    "mm": lambda lib, F, x: lib.mm(x, lib.ones(4, 2)), "matmul_2d": lambda lib, F, x: x @ lib.ones(4, 2),
    "mv": lambda lib, F, x: lib.mv(x, lib.ones(4)), "matmul_mv": lambda lib, F, x: x @ lib.ones(4),
    "vm": lambda lib, F, x: lib.ones(3) @ x, "dot": lambda lib, F, x: lib.dot(x[0], lib.ones(4)),
    "matmul_dot": lambda lib, F, x: x[0] @ lib.ones(4), "matmul_1d_2d": lambda lib, F, x: x[0] @ lib.ones(4, 2),
    "bmm": lambda lib, F, x: lib.bmm(x.reshape(1, 3, 4), lib.ones(1, 4, 2)),
    "matmul_3d": lambda lib, F, x: x.reshape(1, 3, 4) @ lib.ones(1, 4, 2),
    "matmul_3d_2d": lambda lib, F, x: x.reshape(1, 3, 4) @ lib.ones(4, 2),
    "matmul_2d_3d": lambda lib, F, x: x @ lib.ones(2, 4, 2), "rmatmul": lambda lib, F, x: lib.ones(2, 3) @ x,
    "addmm": lambda lib, F, x: lib.addmm(lib.ones(3, 2), x, lib.ones(4, 2)),
    "outer": lambda lib, F, x: lib.outer(x[0], x[1]),
    # reductions
    "max": lambda lib, F, x: x.max(), "min": lambda lib, F, x: x.min(),
    "max_dim": lambda lib, F, x: x.max(1)[0], "min_dim": lambda lib, F, x: x.min(0).values,
    "max_keepdim": lambda lib, F, x: x.max(1, keepdim=True)[0], "amax": lambda lib, F, x: x.amax(1),
    "maximum": lambda lib, F, x: lib.maximum(x, x.detach() * 0), "prod": lambda lib, F, x: x.prod(),
    "prod_dim": lambda lib, F, x: x.prod(1), "var": lambda lib, F, x: x.var(), "std": lambda lib, F, x: x.std(1),
    "cumsum": lambda lib, F, x: x.cumsum(1), "cumprod": lambda lib, F, x: x.cumprod(0),
    "norm": lambda lib, F, x: x.norm(), "norm_dim": lambda lib, F, x: x.norm(dim=1),
    "norm_p1": lambda lib, F, x: x.norm(p=1), "linalg_norm": lambda lib, F, x: lib.linalg.norm(x),
    "logsumexp": lambda lib, F, x: x.logsumexp(1), "sum_keepdim": lambda lib, F, x: x.sum(1, keepdim=True),
    # distances: PyTorch's one node each (h-tut9)
    "pairwise_distance": lambda lib, F, x: F.pairwise_distance(x, x.detach().flip(0)),
    "pairwise_distance_p1": lambda lib, F, x: F.pairwise_distance(x, x.detach() * 0, p=1, keepdim=True),
    "pairwise_distance_0d": lambda lib, F, x: F.pairwise_distance(x[0, 0], x.detach()[1, 1]),
    "dist": lambda lib, F, x: lib.dist(x, x.detach()[0]), "pdist": lambda lib, F, x: lib.pdist(x),
    "cdist": lambda lib, F, x: lib.cdist(x, x.detach()[:2]), "cdist_p1": lambda lib, F, x: lib.cdist(x, x[:1], p=1),
    "mean_dims": lambda lib, F, x: x.mean((0, 1)),
    # shapes and views
    "squeeze": lambda lib, F, x: x[None].squeeze(), "squeeze_dim": lambda lib, F, x: x[None].squeeze(0),
    "reshape": lambda lib, F, x: x.reshape(4, 3), "view": lambda lib, F, x: x.view(-1),
    "flatten": lambda lib, F, x: x.flatten(), "flatten_3d": lambda lib, F, x: x.reshape(1, 3, 4).flatten(1),
    "unflatten": lambda lib, F, x: x.unflatten(1, (2, 2)), "view_as": lambda lib, F, x: x.view_as(x.detach().t()),
    "permute": lambda lib, F, x: x.permute(1, 0), "mT": lambda lib, F, x: x.mT, "T": lambda lib, F, x: x.T,
    "expand": lambda lib, F, x: x[:, :1].expand(3, 4), "expand_as": lambda lib, F, x: x[0].expand_as(x),
    "repeat": lambda lib, F, x: x.repeat(2, 1), "contiguous": lambda lib, F, x: x.t().contiguous(),
    "clone": lambda lib, F, x: x.clone(), "chunk": lambda lib, F, x: x.chunk(2, 1)[0],
    "split": lambda lib, F, x: x.split(2, 1)[1], "split_sizes": lambda lib, F, x: x.split([1, 2], 0)[1],
    "unbind": lambda lib, F, x: x.unbind(0)[1], "cat": lambda lib, F, x: lib.cat([x, x]),
    "cat_1": lambda lib, F, x: lib.cat([x, x], 1), "hstack": lambda lib, F, x: lib.hstack([x, x]),
    "flip": lambda lib, F, x: x.flip(0), "roll": lambda lib, F, x: x.roll(1, 1),
    "roll_flat": lambda lib, F, x: x.roll(1),
    "triu": lambda lib, F, x: x.triu(), "tril": lambda lib, F, x: lib.tril(x, -1),
    "diag": lambda lib, F, x: lib.diag(x), "diag_1d": lambda lib, F, x: lib.diag(x[0]),
    "diagonal": lambda lib, F, x: x.diagonal(), "trace": lambda lib, F, x: x.trace(),
    "index_select": lambda lib, F, x: x.index_select(0, lib.tensor([2, 0])),
    "gather": lambda lib, F, x: x.gather(1, lib.tensor([[0], [1], [2]])),
    "topk": lambda lib, F, x: x.topk(2)[0], "sort": lambda lib, F, x: x.sort(1)[0],
    "sort_desc": lambda lib, F, x: x.sort(0, descending=True).values,
    "masked_fill": lambda lib, F, x: x.masked_fill(x > 0, 0.0), "where": lambda lib, F, x: lib.where(x > 0, x, 0.0),
    "where_2": lambda lib, F, x: lib.where(x > 0, x, x * 2), "pad": lambda lib, F, x: F.pad(x, (1, 1)),
    # dtype
    "to_double": lambda lib, F, x: x.to(lib.float64), "double": lambda lib, F, x: x.double(),
    "float_of_double": lambda lib, F, x: x.double().float(),
    "half": lambda lib, F, x: x.half(),
    "type_as": lambda lib, F, x: x.type_as(lib.zeros(1, dtype=lib.float64)),
    # arithmetic and elementwise
    "rsub": lambda lib, F, x: 1 - x, "rdiv": lambda lib, F, x: 2 / x, "radd": lambda lib, F, x: 1 + x,
    "rmul": lambda lib, F, x: 2 * x, "add_scalar": lambda lib, F, x: x + 1, "sub_scalar": lambda lib, F, x: x - 1,
    "mul_scalar": lambda lib, F, x: x * 2, "div_scalar": lambda lib, F, x: x / 2, "neg": lambda lib, F, x: -x,
    "add_tensor": lambda lib, F, x: x + x, "sub_tensor": lambda lib, F, x: x - x, "mul_tensor": lambda lib, F, x: x * x,
    "div_tensor": lambda lib, F, x: x / (x + 2), "sub_alpha": lambda lib, F, x: lib.sub(x, x, alpha=2),
    "square": lambda lib, F, x: x.square(), "pow2": lambda lib, F, x: x ** 2, "pow_t": lambda lib, F, x: x ** x,
    "rpow": lambda lib, F, x: 2 ** x, "exp": lambda lib, F, x: x.exp(), "log": lambda lib, F, x: (x + 2).log(),
    "sqrt": lambda lib, F, x: (x + 2).sqrt(), "rsqrt": lambda lib, F, x: (x + 2).rsqrt(),
    "abs": lambda lib, F, x: x.abs(),
    "sigmoid": lambda lib, F, x: x.sigmoid(), "tanh": lambda lib, F, x: lib.tanh(x), "sin": lambda lib, F, x: x.sin(),
    "cos": lambda lib, F, x: x.cos(), "exp2": lambda lib, F, x: x.exp2(), "log1p": lambda lib, F, x: (x + 2).log1p(),
    "reciprocal": lambda lib, F, x: (x + 2).reciprocal(), "clamp": lambda lib, F, x: x.clamp(-0.5, 0.5),
    "clamp_min": lambda lib, F, x: x.clamp(min=0), "clamp_t": lambda lib, F, x: x.clamp(x.detach() * 0),
    "sign": lambda lib, F, x: x.sign(), "floor": lambda lib, F, x: x.floor(),
    "lerp": lambda lib, F, x: x.lerp(x * 0, 0.5),
    "addcmul": lambda lib, F, x: x.addcmul(x, x), "erf": lambda lib, F, x: x.erf(),
    # nn
    "embedding": lambda lib, F, x: F.embedding(lib.tensor([2, 0]), x),
    "conv1d": lambda lib, F, x: F.conv1d(x.reshape(1, 3, 4), lib.ones(2, 3, 2)),
    "conv1d_bias": lambda lib, F, x: F.conv1d(x.reshape(1, 3, 4), lib.ones(2, 3, 2), lib.ones(2)),
    "conv2d": lambda lib, F, x: F.conv2d(x.reshape(1, 1, 3, 4), lib.ones(2, 1, 2, 2)),
    "conv2d_bias": lambda lib, F, x: F.conv2d(x.reshape(1, 1, 3, 4), lib.ones(2, 1, 2, 2), lib.ones(2), padding=1),
    "conv2d_unbatched": lambda lib, F, x: F.conv2d(x.reshape(1, 3, 4), lib.ones(2, 1, 2, 2)),
    "max_pool1d": lambda lib, F, x: F.max_pool1d(x.reshape(1, 3, 4), 2),
    "max_pool2d": lambda lib, F, x: F.max_pool2d(x.reshape(1, 1, 3, 4), 2),
    "avg_pool1d": lambda lib, F, x: F.avg_pool1d(x.reshape(1, 3, 4), 2),
    "avg_pool2d": lambda lib, F, x: F.avg_pool2d(x.reshape(1, 1, 3, 4), 2),
    "adaptive_avg_pool2d": lambda lib, F, x: F.adaptive_avg_pool2d(x.reshape(1, 1, 3, 4), 1),
    "dropout": lambda lib, F, x: F.dropout(x, 0.5),
    "layer_norm": lambda lib, F, x: F.layer_norm(x, (4,)),
    "layer_norm_affine": lambda lib, F, x: F.layer_norm(x, (4,), lib.ones(4), lib.zeros(4)),
    "batch_norm": lambda lib, F, x: F.batch_norm(x, None, None, training=True),
    "group_norm": lambda lib, F, x: F.group_norm(x.reshape(1, 4, 3), 2),
    "rms_norm": lambda lib, F, x: F.rms_norm(x, (4,)),
    "cross_entropy": lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 3, 1])),
    "cross_entropy_none": lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 3, 1]), reduction="none"),
    "cross_entropy_probs": lambda lib, F, x: F.cross_entropy(x, x.detach().softmax(1)),
    "l1_loss": lambda lib, F, x: F.l1_loss(x, x.detach() * 0),
    "kl_div": lambda lib, F, x: F.kl_div(x, x.detach().softmax(1), reduction="batchmean"),
    "cosine_similarity": lambda lib, F, x: F.cosine_similarity(x, x.detach() + 1),
    "sdpa": lambda lib, F, x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
    "one_hot_mul": lambda lib, F, x: x * F.one_hot(lib.tensor([0, 3, 1]), 4),
    # more of the same families
    "norm_inf": lambda lib, F, x: x.norm(p=float("inf")),
    "vector_norm_1": lambda lib, F, x: lib.linalg.vector_norm(x, 1),
    "addmv": lambda lib, F, x: lib.addmv(x[:, 0], x, x[0]), "addcdiv": lambda lib, F, x: x.addcdiv(x, x + 3),
    "baddbmm": lambda lib, F, x: lib.baddbmm(x[None], x[None], lib.ones(1, 4, 4)),
    "addmm_beta0": lambda lib, F, x: lib.addmm(x, x, lib.ones(4, 4), beta=0),
    "diag_embed": lambda lib, F, x: lib.diag_embed(x),
    "squeeze_dims": lambda lib, F, x: x[None, :, None].squeeze((0, 2)),
    "masked_fill_t": lambda lib, F, x: x.masked_fill(x > 0, lib.tensor(0.0)), "ceil": lambda lib, F, x: x.ceil(),
    "trunc": lambda lib, F, x: x.trunc(), "round_dec": lambda lib, F, x: x.round(decimals=1),
    "clamp_max": lambda lib, F, x: x.clamp(max=0.0), "max_1d_dim": lambda lib, F, x: x[0].max(0)[0],
    "amin": lambda lib, F, x: x.amin(1), "sum_all_dims": lambda lib, F, x: x.sum((0, 1)),
    "ce_probs_sum": lambda lib, F, x: F.cross_entropy(x, x.detach().softmax(1), reduction="sum"),
    "ce_smoothing": lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 3, 1]), label_smoothing=0.1),
    "conv_transpose2d": lambda lib, F, x: F.conv_transpose2d(x.reshape(1, 1, 3, 4), lib.ones(1, 2, 2, 2)),
    "conv1d_unbatched": lambda lib, F, x: F.conv1d(x, lib.ones(2, 3, 2)),
    "max_pool2d_unbatched": lambda lib, F, x: F.max_pool2d(x.reshape(1, 3, 4), 2),
    "avg_pool2d_unbatched": lambda lib, F, x: F.avg_pool2d(x.reshape(1, 3, 4), 2),
    "max_pool1d_indices": lambda lib, F, x: F.max_pool1d(x[None], 2, return_indices=True)[0],
    "adaptive_avg_pool2d_12": lambda lib, F, x: F.adaptive_avg_pool2d(x.reshape(1, 1, 3, 4), (1, 2)),
    "adaptive_max_pool2d": lambda lib, F, x: F.adaptive_max_pool2d(x.reshape(1, 1, 3, 4), 1),
    "max_pool3d": lambda lib, F, x: F.max_pool3d(x.reshape(1, 1, 1, 3, 4), (1, 2, 2)),
    "avg_pool3d": lambda lib, F, x: F.avg_pool3d(x.reshape(1, 1, 1, 3, 4), (1, 2, 2)),
    "instance_norm": lambda lib, F, x: F.instance_norm(x.reshape(1, 3, 4)),
    "batch_norm_eval": lambda lib, F, x: F.batch_norm(x, lib.zeros(4), lib.ones(4)),
    "embedding_pad": lambda lib, F, x: F.embedding(lib.tensor([2, 0]), x, padding_idx=0),
    "tensor_split": lambda lib, F, x: x.tensor_split(2)[0], "chunk_1": lambda lib, F, x: x.chunk(1)[0],
    "rsub_fn": lambda lib, F, x: lib.rsub(x, 1), "tensor_pow": lambda lib, F, x: x.pow(lib.tensor(2.0)),
    "expm1": lambda lib, F, x: x.expm1(), "log_softmax_method": lambda lib, F, x: x.log_softmax(-1),
    "cosh": lambda lib, F, x: x.cosh(), "atan2": lambda lib, F, x: lib.atan2(x, x + 2),
    "minimum": lambda lib, F, x: lib.minimum(x, x.detach() * 0), "unfold": lambda lib, F, x: x.unfold(1, 2, 1),
    "movedim": lambda lib, F, x: x.movedim(0, 1), "swapaxes": lambda lib, F, x: x.swapaxes(0, 1),
    "narrow_copy": lambda lib, F, x: x[:, 1:3].contiguous(), "new_view": lambda lib, F, x: x.view(2, 6),
    "std_mean": lambda lib, F, x: x.std(), "var_dim": lambda lib, F, x: x.var(0),
    "logsumexp_all": lambda lib, F, x: x.logsumexp((0, 1)), "softmax_dim0": lambda lib, F, x: F.softmax(x, 0),
    "cumsum_neg": lambda lib, F, x: x.cumsum(-1), "sub_self": lambda lib, F, x: x - x.mean(),
}


@pytest.mark.parametrize("case", CASES)
def test_grad_fn_prints_as_pytorchs(case):
    ours, theirs = CASES[case](mt, mF, _x(mt)), CASES[case](torch, F, _x(torch))
    assert repr(ours).split("grad_fn=")[1] == repr(theirs).split("grad_fn=")[1]
    assert repr(ours.grad_fn).split(" object at ")[0] == repr(theirs.grad_fn).split(" object at ")[0]


def test_a_composites_name_outlives_its_backward_and_explain_keeps_its_steps():
    x = _x(mt)
    loss = mF.mse_loss(x, x.detach() * 0.5)
    loss.backward()  # frees what the node kept for backward, not its name
    assert repr(loss.grad_fn).startswith("<MseLossBackward0 object at ") and loss.grad_fn.name() == "MeanBackward"
    assert repr(x[1:, :2].grad_fn).startswith("<SliceBackward0 ")
