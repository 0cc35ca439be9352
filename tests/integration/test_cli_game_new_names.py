"""``pbem game new --player ADDRESS=NAME`` refuses, with a clear message and no traceback, a name or
an address that a received mail's would be cleaned of (``pbem.mail.reading.clean``): line breaks,
NULs and other control characters, an overlong name, an address that is not one plain address.
A clean name is kept as given.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from pbem.cli import main
from pbem.config import Settings
from pbem.db.models import Player
from pbem.db.session import transaction
from pbem.services.app import Services


@pytest.fixture
def env(sqlite_migrated_url: str, tmp_path: Path) -> dict[str, str]:
    return {"PBEM_DATABASE_URL": sqlite_migrated_url, "PBEM_DATA_DIR": str(tmp_path),
            "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "test-secret-key",
            "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"}


def game_new(env: dict[str, str], player: str) -> Result:
    return CliRunner().invoke(main, ["game", "new", f"--player={player}", "--bots", "3"], env=env)


@pytest.mark.parametrize("player", [
    "ana@players.test=Ana\r\nBcc: victim@elsewhere.test",
    "ana@players.test=Ana\nMaria",
    "ana@players.test=Ana\x00",
    "ana@players.test=Ana\x1b[31m",
    "ana@players.test=Ana\u2028Maria",
    "ana@players.test=" + "A" * 101,
])
def test_a_name_with_control_characters_is_refused(env: dict[str, str], player: str) -> None:
    result = game_new(env, player)
    assert result.exit_code == 2, result.output
    assert "Invalid value for --player" in result.output and "control character" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("address", ["ana\x00@players.test", "ana@players.test\r\nBcc: x@y.test", "ana",
                                     "<ana@players.test>", "ana smith@players.test", "a" * 65 + "@players.test",
                                     "ana@players"])
def test_an_address_that_does_not_parse_is_refused(env: dict[str, str], address: str) -> None:
    result = game_new(env, f"{address}=Ana")
    assert result.exit_code == 2, result.output
    assert "not a mail address" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_clean_name_is_kept(env: dict[str, str]) -> None:
    result = game_new(env, "Ana@Players.test=  Ana Maria Ferreira ")
    assert result.exit_code == 0, result.output
    services = Services.from_settings(Settings.from_env(env))
    try:
        with transaction(services.session_factory) as session:
            player = session.scalars(select(Player).where(Player.address == "ana@players.test")).one()
            assert player.display_name == "Ana Maria Ferreira"
    finally:
        services.close()


def test_the_preset_given_as_an_option_is_a_clear_refusal(env: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["game", "new", "--player=ana@players.test", "--bots", "3",
                                       "--option", "preset=omnibus"], env=env)
    assert result.exit_code == 1, result.output
    # The reason in words (as a new-game mail's refusal gives it), never the raw code.
    assert "The rule set is named once" in result.output and "PRESET_AS_OPTION" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
