r"""Bad input gets a clear error that names the op and the shapes or values involved.

Never a numpy traceback from deep inside, never a silent wrong answer, and a failed call changes
nothing the user owns: the inputs' data, their `.grad` and their version counters stay as they were.
"""
import re

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _snapshot(*tensors):
    return [(t.numpy(force=True).copy(), None if t.grad is None else t.grad.numpy(force=True).copy(), t._version)
            for t in tensors]


def _unchanged(before, *tensors):
    for (data, grad, version), t in zip(before, tensors):
        assert np.array_equal(t.numpy(force=True), data)
        assert (t.grad is None and grad is None) or np.array_equal(t.grad.numpy(force=True), grad)
        assert t._version == version


def _with_grad(*shape):
    t = mt.randn(shape, requires_grad=True)
    (t * 2).sum().backward()  # give it a .grad to protect
    return t


CASES = {
    "matmul": (lambda a, b: a @ b, ((2, 3), (4, 5)), RuntimeError, r"matmul.*\(2, 3\).*\(4, 5\)"),
    "matmul_batch": (lambda a, b: mt.matmul(a, b), ((2, 2, 3), (3, 3, 2)), RuntimeError,
                     r"matmul.*\(2, 2, 3\).*\(3, 3, 2\)"),
    "matmul_0d": (lambda a, b: a @ b, ((), (2,)), RuntimeError, r"matmul.*\(\).*\(2,\)"),
    "add": (lambda a, b: a + b, ((2, 3), (4,)), RuntimeError, r"add.*\(2, 3\).*\(4,\)"),
    "mul": (lambda a, b: a * b, ((2, 3), (3, 2)), RuntimeError, r"mul.*\(2, 3\).*\(3, 2\)"),
    "div": (lambda a, b: a / b, ((2,), (3,)), RuntimeError, r"div.*\(2,\).*\(3,\)"),
    "maximum": (mt.maximum, ((2,), (3,)), RuntimeError, r"maximum.*\(2,\).*\(3,\)"),
    "cat": (lambda a, b: mt.cat([a, b], dim=0), ((2, 3), (2, 4)), RuntimeError, r"cat.*\(2, 3\).*\(2, 4\)"),
    "cat_ndim": (lambda a, b: mt.cat([a, b]), ((2, 3), (3,)), RuntimeError, r"cat.*\(2, 3\).*\(3,\)"),
    "stack": (lambda a, b: mt.stack([a, b]), ((2, 3), (3, 2)), RuntimeError, r"stack.*\(2, 3\).*\(3, 2\)"),
    "where": (lambda a, b: mt.where(mt.tensor([True, False, True]), a, b), ((2,), (2,)), RuntimeError,
              r"where.*\(3,\).*\(2,\)"),
    "mse_loss": (F.mse_loss, ((2, 3), (3, 2)), RuntimeError, r"mse_loss.*\(2, 3\).*\(3, 2\)"),
    "linear": (F.linear, ((2, 3), (4, 4)), RuntimeError, r"linear.*\(2, 3\).*\(4, 4\)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_binary_shape_mismatch_names_op_and_both_shapes(name):
    fn, shapes, error, pattern = CASES[name]
    a, b = (_with_grad(*s) for s in shapes)
    before = _snapshot(a, b)
    with pytest.raises(error, match=pattern):
        fn(a, b)
    _unchanged(before, a, b)


UNARY_CASES = {
    "reshape": (lambda x: x.reshape(4, 2), (2, 3), RuntimeError, r"reshape.*\[4, 2\].*\(2, 3\)"),
    "view": (lambda x: x.view(-1, 4), (2, 3), RuntimeError, r"^view: .*\[-1, 4\].*\(2, 3\)"),
    "expand": (lambda x: x.expand(4, 3, 2), (2, 3), RuntimeError, r"expand.*\(2, 3\).*\[4, 3, 2\]"),
    "expand_fewer_dims": (lambda x: x.expand(3), (2, 3), RuntimeError, r"expand.*\[3\].*\(2, 3\)"),
    "masked_fill_shape": (lambda x: x.masked_fill(mt.tensor([True, False]), 0.0), (2, 3), RuntimeError,
                          r"masked_fill.*\(2,\).*\(2, 3\)"),
    "masked_fill_float_mask": (lambda x: x.masked_fill(mt.ones(2, 3), 0.0), (2, 3), RuntimeError,
                               r"masked_fill.*bool.*float32"),
    "index": (lambda x: x[5], (2, 3), IndexError, r"index.*5.*\(2, 3\)"),
    "index_dim1": (lambda x: x[:, 3], (2, 3), IndexError, r"index.*3.*\(2, 3\)"),
    "index_list": (lambda x: x[[0, 7]], (2, 3), IndexError, r"\(2, 3\).*7"),
    "index_too_many": (lambda x: x[0, 0, 0], (2, 3), IndexError, r"\(2, 3\).*too many"),
    "index_float_tensor": (lambda x: x[mt.tensor([0.5])], (2, 3), IndexError, r"long, int or bool.*float32"),
    "bool_mask_shape": (lambda x: x[mt.tensor([True, False, True])], (2, 3), IndexError, r"\(2, 3\).*boolean"),
    "transpose_dim": (lambda x: x.transpose(0, 2), (2, 3), IndexError, r"transpose.*range.*2"),
    "sum_dim": (lambda x: x.sum(dim=3), (2, 3), IndexError, r"sum.*range.*3"),
    "softmax_dim": (lambda x: F.softmax(x, dim=2), (2, 3), IndexError, r"softmax.*range.*2"),
    "permute": (lambda x: x.permute(0, 0), (2, 3), RuntimeError, r"permute.*\[0, 0\].*\(2, 3\)"),
    "topk": (lambda x: x.topk(4), (2, 3), RuntimeError, r"topk.*k \(4\).*size 3"),
    "split": (lambda x: x.split([1, 1], dim=1), (2, 3), RuntimeError, r"split.*\[1, 1\].*\(2, 3\)"),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), (2, 3), RuntimeError, r"layer_norm.*\[4\].*\(2, 3\)"),
    "item": (lambda x: x.item(), (2, 3), RuntimeError, r"item.*6 elements"),
    "backward_non_scalar": (lambda x: (x * 2).backward(), (2, 3), RuntimeError, r"scalar outputs.*\(2, 3\).*gradient="),
    "backward_wrong_gradient_shape": (lambda x: (x * 2).backward(mt.ones(3)), (2, 3), RuntimeError,
                                      r"backward.*\(3,\).*\(2, 3\)"),
    "gather_index": (lambda x: x.gather(1, mt.tensor([[0, 5], [1, 1]])), (2, 3), RuntimeError,
                     r"gather: index 5.*dimension 1 with size 3"),
    "embedding": (lambda w: F.embedding(mt.tensor([0, 9]), w), (3, 2), IndexError, r"embedding.*9.*3 rows"),
    # PyTorch refuses negative indices here; a numpy-style wrap would silently pick the last row
    "embedding_negative": (lambda w: F.embedding(mt.tensor([-1]), w), (3, 2), IndexError, r"embedding.*-1.*3 rows"),
    "gather_negative": (lambda x: x.gather(0, mt.tensor([[-1, 0]])), (3, 2), RuntimeError,
                        r"gather: index -1.*dimension 0 with size 3"),
    "gather_larger_index": (lambda x: x.gather(0, mt.tensor([[0, 0, 0]])), (3, 2), RuntimeError,
                            r"gather.*\(1, 3\).*\(3, 2\)"),
    "index_select_negative": (lambda x: x.index_select(1, mt.tensor([0, -2])), (3, 2), IndexError,
                              r"index_select: index -2.*dimension 1 with size 2"),
    "index_select_2d_index": (lambda x: x.index_select(0, mt.tensor([[0]])), (3, 2), IndexError,
                              r"index_select.*0-d or 1-d"),
    "repeat": (lambda x: x.repeat(2), (2, 3), RuntimeError, r"repeat.*\[2\].*\(2, 3\)"),
    "pad_odd": (lambda x: F.pad(x, (1,)), (2, 3), RuntimeError, r"pad.*length 1"),
    "clamp_no_bounds": (lambda x: x.clamp(), (2, 3), RuntimeError, r"clamp.*min.*max"),
    "matmul_number": (lambda x: x @ 2.0, (2, 3), RuntimeError, r"matmul.*\(2, 3\) and \(\)"),
    "bool_of_many": (lambda x: bool(x), (2, 3), RuntimeError, r"6 elements is ambiguous"),
}


