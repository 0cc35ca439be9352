"""Settings.from_env: defaults, parsing, the development secret, errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pbem.config import ConfigError, HostPort, Settings


def test_defaults_live_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings.from_env({"PBEM_DATA_DIR": str(tmp_path / "var")})
    data = tmp_path / "var"
    assert settings.data_dir == data
    assert settings.database_url == f"sqlite:///{data / 'pbem.db'}"
    assert settings.broker_url == f"sqla+sqlite:///{data / 'broker.db'}"
    assert settings.mail_domain == "hearts.localhost"
    assert settings.smtp_hostname == "hearts.localhost"
    assert settings.smtp_listen == HostPort("127.0.0.1", 2525)
    assert settings.web_listen == HostPort("127.0.0.1", 8025)
    assert settings.max_message_size == 10 * 1024 * 1024
    assert (settings.relay_host, settings.relay_port, settings.relay_tls) == ("", 25, "none")
    assert (settings.error_replies_per_day, settings.invites_per_day) == (10, 20)
    assert settings.default_language == "en"
    assert settings.tls_cert is None and settings.tls_key is None


def test_values_are_parsed(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "PBEM_DATA_DIR": str(tmp_path),
            "PBEM_DATABASE_URL": "postgresql+psycopg://pbem@127.0.0.1/pbem",
            "PBEM_MAIL_DOMAIN": "Hearts.Example.ORG",
            "PBEM_SMTP_LISTEN": "[::1]:25",
            "PBEM_MAX_MESSAGE_SIZE": "512K",
            "PBEM_RELAY_TLS": "STARTTLS",
            "PBEM_RELAY_PORT": "587",
            "PBEM_BASE_URL": "https://hearts.example.org/",
            "PBEM_SECRET_KEY": "s3cret",
        }
    )
    assert settings.database_url == "postgresql+psycopg://pbem@127.0.0.1/pbem"
    assert settings.mail_domain == "hearts.example.org"
    assert settings.smtp_hostname == "hearts.example.org"
    assert settings.smtp_listen == HostPort("::1", 25)
    assert str(settings.smtp_listen) == "[::1]:25"
    assert settings.max_message_size == 512 * 1024
    assert (settings.relay_tls, settings.relay_port) == ("starttls", 587)
    assert settings.base_url == "https://hearts.example.org"
    assert settings.secret_key == "s3cret"
    assert "s3cret" not in repr(settings)


def test_development_secret_is_created_once_and_reused(tmp_path: Path) -> None:
    env = {"PBEM_DATA_DIR": str(tmp_path)}
    first = Settings.from_env(env).secret_key
    assert len(first) >= 32
    assert Settings.from_env(env).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_production_requires_a_secret(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PBEM_SECRET_KEY"):
        Settings.from_env({"PBEM_ENV": "production", "PBEM_DATA_DIR": str(tmp_path)})
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PBEM_RELAY_PORT", "seventy"),
        ("PBEM_RELAY_PORT", "70000"),
        ("PBEM_RELAY_TLS", "maybe"),
        ("PBEM_SMTP_LISTEN", "2525"),
        ("PBEM_ENV", "staging"),
        ("PBEM_INVITES_PER_DAY", "many"),
    ],
)
def test_bad_values_name_their_variable(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x", name: value})


def test_tls_cert_and_key_go_together(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PBEM_TLS_KEY"):
        Settings.from_env(
            {"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x", "PBEM_TLS_CERT": "c.pem"}
        )


def test_every_field_is_documented_and_settings_are_frozen(tmp_path: Path) -> None:
    names = [row[0] for row in Settings.describe()]
    assert len(names) == len(set(names)) == len(dataclasses.fields(Settings))
    assert all(name.startswith("PBEM_") for name in names)
    assert all(doc for _, _, doc in Settings.describe())
    settings = Settings.from_env({"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.mail_domain = "elsewhere"  # type: ignore[misc]


def test_the_readme_lists_every_setting() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    missing = [name for name, _, _ in Settings.describe() if f"`{name}`" not in readme]
    assert missing == [], f"README's configuration table lacks {missing}"


def test_positive_intervals_only(tmp_path: Path) -> None:
    env = {"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x"}
    assert Settings.from_env(env | {"PBEM_TICK_SECONDS": "2.5"}).tick_seconds == 2.5
    with pytest.raises(ConfigError, match="PBEM_SWEEP_SECONDS"):
        Settings.from_env(env | {"PBEM_SWEEP_SECONDS": "0"})


def test_links_follow_the_web_listen_address_unless_a_base_url_is_set(tmp_path: Path) -> None:
    env = {"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x"}
    assert Settings.from_env(env).base_url == "http://127.0.0.1:8025"
    assert Settings.from_env(env | {"PBEM_WEB_LISTEN": "127.0.0.1:9100"}).base_url == "http://127.0.0.1:9100"
    assert Settings.from_env(env | {"PBEM_WEB_LISTEN": "[::1]:9100"}).base_url == "http://[::1]:9100"
    assert Settings.from_env(env | {"PBEM_WEB_LISTEN": "0.0.0.0:9100"}).base_url == "http://localhost:9100"
    assert Settings.from_env(env | {"PBEM_WEB_LISTEN": "127.0.0.1:9100",
                                    "PBEM_BASE_URL": "https://hearts.example.org/"}).base_url == "https://hearts.example.org"
