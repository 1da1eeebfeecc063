"""PyTorch's CPU random number generator: its Mersenne Twister stream and its kernels' transforms.

`torch.manual_seed(s)` then `torch.rand`, `randn`, `randint`, ... give the values PyTorch gives
on the CPU, bit for bit: the generator is PyTorch's `CPUGeneratorImpl` (mt19937 seeded with the
low 32 bits of the seed, `random()` one 32-bit draw, `random64()` two), and each sampler below
repeats the transform of PyTorch's CPU kernel (aten/src/ATen/native/cpu/DistributionTemplates.h,
aten/src/ATen/core/DistributionsHelper.h and TransformationHelper.h), in its order of draws and
its float32/float64 rounding.

The Mersenne Twister itself is numpy's `MT19937` bit generator (the same recurrence and
tempering), loaded with PyTorch's seeding, so bulk draws run in C.

Where PyTorch's CPU result depends on the machine, the stream here is the one of an x86-64 CPU
with AVX2 (PyTorch's own build, which normal_ uses on AVX-512 machines too) and with PyTorch's
portable Bernoulli kernel (what it runs on AMD and ARM CPUs; on Intel CPUs, builds with MKL draw
`bernoulli_(p)` for a float p from MKL's own stream instead).
"""

from __future__ import annotations

import functools
import math
import numbers
import secrets
import warnings

import numpy as np

from functrans.torch._devices import CPU, require_cpu
from functrans.torch._dtype import cpp_name, kind
from functrans.torch._grad_mode import MODE
from functrans.torch._inplace import check_inplace, write
from functrans.torch._tensor import Tensor, wrap

#: a marker other modules check: random numbers follow PyTorch's CPU stream
PYTORCH_STREAM = True

DEFAULT_SEED = 67280421310721          # PyTorch's default_rng_seed_val
STATE_BYTES = 5056                     # sizeof(CPUGeneratorImplState)
_N = 624                               # Mersenne Twister state words
_MASK64 = (1 << 64) - 1


@functools.lru_cache(maxsize=256)
def _init_genrand(seed: int) -> np.ndarray:
    """mt19937's state for a 32-bit seed (Matsumoto and Nishimura's init_genrand); read-only,
    cached: seeding is a loop of 623 steps, and programs reseed with the same few seeds."""
    key = [seed & 0xFFFFFFFF]
    for j in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    out = np.array(key, dtype=np.uint32)
    out.flags.writeable = False
    return out


def _seed_value(seed, who: str = "manual_seed") -> int:
    """PyTorch's reading of a seed: an int in [-2**63, 2**64), negatives taken modulo 2**64."""
    if isinstance(seed, bool | np.bool_):
        seed = int(seed)
    if not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"{who} expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if seed < -(1 << 63) or seed > _MASK64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


