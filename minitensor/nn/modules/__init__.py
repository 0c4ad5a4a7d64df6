"""PyTorch's `torch.nn.modules.<file>` paths (`from torch.nn.modules.loss import _Loss`), each a module that
re-exports the classes minitensor keeps elsewhere in `minitensor.nn`; the runner maps one onto the other."""
