"""Reading inbound mail: raw bytes -> decoded mail -> new reply text -> a command (all pure)."""
