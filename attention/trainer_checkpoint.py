"""The trainer's checkpoint: one `minitensor.save` file holding everything a resumed run needs to
continue bit for bit (weights, optimizer and schedule state, step, losses, evaluations, both random
generators, the settings, and for chars the vocabulary), and the checks that refuse a file which
doesn't fit the run before anything of the run is changed.
"""
from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any, Sequence

import numpy as np

import minitensor as mt
from minitensor.serialization import CheckpointError

from .lm import DecoderLM
from .trainer_config import CommandError, Config
from .trainer_eval import ExactMatch

CHECKPOINT = "checkpoint.npz"  # its name in the run's folder (--out)


def save_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler, step: int, losses: Sequence[float],
                    data_rng: np.random.Generator, evals: list[dict[str, Any]],
                    vocab: Sequence[str] | None = None) -> None:
    """Everything a resumed run needs; `vocab` (chars: the text's characters, in id order) too,
    so a resumed run or --generate-only maps ids to the same characters."""
    extra = {} if vocab is None else {"vocab": json.dumps(list(vocab))}
    mt.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": json.dumps(scheduler.state_dict()),
        "step": step,
        "losses": mt.tensor(np.asarray(losses, dtype=np.float64)),
        "evals": json.dumps(evals),
        "data_rng": json.dumps(data_rng.bit_generator.state),
        "model_rng": json.dumps(mt.get_rng_state()),
        "config": json.dumps(dataclasses.asdict(cfg)),
        **extra,
    }, path)


_ENTRIES = ("model", "optimizer", "scheduler", "step", "losses", "evals", "data_rng", "model_rng", "config")


def load_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler, data_rng: np.random.Generator,
                    vocab: Sequence[str] | None = None,
                    eval_keys: set[str] = ExactMatch.keys) -> tuple[int, list[float], list[dict[str, Any]]]:
    """Restore everything a checkpoint holds; a bad file raises CheckpointError and changes nothing.

    Nothing is assigned until every entry has been read and has loaded into copies of the model,
    optimizer, scheduler and generators, so a file with a missing or mismatched piece leaves this
    run exactly as it was."""
    ck = mt.load(path)
    entries = _ENTRIES + (("vocab",) if vocab is not None else ())
    missing = [k for k in entries if k not in ck] if isinstance(ck, dict) else list(entries)
    if missing:
        raise CheckpointError(
            f"{path}: not a training checkpoint (missing {', '.join(missing)}); a bare model state_dict "
            "can be loaded with model.load_state_dict(minitensor.load(path))"
        )
    try:
        saved, sched, evals, data_state, model_state = (
            json.loads(ck[k]) for k in ("config", "scheduler", "evals", "data_rng", "model_rng"))
        for key in ("task", "layers", "heads", "d_model", "block_size"):
            if saved.get(key) != getattr(cfg, key):
                raise CheckpointError(
                    f"{path}: was written for --{key.replace('_', '-')} {saved.get(key)}, but this run asks for "
                    f"{getattr(cfg, key)}; use the same settings to resume, or another --out"
                )
        if vocab is not None and json.loads(ck["vocab"]) != list(vocab):
            raise CheckpointError(
                f"{path}: was trained on a text with other characters ({len(json.loads(ck['vocab']))} distinct; "
                f"this text has {len(vocab)}); resume with the same --data, or use another --out"
            )
        step, losses = int(ck["step"]), ck["losses"].numpy(force=True).astype(float).reshape(-1).tolist()
        if not all(isinstance(e, dict) and eval_keys <= set(e) for e in evals):
            raise ValueError(f"evals is not a list of evaluation records: {str(evals)[:80]}")
        # the dry run: every piece loads into a copy first (the copies share nothing with the originals)
        trial_model, trial_optimizer, trial_scheduler = copy.deepcopy((model, optimizer, scheduler))
        trial_model.load_state_dict(ck["model"])
        trial_optimizer.load_state_dict(ck["optimizer"])
        trial_scheduler.load_state_dict(sched)
        type(data_rng.bit_generator)().state = data_state
        np.random.default_rng().bit_generator.state = model_state  # minitensor's generator is a default_rng
    except CheckpointError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as e:
        raise CheckpointError(f"{path}: does not fit this run ({type(e).__name__}: {e}); nothing was changed") from e
    model.load_state_dict(ck["model"])
    optimizer.load_state_dict(ck["optimizer"])
    scheduler.load_state_dict(sched)
    data_rng.bit_generator.state = data_state
    mt.set_rng_state(model_state)
    return step, losses, evals


# The largest architecture --generate-only builds from a checkpoint's config. A config is the file's
# word, not a fact: block_size=2**40 or layers=10**7 would allocate or loop before any weight is read.
ARCHITECTURE_LIMITS = {"block_size": 2 ** 16, "layers": 512, "heads": 1024, "d_model": 2 ** 14}
VOCAB_LIMIT = 2 ** 20


