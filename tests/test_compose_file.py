"""docker-compose.yml keeps the production shape README ("Running in production") describes: the image
built once, every long-running service with a healthcheck, and Mailpit only in the `dev` profile, so
that no production deployment sends its players' mail to a catcher by default."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]
ONE_SHOT = {"migrate"}


def test_the_image_is_built_once_and_every_pbem_service_runs_it():
    built = [name for name, service in SERVICES.items() if "build" in service]
    assert built == ["migrate"]
    pbem = [name for name, service in SERVICES.items() if service.get("image") == "pbem:latest"]
    assert set(pbem) == {"migrate", "web", "smtp", "worker", "beat"}
    assert all(SERVICES[name]["pull_policy"] == "never" for name in pbem if name not in built)


def test_every_long_running_service_has_a_healthcheck():
    missing = [name for name, service in SERVICES.items()
               if name not in ONE_SHOT and not service.get("healthcheck", {}).get("test")]
    assert not missing, f"no healthcheck: {missing}"


def test_mailpit_is_only_in_the_dev_profile_and_the_relay_has_no_default():
    assert SERVICES["mailpit"]["profiles"] == ["dev"]
    assert not any("profiles" in service for name, service in SERVICES.items() if name != "mailpit")
    relay = COMPOSE["x-pbem-env"]["PBEM_RELAY_HOST"]
    assert relay.startswith("${PBEM_RELAY_HOST:?"), relay  # compose refuses to start without one
    for name in ("web", "smtp", "worker", "beat", "migrate"):
        env = SERVICES[name]["environment"]
        assert env["PBEM_RELAY_HOST"] == relay, name
