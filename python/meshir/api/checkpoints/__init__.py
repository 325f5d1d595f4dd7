"""Sharded checkpoints with Orbax (`Checkpoints`, docs/checkpoints.md)."""
