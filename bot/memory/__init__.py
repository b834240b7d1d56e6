"""The memory engine: plain turns and ids in, per-user memory out. Knows nothing about Discord."""
