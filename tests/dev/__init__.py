"""Tests of the tools for developing Modelplane itself (``modelplane.dev``)."""
