"""Tests of the API surface: XRDs, Compositions, packages, examples, schemas."""