def chars_model_shapes(vocab_size: int, block_size: int, layers: int, d_model: int) -> dict[str, tuple[int, ...]]:
    """The name and shape of every weight of `DecoderLM(vocab_size, block_size, layers, d_model=d_model)`,
    without building it (the test suite checks this against a built model's state_dict)."""
    shapes: dict[str, tuple[int, ...]] = {"tok_emb.weight": (vocab_size, d_model),
                                          "pos_emb.weight": (block_size, d_model)}
    block: dict[str, tuple[int, ...]] = {"ln1.weight": (d_model,), "ln1.bias": (d_model,)}
    for proj in ("w_q", "w_k", "w_v", "w_o"):
        block.update({f"attn.{proj}.weight": (d_model, d_model), f"attn.{proj}.bias": (d_model,)})
    block.update({"ln2.weight": (d_model,), "ln2.bias": (d_model,), "mlp.fc1.weight": (4 * d_model, d_model),
                  "mlp.fc1.bias": (4 * d_model,), "mlp.fc2.weight": (d_model, 4 * d_model), "mlp.fc2.bias": (d_model,)})
    for i in range(layers):
        shapes.update({f"blocks.{i}.{k}": v for k, v in block.items()})
    shapes.update({"ln_f.weight": (d_model,), "ln_f.bias": (d_model,), "head.weight": (vocab_size, d_model)})
    return shapes


def check_chars_architecture(path: str, saved: Any, chars: Any, weights: Any) -> None:
    """Refuse a checkpoint whose config is out of bounds or doesn't describe its own weights, before
    anything is built: a CheckpointError naming the file and the first thing that is wrong."""
    if not isinstance(saved, dict):
        raise CheckpointError(f"{path}: its config is a {type(saved).__name__}, not a record of settings")
    for key, limit in ARCHITECTURE_LIMITS.items():
        value = saved.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise CheckpointError(f"{path}: its config has {key}={value!r}; --generate-only builds models with "
                                  f"{key} from 1 to {limit}")
    if saved["d_model"] % saved["heads"]:
        raise CheckpointError(f"{path}: its config has heads={saved['heads']}, which don't divide "
                              f"d_model={saved['d_model']}")
    if (not isinstance(chars, list) or not 1 <= len(chars) <= VOCAB_LIMIT
            or not all(isinstance(c, str) and len(c) == 1 for c in chars) or len(set(chars)) != len(chars)):
        raise CheckpointError(f"{path}: its vocabulary is not a list of distinct characters")
    if not isinstance(weights, dict) or not all(isinstance(v, mt.Tensor) for v in weights.values()):
        raise CheckpointError(f"{path}: its model entry is not a state_dict of tensors")
    layers = len({k.split(".")[1] for k in weights if k.startswith("blocks.")})
    if layers != saved["layers"]:
        raise CheckpointError(f"{path}: its config says layers={saved['layers']}, its weights hold {layers} blocks")
    want = chars_model_shapes(len(chars), saved["block_size"], saved["layers"], saved["d_model"])
    for name in sorted(set(want) | set(weights), key=lambda n: (n not in want, n)):
        got = tuple(weights[name].shape) if name in weights else None
        if got != want.get(name):
            what = "missing" if got is None else f"of shape {got}"
            expected = "not part of the model" if name not in want else f"of shape {want[name]}"
            raise CheckpointError(f"{path}: weight '{name}' is {what}, but its config "
                                  f"(block_size={saved['block_size']}, layers={saved['layers']}, "
                                  f"d_model={saved['d_model']}, {len(chars)} characters) makes it {expected}")


def load_chars_model(path: str) -> tuple[DecoderLM, list[str]]:
    """The chars model a checkpoint holds and its vocabulary, for --generate-only: the checkpoint
    brings the architecture, so no data file and no settings are needed to rebuild it. Its config is
    checked against limits and against its own weights before anything is built."""
    ck = mt.load(path)
    if not isinstance(ck, dict) or "config" not in ck or "model" not in ck:
        raise CheckpointError(f"{path}: not a training checkpoint (no config or model entry)")
    try:
        saved = json.loads(ck["config"])
        if "vocab" not in ck:
            raise CommandError(f"{path}: holds a model of the {saved.get('task')!r} task; --generate-only writes "
                               "text with a --task chars model")
        chars = json.loads(ck["vocab"])
        check_chars_architecture(path, saved, chars, ck["model"])
        model = DecoderLM(len(chars), saved["block_size"], n_layer=saved["layers"], n_head=saved["heads"],
                          d_model=saved["d_model"], fused=True)
        model.load_state_dict(ck["model"])
    except (CommandError, CheckpointError):
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError, RecursionError) as e:
        raise CheckpointError(f"{path}: does not hold a usable chars model ({type(e).__name__}: {e})") from e
    return model, chars
