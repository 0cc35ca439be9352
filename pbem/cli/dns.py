"""``pbem dns``: the DNS records to publish for ``PBEM_MAIL_DOMAIN``; ``pbem dkim keygen``: a signing key.

Big providers file or refuse mail that does not authenticate (README, "Mail that providers accept"):
the records printed here say which hosts receive and send for the domain (MX, SPF), publish the
public half of ``PBEM_DKIM_KEY_FILE`` (DKIM) and say what a receiver should do with mail that claims
the domain and fails both (DMARC).  They are printed as zone-file lines with a comment on each.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import subprocess
from pathlib import Path

import click

from pbem.config import Settings
from pbem.mail.signing import KEYGEN_COMMAND, SigningKeyError, load_signer, txt_strings
from pbem.mail.relay import bounce_address

from .settings import pass_settings

__all__ = ["dkim", "dns", "records"]


def _quoted(text: str) -> str:
    return " ".join(f'"{part}"' for part in txt_strings(text))


def _sender_mechanism(relay_host: str) -> str:
    """The SPF mechanism naming the relay pbem sends through."""
    try:
        address = ipaddress.ip_address(relay_host)
    except ValueError:
        return f"a:{relay_host}"
    return f"ip{address.version}:{address}"


def records(settings: Settings) -> list[str]:
    """The lines ``pbem dns`` prints: for each record a comment that explains it, then the record."""
    domain = settings.mail_domain
    mx_host = settings.smtp_hostname
    lines = [
        f"; DNS records for {domain}: publish them at the domain's DNS provider.",
        "",
        f"; MX: where other servers deliver mail for {domain} (players' replies, new@): the host of pbem's",
        f"; SMTP front ({mx_host}, PBEM_SMTP_HOSTNAME; it listens on PBEM_SMTP_LISTEN, port 25 in public),",
        "; or of the relay in front of it. That host needs its own A/AAAA record.",
        f"{domain}. IN MX 10 {mx_host}.",
        "",
    ]
    senders = ["mx"]
    if settings.relay_host and not settings.relay_host.startswith(("127.", "localhost")):
        senders.append(_sender_mechanism(settings.relay_host))
    lines += [
        f"; SPF: the hosts that may send mail whose envelope sender is {bounce_address(settings)}: the",
        "; domain's MX and the relay pbem sends through (PBEM_RELAY_HOST). A mail provider's relay",
        "; names its own 'include:' (see its documentation): put it before -all. -all: nobody else.",
        f'{domain}. IN TXT "v=spf1 {" ".join(senders)} -all"',
        "",
    ]
    try:
        signer = load_signer(settings)
    except SigningKeyError as error:
        raise click.ClickException(str(error)) from error
    if signer is None:
        lines += [
            "; DKIM: no key yet (PBEM_DKIM_KEY_FILE is not set), so pbem's mail goes out unsigned and",
            "; Gmail and Outlook will file it as spam or refuse it. Make one with",
            ";     pbem dkim keygen /etc/pbem/dkim.pem",
            "; set PBEM_DKIM_KEY_FILE to it and run pbem dns again for the record to publish.",
        ]
    else:
        lines += [
            f"; DKIM: the public half of {settings.dkim_key_file} ({signer.bits}-bit RSA), with which every",
            f"; outgoing mail is signed (d={signer.domain}, s={signer.selector}). Receivers look it up here to",
            "; check that the mail comes from pbem unchanged. To rotate, make a key under a new",
            "; PBEM_DKIM_SELECTOR, publish its record, then switch; remove the old record a week later.",
            f"{signer.record_name}. IN TXT ( {_quoted(signer.dns_record())} )",
        ]
    strict = settings.dkim_domain == domain
    lines += [
        "",
        f"; DMARC: what a receiver should do with mail whose From is @{domain} but that neither a DKIM",
        f"; signature of {domain} nor SPF vouches for: here, put it in spam (p=quarantine); aggregate",
        "; reports go to postmaster@ (rua). Once the reports show only pbem's own mail passing, make it",
        "; p=reject. " + ("adkim=s: the DKIM domain must be the From domain itself." if strict else
                          f"adkim=r: the DKIM domain ({settings.dkim_domain}) may be a parent of the From domain."),
        f'_dmarc.{domain}. IN TXT "v=DMARC1; p=quarantine; adkim={"s" if strict else "r"}; aspf=r; '
        f'rua=mailto:postmaster@{domain}"',
    ]
    return lines


@click.command()
@pass_settings
def dns(settings: Settings) -> None:
    """Print the DNS records to publish for PBEM_MAIL_DOMAIN (MX, SPF, DKIM, DMARC), each explained."""
    click.echo("\n".join(records(settings)))


@click.group()
def dkim() -> None:
    """DKIM signing keys (README, "Mail that providers accept")."""


@dkim.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="replace an existing file")
@pass_settings
def keygen(settings: Settings, path: Path, force: bool) -> None:
    """Make a 2048-bit RSA key at PATH (with openssl), readable by its owner only, and print its record."""
    if path.exists() and not force:
        raise click.ClickException(f"{path} exists (--force replaces it; the published record then no longer fits)")
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0o077)
    try:
        done = subprocess.run([*KEYGEN_COMMAND, "-out", str(path)], capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise click.ClickException("openssl is not installed (Debian: apt-get install openssl)") from error
    finally:
        os.umask(umask)
    if done.returncode != 0:
        raise click.ClickException(f"openssl failed: {done.stderr.strip()}")
    path.chmod(0o600)
    signer = load_signer(dataclasses.replace(settings, dkim_key_file=path))
    assert signer is not None
    click.echo(f"; wrote {path}; set PBEM_DKIM_KEY_FILE={path} (and PBEM_DKIM_SELECTOR={signer.selector}),")
    click.echo("; publish this record, then restart pbem:")
    click.echo(f"{signer.record_name}. IN TXT ( {_quoted(signer.dns_record())} )")
