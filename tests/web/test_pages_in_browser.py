"""The game page and the replay in a real browser, headless Chromium through Selenium and
``chromium-driver`` (as tests/mail/test_mail_in_browser.py does for mails): with the most seats a
game has (Cancellation Hearts, RULES.md §6.6: 6 to 10 players, two decks) the page never scrolls
sideways on a phone (375 px, the meta viewport counting) nor on a desktop window (900 px): the
scores, the tricks and the dealt hands, up to thirteen columns, scroll inside their own boxes.

The pages are the real templates rendering page models of engine-played games (the database is no
part of what is measured).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask, render_template
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

from pbem.engine import OVER, Rules
from pbem.services.game_views import build_page, build_replay
from pbem.web import create_app
from pbem.web.i18n import use_language
from pbem.web.runtime import runtime
from tests.integration.mailplay import make_services
from tests.integration.test_variant_views import Table

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
VIEWPORTS = {375: True, 900: False}  # width in CSS pixels: emulate a mobile device

#: Writes the page into the browser's page and measures how far the document reaches.
_MEASURE = r"""
const [html, viewport, done] = arguments;
document.open();
document.write(html);
document.close();
const wide = Array.from(document.querySelectorAll("body > *")).filter(
  el => el.getBoundingClientRect().right > viewport + 0.5);
done({scrollWidth: document.documentElement.scrollWidth,
      wide: wide.map(el => el.tagName.toLowerCase() + " " + (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60)),
      scrolling: document.querySelectorAll("div.wide").length});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    if missing:  # a failure, not a skip: ./dev test installs them (Debian's chromium, chromium-driver)
        pytest.fail(f"missing {', '.join(missing)}: apt-get install chromium chromium-driver (./dev test does)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--no-first-run", "--hide-scrollbars", "--mute-audio"):
        options.add_argument(argument)
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    except WebDriverException as error:
        pytest.fail(f"Chromium did not start: {error}")
    try:
        driver.set_script_timeout(30)
        driver.get("about:blank")
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    tmp_path: Path = tmp_path_factory.mktemp("browser-pages")
    services = make_services(f"sqlite:///{tmp_path / 'unused.db'}", tmp_path)
    app = create_app(services.settings, clock=services.clock)
    yield app
    runtime(app).dispose()
    services.close()


def pages(app: Flask, players: int) -> dict[str, str]:
    """A Cancellation game of ``players`` seats with long names: its page mid-hand and its replay once over."""
    table = Table(Rules.make("cancellation", players=players, pass_cycle=("hold",), end_after_hands=1,
                             tie="share"), players)
    table.deal()
    names = tuple(f"Player number {k} of the table" for k in range(players))
    common = dict(game_id=1, seat=0, names=names, rules=table.rules.to_dict())
    table.play_until(lambda s: s.tricks_played == 5)
    page = build_page(status="active", snapshot=table.state.to_dict(), moves=list(table.log), **common)
    table.play_until(lambda s: s.phase == OVER)
    replay = build_replay(status="finished", snapshot=table.state.to_dict(), moves=list(table.log), **common)
    with app.test_request_context("/"):
        use_language("en")
        return {"game": render_template("game.html", page=page, token="t"),
                "replay": render_template("replay.html", page=replay, token="t")}


@pytest.mark.parametrize("players", [6, 10])
@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_no_page_scrolls_sideways(browser: webdriver.Chrome, app: Flask, players: int, width: int) -> None:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 800, "deviceScaleFactor": 1, "mobile": VIEWPORTS[width]})
    for name, html in pages(app, players).items():
        measured = browser.execute_async_script(_MEASURE, html, width)
        assert measured["scrollWidth"] <= width and not measured["wide"], (name, measured)
        assert measured["scrolling"] >= 2, (name, measured)  # the scores and the tricks at least


def test_cancelled_cards_are_marked_in_the_trick_grid(app: Flask) -> None:
    """RULES.md §6.6: in the tricks of the game page and the replay, a card cancelled by its twin is
    struck through in its own cell, every such card and no other."""
    replay = pages(app, 10)["replay"]
    tables = re.findall(r'<table class="tricks">(.*?)</table>', replay, re.S)
    rows = [row for table in tables for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
    marked = 0
    for row in rows:
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S)
        cards = [re.sub(r"<[^>]+>", "", body).strip() for _attrs, body in cells]
        for (attrs, body), card in zip(cells, cards):
            twin = "twin" in attrs
            assert twin == ("<s " in body), (attrs, body)
            if twin:
                marked += 1
            if card and card[-1] in "♣♦♥♠" and cards.count(card) >= 2:  # a card twice in one trick: both marked
                assert twin, (card, row)
    assert marked >= 2
