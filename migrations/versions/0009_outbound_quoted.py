"""What quote removal needs of each sent mail, kept beside its bytes.

outbound_messages.quoted
    the mail's subject on the first line, then the keys of the lines of its text and HTML parts
    (``pbem.mail.quoted``), written when the mail is composed, so that reading a reply never
    parses the mail it answers; emptied (NULL) with the bytes by mail retention and
    ``pbem player forget``. Mails written before this revision keep NULL: their replies are read
    against their bytes, as before.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("outbound_messages", sa.Column("quoted", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbound_messages") as batch:
        batch.drop_column("quoted")
