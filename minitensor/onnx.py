"""`torch.onnx`'s place: importable, so a script that imports it at the top runs; exporting is refused.

ONNX export traces the model into PyTorch's own graph format and writes protobuf through the `onnx`
package; minitensor records no such graph (its graph is the autograd tape of one call), so there is
nothing to translate. `export` says so instead of writing a file that would not load.
"""
from __future__ import annotations

from typing import Any


class OnnxExporterError(RuntimeError):
    """PyTorch's error type for a failed export (what a script may catch)."""


def export(model: Any, args: tuple[Any, ...] = (), f: Any = None, *, kwargs: dict[str, Any] | None = None,
           **options: Any) -> None:
    """Not available: raises NotImplementedError (nothing is written)."""
    raise NotImplementedError(
        "torch.onnx.export is not available in minitensor: it records no exportable graph (only the autograd "
        "tape of a call); save the weights with save(model.state_dict(), path) and export from PyTorch instead"
    )


def dynamo_export(model: Any, *model_args: Any, **model_kwargs: Any) -> None:
    """Not available: as `export`."""
    export(model, model_args)


def is_in_onnx_export() -> bool:
    """False: minitensor never runs a model for an ONNX export (models branch on this)."""
    return False


__all__ = ["export", "dynamo_export", "is_in_onnx_export", "OnnxExporterError"]
