"""`torch.utils.tensorboard.SummaryWriter`, when the `tensorboard` package is installed.

Without it, importing this module fails as `import torch.utils.tensorboard` does on a PyTorch without
tensorboard, so `python -m minitensor.run` stops with its one line naming the module. With it, a
`SummaryWriter` writes scalars (the common case: losses, learning rates) as event files that
TensorBoard reads; the other `add_*` methods are not available.
"""
from __future__ import annotations

import importlib
import os
import socket
import time
from typing import Any

try:  # (through importlib: tensorboard is optional and has no type information)
    Event = importlib.import_module("tensorboard.compat.proto.event_pb2").Event
    Summary = importlib.import_module("tensorboard.compat.proto.summary_pb2").Summary
    EventFileWriter = importlib.import_module("tensorboard.summary.writer.event_file_writer").EventFileWriter
except ImportError as e:  # named as this module, so the runner reports `torch.utils.tensorboard`
    raise ModuleNotFoundError("minitensor.utils.tensorboard needs the tensorboard package "
                              "(pip install tensorboard)", name=__name__) from e


def _scalar(value: Any) -> float:
    return float(value.item() if hasattr(value, "item") else value)


class SummaryWriter:
    """Write scalars to `log_dir` (default runs/<date>_<host><comment>) for TensorBoard."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if log_dir is None:
            stamp = time.strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False, double_precision: bool = False) -> None:
        summary = Summary(value=[Summary.Value(tag=tag, simple_value=_scalar(scalar_value))])
        self._writer.add_event(Event(summary=summary, step=global_step or 0,
                                     wall_time=time.time() if walltime is None else walltime))

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any], global_step: int | None = None,
                    walltime: float | None = None) -> None:
        for tag, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{tag}", value, global_step, walltime)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SummaryWriter"]
