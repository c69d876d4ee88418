"""Package layout: lib/ is `modelplane`, schemas/ is `modelplane.schemas`,
functions/ is `modelplane.functions` (each function's fn.py is package data,
loaded by path, because function folder names carry dashes)."""
from setuptools import find_packages, setup

setup(
    package_dir={"modelplane": "lib", "modelplane.schemas": "schemas", "modelplane.functions": "functions"},
    packages=["modelplane", "modelplane.schemas", "modelplane.functions"]
    + ["modelplane." + p for p in find_packages("lib")],
    package_data={"modelplane.functions": ["*/fn.py", "*/package/*.yaml"]},
)
