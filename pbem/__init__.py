"""pbem: Hearts by email."""
__version__ = "0.1.0"