@pytest.mark.parametrize("name", list(UNARY_CASES))
def test_bad_input_names_op_and_shapes_or_values(name):
    fn, shape, error, pattern = UNARY_CASES[name]
    x = _with_grad(*shape)
    before = _snapshot(x)
    with pytest.raises(error, match=pattern):
        fn(x)
    _unchanged(before, x)


@pytest.mark.parametrize("target, value", [([0, 7], "7"), ([0, -1], "-1"), ([3, 0], "3")])
def test_cross_entropy_target_out_of_range_names_the_value(target, value):
    x = _with_grad(2, 3)
    before = _snapshot(x)
    with pytest.raises(IndexError, match=rf"cross_entropy: target {value} is out of bounds for 3 classes"):
        F.cross_entropy(x, mt.tensor(target))
    _unchanged(before, x)
    with pytest.raises(IndexError, match=rf"nll_loss: target {value}"):
        F.nll_loss(x, mt.tensor(target))


def test_cross_entropy_ignored_target_is_not_out_of_range():
    F.cross_entropy(mt.randn(2, 3), mt.tensor([-100, 2]))
    F.cross_entropy(mt.randn(2, 3), mt.tensor([7, 2]), ignore_index=7)


def test_cross_entropy_target_shape_and_dtype():
    # PyTorch's classes: the batch sizes a ValueError, the dtype a RuntimeError (issue 30 point 2)
    with pytest.raises(ValueError, match=r"cross_entropy.*batch size \(2, input of shape \(2, 3\)\).*\(3, target"):
        F.cross_entropy(mt.randn(2, 3), mt.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match=r"cross_entropy: expected target dtype to be int64.*float32.*class "
                                           r"probabilities only with the input's shape \(2, 3\).*long"):
        F.cross_entropy(mt.randn(2, 3), mt.randn(2))
    with pytest.raises(RuntimeError, match=r"cross_entropy: expected a target of shape \(2, 4\).*\(2, 5\)"):
        F.cross_entropy(mt.randn(2, 3, 4), mt.zeros(2, 5, dtype=mt.int64))


