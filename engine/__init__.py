"""The engine: pure, deterministic models of memory, compute and communication."""
