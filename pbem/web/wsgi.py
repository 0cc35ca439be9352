"""WSGI entry point for production servers: ``gunicorn pbem.web.wsgi:app``.

The one module allowed to do work at import time: a WSGI server imports it to get the
application, so it builds the settings from the environment and the app from them.
Nothing else in pbem imports it.
"""

from __future__ import annotations

import os

from pbem.config import Settings
from pbem.web import create_app

app = create_app(Settings.from_env(os.environ))
