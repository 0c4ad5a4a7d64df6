"""The "Tensors" tutorial's idioms, written for PyTorch: tensors from lists and numpy arrays, ones_like and
rand_like, shapes given as tuples, attributes, numpy-like indexing and assignment, torch.cat along dim=1,
three ways to matrix-multiply and to multiply elementwise (one with out=), a one-element tensor's item(),
in-place add_, and the numpy bridge both ways (the tensor and the array share their memory).

Random tensors are printed only by shape and dtype: the two libraries draw different numbers.
"""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_data.dtype, x_np.dtype, torch.equal(x_data, x_np))

x_ones = torch.ones_like(x_data)  # retains the properties of x_data
print(f"Ones Tensor: \n {x_ones} \n")
x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the datatype of x_data
print(f"Random Tensor: {tuple(x_rand.shape)} {x_rand.dtype} in [0, 1): {bool(((x_rand >= 0) & (x_rand < 1)).all())}")

shape = (2, 3,)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print(f"Random Tensor: {rand_tensor.shape} \n")
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

tensor = torch.rand(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
if torch.cuda.is_available():
    tensor = tensor.to("cuda")

tensor = torch.ones(4, 4)
tensor[:, 1] = 0
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
print(tensor)

t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)
print(torch.stack([tensor[0], tensor[1]]).shape)

tensor = torch.arange(16, dtype=torch.float32).reshape(4, 4) / 4
# This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value
# ``tensor.T`` returns the transpose of a tensor
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1)
print(torch.equal(y1, y2), torch.equal(y1, y3))

# This computes the element-wise product. z1, z2, z3 will have the same value
z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z1)
print(torch.equal(z1, z2), torch.equal(z1, z3))

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)  # a change in the tensor reflects in the NumPy array
print(f"t: {t}")
print(f"n: {n}")

n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)  # a change in the NumPy array reflects in the tensor
print(f"t: {t}")
print(f"n: {n}")

# a few more everyday ones
print(torch.zeros(2, 3, dtype=torch.int64).dtype, torch.tensor([1.5, 2.5]).dtype, torch.tensor(True).dtype)
print(x_data.float().mean(), x_data.max(), x_data.argmax(), x_data.T.tolist())
print(x_data.to(torch.float64) / 3)
