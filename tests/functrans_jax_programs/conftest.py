# programs/ holds JAX programs run by program_runner.py, not modules to import: --doctest-modules
# would import them and fail on `import jax` where JAX is not installed
collect_ignore_glob = ["programs/*.py"]