class Generator:
    """torch.Generator: PyTorch's CPU generator (mt19937), the same numbers for the same seed.

    >>> import functrans.torch as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.rand(2, generator=g)
    tensor([0.4963, 0.7682])
    """

    def __init__(self, device="cpu"):
        require_cpu(device, generator=True)
        self._bits = np.random.MT19937(0)
        self._set_seed(DEFAULT_SEED)

    # -- seeding and state ---------------------------------------------------------------------

    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": _init_genrand(seed & 0xFFFFFFFF), "pos": _N}}
        self._fresh = True                 # PyTorch's next_ = 0 (vs 624) before the first draw
        self.next_double_normal = None     # Box-Muller's cached second sample
        self.next_float_normal = None

    @property
    def device(self):
        """The generator's device: always the CPU."""
        return CPU

    def manual_seed(self, seed) -> Generator:
        """Seed this generator (the low 32 bits seed the twister); returns the generator."""
        self._set_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        """Seed from fresh entropy; returns the 64-bit seed."""
        s = secrets.randbits(64)
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last set (PyTorch keeps all 64 bits)."""
        return self._seed

    def get_state(self):
        """The state as PyTorch lays it out: a uint8 tensor of 5056 bytes."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        nxt = 0 if (self._fresh and pos == _N) else pos
        left = 1 if pos == _N else _N + 1 - pos
        buf = bytearray(STATE_BYTES)
        head = np.array([self._seed], dtype="<u8").tobytes() + \
            np.array([left, 1], dtype="<i4").tobytes() + np.array([nxt], dtype="<u8").tobytes()
        buf[0:24] = head
        buf[24:5016] = np.asarray(st["key"], dtype="<u8").tobytes()
        if self.next_double_normal is not None:
            buf[5024:5032] = np.array([self.next_double_normal], dtype="<f8").tobytes()
            buf[5040:5044] = np.array([1], dtype="<i4").tobytes()
        if self.next_float_normal is not None:
            buf[5048:5052] = np.array([self.next_float_normal], dtype="<f4").tobytes()
            buf[5052] = 1
        return wrap(np.frombuffer(bytes(buf), dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from `get_state` (this generator's or PyTorch's)."""
        v = new_state._value if isinstance(new_state, Tensor) else np.asarray(new_state)
        if v.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor as the RNG state, but got "
                            f"{v.dtype}; pass what get_state() returned")
        if v.size not in (STATE_BYTES, 5048):
            raise RuntimeError(f"Expected either a CPUGeneratorImplStateLegacy of size 5048 or "
                               f"a CPUGeneratorImplState of size 5056 but found the input RNG "
                               f"state size to be {v.size}")
        raw = v.tobytes()
        seed = int(np.frombuffer(raw[0:8], "<u8")[0])
        left, seeded = (int(x) for x in np.frombuffer(raw[8:16], "<i4"))
        nxt = int(np.frombuffer(raw[16:24], "<u8")[0])
        if not seeded or not 0 < left <= _N or nxt > _N:
            raise RuntimeError("The mt19937 engine is invalid; pass a state from get_state()")
        key = np.frombuffer(raw[24:5016], "<u8").astype(np.uint32)
        self._seed = seed
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key, "pos": _N if left == 1 else nxt}}
        self._fresh = left == 1 and nxt == 0
        valid = int(np.frombuffer(raw[5040:5044], "<i4")[0])
        self.next_double_normal = float(np.frombuffer(raw[5024:5032], "<f8")[0]) \
            if valid else None
        self.next_float_normal = float(np.frombuffer(raw[5048:5052], "<f4")[0]) \
            if v.size == STATE_BYTES and raw[5052] else None
        return self

    def clone_state(self):
        """A copy of the state: (twister state, seed, fresh flag, normal caches)."""
        return (self._bits.state, self._seed, self._fresh, self.next_double_normal,
                self.next_float_normal)

    def restore_state(self, saved) -> None:
        """Put back a state from `clone_state`."""
        (self._bits.state, self._seed, self._fresh, self.next_double_normal,
         self.next_float_normal) = saved

    # -- raw draws -------------------------------------------------------------------------------

    def random(self, n: int) -> np.ndarray:
        """n draws of PyTorch's `random()`: 32-bit words, as uint64."""
        if n <= 0:
            return np.zeros(0, np.uint64)
        self._fresh = False
        return self._bits.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """n draws of PyTorch's `random64()`: the first of two words is the high half."""
        w = self.random(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator._set_seed(secrets.randbits(64))   # as PyTorch: nondeterministic at start


def resolve(generator) -> Generator:
    """`generator`, or the default generator when None (with PyTorch's type check)."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator for generator=, got "
                        f"{type(generator).__name__}")
    return generator


# --- floating-point helpers ------------------------------------------------------------------

def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd_sum(a, b):
    """a + b in float64 rounded to odd (exact sums stay; inexact ones get an odd last bit),
    so a later rounding to fewer bits is the correctly rounded one."""
    s, err = _two_sum(a, b)
    bits = s.view(np.int64)
    even = (bits & 1) == 0
    fix = (err != 0) & even & np.isfinite(s)
    if np.any(fix):
        s = s.copy()
        s[fix] = np.nextafter(s[fix], np.where(err[fix] > 0, np.inf, -np.inf))
    return s


_LOW29, _MID29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)


def fma32(a, b, c) -> np.ndarray:
    """float32 fused multiply-add, a * b + c with one rounding (as `_mm256_fmadd_ps`); a or b
    is an array."""
    s = np.multiply(a, b, dtype=np.float64)          # exact: 24 + 24 < 53 bits
    s += c
    # rounding the float64 sum to float32 rounds twice; that can only go wrong when the sum
    # lands exactly halfway between two float32 values: redo those with the sum rounded to odd
    half = (s.view(np.uint64) & _LOW29) == _MID29
    if half.any():
        a, b, c = (np.broadcast_to(np.asarray(x, np.float64), s.shape)[half] for x in (a, b, c))
        s[half] = _round_odd_sum(a * b, c)
    return s.astype(np.float32)


def _split(a):
    t = 134217729.0 * a                             # Dekker's split, 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 fused multiply-add with one rounding (Boldo and Melquiond's emulation: an exact
    product, a sum rounded to odd, then one rounding to nearest)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (a, b, c)))
    with np.errstate(invalid="ignore", over="ignore"):
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl    # ph + pl == a * b exactly
        th, tl = _two_sum(c, ph)
        v = _round_odd_sum(np.ascontiguousarray(tl), np.ascontiguousarray(pl))
        out = th + v
    exact_zero = (ph == 0) | ~np.isfinite(ph) | ~np.isfinite(c)
    return np.where(exact_zero, a * b + c, out)


def _libm(fn, x: np.ndarray) -> np.ndarray:
    """A float64 function through the C library (as PyTorch's scalar kernels call it): numpy's
    own SIMD versions round differently in the last bit."""
    return np.fromiter((fn(v) for v in x.tolist()), np.float64, count=x.size)


# --- uniform -----------------------------------------------------------------------------------

def _unit32(words) -> np.ndarray:
    """uniform_real_distribution<float>(0, 1): the low 24 bits over 2**24."""
    return (words & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _unit64(words) -> np.ndarray:
    """uniform_real_distribution<double>(0, 1): the low 53 bits over 2**53."""
    return (words & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)


def uniform(g: Generator, n: int, dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """uniform_(low, high): PyTorch's serial kernel, x * (high - low) + low, fused."""
    dtype = np.dtype(dtype)
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num(low)} > to={_num(high)}")
    if dtype == np.float64:
        x = _unit64(g.random64(n))
        lo, hi = np.float64(low), np.float64(high)
        v = x if (lo == 0 and hi == 1) else fma64(x, hi - lo, lo)
    else:
        x = _unit32(g.random(n))
        lo, hi = np.float32(low), np.float32(high)
        v = x if (lo == 0 and hi == 1) else fma32(x, hi - lo, lo)
        v = v.astype(dtype)
        lo, hi = dtype.type(low), dtype.type(high)
    return np.where(v == hi, lo, v).astype(dtype)


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# --- normal --------------------------------------------------------------------------------------

def _normal_scalar(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """normal_distribution<double>: Box-Muller with the second sample cached on the generator;
    PyTorch's kernel for fewer than 16 elements and for non-contiguous tensors."""
    out = np.empty(n, np.float64)
    k = 0
    if n and g.next_double_normal is not None:
        out[0] = g.next_double_normal
        g.next_double_normal = None
        k = 1
    pairs = (n - k + 1) // 2
    if pairs:
        u = _unit64(g.random64(2 * pairs))
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * _libm(math.log1p, -u2))
        theta = 2.0 * math.pi * u1
        cos, sin = _libm(math.cos, theta), _libm(math.sin, theta)
        vals = np.empty(2 * pairs)
        vals[0::2] = r * cos
        vals[1::2] = r * sin
        out[k:] = vals[:n - k]
        if (n - k) % 2:
            g.next_double_normal = float(vals[-1])
    if mean == 0.0 and std == 1.0:
        return out + 0.0
    return fma64(out, std, mean)


def _fill16_double(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """NormalFill16<double> on rows of 16 uniforms: Box-Muller pairs (j, j + 8)."""
    u1, u2 = 1.0 - u[:, :8].ravel(), u[:, 8:].ravel()
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    theta = (2.0 * math.pi) * u2
    out = np.empty_like(u)
    out[:, :8] = fma64(radius * _libm(math.cos, theta), std, mean).reshape(-1, 8)
    out[:, 8:] = fma64(radius * _libm(math.sin, theta), std, mean).reshape(-1, 8)
    return out


def _fill16_float(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """NormalFill16<float>, PyTorch's AVX2 kernel: avx_mathfun's log and sincos in float32."""
    u1 = np.float32(1.0) - u[:, :8]
    u2 = u[:, 8:]
    radius = np.sqrt(np.float32(-2.0) * _avx_log(u1))
    theta = np.float32(2.0 * math.pi) * u2
    sin, cos = _avx_sincos(theta)
    out = np.empty_like(u)
    out[:, :8] = fma32(radius * cos, std, mean)
    out[:, 8:] = fma32(radius * sin, std, mean)
    return out


def _std_refused(std) -> str | None:
    return None if std >= 0.0 else f"normal expects std >= 0.0, but found std {_num(std)}"


def normal(g: Generator, n: int, dtype, mean: float = 0.0, std: float = 1.0,
           contiguous: bool = True) -> np.ndarray:
    """normal_(mean, std): PyTorch's CPU kernel. With 16 or more elements in a contiguous
    tensor: n uniforms, then Box-Muller on each block of 16 (the last, partial block is drawn
    afresh and overwrites the tail); otherwise the scalar, caching Box-Muller in float64."""
    dtype = np.dtype(dtype)
    refused = _std_refused(std)
    if refused:
        raise RuntimeError(refused)
    if n < 16 or not contiguous:
        return _normal_scalar(g, n, mean, std).astype(dtype)
    double = dtype == np.float64
    fill16 = _fill16_double if double else _fill16_float
    unit = (lambda k: _unit64(g.random64(k))) if double else (lambda k: _unit32(g.random(k)))
    m, s = (float(mean), float(std)) if double else (np.float32(mean), np.float32(std))
    full = n // 16 * 16
    # float32/float64 draw all n uniforms first; float16 draws block by block (a stack buffer)
    u = unit(full if dtype == np.float16 else n)
    out = np.empty(n, u.dtype)
    out[:full] = fill16(u[:full].reshape(-1, 16), m, s).ravel()
    if n % 16:
        out[n - 16:] = fill16(unit(16).reshape(1, 16), m, s).ravel()   # the tail, redrawn
    return out.astype(dtype)


# avx_mathfun.h (Julien Pommier's cephes-derived AVX routines), step by step in float32; the
# multiply-adds GCC fuses when it builds PyTorch's AVX2 kernels are fused here too
_F = np.float32
_SQRTHF = _F(0.707106781186547524)
_LOG_P = [_F(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                          -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                          2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_DP = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_SINCOF = (_F(-1.9515295891E-4), _F(8.3321608736E-3), _F(-1.6666654611E-1))
_COSCOF = (_F(2.443315711809948E-005), _F(-1.388731625493765E-003),
           _F(4.166664568298827E-002))
_FOPI = _F(1.27323954473516)
_HALF, _ONE = _F(0.5), _F(1.0)

def _madd(a, b, c):
    """a * b + c as PyTorch's AVX2 build computes it: GCC contracts the separate multiply and
    add intrinsics into one fused multiply-add (-mfma, -ffp-contract=fast)."""
    return fma32(a, b, c)


def _avx_log(x: np.ndarray) -> np.ndarray:
    x = np.maximum(x, _F(1.17549435e-38))
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(np.float32) + _ONE
    x = ((bits & np.uint32(0x807FFFFF)) | _HALF.view(np.uint32)).view(np.float32)
    mask = x < _SQRTHF
    tmp = np.where(mask, x, _F(0))
    x = x - _ONE
    e = e - np.where(mask, _ONE, _F(0))
    x = x + tmp
    z = x * x
    y = _LOG_P[0]
    for p in _LOG_P[1:]:
        y = _madd(y, x, p)
    y = y * x
    y = _madd(y, z, e * _LOG_Q1)      # GCC fuses the first multiply feeding the add
    y = _madd(-z, _HALF, y)
    x = x + y
    return _madd(e, _LOG_Q2, x)


def _avx_sincos(x: np.ndarray):
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    swap_sin = ((j & 4) << 29).astype(np.uint32)
    poly = (j & 2) == 0
    for dp in _DP:
        x = _madd(y, dp, x)
    sign_cos = ((~(j - 2) & 4) << 29).astype(np.uint32)
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = _madd(_COSCOF[0], z, _COSCOF[1])
    yc = _madd(yc, z, _COSCOF[2])
    yc = yc * z
    yc = _madd(yc, z, -(z * _HALF))   # likewise: yc * z - z * 0.5, the first product fused
    yc = yc + _ONE
    ys = _madd(_SINCOF[0], z, _SINCOF[1])
    ys = _madd(ys, z, _SINCOF[2])
    ys = ys * z
    ys = _madd(ys, x, x)
    ysin2 = np.where(poly, ys, _F(0))
    ysin1 = np.where(poly, _F(0), yc)
    ys = ys - ysin2
    yc = yc - ysin1
    s = (ysin1 + ysin2).view(np.uint32) ^ sign_sin
    c = (yc + ys).view(np.uint32) ^ sign_cos
    return s.view(np.float32), c.view(np.float32)


# --- integers --------------------------------------------------------------------------------

_INT_BITS = {np.dtype(np.int64): 63, np.dtype(np.int32): 31, np.dtype(np.int16): 15,
             np.dtype(np.int8): 7, np.dtype(np.uint8): 8}


_DIGITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}
_FLOAT_NAME = {np.dtype(np.float16): "c10::Half", np.dtype(np.float32): "float",
               np.dtype(np.float64): "double"}
_BOUNDS_WARNING = ("{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations "
                   "{name} can support discrete uniform distribution only within this range. "
                   "This warning will become an error in version 1.7 release, please fix the "
                   "code in advance")


def float_bounds(low: int, high: int, dtype) -> tuple[int, int]:
    """PyTorch's update_from / update_to: bounds a float dtype cannot hold exactly move
    inwards to ones it can (so randint(3, 2**29, dtype=float32) draws below 2**29 - 32)."""
    dtype = np.dtype(dtype)
    d = _DIGITS[dtype]
    for what, v in (("from", low), ("to - 1", high - 1)):
        if not -(1 << d) <= v <= 1 << d:
            warnings.warn(_BOUNDS_WARNING.format(what=what, d=d, name=_FLOAT_NAME[dtype]),
                          UserWarning, stacklevel=4)

    def cast(v):
        return int(dtype.type(v))

    if cast(low + 1) < low:
        low = cast(low + 1) + (1 << (abs(low + 1).bit_length() - 1 - d + 1))
    if cast(high - 1) >= high:
        high = cast(high - 1) - (1 << (abs(high - 1).bit_length() - 1 - d + 1))
    return low, high


def random_from_to(g: Generator, n: int, low: int, high: int, dtype) -> np.ndarray:
    """random_(low, high) and randint: `random() % range + low`, or `random64()` once the
    range reaches 2**28 (PyTorch's bound for a small modulo bias)."""
    if np.dtype(dtype).kind == "f":
        low, high = float_bounds(int(low), int(high), dtype)
    span = int(high) - int(low)
    words = g.random64(n) if span >= 1 << 28 else g.random(n)
    vals = (words % np.uint64(span)).astype(np.int64) + np.int64(low)
    return vals.astype(dtype)


def random_full(g: Generator, n: int, dtype) -> np.ndarray:
    """random_() with no bounds: [0, 2**mantissa] for floats, [0, max] for integers."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (g.random(n) & np.uint64(1)).astype(np.bool_)
    if dtype == np.float64:
        return (g.random64(n) % np.uint64((1 << 53) + 1)).astype(np.float64)
    if dtype.kind == "f":
        digits = {2: 11, 4: 24}[dtype.itemsize]
        return (g.random(n) % np.uint64((1 << digits) + 1)).astype(dtype)
    bits = _INT_BITS[dtype]
    words = g.random64(n) if dtype == np.int64 else g.random(n)
    return (words % np.uint64(1 << bits)).astype(dtype)


def randperm(g: Generator, n: int) -> np.ndarray:
    """randperm_cpu: Fisher-Yates from the front, swapping i with i + random() % (n - i);
    from n = 2**32 / 20 on, PyTorch's inside-out shuffle with random64()."""
    if n < (1 << 32) // 20:
        perm = list(range(n))
        draws = g.random(n - 1).tolist() if n > 1 else []
        for i, w in enumerate(draws):
            z = i + w % (n - i)
            perm[i], perm[z] = perm[z], perm[i]
        return np.array(perm, dtype=np.int64)
    perm = np.empty(n, np.int64)
    draws = g.random64(n).tolist()
    for i, w in enumerate(draws):
        z = w % (i + 1)
        perm[i] = perm[z]
        perm[z] = i
    return perm


# --- other distributions (PyTorch computes each in float64, then casts) ------------------------

def bernoulli_scalar(g: Generator, n: int, p: float) -> np.ndarray:
    """bernoulli_(p) for a float p: uniform float64 < p (PyTorch's portable kernel)."""
    return _unit64(g.random64(n)) < p


def bernoulli_tensor(g: Generator, p: np.ndarray) -> np.ndarray:
    """bernoulli_(p) for a tensor p, element by element: float64 p draws random64(), other
    float dtypes random() (a 24-bit float uniform)."""
    flat = p.ravel()
    if p.dtype == np.float64:
        return (_unit64(g.random64(flat.size)) < flat).reshape(p.shape)
    return (_unit32(g.random(flat.size)) < flat.astype(np.float32)).reshape(p.shape)


def exponential(g: Generator, n: int, lambd: float) -> np.ndarray:
    """exponential_(lambd): -1 / lambd * log1p(-u)."""
    u = _unit64(g.random64(n))
    return (-1.0 / lambd) * _libm(math.log1p, -u)


def geometric(g: Generator, n: int, p: float) -> np.ndarray:
    """geometric_(p): ceil(log(u) / log1p(-p))."""
    u = _unit64(g.random64(n))
    with np.errstate(divide="ignore"):
        logs = np.array([math.log(v) if v > 0 else -math.inf for v in u.tolist()])
    return np.ceil(logs / math.log1p(-p))


def log_normal(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """log_normal_(mean, std): exp of the scalar (caching) normal sampler."""
    return _libm(math.exp, _normal_scalar(g, n, mean, std))


def cauchy(g: Generator, n: int, median: float, sigma: float) -> np.ndarray:
    """cauchy_(median, sigma): median + sigma * tan(pi * (u - 0.5)), the last step fused."""
    u = _unit64(g.random64(n))
    return fma64(sigma, _libm(math.tan, math.pi * (u - 0.5)), median)


# --- Tensor's in-place samplers: uniform_, normal_, ... --------------------------------------

def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def _not_implemented(kernel, dtype, kinds="f"):
    """PyTorch's error for a dtype (of a kind outside `kinds`) its `kernel` is not built for."""
    if dtype.kind not in kinds:
        return NotImplementedError(f"\"{kernel}\" not implemented for '{kind(dtype)}'")
    return None


def _continuous_only(distribution, dtype, name=kind):
    """PyTorch's error for a continuous distribution drawn into a non-float dtype."""
    if dtype.kind != "f":
        return RuntimeError(f"{distribution} distribution is a continuous probability "
                            f"distribution. dtype must be a floating point but you specified "
                            f"{name(dtype)}")
    return None


def _out_of_bounds(low, high, dtype):
    """random_(low, high)'s error for bounds an integer or bool dtype cannot hold."""
    if dtype.kind in "biu":
        lo, hi = (0, 1) if dtype == np.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        for what, v in (("from", low), ("to - 1", high - 1)):
            if not lo <= v <= hi:
                return RuntimeError(f"{what} is out of bounds for {cpp_name(dtype)}")
    return None


def _fill(self, generator, draw, refused=None, unsupported=None):
    """self filled by `draw(g, n)` in PyTorch's order: a TensorIterator visits the elements in
    memory order (a transposed view is filled along its storage). `refused` is PyTorch's
    message for arguments out of range, `unsupported` its error for self's dtype; PyTorch
    checks them in that order, before drawing anything."""
    v = self._value
    if refused:
        raise RuntimeError(refused)
    if unsupported:
        raise unsupported
    g = resolve(generator)
    check_inplace(self, MODE.enabled)
    order = sorted(range(v.ndim), key=lambda i: -abs(v.strides[i]))
    out = np.empty(v.shape, v.dtype)
    flat = np.asarray(draw(g, v.size))
    out.transpose(order)[...] = flat.reshape([v.shape[i] for i in order]).astype(v.dtype)
    write(self, out)
    return self


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Tensor.uniform_: PyTorch's CPU uniform kernel, the same values for the same seed."""
    a, b, dt = float(_number(a)), float(_number(b)), self._value.dtype
    # the dtype first: PyTorch's bounds check is the kernel's (uniform's) own
    return _fill(self, generator, lambda g, n: uniform(g, n, dt, a, b),
                 unsupported=_not_implemented("check_uniform_bounds", dt))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Tensor.normal_: PyTorch's CPU normal kernel (blocks of 16 when contiguous)."""
    mean, std, v = float(_number(mean)), float(_number(std)), self._value
    return _fill(self, generator, lambda g, n: normal(
        g, n, v.dtype, mean, std, bool(v.flags.c_contiguous)), _std_refused(std),
        _not_implemented("normal_kernel_cpu", v.dtype))


def random_(self, from_=None, to=None, *, generator=None):
    """Tensor.random_(): integers on [0, 2**mantissa] (floats) or [0, max] (integers);
    random_(to) on [0, to); random_(from, to) on [from, to)."""
    dt = self._value.dtype
    if from_ is None and to is None:
        return _fill(self, generator, lambda g, n: random_full(g, n, dt),
                     unsupported=_not_implemented("random_kernel_cpu", dt, "biuf"))
    if to is None and from_ is not None and not isinstance(from_, bool):
        low, high = 0, int(_number(from_))
    else:
        low = int(_number(from_ if from_ is not None else 0))
        high = int(_number(to)) if to is not None else int(np.iinfo(dt).max) + 1 \
            if dt.kind != "f" else (1 << _DIGITS[dt]) + 1
    unsupported = _out_of_bounds(low, high, dt) if dt.kind != "c" else RuntimeError(
        "check_random_bounds handles only integral, floating-point and boolean types")
    return _fill(self, generator, lambda g, n: random_from_to(g, n, low, high, dt),
                 None if low < high else f"random_ expects 'from' to be less than 'to', but "
                 f"got from={low} >= to={high}", unsupported)


def bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_: 1 with probability p (a float or a tensor of probabilities)."""
    dt = self._value.dtype
    if isinstance(p, Tensor):
        if dt.kind == "c":
            raise _not_implemented("bernoulli_tensor_cpu_self_", dt)
        g = resolve(generator)
        check_inplace(self, MODE.enabled)
        pv = np.ascontiguousarray(np.broadcast_to(p._value, self._value.shape))
        write(self, bernoulli_tensor(g, pv).astype(dt))
        return self
    p = float(p)
    return _fill(self, generator, lambda g, n: bernoulli_scalar(g, n, p),
                 None if 0 <= p <= 1 else f"bernoulli_ expects p to be in [0, 1], but got "
                 f"p={_num(p)}", _not_implemented("bernoulli_scalar_cpu_", dt, "biuf"))


def exponential_(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_: -log1p(-u) / lambd, PyTorch's draws."""
    lambd = float(lambd)
    return _fill(self, generator, lambda g, n: exponential(g, n, lambd),
                 None if lambd > 0 else f"exponential_ expects lambda > 0.0, but found "
                 f"lambda={_num(lambd)}", _continuous_only("Exponential", self._value.dtype))


def geometric_(self, p, *, generator=None):
    """Tensor.geometric_: ceil(log(u) / log1p(-p)), PyTorch's draws."""
    p = float(p)
    return _fill(self, generator, lambda g, n: geometric(g, n, p),
                 None if 0 < p < 1 else f"geometric_ expects p to be in (0, 1), but got "
                 f"p={_num(p)}", _not_implemented("geometric_cpu", self._value.dtype, "iuf"))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_: exp of N(mean, std ** 2), PyTorch's draws."""
    mean, std = float(mean), float(std)
    return _fill(self, generator, lambda g, n: log_normal(g, n, mean, std),
                 None if std > 0 else f"log_normal_ expects std > 0.0, but found "
                 f"std={_num(std)}", _not_implemented("log_normal_cpu", self._value.dtype))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_: median + sigma * tan(pi * (u - 1/2)), PyTorch's draws."""
    median, sigma = float(median), float(sigma)
    return _fill(self, generator, lambda g, n: cauchy(g, n, median, sigma),
                 None if sigma > 0 else f"cauchy_ expects sigma > 0.0, but found "
                 f"sigma={_num(sigma)}",
                 _continuous_only("Cauchy", self._value.dtype, cpp_name))
