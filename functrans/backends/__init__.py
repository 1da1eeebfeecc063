"""Running functrans programs on other array libraries (dask, CuPy): one small module each.

`functrans.backends.dask_jit`: `jit` over chunked dask arrays of points (one fused task per
chunk, dask's tree reductions) and `compute(tree)`. Nothing here is imported by
`import functrans`; each module imports its library when first used.
"""

__all__ = ["dask_jit"]
