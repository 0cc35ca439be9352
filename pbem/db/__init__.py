"""Persistence: ``models`` (the tables), ``session`` (engines, sessions,
transactions), ``migrate`` (Alembic, the only maker of the schema), ``types``.

Nothing is imported here, so ``import pbem.db.models`` stays the only cost paid.
"""