@pytest.mark.parametrize("make", [
    lambda: mt.zeros(2, device="cuda"),
    lambda: mt.tensor([1.0], device="cuda"),
    lambda: mt.randn(2, device="cuda:0"),
    lambda: mt.arange(3, device="mps"),
    lambda: mt.ones(2).to("cuda"),
    lambda: mt.ones(2).to(device="cuda"),
    lambda: mt.ones(2).cuda(),
    lambda: mt.device("cuda"),
], ids=["zeros", "tensor", "randn", "arange", "to", "to_kw", "cuda", "device"])
def test_a_device_other_than_cpu_is_a_clear_error(make):
    with pytest.raises(RuntimeError, match=r"device '(cuda|cuda:0|mps)' is not available.*CPU only.*device='cpu'"):
        make()


def test_cpu_device_is_accepted_everywhere():
    x = mt.zeros(2, device="cpu")
    assert x.to("cpu") is x and x.to(device=mt.device("cpu")) is x and x.cpu() is x
    assert mt.tensor([1.0], device="cpu:0").device == "cpu"


def test_requires_grad_on_an_integer_tensor_is_refused():
    with pytest.raises(RuntimeError, match=r"requires_grad_: only tensors of floating point dtype.*int64"):
        mt.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        mt.zeros(2, dtype=mt.int32, requires_grad=True)
    b = mt.tensor([True])
    with pytest.raises(RuntimeError, match="floating point.*bool"):
        b.requires_grad = True
    assert not b.requires_grad


