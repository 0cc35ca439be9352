"""Settings of a pbem process, read from ``PBEM_*`` environment variables.

There is no global settings object: a process builds one ``Settings`` with
``Settings.from_env(os.environ)`` at its entry point and passes it down, so tests
can build as many differently configured ones as they like.

Every setting is one ``setting(...)`` line below: the variable's name, its default
and how the text is parsed.  Fields are resolved in declaration order, and a
default may be a function of the settings resolved before it (the database URL
lives in the data directory, the SMTP greeting name defaults to the mail domain).
To add a setting, add one line; ``Settings.describe()`` lists them all (the README
and ``pbem config`` can print it).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

Resolved = Mapping[str, Any]
"""The settings resolved so far, by field name, handed to computed defaults."""


class ConfigError(ValueError):
    """A ``PBEM_*`` variable is missing or does not parse; the message names it."""


class HostPort(NamedTuple):
    """A listening address such as ``127.0.0.1:2525`` (IPv6 as ``[::1]:2525``)."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_host_port(text: str) -> HostPort:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return HostPort(host.strip("[]"), parse_port(port))


def optional_host_port(text: str) -> HostPort | None:
    return parse_host_port(text) if text.strip() else None


def parse_port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise ValueError(f"port out of range: {port}")
    return port


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean, got {text!r}")


def parse_size(text: str) -> int:
    """Bytes, optionally with a binary suffix: ``10485760``, ``10M``, ``512K``."""
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(value[-1:], 1)
    number = int(value[:-1] if factor > 1 else value)
    if number < 0:
        raise ValueError(f"negative size: {text!r}")
    return number * factor


def positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(f"expected a positive number of seconds, got {text!r}")
    return value


