"""Benchmarks of the memory path, each against a baseline measured in the same run (see BENCHMARKS.md).

Not tests: no file here is named test_*, and pytest only collects tests/. Run `python -m bench` (all),
`python -m bench --smoke` (tiny sizes, for CI) or `python -m bench.<name>`.
"""