def test_float_only_ops_refuse_integer_tensors_by_name():
    # as PyTorch; exp, log, sigmoid... instead promote an integer tensor to float (test_torch_edges.py)
    i = mt.tensor([4, 9])
    for name in ("mean", "var", "std", "norm"):
        with pytest.raises(RuntimeError,
                           match=rf"{name}: expected a floating point tensor, got dtype minitensor\.int64"):
            getattr(i, name)()
    for name in ("softmax", "log_softmax"):  # PyTorch has no integer kernel for them: NotImplementedError
        with pytest.raises(NotImplementedError, match=rf"{name}: not implemented for dtype minitensor\.int64"):
            getattr(i, name)(0)


def test_failed_in_place_update_changes_nothing():
    with mt.no_grad():
        x = mt.ones(3)
        before = _snapshot(x)
        with pytest.raises(RuntimeError, match=r"add_.*\(3,\).*\(2,\)"):
            x.add_(mt.ones(2))
        with pytest.raises(RuntimeError, match=r"mul_: output with shape \[3\] doesn't match .* shape \[2, 3\]"):
            x.mul_(mt.ones(2, 3))
        with pytest.raises(RuntimeError, match=r"__setitem__.*\(2,\)"):
            x[0] = mt.ones(2)
        with pytest.raises(IndexError, match=r"__setitem__.*\(3,\)"):
            x[5] = 1.0
        with pytest.raises(RuntimeError, match=r"copy_.*\(4,\).*\(3,\)"):
            x.copy_(mt.ones(4))
        with pytest.raises(RuntimeError, match=r"__iadd__: output with shape \[3\] doesn't match .* shape \[2, 3\]"):
            x += mt.ones(2, 3)
        with pytest.raises(RuntimeError, match=r"masked_fill_.*\(2,\).*\(3,\)"):
            x.masked_fill_(mt.tensor([True, False]), 0.0)
        with pytest.raises(RuntimeError, match=r"masked_fill_: output with shape \[3\] .* shape \[2, 3\]"):
            x.masked_fill_(mt.ones(2, 3).bool(), 0.0)  # out of place the input would broadcast up to the mask
        with pytest.raises(RuntimeError, match=r"masked_fill_: expected a bool mask, got dtype int64"):
            x.masked_fill_(mt.tensor([1, 0, 1]), 0.0)
        _unchanged(before, x)
        i = mt.tensor([1, 2])
        with pytest.raises(RuntimeError, match=r"add_: result type minitensor\.float32 can't be cast.*int64"):
            i.add_(0.5)  # PyTorch's rule: a float result does not silently truncate into an int tensor
        with pytest.raises(RuntimeError, match=r"__iadd__: result type minitensor\.float32 can't be cast.*int64"):
            i += 0.5
        assert i.tolist() == [1, 2]


def test_in_place_operators_follow_the_same_dtype_rule_as_the_in_place_methods():
    with mt.no_grad():
        x, y = mt.zeros(2), mt.ones(2, dtype=mt.float64)
        x += y  # as PyTorch (and x.add_(y)): the float64 result is cast to x's float32
        assert x.dtype == mt.float32 and x.tolist() == [1.0, 1.0]
        i = mt.zeros(2, dtype=mt.int32)
        i += mt.ones(2, dtype=mt.int64)
        assert i.dtype == mt.int32 and i.tolist() == [1, 1]


