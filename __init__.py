"""shardwise: the distributed LLM training advisor."""

__version__ = "0.1.0"
