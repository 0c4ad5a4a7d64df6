"""`.to(string)`: PyTorch reads any string there as a device, so a device minitensor lacks ('meta', which the
model-ensembling tutorial's `copy.deepcopy(model).to('meta')` uses; 'cuda:1') is the device error naming it,
not "unknown dtype"; a dtype name ('float64') still converts, as minitensor allows."""
import pytest

import minitensor as mt
import minitensor.nn as nn


@pytest.mark.parametrize("where", ["tensor", "module"])
@pytest.mark.parametrize("dev", ["meta", "cuda:1", "xpu"])
def test_a_device_string_minitensor_lacks_is_the_device_error(where, dev):
    obj = mt.ones(2) if where == "tensor" else nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match=f"device '{dev}' is not available; minitensor runs on the CPU only"):
        obj.to(dev)
    with pytest.raises(RuntimeError, match=f"device '{dev}' is not available"):
        obj.to(dev, mt.float64)
    assert (obj if where == "tensor" else obj.weight).dtype == mt.float32  # nothing changed


@pytest.mark.parametrize("arg", ["cpu", mt.device("cpu"), "float64", "torch.float64", mt.float64])
def test_cpu_and_dtype_names_still_convert(arg):
    want = mt.float32 if "cpu" in str(arg) else mt.float64
    assert mt.ones(2).to(arg).dtype == want and nn.Linear(2, 1).to(arg).weight.dtype == want
