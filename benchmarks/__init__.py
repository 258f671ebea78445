"""Benchmarks of the doudizhu engine and environments, and of peer engines."""
