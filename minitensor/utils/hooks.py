"""`torch.utils.hooks`'s public name: the handle that registering a module hook returns."""
from ..nn._module_hooks import RemovableHandle

__all__ = ["RemovableHandle"]
