"""Devices as a CPU-only PyTorch build reports them.

`torch.device` parses and compares as PyTorch's does (`device('cuda:1')` is a valid object);
only placing data on a device other than the CPU fails, with the error PyTorch's CPU build
raises (`AssertionError: Torch not compiled with CUDA enabled` for CUDA). `torch.cuda`,
`torch.backends.mps`, `torch.accelerator` report that no accelerator exists, and
`set_default_device` / `get_default_device` keep PyTorch's default device.
"""

from __future__ import annotations

import numbers
import re

DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_XPU = "Torch not compiled with XPU enabled"
CUDA_GENERATOR_ERROR = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")
_DEVICE_STRING = re.compile(r"([a-z]+)(?::(0|[1-9][0-9]*))?")


class device:
    """torch.device: a device type and optional index, parsed and compared as PyTorch does.

    >>> import functrans.torch as torch
    >>> torch.device("cuda:1"), torch.device("cpu") == torch.device("cpu", 0)
    (device(type='cuda', index=1), False)
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object takes no index")
            type, index = type.type, type.index
        elif isinstance(type, numbers.Integral) and not isinstance(type, bool):
            raise RuntimeError(NO_ACCELERATOR)
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({_tname(type)}); pass a string such as 'cpu' or a device")
        else:
            m = _DEVICE_STRING.fullmatch(type)
            if m is None or m.group(1) not in DEVICE_TYPES:
                head = re.match(r"[a-zA-Z_]*", type).group(0)
                if head in DEVICE_TYPES:
                    raise RuntimeError(f"Invalid device string: '{type}'")
                raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at "
                                   f"start of device string: {type}")
            if m.group(2) is not None:
                if index is not None:
                    raise RuntimeError(f"type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(m.group(2))
            type = m.group(1)
        if index is not None:
            if not isinstance(index, numbers.Integral):
                raise TypeError(f"device(): argument 'index' must be int, not {_tname(index)}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            index = int(index)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (other.type, other.index) == (self.type,
                                                                            self.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index) if self.index is not None else (self.type,))

    def __enter__(self):
        _CONTEXT.append(_DEFAULT[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _DEFAULT[0] = _CONTEXT.pop()
        return False


_CONTEXT: list = []   # default devices saved by `with torch.device(...)`


def _tname(x) -> str:
    return x.__class__.__name__


CPU = device("cpu")
_DEFAULT = [CPU]


def _unavailable(dev: device, creating: bool) -> BaseException:
    """The exception PyTorch's CPU build raises for data placed on `dev`."""
    if dev.type == "cuda":
        return AssertionError(NO_CUDA)
    if dev.type == "xpu":
        return AssertionError(NO_XPU)
    if creating:
        name = {"mps": "MPS", "hip": "HIP", "xla": "XLA", "ipu": "IPU", "vulkan": "Vulkan",
                "meta": "Meta"}.get(dev.type, dev.type.upper())
        return NotImplementedError(
            f"Could not run 'aten::empty.memory_format' with arguments from the '{name}' "
            f"backend. functrans.torch keeps tensors on the CPU only: leave out device= or "
            f"pass device='cpu'.")
    return RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")


def require_cpu(dev, *, creating: bool = True, generator: bool = False) -> device:
    """`dev` as a device, which must be the CPU (None means the default device); raises
    PyTorch's CPU-build error for any other."""
    if dev is None:
        dev = _DEFAULT[0]
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu":
        if generator and d.type == "cuda":
            raise RuntimeError(CUDA_GENERATOR_ERROR)
        raise _unavailable(d, creating)
    return d


def is_device_like(x) -> bool:
    """Whether `x` is read as a device by `Tensor.to` (a device, a device string or an int)."""
    return isinstance(x, device | str) or (isinstance(x, numbers.Integral)
                                           and not isinstance(x, bool))


def set_default_device(dev) -> None:
    """torch.set_default_device: the device new tensors go to (here it must be the CPU for any
    tensor to be made; another device is kept, as PyTorch keeps it, and factories then raise)."""
    _DEFAULT[0] = CPU if dev is None else (dev if isinstance(dev, device) else device(dev))


def get_default_device() -> device:
    """torch.get_default_device: the device new tensors go to."""
    d = _DEFAULT[0]
    if d.type not in ("cpu", "meta"):
        raise _unavailable(d, creating=False)
    return d


class cuda:
    """torch.cuda as a CPU-only build has it: no device, and PyTorch's error on use."""

    @staticmethod
    def is_available() -> bool:
        """No CUDA device."""
        return False

    @staticmethod
    def device_count() -> int:
        """No CUDA device."""
        return 0

    @staticmethod
    def is_initialized() -> bool:
        return False

    @staticmethod
    def manual_seed(seed) -> None:
        """Silently ignored, as in a CPU build."""

    @staticmethod
    def manual_seed_all(seed) -> None:
        """Silently ignored, as in a CPU build."""

    @staticmethod
    def seed() -> None:
        """Silently ignored, as in a CPU build."""

    @staticmethod
    def seed_all() -> None:
        """Silently ignored, as in a CPU build."""

    @staticmethod
    def empty_cache() -> None:
        """Nothing to free."""

    @staticmethod
    def memory_allocated(device=None) -> int:
        return 0

    @staticmethod
    def max_memory_allocated(device=None) -> int:
        return 0

    @staticmethod
    def _lazy_init():
        raise AssertionError(NO_CUDA)

    current_device = get_device_name = get_device_properties = synchronize = init = \
        get_rng_state = set_rng_state = get_device_capability = _lazy_init

    @staticmethod
    def is_bf16_supported(including_emulation: bool = True) -> bool:
        return False


class accelerator:
    """torch.accelerator with no accelerator present."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def current_accelerator(check_available: bool = False):
        return None

    @staticmethod
    def device_count() -> int:
        return 0

    @staticmethod
    def current_device_index() -> int:
        raise RuntimeError(NO_ACCELERATOR)

    current_device_idx = set_device_index = set_device_idx = synchronize = \
        current_device_index


class _mps:
    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False


class _cuda_backend:
    @staticmethod
    def is_built() -> bool:
        return False


class _cudnn:
    @staticmethod
    def is_available() -> bool:
        return False

    enabled = True
    deterministic = False
    benchmark = False


class _mkldnn:
    @staticmethod
    def is_available() -> bool:
        return False


class backends:
    """torch.backends: mps, cuda, cudnn and mkldnn, none of them built."""

    mps = _mps
    cuda = _cuda_backend
    cudnn = _cudnn
    mkldnn = _mkldnn