def non_negative_days(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise ValueError(f"expected a number of days, 0 or more, got {text!r}")
    return value


def one_of(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return value

    return parse


def optional_path(text: str) -> Path | None:
    return Path(text).expanduser() if text.strip() else None


def data_path(name: str) -> Callable[[Resolved], str]:
    return lambda resolved: str(Path(resolved["data_dir"]) / name)


def setting(
    env: str,
    default: Any | Callable[[Resolved], Any],
    parse: Callable[[str], Any] = str,
    *,
    secret: bool = False,
    doc: str,
) -> Any:
    """Declare a field read from ``env``; ``default`` is a value or a function of
    the fields before it.  ``secret`` keeps the value out of ``repr``."""
    return field(
        repr=not secret,
        metadata={"env": env, "default": default, "parse": parse, "doc": doc, "secret": secret},
    )


SECRET_KEY_FILE = "secret_key"


@dataclass(frozen=True)
class Settings:
    """Everything a pbem process is told by its environment."""

    # Deployment kind: "production" refuses to start without PBEM_SECRET_KEY.
    environment: str = setting(
        "PBEM_ENV", "development", one_of("development", "production"),
        doc="development (default) or production; production requires PBEM_SECRET_KEY",
    )
    # Where the embedded databases, the dev secret and the dev mailbox live.
    data_dir: Path = setting(
        "PBEM_DATA_DIR", "./var", lambda text: Path(text).expanduser().resolve(),
        doc="directory for the embedded SQLite files, the dev secret and the dev mailbox",
    )
    # SQLAlchemy URL of the game database (SQLite or postgresql+psycopg://).
    database_url: str = setting(
        "PBEM_DATABASE_URL", lambda r: f"sqlite:///{Path(r['data_dir']) / 'pbem.db'}",
        doc="SQLAlchemy URL: sqlite:///path (default in the data dir) or postgresql+psycopg://...",
    )
    # Celery broker; default an embedded one (kombu's SQLAlchemy transport on SQLite).
    broker_url: str = setting(
        "PBEM_BROKER_URL", lambda r: f"sqla+sqlite:///{Path(r['data_dir']) / 'broker.db'}",
        doc="Celery broker URL, e.g. redis://127.0.0.1:6379/0 (default: embedded SQLite broker)",
    )
    # The domain players write to: <game address>@mail_domain, new@, postmaster@.
    mail_domain: str = setting(
        "PBEM_MAIL_DOMAIN", "hearts.localhost", str.lower,
        doc="mail domain the server receives for (reply addresses, new@, postmaster@)",
    )
    # Address the SMTP front listens on.
    smtp_listen: HostPort = setting(
        "PBEM_SMTP_LISTEN", "127.0.0.1:2525", parse_host_port,
        doc="HOST:PORT the SMTP front listens on",
    )
    # Name in the SMTP greeting; explicit so aiosmtpd skips a per-connection FQDN lookup.
    smtp_hostname: str = setting(
        "PBEM_SMTP_HOSTNAME", lambda r: r["mail_domain"],
        doc="host name in the SMTP greeting (default: the mail domain)",
    )
    # Largest inbound message accepted, in bytes (suffixes K, M, G allowed).
    max_message_size: int = setting(
        "PBEM_MAX_MESSAGE_SIZE", 10 * 1024**2, parse_size,
        doc="largest inbound message in bytes (K/M/G suffixes allowed; default 10M)",
    )
    # Certificate and key for STARTTLS on the SMTP front; both or neither.
    tls_cert: Path | None = setting(
        "PBEM_TLS_CERT", None, optional_path,
        doc="PEM certificate for STARTTLS on the SMTP front (with PBEM_TLS_KEY)",
    )
    tls_key: Path | None = setting(
        "PBEM_TLS_KEY", None, optional_path,
        doc="PEM private key for STARTTLS on the SMTP front (with PBEM_TLS_CERT)",
    )
    # Outgoing relay; empty means mails go to the local dev mailbox in the data dir.
    relay_host: str = setting(
        "PBEM_RELAY_HOST", "",
        doc="SMTP relay for outgoing mail (empty: write to the dev mailbox in the data dir)",
    )
    relay_port: int = setting("PBEM_RELAY_PORT", 25, parse_port, doc="SMTP relay port")
    relay_tls: str = setting(
        "PBEM_RELAY_TLS", "none", one_of("none", "starttls", "ssl"),
        doc="TLS to the relay: none, starttls or ssl",
    )
    relay_user: str = setting("PBEM_RELAY_USER", "", doc="relay login (empty: no AUTH)")
    relay_password: str = setting(
        "PBEM_RELAY_PASSWORD", "", secret=True, doc="relay password"
    )
    # DKIM signing of every outgoing mail (pbem.mail.signing); no key file: mail goes unsigned.
    dkim_key_file: Path | None = setting(
        "PBEM_DKIM_KEY_FILE", None, optional_path,
        doc="PEM RSA private key that signs every outgoing mail with DKIM (empty: unsigned; "
        "`pbem dkim keygen` makes one)",
    )
    dkim_selector: str = setting(
        "PBEM_DKIM_SELECTOR", "pbem", lambda text: text.strip().lower(),
        doc="DKIM selector: the public key is published at <selector>._domainkey.<DKIM domain>",
    )
    dkim_domain: str = setting(
        "PBEM_DKIM_DOMAIN", lambda r: r["mail_domain"], lambda text: text.strip().lower(),
        doc="the signature's d= domain (default: the mail domain, which the From address uses: "
        "DMARC wants them aligned)",
    )
    # Sender authentication of received replies (pbem.services.sender_auth).
    trusted_authserv_id: str = setting(
        "PBEM_TRUSTED_AUTHSERV_ID", "", lambda text: text.strip().lower(),
        doc="authserv-id of the relay in front of the SMTP front whose topmost "
        "Authentication-Results header pbem believes (empty: pbem checks DKIM and DMARC itself)",
    )
    dns_servers: str = setting(
        "PBEM_DNS_SERVERS", "", lambda text: text.strip(),
        doc="DNS servers for the DKIM and DMARC lookups, HOST[:PORT] separated by commas "
        "(empty: the system's resolver)",
    )
    dns_timeout: float = setting(
        "PBEM_DNS_TIMEOUT", 3.0, positive_seconds,
        doc="seconds one DKIM or DMARC lookup may take; a lookup that times out is a temporary "
        "error, never a failure",
    )
    # Key for signed reply addresses and links; dev default generated once in the data dir.
    secret_key: str = setting(
        "PBEM_SECRET_KEY", lambda r: load_or_create_dev_secret(r),
        secret=True,
        doc="HMAC key for reply addresses and links (required in production; "
        "in development generated once into <data dir>/secret_key)",
    )
    # Address the web front (webhooks, game pages) listens on.
    web_listen: HostPort = setting(
        "PBEM_WEB_LISTEN", "127.0.0.1:8025", parse_host_port,
        doc="HOST:PORT the web front listens on",
    )
    # Public base URL of the web front, used in links inside mails; by default where it listens.
    base_url: str = setting(
        "PBEM_BASE_URL", lambda r: default_base_url(r["web_listen"]), lambda text: text.rstrip("/"),
        doc="public base URL of the web front, for links in mails (default: http://PBEM_WEB_LISTEN, "
        "localhost for an address of every interface)",
    )
    # Shared secret of the generic raw-MIME webhook (HMAC over timestamp and body).
    webhook_secret: str = setting(
        "PBEM_WEBHOOK_SECRET", "", secret=True,
        doc="shared secret of the inbound raw-MIME webhook (empty: webhook disabled)",
    )
    # Mailgun-compatible route: signing key plus HTTP basic auth.
    mailgun_signing_key: str = setting(
        "PBEM_MAILGUN_SIGNING_KEY", "", secret=True,
        doc="Mailgun webhook signing key (empty: Mailgun route disabled)",
    )
    mailgun_user: str = setting(
        "PBEM_MAILGUN_USER", "", doc="basic-auth user required on the Mailgun route"
    )
    mailgun_password: str = setting(
        "PBEM_MAILGUN_PASSWORD", "", secret=True,
        doc="basic-auth password required on the Mailgun route",
    )
    # Abuse limits, per sender address and day.
    error_replies_per_day: int = setting(
        "PBEM_ERROR_REPLIES_PER_DAY", 10, int,
        doc="most error replies sent to one address per day",
    )
    invites_per_day: int = setting(
        "PBEM_INVITES_PER_DAY", 20, int,
        doc="most invitations one sender may send per day; also the most answers an unverified "
        "address gets per day from new@",
    )
    stranger_answers_per_hour: int = setting(
        "PBEM_STRANGER_ANSWERS_PER_HOUR", 100, int,
        doc="most answers sent to unverified addresses in any hour, all of them together",
    )
    # Language of mails to players who have not chosen one.
    default_language: str = setting(
        "PBEM_DEFAULT_LANGUAGE", "en", doc="language of mails for players who chose none"
    )

    # The periodic work Celery beat queues (workers.app).
    tick_seconds: float = setting(
        "PBEM_TICK_SECONDS", 60.0, positive_seconds,
        doc="how often beat queues the tick: deadlines, reminders, vacations, digests",
    )
    sweep_seconds: float = setting(
        "PBEM_SWEEP_SECONDS", 15.0, positive_seconds,
        doc="how often beat queues the sweep that re-queues mail left pending",
    )
    mail_retention_days: float = setting(
        "PBEM_MAIL_RETENTION_DAYS", 30.0, non_negative_days,
        doc="days the bytes of settled mails are kept (sent or failed out, processed in; "
        "the sweep empties older ones, the rows stay; 0: kept forever)",
    )

    # Prometheus metrics (pbem.metrics): every long-running process records into the directory;
    # the one process of a host given PBEM_METRICS_LISTEN serves them all (README, "Metrics and logs").
    metrics_listen: HostPort | None = setting(
        "PBEM_METRICS_LISTEN", None, optional_host_port,
        doc="HOST:PORT where this process serves the Prometheus metrics of every pbem process of "
        "its host (those sharing PBEM_METRICS_DIR) and the database's backlog (empty: not here)",
    )
    metrics_dir: Path = setting(
        "PBEM_METRICS_DIR", lambda r: Path(r["data_dir"]) / "metrics", lambda text: Path(text).expanduser().resolve(),
        doc="directory where the host's pbem processes record their metrics "
        "(prometheus_client's multiprocess files; default <data dir>/metrics)",
    )

    # Tests only: a file holding seconds added to the real time, read by every process's clock.
    clock_offset_file: Path | None = setting(
        "PBEM_CLOCK_OFFSET_FILE", None, optional_path,
        doc="(tests) file of seconds added to the clock of every process, to run days in seconds",
    )
    # Game defaults for games that do not say otherwise.
    bot_name: str = setting(
        "PBEM_DEFAULT_BOT", "heuristic",
        doc="computer player that fills bot seats (`bots: 3` naming none, a declined invitation)",
    )
    stand_in_bot: str = setting(
        "PBEM_STAND_IN_BOT", "strong",
        doc="computer player that plays for a person: absent past a deadline, away, resigned, or on autopilot",
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from ``env`` (usually ``os.environ``).

        An empty variable counts as unset.  In development a missing
        ``PBEM_SECRET_KEY`` is generated once and kept in the data directory,
        which is the only side effect.
        """
        resolved: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            meta = f.metadata
            raw = env.get(meta["env"], "")
            try:
                if raw != "":
                    value = meta["parse"](raw)
                elif callable(meta["default"]):
                    value = meta["default"](resolved)
                elif isinstance(meta["default"], str):
                    value = meta["parse"](meta["default"])  # text defaults parse like the env
                else:
                    value = meta["default"]
            except ConfigError:
                raise
            except (ValueError, OSError) as error:
                raise ConfigError(f"{meta['env']}: {error}") from error
            resolved[f.name] = value
        settings = cls(**resolved)
        settings.check()
        return settings

    def check(self) -> None:
        """Cross-field rules that one variable alone cannot express."""
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigError("PBEM_TLS_CERT and PBEM_TLS_KEY must be set together")
        if self.mailgun_signing_key and not (self.mailgun_user and self.mailgun_password):
            raise ConfigError(
                "PBEM_MAILGUN_SIGNING_KEY needs PBEM_MAILGUN_USER and PBEM_MAILGUN_PASSWORD"
            )

    @classmethod
    def describe(cls) -> list[tuple[str, str, str]]:
        """``(variable, default, description)`` for every setting, for docs and help."""
        rows = []
        for f in dataclasses.fields(cls):
            default = f.metadata["default"]
            shown = "(computed)" if callable(default) else ("" if default is None else str(default))
            rows.append((f.metadata["env"], shown, f.metadata["doc"]))
        return rows


def default_base_url(listen: HostPort) -> str:
    """``http://`` and the web front's listening address; ``localhost`` for 0.0.0.0 or ``::``
    (every interface is no address to link to; a public server sets PBEM_BASE_URL)."""
    if listen.host in ("0.0.0.0", "::", ""):
        return f"http://localhost:{listen.port}"
    return f"http://{listen}"


def load_or_create_dev_secret(resolved: Resolved) -> str:
    """The development secret: read from the data dir, created there on first use.

    Kept in a file rather than regenerated per process so that reply addresses
    signed by one process (a worker) verify in another (the SMTP front), and
    survive restarts.  Production must say its key explicitly.
    """
    if resolved["environment"] == "production":
        raise ValueError("must be set in production")
    data_dir = Path(resolved["data_dir"])
    path = data_dir / SECRET_KEY_FILE
    if path.exists():
        return path.read_text(encoding="ascii").strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    # Write a complete private file, then link it into place: when two processes
    # start at once, exactly one key wins and nobody reads a half-written file.
    fd, tmp = tempfile.mkstemp(dir=data_dir, prefix=".secret_key.")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)
    return path.read_text(encoding="ascii").strip()