def test_failed_backward_leaves_existing_grads_unchanged():
    x = _with_grad(3)
    before = _snapshot(x)
    with pytest.raises(RuntimeError):
        (x * 2).backward(mt.ones(4))
    _unchanged(before, x)

    class Exploding(mt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.numpy(force=True) * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    y = x * 3 + Exploding.apply(x)
    with pytest.raises(ValueError, match="broken backward"):
        y.sum().backward()
    _unchanged(before, x)  # the other path's gradient was not half-written into .grad


def test_error_messages_are_not_raw_numpy_errors():
    x = mt.ones(2, 3)
    for fn in (lambda: x @ mt.ones(4, 5), lambda: x + mt.ones(4), lambda: x.reshape(5), lambda: x[9]):
        with pytest.raises(Exception) as info:
            fn()
        assert not re.search(r"operands could not be broadcast|cannot reshape array|matmul: Input operand",
                             str(info.value)), str(info.value)
        assert re.match(r"\w+: ", str(info.value)), f"the message should start with the op's name: {info.value}"


def test_bad_dtype_and_data():
    with pytest.raises(TypeError, match="unknown dtype 'complex'"):
        mt.zeros(2, dtype="complex")
    with pytest.raises(ValueError, match="tensor: cannot build a tensor from ragged"):
        mt.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="tensor: cannot build a tensor from data of type"):
        mt.tensor(["a"])
    with pytest.raises(TypeError, match="set_default_dtype: only floating dtypes"):
        mt.set_default_dtype(mt.int64)
    assert mt.get_default_dtype() == mt.float32


# ---- invalid input is refused, as PyTorch refuses it ---------------------------------------------

