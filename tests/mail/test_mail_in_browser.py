"""Every kind of mail, as a mail client shows it, fits a phone and a desktop window.

Each sample mail (`pbem.mail.samples`, en/pt/ro, with the usual names and with names and
titles of about forty characters) is composed by the real `MailComposer`, parsed back from
its MIME bytes, its ``cid:`` references replaced by ``data:`` URIs of their image parts (what
a client does with ``multipart/related``), and laid out by Debian's Chromium driven through
Selenium and ``chromium-driver``.  The viewport is set by device-metrics emulation (375 px,
a phone, and 900 px, a desktop reading pane; device scale factor 2): headless Chromium lays
out no narrower than about 500 px by window size, so ``--window-size`` would prove nothing.

A mail fits when the document is no wider than the viewport and no element's right edge
passes it (half a pixel of rounding allowed), and every ``<img>`` decoded.

The browser is required: ``./dev test`` installs ``chromium`` and ``chromium-driver`` from
Debian when they are missing, and without them this module fails rather than skips.
"""

from __future__ import annotations

import base64
import email
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

from pbem.mail import chart
from pbem.mail.compose import MailComposer
from pbem.mail.context import MailContext
from pbem.mail.i18n import LANGUAGES
from pbem.mail.samples import sample_contexts
from tests.mail.long_names import long_name_contexts

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Width in CSS pixels, and whether Chromium emulates a mobile device (the meta viewport counts).
VIEWPORTS = {375: True, 900: False}
TOLERANCE = 0.5

#: Writes the mail into the page (reused for every mail), waits for its images, and measures.
_MEASURE = r"""
const [html, viewport, tolerance, done] = arguments;
document.open();
document.write(html);
document.close();
const images = Array.from(document.images);
Promise.all(images.map(img => img.decode().catch(() => null))).then(() => {
  const wide = Array.from(document.querySelectorAll("*")).filter(
    el => el.getBoundingClientRect().right > viewport + tolerance);
  const passing = new Set(wide);
  // The innermost elements that pass the edge say best what is too wide.
  const innermost = wide.filter(el => !Array.from(el.children).some(child => passing.has(child)));
  const described = innermost.map(el => Math.round(el.getBoundingClientRect().right) + " px <"
    + el.tagName.toLowerCase() + " style='" + (el.getAttribute("style") || "").slice(0, 60) + "'> "
    + (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 80));
  done({
    scrollWidth: document.documentElement.scrollWidth,
    wide: described.slice(0, 6),
    wideCount: wide.length,
    images: images.length,
    broken: images.filter(img => !(img.naturalWidth > 0)).map(img => img.src.slice(0, 60)),
  });
});
"""


def _cases() -> Iterator[object]:
    for width in VIEWPORTS:
        for language in LANGUAGES:
            for names, contexts in (("names", sample_contexts(language)),
                                    ("long-names", long_name_contexts(language))):
                for kind, items in contexts.items():
                    for i, context in enumerate(items):
                        yield pytest.param(width, context, id=f"{width}px-{language}-{names}-{kind}-{i}")


class _Browser:
    """One headless Chromium page, its viewport switched only when a test asks for another."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver
        self.width: int | None = None

    def measure(self, html: str, width: int) -> dict[str, object]:
        if width != self.width:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": 800, "deviceScaleFactor": 2, "mobile": VIEWPORTS[width],
            })
            self.width = width
        return self.driver.execute_async_script(_MEASURE, html, width, TOLERANCE)


@pytest.fixture(scope="module")
def browser() -> Iterator[_Browser]:
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
        yield _Browser(driver)
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.example.org")


def as_client_shows(raw: bytes) -> str:
    """The HTML part of a composed message, each ``cid:`` reference replaced by a ``data:`` URI
    of the image part with that Content-ID."""
    # The compat32 policy: a tenth of policy.default's time (tests/mail/test_compose_mime.py
    # checks the message with policy.default).
    message = email.message_from_bytes(raw)
    html = None
    images: dict[str, str] = {}
    for part in message.walk():
        if part.is_multipart():
            continue
        if part.get_content_type() == "text/html":
            html = part.get_payload(decode=True).decode(part.get_content_charset() or "ascii")
        elif part.get_content_maintype() == "image":
            cid = part["Content-ID"].strip().strip("<>")
            data = base64.b64encode(part.get_payload(decode=True)).decode("ascii")
            images[cid] = f"data:{part.get_content_type()};base64,{data}"
    assert html is not None, "no text/html part"

    def data_uri(match: re.Match[str]) -> str:
        cid = match.group(1)
        assert cid in images, f"cid:{cid} names no image part"
        return images[cid]

    return re.sub(r"cid:([^\"'\s>)]+)", data_uri, html)


@pytest.mark.parametrize(("width", "context"), list(_cases()))
def test_mail_fits_the_viewport(browser: _Browser, composer: MailComposer, width: int,
                                context: MailContext) -> None:
    raw = composer.compose(context.kind, context, thread="<root@hearts.example.org>").raw
    result = browser.measure(as_client_shows(raw), width)
    assert result["scrollWidth"] <= width, (
        f"the mail is {result['scrollWidth']} px wide on a {width} px screen; widest elements:\n"
        + "\n".join(result["wide"]))
    assert not result["wide"], (
        f"{result['wideCount']} elements pass the right edge of a {width} px screen:\n"
        + "\n".join(result["wide"]))
    assert not result["broken"], f"images that did not load: {result['broken']}"


def test_the_chart_is_shown(browser: _Browser, composer: MailComposer) -> None:
    """The game summary's chart travels as a related part and is decoded (the ``cid:`` case
    is really exercised above, not vacuously passed)."""
    context = next(c for c in sample_contexts("en")["game_summary"] if c.inline_images)
    raw = composer.compose(context.kind, context).raw
    html = as_client_shows(raw)
    assert "cid:" not in html and "data:image/png;base64," in html
    result = browser.measure(html, 375)
    assert result["images"] >= 1 and not result["broken"]
    # README, "Summaries": the chart's words (legend, axes, ticks) are at least 12 px on a phone.
    shown = browser.driver.execute_script(
        "return Array.from(document.images).map(img => img.getBoundingClientRect().width)")
    (image,) = context.inline_images
    smallest = min(chart.FONT_SIZE, chart.TICK_FONT_SIZE) * max(shown) / image.width
    assert smallest >= 12, f"the chart's text is {smallest:.1f} px at 375 px"


def test_a_wide_mail_is_caught(browser: _Browser) -> None:
    """The measure itself: a 456 px line fails on a phone even though the window is wider."""
    html = ('<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, '
            'initial-scale=1"></head><body style="margin:0"><div style="width:456px">x</div></body></html>')
    assert browser.measure(html, 375)["scrollWidth"] == 456
    assert browser.measure(html, 900)["scrollWidth"] == 900
