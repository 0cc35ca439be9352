"""``pbem dkim keygen`` and ``pbem dns`` (README, "Mail that providers accept"): the key made signs
mail that verifies against the DKIM record printed, and every record is there with its explanation."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import dkim
from click.testing import CliRunner

from pbem.cli import main
from pbem.config import Settings
from pbem.mail.signing import load_signer

DOMAIN = "hearts.example.org"


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PBEM_DATA_DIR": str(tmp_path), "PBEM_SECRET_KEY": "x", "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SMTP_HOSTNAME": f"mx.{DOMAIN}", "PBEM_RELAY_HOST": "203.0.113.7"} | extra


def txt_record(output: str, name: str) -> str:
    """The text of the TXT record ``name`` in zone-file lines: its strings joined."""
    [line] = [line for line in output.splitlines() if line.startswith(name + ". IN TXT")]
    return "".join(re.findall(r'"([^"]*)"', line))


def test_keygen_then_dns_publish_the_key_that_signs(tmp_path: Path) -> None:
    key = tmp_path / "keys" / "dkim.pem"
    runner = CliRunner()
    made = runner.invoke(main, ["dkim", "keygen", str(key)], env=env(tmp_path, PBEM_DKIM_SELECTOR="s1"))
    assert made.exit_code == 0, made.output
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert f"s1._domainkey.{DOMAIN}. IN TXT" in made.output
    again = runner.invoke(main, ["dkim", "keygen", str(key)], env=env(tmp_path))
    assert again.exit_code != 0 and "exists" in again.output

    variables = env(tmp_path, PBEM_DKIM_KEY_FILE=str(key), PBEM_DKIM_SELECTOR="s1")
    printed = runner.invoke(main, ["dns"], env=variables)
    assert printed.exit_code == 0, printed.output
    out = printed.output
    assert f"{DOMAIN}. IN MX 10 mx.{DOMAIN}." in out
    assert txt_record(out, DOMAIN) == "v=spf1 mx ip4:203.0.113.7 -all"
    assert txt_record(out, f"_dmarc.{DOMAIN}").startswith("v=DMARC1; p=quarantine; adkim=s;")
    record = txt_record(out, f"s1._domainkey.{DOMAIN}")
    assert record.startswith("v=DKIM1; k=rsa; p=")
    for heading in ("; MX:", "; SPF:", "; DKIM:", "; DMARC:"):
        assert heading in out  # each record explained
    assert all(len(part) <= 255 for part in re.findall(r'"([^"]*)"', out))  # TXT strings

    signer = load_signer(Settings.from_env(variables))
    raw = signer.sign(b"From: hearts@hearts.example.org\r\nTo: ana@example.net\r\nSubject: x\r\n\r\nQS\r\n")
    assert dkim.verify(raw, dnsfunc=lambda name, timeout=5: record.encode()
                       if name == f"s1._domainkey.{DOMAIN}.".encode() else None)


def test_dns_without_a_key_says_how_to_make_one(tmp_path: Path) -> None:
    printed = CliRunner().invoke(main, ["dns"], env=env(tmp_path, PBEM_DKIM_DOMAIN="example.org"))
    assert printed.exit_code == 0, printed.output
    assert "pbem dkim keygen" in printed.output and "._domainkey." not in printed.output
    assert "adkim=r" in txt_record(printed.output, f"_dmarc.{DOMAIN}")


def test_dns_names_a_key_file_it_cannot_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    printed = CliRunner().invoke(main, ["dns"], env=env(tmp_path, PBEM_DKIM_KEY_FILE=str(bad)))
    assert printed.exit_code != 0 and "PBEM_DKIM_KEY_FILE" in printed.output and str(bad) in printed.output
