def pytest_configure(config):
    config.addinivalue_line(
        "markers", "notebooks: executes the tutorial notebooks in a Jupyter kernel "
        "(slow; deselect with -m 'not notebooks')")
