"""Indexes of the mails whose raw bytes are still kept, for the retention sweep.

``pbem.services.retention`` empties the raw bytes of mails older than ``PBEM_MAIL_RETENTION_DAYS``
once they are settled (sent or failed; processed); it finds them oldest first through these
partial indexes, which hold only the rows still keeping their bytes, so they stay the size of the
retention window however long the server runs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RAW_KEPT = sa.text("length(raw) > 0")
INDEXES = (
    ("ix_outbound_messages_raw_kept", "outbound_messages", "created_at"),
    ("ix_inbound_messages_raw_kept", "inbound_messages", "received_at"),
)


def upgrade() -> None:
    for name, table, column in INDEXES:
        op.create_index(name, table, [column], postgresql_where=RAW_KEPT, sqlite_where=RAW_KEPT)


def downgrade() -> None:
    for name, table, _column in INDEXES:
        op.drop_index(name, table_name=table)
