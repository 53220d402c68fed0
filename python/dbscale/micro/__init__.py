"""Micro-benchmarks of the machine (issue 19): `dbscale micro cpu`."""
