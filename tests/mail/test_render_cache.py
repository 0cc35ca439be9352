"""The renderer keeps the output of pure macros (hand, table, scores...) per language and format:
mails rendered one after another by the same renderer read exactly as if each were rendered by a
fresh one, whatever order they come in."""

from __future__ import annotations

import dataclasses
import random

from pbem.mail.context import MailContext, Play
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from pbem.resources import templates_dir


def variations() -> list[MailContext]:
    """The sample mails, plus copies that differ in what the cached macros are given."""
    contexts = [c for kind in ("your_turn", "trick_done", "card_played", "hand_summary", "game_started")
                for c in sample_contexts("en").get(kind, [])]
    more = []
    for context in contexts:
        game = context.game
        if game is None:
            continue
        more.append(dataclasses.replace(context, game=dataclasses.replace(
            game, hand=game.hand[1:], seat=(game.seat + 1) % len(game.names),
            trick=game.trick + (Play(2, "7H"),) if len(game.trick) < 3 else (),
            totals=tuple(t + 1 for t in game.totals), legal=game.legal[:1])))
    return contexts + more


def test_cached_macros_change_nothing_in_any_order() -> None:
    contexts = variations()
    # The baseline: every context rendered in its own order by one renderer, and the first of each
    # kind also by a renderer of its own (a renderer per context compiles every template again for
    # each of the thousand-odd contexts: minutes, for nothing the two checks do not already catch).
    baseline = MailRenderer(templates_dir())
    fresh = {id(c): baseline.render(c) for c in contexts}
    firsts = {}
    for c in contexts:
        firsts.setdefault(c.kind, c)
    for c in firsts.values():
        assert MailRenderer(templates_dir()).render(c) == fresh[id(c)], c.kind
    shared = MailRenderer(templates_dir())
    order = contexts * 2
    random.Random(5).shuffle(order)
    for context in order:
        assert shared.render(context) == fresh[id(context)], context.kind


def test_languages_and_formats_keep_their_own_results() -> None:
    context = sample_contexts("en")["your_turn"][0]
    renderer = MailRenderer(templates_dir())
    english = renderer.render(context)
    portuguese = renderer.render(dataclasses.replace(
        context, recipient=dataclasses.replace(context.recipient, language="pt")))
    assert renderer.render(context) == english
    assert portuguese.text != english.text and "♠" in english.text and "<span" in english.html


def test_a_second_renderer_reuses_the_compiled_templates_and_writes_the_same_mails(monkeypatch) -> None:
    """Templates are compiled once per process and format, not per renderer and language (a renderer
    per Services, so per test, compiled them all again: about a second each)."""
    from jinja2 import Environment

    contexts = [c for language in ("en", "pt", "ro") for c in sample_contexts(language)["your_turn"][:2]]
    first = MailRenderer(templates_dir())
    expected = [first.render(c) for c in contexts]
    compiled: list[str] = []
    original = Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):  # type: ignore[no-untyped-def]
        compiled.append(str(name))
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(Environment, "compile", counting)
    second = MailRenderer(templates_dir())
    assert [second.render(c) for c in contexts] == expected
    assert compiled == []
