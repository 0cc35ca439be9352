"""Benchmarks that print figures (never timed assertions): ``pbem bench …``."""
