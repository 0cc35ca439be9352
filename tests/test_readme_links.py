"""The README links nothing outside the repository: in a fresh clone every link it has works.

Web addresses (``http://…``, ``mailto:``) are addresses, not files, and are left alone; every other
link (Markdown ``[text](target)``, a reference ``[name]: target``, HTML ``href``/``src``) must be a
path inside the repository that exists. The rules the options refer to are the repository's own
``docs/rules.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINKS = (
    re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"),  # [text](target "title")
    re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M),  # [name]: target
    re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']"""),  # HTML
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def link_targets(text: str) -> list[str]:
    text = _FENCE.sub("", text)  # shell examples are not links
    return [m.group(1) for pattern in _LINKS for m in pattern.finditer(text)]


def outside_the_repository(target: str, base: Path = ROOT) -> str | None:
    """Why ``target`` (a link in a file of ``base``) leaves the repository, or None."""
    if _SCHEME.match(target):
        return None  # a web or mail address
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return None  # an anchor in the README itself
    if path.startswith("/"):
        return "an absolute path"
    if ".." in Path(path).parts:
        return "a path that climbs out with ../"
    resolved = (base / path).resolve()
    if not resolved.is_relative_to(ROOT):
        return "a path outside the repository"
    if not resolved.exists():
        return "a path that does not exist in the repository"
    return None


def test_the_readme_has_no_link_outside_the_repository():
    text = README.read_text(encoding="utf-8")
    bad = {t: why for t in link_targets(text) if (why := outside_the_repository(t))}
    assert not bad, f"README.md links outside the repository: {bad}"


def test_the_readme_points_to_the_rules_document_not_the_outside_specification():
    text = README.read_text(encoding="utf-8")
    assert "docs/rules.md" in link_targets(text), "README.md does not link docs/rules.md"
    assert "../shared" not in text and "RULES.md" not in text, \
        "README.md still refers to the specification outside the repository"


def test_the_check_catches_what_it_is_for():
    # the link the README used to have, and its kin
    for target in ("../shared/RULES.md", "docs/../../x.md", "/work/shared/RULES.md", "docs/no-such-file.md"):
        assert outside_the_repository(target), target
    for target in ("docs/rules.md", "docs/rules.md#options", "#playing-by-mail", "http://127.0.0.1:8025/dev/mail",
                   "mailto:new@hearts.localhost"):
        assert outside_the_repository(target) is None, target
    found = link_targets('[a](../shared/RULES.md)\n[b]: ../x.md\n<a href="../y.md">y</a>\n```\n[c](../z)\n```\n')
    assert sorted(found) == ["../shared/RULES.md", "../x.md", "../y.md"]
