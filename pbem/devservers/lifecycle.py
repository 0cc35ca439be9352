"""What every throwaway server here has in common: ``with Server() as server:`` starts it and
stops it again, whatever happens inside."""

from __future__ import annotations

from typing import Any, Self

__all__ = ["DevServer"]


class DevServer:
    """A server with ``start()`` (returning itself) and ``stop()``, usable as a context manager."""

    def start(self, *args: Any, **kwargs: Any) -> Self:
        raise NotImplementedError

    def stop(self, *args: Any, **kwargs: Any) -> object:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
