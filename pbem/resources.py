"""Where pbem's non-Python files are: mail/web templates and Alembic migrations.

In a checkout (and an editable install) they are the repository's top-level
``templates/`` and ``migrations/``; a built wheel carries copies under
``pbem/_data/`` (pyproject's hatch ``force-include``).  Callers ask here instead of
building paths themselves, so both layouts work.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _resource_dir(name: str) -> Path:
    checkout = _PACKAGE_DIR.parent
    # pyproject.toml beside the package means a source checkout, not site-packages.
    if (checkout / "pyproject.toml").is_file() and (checkout / name).is_dir():
        return checkout / name
    installed = _PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    raise FileNotFoundError(
        f"pbem's {name}/ directory is missing: looked in {checkout / name} and {installed}"
    )


def templates_dir() -> Path:
    """The ``templates/`` directory (``email/`` and ``web/`` beneath it)."""
    return _resource_dir("templates")


def migrations_dir() -> Path:
    """The Alembic script directory (``env.py``, ``versions/``)."""
    return _resource_dir("migrations")
