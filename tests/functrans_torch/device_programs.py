"""Device programs run under both PyTorch's CPU-only build and functrans.torch.

Each program takes the torch module and returns a value; `outcome` turns its result or the
exception it raised into a JSON-able record (the exception's type and the start of its
message). device_fixtures.json holds PyTorch's records, written by running this file under
torch==2.13.0+cpu: `python tests/functrans_torch/device_programs.py`.
"""

from __future__ import annotations

import json
import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device_fixtures.json")
MESSAGE_CHARS = 80      # the start of a message: PyTorch's backend messages then go on at length


def _with_default_device(T, dev, fn):
    T.set_default_device(dev)
    try:
        return fn()
    finally:
        T.set_default_device(None)


def _with_default_dtype(T, dt, fn):
    old = T.get_default_dtype()
    T.set_default_dtype(dt)
    try:
        return fn()
    finally:
        T.set_default_dtype(old)


def _inside_cpu_context(T):
    with T.device("cpu"):
        return T.zeros(1).device


PROGRAMS = {
    # parsing, printing, comparing
    "device_cuda": lambda T: T.device("cuda"),
    "device_cuda_1": lambda T: (T.device("cuda:1"), T.device("cuda:1").index,
                                str(T.device("cuda:1"))),
    "device_cpu_index": lambda T: (T.device("cpu", 0), str(T.device("cpu", 0))),
    "device_type_index": lambda T: (T.device("cpu").type, T.device("cpu").index),
    "device_of_device": lambda T: T.device(T.device("cuda:2")),
    "device_mps_meta": lambda T: (T.device("mps"), T.device("meta")),
    "device_int": lambda T: T.device(0),
    "device_gpu": lambda T: T.device("gpu"),
    "device_negative_index": lambda T: T.device("cuda", -1),
    "device_bad_index": lambda T: T.device("cpu:x"),
    "device_upper_case": lambda T: T.device("CPU"),
    "device_eq_index": lambda T: (T.device("cpu:0") == T.device("cpu"),
                                  T.device("cpu") == T.device("cpu"),
                                  T.device("cuda") == T.device("cuda:0")),
    "device_eq_string": lambda T: T.device("cpu") == "cpu",
    "device_hash": lambda T: hash(T.device("cpu")) == hash(T.device("cpu")),
    "device_in_set": lambda T: len({T.device("cpu"), T.device("cpu"), T.device("cpu", 0)}),
    # factories
    "zeros_cuda": lambda T: T.zeros(2, device="cuda"),
    "zeros_cuda_0": lambda T: T.zeros(2, device="cuda:0"),
    "zeros_cuda_device": lambda T: T.zeros(2, device=T.device("cuda")),
    "ones_cuda": lambda T: T.ones(2, 3, device="cuda"),
    "tensor_cuda": lambda T: T.tensor([1.0], device="cuda"),
    "rand_cuda": lambda T: T.rand(2, device="cuda"),
    "randn_cuda": lambda T: T.randn(2, device="cuda"),
    "arange_cuda": lambda T: T.arange(3, device="cuda"),
    "full_cuda": lambda T: T.full((2,), 1.0, device="cuda"),
    "eye_cuda": lambda T: T.eye(2, device="cuda"),
    "zeros_xpu": lambda T: T.zeros(2, device="xpu"),
    "zeros_mps": lambda T: T.zeros(2, device="mps"),
    "zeros_int_device": lambda T: T.zeros(2, device=0),
    "zeros_cpu_0": lambda T: T.zeros(2, device="cpu:0").device,
    "tensor_cpu_device": lambda T: T.tensor([1.0], device=T.device("cpu")).device,
    "rand_cpu": lambda T: T.rand(2, device="cpu").device,
    "new_zeros_cuda": lambda T: T.ones(2).new_zeros(3, device="cuda"),
    "new_tensor_cuda": lambda T: T.ones(2).new_tensor([1.0], device="cuda"),
    "new_full_cpu": lambda T: T.ones(2).new_full((2,), 3.0, device="cpu").device,
    # tensors
    "dot_device": lambda T: T.ones(2).device,
    "is_cuda": lambda T: T.ones(2).is_cuda,
    "get_device": lambda T: T.ones(2).get_device(),
    "dot_cuda": lambda T: T.ones(2).cuda(),
    "dot_cuda_0": lambda T: T.ones(2).cuda(0),
    "to_cuda": lambda T: T.ones(2).to("cuda"),
    "to_cuda_device": lambda T: T.ones(2).to(T.device("cuda")),
    "to_cuda_keyword": lambda T: T.ones(2).to(device="cuda", dtype=T.float64),
    "to_mps": lambda T: T.ones(2).to("mps"),
    "to_int": lambda T: T.ones(2).to(0),
    "to_cpu_is_self": lambda T: (lambda t: t.to("cpu") is t)(T.ones(2)),
    "to_cpu_device_is_self": lambda T: (lambda t: t.to(T.device("cpu")) is t)(T.ones(2)),
    "to_cpu_dtype": lambda T: T.ones(2).to("cpu", T.float64).dtype,
    "to_keywords": lambda T: T.ones(2).to(device="cpu", dtype=T.float64).dtype,
    "to_non_blocking": lambda T: (lambda t: t.to("cpu", non_blocking=True) is t)(T.ones(2)),
    "cpu_is_self": lambda T: (lambda t: t.cpu() is t)(T.ones(2)),
    # torch.cuda, backends, accelerator
    "cuda_is_available": lambda T: T.cuda.is_available(),
    "cuda_device_count": lambda T: T.cuda.device_count(),
    "cuda_is_initialized": lambda T: T.cuda.is_initialized(),
    "cuda_current_device": lambda T: T.cuda.current_device(),
    "cuda_get_device_name": lambda T: T.cuda.get_device_name(),
    "cuda_synchronize": lambda T: T.cuda.synchronize(),
    "cuda_get_rng_state": lambda T: T.cuda.get_rng_state(),
    "cuda_manual_seed": lambda T: (T.cuda.manual_seed(0), T.cuda.manual_seed_all(0)),
    "cuda_empty_cache": lambda T: T.cuda.empty_cache(),
    "cuda_memory_allocated": lambda T: T.cuda.memory_allocated(),
    "mps_available": lambda T: (T.backends.mps.is_available(), T.backends.mps.is_built()),
    "cuda_built": lambda T: T.backends.cuda.is_built(),
    "cudnn_available": lambda T: T.backends.cudnn.is_available(),
    "accelerator": lambda T: (T.accelerator.is_available(),
                              T.accelerator.current_accelerator(),
                              T.accelerator.device_count()),
    "accelerator_index": lambda T: T.accelerator.current_device_index(),
    "generator_cuda": lambda T: T.Generator(device="cuda"),
    "generator_cpu": lambda T: T.Generator(device="cpu").device,
    # default device and dtype
    "get_default_device": lambda T: T.get_default_device(),
    "set_default_device_cpu": lambda T: _with_default_device(T, "cpu", T.get_default_device),
    "set_default_device_cpu_zeros": lambda T: _with_default_device(
        T, T.device("cpu"), lambda: T.zeros(1).device),
    "set_default_device_cuda_zeros": lambda T: _with_default_device(
        T, "cuda", lambda: T.zeros(1)),
    "set_default_device_gpu": lambda T: T.set_default_device("gpu"),
    "device_context": _inside_cpu_context,
    "set_default_dtype_int": lambda T: T.set_default_dtype(T.int64),
    "set_default_dtype_python_float": lambda T: T.set_default_dtype(float),
    "set_default_dtype_float64": lambda T: _with_default_dtype(
        T, T.float64, lambda: (T.get_default_dtype(), T.tensor([1.0]).dtype, T.zeros(1).dtype,
                               T.rand(1).dtype)),
    "default_dtype": lambda T: T.get_default_dtype(),
}


def outcome(T, name: str) -> dict:
    """What program `name` does under module T: its result's repr, or its exception."""
    try:
        value = PROGRAMS[name](T)
    except BaseException as e:  # noqa: BLE001  (the exception is the observation)
        return {"raises": type(e).__name__, "message": str(e)[:MESSAGE_CHARS]}
    return {"returns": repr(value)}


if __name__ == "__main__":
    import torch

    records = {"torch_version": torch.__version__,
               "programs": {name: outcome(torch, name) for name in PROGRAMS}}
    with open(FIXTURES, "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {FIXTURES}")