INVALID = {
    "object_array": (lambda lib: lib.tensor(np.array([1, "a"], dtype=object)), TypeError, r"^tensor: .*object"),
    "numeric_object_array": (lambda lib: lib.tensor(np.array([1, 2], dtype=object)), TypeError, r"^tensor: .*object"),
    "as_tensor_object_array": (lambda lib: lib.as_tensor(np.array([1.5], dtype=object)), TypeError,
                               r"^as_tensor: .*object"),
    "dtype_object": (lambda lib: lib.tensor([1, 2], dtype=object), TypeError, r"^tensor: unsupported dtype.*object"),
    "to_str": (lambda lib: lib.ones(2).to(str), TypeError, r"^to: unsupported dtype.*str"),
    "zeros_float_size": (lambda lib: lib.zeros(2.5), TypeError, r"^zeros: .*2\.5"),
    "zeros_float_in_tuple": (lambda lib: lib.ones((2, 1.0)), TypeError, r"^ones: .*1\.0"),
    "zeros_str_size": (lambda lib: lib.zeros("a"), TypeError, r"^zeros: .*'a'"),
    "reshape_minus_two": (lambda lib: lib.zeros(6).reshape(-2, 3), RuntimeError,
                          r"^reshape: invalid shape dimension -2 at index 0 of shape \[-2, 3\]"),
    "reshape_two_inferred": (lambda lib: lib.zeros(6).reshape(-1, -1), RuntimeError,
                             r"^reshape: only one dimension can be inferred.*\[-1, -1\]"),
    "reshape_empty_inferred": (lambda lib: lib.zeros(0, 3).reshape(0, -1), RuntimeError,
                               r"^reshape: cannot reshape a tensor of 0 elements into shape \[0, -1\]"),
    "reshape_float_size": (lambda lib: lib.zeros(6).reshape(2.0, 3), TypeError, r"^reshape: .*2\.0"),
    "view_wrong_count": (lambda lib: lib.zeros(2, 3).view(-1, 5), RuntimeError,
                         r"^view: shape \[-1, 5\] is invalid for input of shape \(2, 3\)"),
    "view_wrong_count_no_inferred": (lambda lib: lib.zeros(2, 3).view(5), RuntimeError,
                                     r"^view: shape \[5\] is invalid for input of shape \(2, 3\)"),
    "mean_repeated_dim": (lambda lib: lib.zeros(2, 3).mean(dim=(0, 0)), RuntimeError,
                          r"^mean: dim 0 appears more than once"),
    "sum_repeated_negative_dim": (lambda lib: lib.zeros(2, 3).sum(dim=(1, -1)), RuntimeError,
                                  r"^sum: dim -1 appears more than once"),
    "sum_str_dim": (lambda lib: lib.zeros(2, 3).sum(dim="a"), TypeError, r"^sum: dim must be an int.*'a'"),
    "amax_float_dim": (lambda lib: lib.zeros(2, 3).amax(dim=1.0), TypeError, r"^amax: dim must be an int.*1\.0"),
    "fill_1d_value": (lambda lib: lib.zeros(2, 3).fill_(lib.ones(3)), RuntimeError, r"^fill_: .*0-dim.*\(3,\)"),
    "bool_add_int": (lambda lib: lib.tensor([True, False]).add_(2), RuntimeError,
                     r"^add_: result type minitensor\.int64 can't be cast.*minitensor\.bool"),
    "expand_new_dim_minus_one": (lambda lib: lib.zeros(2, 3).expand(-1, -1, 3), RuntimeError,
                                 r"^expand: size -1 at index 0 of \[-1, -1, 3\].*\(2, 3\)"),
    "flatten_start_after_end": (lambda lib: lib.zeros(2, 3).flatten(1, 0), RuntimeError,
                                r"^flatten: start_dim 1 comes after end_dim 0"),
    # a user's mistake gets a message naming the op and what is wrong, not an internal error
    "linear_numpy_input": (lambda lib: lib.nn.Linear(3, 2)(np.ones((2, 3), np.float32)), TypeError,
                           r"^Linear: input must be a Tensor, got ndarray"),
    "linear_list_input": (lambda lib: lib.nn.Linear(3, 2)([[1.0, 2.0, 3.0]]), TypeError,
                          r"^Linear: input must be a Tensor, got list"),
    "linear_0d_input": (lambda lib: lib.nn.Linear(3, 2)(lib.tensor(1.0)), RuntimeError,
                        r"^linear: .*at least 1 dim, got shapes \(\) and \(2, 3\)"),
    "cross_entropy_0d_input": (lambda lib: lib.nn.functional.cross_entropy(lib.tensor(1.0), lib.tensor(0)),
                               RuntimeError, r"^cross_entropy: .*0-d"),
    "cross_entropy_weight_list": (lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(2, 3), lib.tensor([0, 1]), weight=[1.0, 2.0, 3.0]),
                                  TypeError, r"^cross_entropy: weight must be a Tensor, got list"),
    "cross_entropy_float_class_targets": (lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(2, 3), lib.tensor([0.0, 1.0])), RuntimeError,
        r"^cross_entropy: .*int64.*float32.*class probabilities only with the input's shape \(2, 3\)"),
    "gather_list_index": (lambda lib: lib.zeros(2, 3).gather(1, [[0], [1]]), TypeError,
                          r"^gather: index must be an integer Tensor, got list"),
    "gather_float_index": (lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0.0], [1.0]])),
                           RuntimeError, r"^gather: .*integer.*float32"),
    "grad_of_a_float": (lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2).sum(), [1.0]),
                        RuntimeError, r"^grad: inputs must be Tensors, but input 0 is a float"),
    "clamp_str_bound": (lambda lib: lib.zeros(2).clamp(min="a"), TypeError, r"^clamp: min must be a number.*'a'"),
    "index_out_of_range_prints_colons": (lambda lib: lib.zeros(2, 3)[:, 5], IndexError,
                                         r"^__getitem__: index \[:, 5\] .*\(2, 3\)"),
    "index_too_many_prints_slices": (lambda lib: lib.zeros(2, 3)[1:, ::2, 0], IndexError,
                                     r"^__getitem__: index \[1:, ::2, 0\] .*\(2, 3\)"),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_input_is_refused_with_a_message_naming_the_op(name):
    make, error, pattern = INVALID[name]
    with pytest.raises(error, match=pattern):
        make(mt)


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_input_is_refused_by_torch_with_the_same_exception_type(name, torch):
    make, error, _ = INVALID[name]
    with pytest.raises(error):
        make(torch)
