"""The backprop-ninja exercise's truth is PyTorch's: the model's loss and the gradient of every
variable (autograd's, as the grader and compare_by_hand use them), and the training it is graded on."""
import numpy as np
import pytest

from attention.course import ninja

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def _torch_gradients(params, tokens, targets):
    F = torch.nn.functional
    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    n_pos, d_head = tokens.shape[-1], params["w_q"].shape[0]
    v = {"emb": F.embedding(torch.tensor(tokens), p["wte"])}
    v["x"] = v["emb"] + p["wpe"]
    v["q"], v["k"], v["v"] = v["x"] @ p["w_q"].mT, v["x"] @ p["w_k"].mT, v["x"] @ p["w_v"].mT
    v["scores"] = v["q"] @ v["k"].mT
    v["scaled"] = v["scores"] / d_head ** 0.5
    v["masked"] = v["scaled"].masked_fill(~torch.ones(n_pos, n_pos, dtype=torch.bool).tril(), float("-inf"))
    v["probs"] = torch.softmax(v["masked"], -1)
    v["att"] = v["probs"] @ v["v"]
    v["proj"] = v["att"] @ p["w_o"].mT
    v["h"] = v["x"] + v["proj"]
    v["logits"] = v["h"] @ p["w_lm"].mT + p["b_lm"]
    loss = F.cross_entropy(v["logits"].reshape(-1, v["logits"].shape[-1]), torch.tensor(targets).reshape(-1))
    for t in v.values():
        t.retain_grad()
    loss.backward()
    return loss.item(), {k: (p[k] if k in p else v[k]).grad.numpy() for k in ninja.STEPS}


def test_every_gradient_and_the_training_are_pytorchs():
    params, tokens, targets = ninja.make_inputs(np.random.default_rng(3))
    loss, mine = ninja.all_gradients(params, tokens, targets)
    want_loss, theirs = _torch_gradients(params, tokens, targets)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    for name in ninja.STEPS:
        np.testing.assert_allclose(mine[name], theirs[name], rtol=1e-9, atol=1e-12, err_msg=name)
    losses, p = [], dict(params)
    for _ in range(3):
        step_loss, grads = _torch_gradients(p, tokens, targets)
        losses.append(step_loss)
        p = {k: p[k] - 0.5 * grads[k] for k in p}
    np.testing.assert_allclose(ninja.train_reference(params, tokens, targets, 3, 0.5), losses, rtol=1e-10)
