"""The simulator: bots against bots on duplicate deals (``pbem simulate``), for measuring strength."""
