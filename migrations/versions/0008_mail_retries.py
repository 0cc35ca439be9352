"""The operator's retries of set-aside mail (``pbem mail retry``, README "Operating pbem").

mail_retries
    one row each time the operator gave a mail that was set aside (a received mail ``failed``
    after its attempts, a mail to send ``failed`` for good) a fresh set of attempts: which mail
    (exactly one of ``inbound_id`` and ``outbound_id``), when, how many attempts it had used and
    what its record said before (``before``: the received mail's outcome, or the sent one's last
    error), since the mail's own row starts again from nothing.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
DOCUMENT = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "mail_retries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("inbound_id", sa.Integer(), nullable=True),
        sa.Column("outbound_id", sa.Integer(), nullable=True),
        sa.Column("retried_at", WHEN, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("before", DOCUMENT, nullable=True),
        sa.CheckConstraint("(inbound_id IS NULL) <> (outbound_id IS NULL)", name=op.f("ck_mail_retries_one_mail")),
        sa.ForeignKeyConstraint(["inbound_id"], ["inbound_messages.id"],
                                name="fk_mail_retries_inbound_id_inbound_messages", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["outbound_id"], ["outbound_messages.id"],
                                name="fk_mail_retries_outbound_id_outbound_messages", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_mail_retries"),
    )
    op.create_index("ix_mail_retries_inbound_id", "mail_retries", ["inbound_id"])
    op.create_index("ix_mail_retries_outbound_id", "mail_retries", ["outbound_id"])


def downgrade() -> None:
    op.drop_index("ix_mail_retries_outbound_id", table_name="mail_retries")
    op.drop_index("ix_mail_retries_inbound_id", table_name="mail_retries")
    op.drop_table("mail_retries")
