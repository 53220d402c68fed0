"""Helpers for dbscale's own test suite: the private test servers (same code as the embedded
target), started by `make test` and described to cargo test and pytest through environment
variables.
"""
