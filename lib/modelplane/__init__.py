"""Modelplane: the shared library behind every composition function.

Modules are nouns (``quantity``, ``scheduler``), pure functions over plain
data; nothing here imports protobuf except the function runtime
(``function``, ``runtime``) and the render harness.
"""
