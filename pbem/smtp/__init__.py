"""The SMTP front: receives mail for ``PBEM_MAIL_DOMAIN``, stores it, queues it.

``handler`` holds the aiosmtpd hooks (recipient checks, store before 250),
``server`` runs them (``SmtpFront``).  ``pbem smtp`` and ``pbem serve`` start it.
"""
