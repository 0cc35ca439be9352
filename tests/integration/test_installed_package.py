"""An installed pbem (a built wheel, not the editable checkout) finds its templates, catalogs and
migrations (README, "Running in production").

The wheel is built from this checkout with hatchling's PEP 517 hook (the venv's hatchling: no
isolated build environment, no network) and installed with pip into a fresh virtualenv that has
no pip and no dependencies of its own: a ``.pth`` file puts the checkout venv's site-packages on
its path as a plain directory, so the dependencies are found but that directory's own ``.pth``
files — the editable install's, which adds the checkout — are not processed. Everything then runs
in subprocesses of that virtualenv, from a working directory outside the checkout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.orm import Session

from pbem.db import migrate
from pbem.db.models import Game, GameStatus, Move, OutboundMessage

REPO = Path(__file__).resolve().parents[2]
#: Where the test's own interpreter finds the dependencies (the checkout's venv).
DEPENDENCIES = Path(sysconfig.get_paths()["purelib"]).resolve()

#: Run inside the installed virtualenv: where pbem came from, what it resolves, what it renders.
PROBE = r'''
import json, os, sys
from pathlib import Path

import pbem
import pbem.resources as resources
from pbem.config import Settings
from pbem.mail.compose import MailComposer
from pbem.mail.samples import sample_contexts
from pbem.web import create_app

composer = MailComposer(resources.templates_dir(), domain="hearts.test")
mails = {}
for language in ("en", "pt", "ro"):
    for kind, contexts in sample_contexts(language).items():
        for k, context in enumerate(contexts):
            mail = composer.render(context)
            mails[f"{language}/{kind}/{k}"] = [mail.subject, mail.text, mail.html]
page = create_app(Settings.from_env(os.environ)).test_client().get("/no-such-page")
import workers.app  # noqa: F401  (the worker package is in the wheel too)

report = {
    "sys_path": sys.path,
    "cwd": os.getcwd(),
    "pbem": pbem.__file__,
    "templates": str(resources.templates_dir()),
    "migrations": str(resources.migrations_dir()),
    "head": __import__("pbem.db.migrate", fromlist=["head"]).head(),
    "modules": {name: getattr(module, "__file__", None) for name, module in sys.modules.items()
                if name.split(".")[0] in ("pbem", "workers")},
    "mails": mails,
    "page": [page.status_code, page.get_data(as_text=True)],
}
Path(sys.argv[1]).write_text(json.dumps(report))
'''


@dataclass(frozen=True)
class Installed:
    venv: Path
    site: Path  # the virtualenv's site-packages, where the wheel went
    elsewhere: Path  # a working directory outside the checkout
    env: dict[str, str]

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=self.elsewhere, env={**self.env, **env}, capture_output=True, text=True,
                              timeout=120)

    def pbem(self, *args: str, **env: str) -> str:
        done = self.run(str(self.venv / "bin" / "pbem"), *args, **env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout


def _check(args: list[str], **kwargs: object) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    dist = root / "dist"
    built = _check([sys.executable, "-c", "import sys; from hatchling.build import build_wheel; "
                    "print(build_wheel(sys.argv[1]))", str(dist)], cwd=REPO)
    wheel = dist / built.split()[-1]
    assert wheel.is_file() and wheel.suffix == ".whl", built

    venv = root / "venv"
    _check([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(_check([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (site / "_pbem_test_dependencies.pth").write_text(f"{DEPENDENCIES}\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PBEM_", "PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    _check([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
            str(wheel)], env=env)

    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    env.update({"PBEM_DATA_DIR": str(root / "var"), "PBEM_SECRET_KEY": "installed-secret",
                "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_BROKER_URL": "memory://",
                "PBEM_DEFAULT_LANGUAGE": "pt", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"})
    return Installed(venv=venv, site=site.resolve(), elsewhere=elsewhere, env=env)


def _under(path: str | Path, parent: Path) -> bool:
    return Path(path).resolve().is_relative_to(parent)


def _in_checkout(path: str | Path) -> bool:
    """In the checkout, other than the dependencies' directory (which may be the checkout's .venv)."""
    return _under(path, REPO) and not _under(path, DEPENDENCIES)


def test_the_installed_copy_resolves_renders_and_serves_its_own_files(installed: Installed, tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = installed.run(str(installed.venv / "bin" / "python"), str(script), str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())

    # The checkout is nowhere on the path, and the working directory is not in it either.
    assert not any(entry and _in_checkout(entry) for entry in report["sys_path"]), report["sys_path"]
    assert not _under(report["cwd"], REPO)
    # pbem, its resources and everything of it that was imported come from the installed copy.
    package = installed.site / "pbem"
    assert Path(report["pbem"]).resolve() == package / "__init__.py"
    assert Path(report["templates"]).resolve() == package / "_data" / "templates"
    assert Path(report["migrations"]).resolve() == package / "_data" / "migrations"
    assert report["head"] == migrate.head()
    assert "pbem.mail.i18n" in report["modules"] and "workers.app" in report["modules"]
    strays = {name: f for name, f in report["modules"].items() if f and not _under(f, installed.site)}
    assert not strays, strays

    # Every sample mail, in every language, renders exactly as it does from the checkout: the same
    # templates and the same catalogs (and the catalogs are in use: Portuguese is not English).
    from pbem.mail.compose import MailComposer
    from pbem.mail.samples import sample_contexts
    from pbem.resources import templates_dir

    composer = MailComposer(templates_dir(), domain="hearts.test")
    here = {f"{language}/{kind}/{k}": [m.subject, m.text, m.html]
            for language in ("en", "pt", "ro")
            for kind, contexts in sample_contexts(language).items()
            for k, m in enumerate(composer.render(c) for c in contexts)}
    assert report["mails"].keys() == here.keys()
    differing = [key for key in here if report["mails"][key] != here[key]]
    assert not differing, differing[:10]
    assert "É a sua vez" in report["mails"]["pt/your_turn/0"][1]
    assert report["mails"]["pt/your_turn/0"][1] != report["mails"]["en/your_turn/0"][1]

    # The web pages' templates and catalogs: the not-found page in the default language, Portuguese.
    status, body = report["page"]
    assert status == 404 and "Não encontrado" in body, body[:500]


def test_the_installed_command_migrates_a_fresh_database_and_starts_a_game(installed: Installed,
                                                                           tmp_path: Path) -> None:
    db_file = tmp_path / "fresh" / "pbem.db"
    url = f"sqlite:///{db_file}"
    assert "not migrated" in installed.pbem("db", "current", PBEM_DATABASE_URL=url)
    assert not db_file.exists()  # asking never creates the database
    assert f"at revision {migrate.head()}" in installed.pbem("db", "upgrade", PBEM_DATABASE_URL=url)
    assert "(up to date)" in installed.pbem("db", "current", PBEM_DATABASE_URL=url)
    started = installed.pbem("game", "new", "--player", "ana@players.test=Ana", "--bots", "3", "--seed", "installed",
                             PBEM_DATABASE_URL=url)
    assert "started" in started, started

    # Read back with the checkout's code: the schema is the head's, and the game was dealt and mailed.
    assert migrate.current(url) == migrate.head()
    engine = create_engine(url)
    try:
        tables = set(inspect(engine).get_table_names())
        assert {"games", "seats", "players", "moves", "inbound_messages", "outbound_messages"} <= tables
        with Session(engine) as session:
            game = session.scalars(select(Game)).one()
            assert game.status == GameStatus.ACTIVE
            assert session.scalar(select(func.count()).select_from(Move).where(Move.kind == "deal")) == 1
            mails = session.scalars(select(OutboundMessage).order_by(OutboundMessage.id)).all()
            assert {m.kind for m in mails} & {"game_started", "your_turn"}  # the game began
            assert all(m.recipient == "ana@players.test" for m in mails)
            # Rendered from the installed templates with the installed Portuguese catalog.
            texts = [message_from_bytes(m.raw, policy=default).get_body(("plain",)).get_content() for m in mails]
            # (after the inbox preview line, templates/email/_preheader.jinja)
            assert all(re.split(r"\r?\n\r?\n", text, maxsplit=1)[1].startswith("Olá Ana,") for text in texts), texts[0][:200]
    finally:
        engine.dispose()
