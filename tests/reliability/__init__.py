"""Reliability: hostile input, faults, tenancy, load and security across every function."""
