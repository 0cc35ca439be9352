"""extract_reply: the new text only, never the quoted mail or the signature."""

from __future__ import annotations

import pytest

from pbem.mail.reading.reply_text import answered_lines, extract_reply

QUOTE = "> Your turn. You may play: Q♠ A♠\n> Reply with the card, e.g. \"QS\".\n"
GMAIL_WRAPPED = "On Mon, Jun 3, 2024 at 10:15\u202fAM Hearts <\nhearts+1.2.3.abcdefghijklmnop@hearts.example> wrote:"


@pytest.mark.parametrize(
    ("body", "new"),
    [
        # English clients
        (f"QS\n\n{GMAIL_WRAPPED}\n\n{QUOTE}", "QS"),
        (f"QS\n\nOn Mon, Jun 3, 2024 at 10:15 AM Hearts <p@x> wrote:\n{QUOTE}", "QS"),
        (f"QS\n\nOn 6/3/24 10:15, Hearts wrote:\n{QUOTE}", "QS"),
        (f"QS\n\nSent from my iPhone\n\n> On Jun 3, 2024, at 10:15 AM, Hearts <p@x> wrote:\n>\n{QUOTE}", "QS"),
        ("QS\n\n________________________________\nFrom: Hearts <p@x>\nSent: Monday, June 3, 2024 10:15 AM\n"
         "To: Bob <b@x>\nSubject: [Hearts #42] Your turn\n\nYou may play QS AS\n", "QS"),
        ("QS\n\nFrom: Hearts <p@x>\nSent: Monday, June 3, 2024 10:15 AM\nTo: Bob <b@x>\n"
         "Subject: [Hearts #42] Your turn\n\nYou may play QS AS\n", "QS"),
        ("QS\n\n-----Original Message-----\nFrom: Hearts\nYou may play AS\n", "QS"),
        ("KS\n\n-------- Original message --------\nFrom: Hearts\nDate: 03/06/2024\nAS\n", "KS"),
        (f"QS\n\nHearts Server wrote:\n{QUOTE}", "QS"),
        # signatures and sign-offs
        ("QS\n\nThanks,\nBob\n", "QS"),
        ("QS\n\nBest regards\nBob Smith\nACME (AS dept)\n", "QS"),
        ("Hi\nThanks, QS please\n", "Hi\nThanks, QS please"),  # not a sign-off: it goes on
        ("Pass:\n- QS\n- AS\n- KS\n\n-- \nBob\n", "Pass:\n- QS\n- AS\n- KS"),
        ("QS\n-- \nBob Smith\nAS fan\n", "QS"),
        ("QS\n\nSent from my Galaxy S23+ (AT&T)\n", "QS"),
        ("QS\n\nGet Outlook for Android<https://aka.ms/AAb9ysg>\n", "QS"),
        # where the new text is
        (f"On Mon, Jun 3, 2024 at 10:15 AM Hearts <p@x> wrote:\n{QUOTE}\nQS\n", "QS"),
        (f"On 6/3/24 10:15, Hearts wrote:\n{QUOTE}\nQS\n\n-- \nBob\n", "QS"),
        ("> Trick so far: Bob 7♠\n> You may play: Q♠ A♠\nAS\n> Reply with the card\n", "AS"),
        (f"On second thought QS\nOn Mon, Jun 3, 2024 at 10:15 AM Hearts <p@x> wrote:\n{QUOTE}", "On second thought QS"),
        (f"\n\n{QUOTE}", ""),
        ("", ""),
        ("QS", "QS"),
        ("QS\r\n\r\nOn Mon, Jun 3, 2024 at 10:15 AM Hearts <p@x> wrote:\r\n> AS\r\n", "QS"),
        ("Q\u00a0S and\u200b more", "Q S and more"),
        # Portuguese
        ("Jogo a dama de espadas\n\nEm qua., 5 de jun. de 2024 às 14:03, Hearts <p@hearts.example>\n"
         f"escreveu:\n\n{QUOTE}", "Jogo a dama de espadas"),
        (f"Em frente! QS\nEm qua., 5 de jun. de 2024 às 14:03, Hearts <p@x> escreveu:\n{QUOTE}", "Em frente! QS"),
        ("QS\n\nDe: Hearts <p@x>\nEnviado: quarta-feira, 5 de junho de 2024 14:03\nPara: Ana <a@x>\n"
         "Assunto: [Copas #42] Sua vez\n\nÉ a sua vez. AS\n", "QS"),
        ("QS\n\nDe: Hearts <p@x>\nEnviada: 5 de junho de 2024 14:03\nPara: Ana\nAssunto: x\n\nAS\n", "QS"),
        (f"Dama de espadas\n\nEnviado do meu iPhone\n\n> Em 5 de jun. de 2024, à(s) 14:03, Hearts <p@x> escreveu:\n>\n{QUOTE}",
         "Dama de espadas"),
        (f"KS\n\nHearts <p@hearts.example> escreveu no dia quarta, 5/06/2024 à(s) 14:03:\n\n{QUOTE}", "KS"),
        (f"KS\n\nA 05/06/2024, às 14:03, Hearts <p@x> escreveu:\n{QUOTE}", "KS"),
        (f"KS\n\nÀs 14:03 de 05/06/2024, Hearts escreveu:\n{QUOTE}", "KS"),
        ("QS\n\n-----Mensagem original-----\nDe: Hearts\nAS\n", "QS"),
        ("QS\n\nCumprimentos,\nAna\n", "QS"),
        # Romanian
        (f"damă de pică\n\nÎn lun., 3 iun. 2024 la 10:15, Hearts <p@hearts.example> a scris:\n\n{QUOTE}", "damă de pică"),
        (f"QS\n\nÎn lun., 3 iun. 2024 la 10:15, Hearts <p@hearts.example> a\nscris:\n\n{QUOTE}", "QS"),
        (f"QS\n\nPe 03.06.2024 10:15, Hearts a scris:\n{QUOTE}", "QS"),
        (f"QS\n\nLa 03.06.2024 10:15, Hearts a scris:\n{QUOTE}", "QS"),
        ("QS\n\nDe la: Hearts <p@x>\nTrimis: luni, 3 iunie 2024 10:15\nCătre: Bob <b@x>\nSubiect: x\n\nAS\n", "QS"),
        (f"QS\n\nTrimis de pe iPhone-ul meu\n\n{QUOTE}", "QS"),
        ("QS\n\n-----Mesaj original-----\nDe la: Hearts\nAS\n", "QS"),
        ("QS\n\nCu stimă,\nAna\n", "QS"),
    ],
)
def test_extract_reply(body: str, new: str) -> None:
    assert extract_reply(body) == new


def test_long_quotes_are_cut_the_same_way() -> None:
    long_quote = QUOTE * 200
    assert extract_reply(f"QS\n\nOn 6/3/24 10:15, Hearts wrote:\n{long_quote}") == "QS"
    assert extract_reply(f"On 6/3/24 10:15, Hearts wrote:\n{long_quote}\nQS\n") == "QS"


def test_other_library_languages_can_be_added() -> None:
    body = "QS\n\nAm Mo., 3. Juni 2024 um 10:15 Uhr schrieb Hearts <p@x>:\n> AS\n"
    assert extract_reply(body, ("en", "de")) == "QS"


# -- every language the reply library knows, on by default ------------------------------------------
@pytest.mark.parametrize(
    "header",
    [
        # German Outlook and Gmail, Czech, Danish, Spanish, French, Italian, Japanese, Korean,
        # Dutch, Polish, Swedish, Chinese
        "Von: Hearts <p@x>\nGesendet: Montag, 3. Juni 2024 10:15\nAn: Jonas <j@x>\nBetreff: [Hearts #42] Your turn",
        "Am Mo., 3. Juni 2024 um 10:15 Uhr schrieb Hearts <p@x>:",
        "Am Mo., 3. Juni 2024 um 10:15 Uhr schrieb Hearts <\nhearts+1.2.3.abcdefghijklmnop@hearts.example>:",
        "Od: Hearts <p@x>\nOdesláno: pondělí 3. června 2024 10:15\nKomu: Jan <j@x>\nPředmět: x",
        "Dne po 3. 6. 2024 10:15 uživatel Hearts <p@x> napsal:",
        "Fra: Hearts <p@x>\nSendt: 3. juni 2024 10:15\nTil: Mads <m@x>\nEmne: x",
        "man. 3. jun. 2024 kl. 10.15 skrev Hearts <p@x>:",
        "De: Hearts <p@x>\nEnviado: lunes, 3 de junio de 2024 10:15\nPara: Lucía <l@x>\nAsunto: x",
        "El lun, 3 jun 2024 a las 10:15, Hearts (<p@x>) escribió:",
        "De : Hearts <p@x>\nEnvoyé : lundi 3 juin 2024 10:15\nÀ : Léa <l@x>\nObjet : x",
        "Le lun. 3 juin 2024 à 10:15, Hearts <p@x> a écrit :",
        "Da: Hearts <p@x>\nInviato: lunedì 3 giugno 2024 10:15\nA: Luca <l@x>\nOggetto: x",
        "Il giorno lun 3 giu 2024 alle ore 10:15 Hearts <p@x> ha scritto:",
        "2024年6月3日(月) 10:15 Hearts <p@x>:",
        "2024년 6월 3일 (월) 오전 10:15, Hearts <p@x>님이 작성:",
        "Van: Hearts <p@x>\nVerzonden: maandag 3 juni 2024 10:15\nAan: Daan <d@x>\nOnderwerp: x",
        "Op ma 3 jun 2024 om 10:15 schreef Hearts <p@x>:",
        "Od: Hearts <p@x>\nWysłano: poniedziałek, 3 czerwca 2024 10:15\nDo: Jan <j@x>\nTemat: x",
        "pon., 3 cze 2024 o 10:15 Hearts <p@x> napisał(a):",
        "Från: Hearts <p@x>\nSkickat: den 3 juni 2024 10:15\nTill: Erik <e@x>\nÄmne: x",
        "Den mån 3 juni 2024 kl 10:15 skrev Hearts <p@x>:",
        "发件人: Hearts <p@x>\n发送时间: 2024年6月3日 10:15\n收件人: Li <l@x>\n主题: x",
        "2024年6月3日周一 10:15，Hearts <p@x> 写道：",
    ],
)
def test_quote_headers_of_every_library_language_are_recognised(header: str) -> None:
    # The quote is not marked with ">": only the header says where the new text ends.
    assert extract_reply(f"KD bitte\n\n{header}\n\nYou may play: Q♠ A♠\nReply with the card.\n") == "KD bitte"


@pytest.mark.parametrize("body", [
    "Am liebsten KD\nAm Mo., 3. Juni 2024 um 10:15 Uhr schrieb Hearts <p@x>:\n> AS\n",  # "Am" begins a line
    "Am Ende KD, schrieb ich\n",
    "Le roi de carreau: KD\n",
    "Den KD spiele ich\n",
])
def test_a_players_own_line_is_no_header(body: str) -> None:
    assert "KD" in extract_reply(body)


@pytest.mark.parametrize(("body", "new"), [
    ("KD\n\nMit freundlichen Grüßen\nJonas\n", "KD"),
    ("KD\n\nVon meinem iPhone gesendet\n", "KD"),
    ("KD\n\nCordialement,\nLéa\n", "KD"),
    ("KD\n\nEnviado desde mi iPhone\n", "KD"),
    ("KD\n\niPhoneから送信\n", "KD"),
])
def test_signatures_of_other_languages(body: str, new: str) -> None:
    assert extract_reply(body) == new


# -- the lines of the mail answered -----------------------------------------------------------------
GAME_MAIL = """[Hearts #42] Hand 3 (pass across), trick 5. Your turn, Alice.

Trick so far: Bob 7♠, Carol K♠
Your hand:
  ♣ 2 5 9
  ♦ 4 J
  ♥ 3 8 Q
  ♠ Q A
You may play: Q♠ A♠
QS

Reply with the card you play, for example "QS" or "queen of spades"."""
ANSWERED = answered_lines(GAME_MAIL)


def test_an_unlabelled_quote_is_dropped_with_its_attribution() -> None:
    body = f"KD kiitos\n\nma 3.6.2024 klo 10.15 Hearts <hearts+1.2.3.x@hearts.example> kirjoitti:\n\n{GAME_MAIL}\n"
    assert extract_reply(body, answered=ANSWERED) == "KD kiitos"
    assert "Q♠" in extract_reply(body)  # without the mail answered, the quote reads as the reply


def test_a_quote_rewritten_with_other_spacing_and_case_is_dropped() -> None:
    quote = "\n".join("| " + "  ".join(line.upper().split()) for line in GAME_MAIL.split("\n"))
    assert extract_reply(f"KD\n\n{quote}\n", answered=ANSWERED) == "KD"


@pytest.mark.parametrize("body", [
    "QS",               # a line of the mail, but alone: the player's card
    "QS\n\nsorry for the wait",
    "Q♠ A♠\n",          # a short line, no sentence around it
    "queen of spades",
])
def test_a_short_line_equal_to_a_line_of_the_mail_is_kept(body: str) -> None:
    assert extract_reply(body, answered=ANSWERED) == body.strip()


def test_a_card_just_above_the_quote_is_kept() -> None:
    # "QS" is also a line of the mail answered, and nothing separates it from the quote.
    body = "QS\n" + GAME_MAIL.split("\n", 3)[3]
    assert extract_reply(body, answered=ANSWERED) == "QS"


def test_a_players_colon_line_above_the_quote_is_kept() -> None:
    body = f"My card:\nKD\n\n{GAME_MAIL}\n"
    assert extract_reply(body, answered=ANSWERED) == "My card:\nKD"


def test_an_interleaved_sentence_of_the_player_is_kept() -> None:
    lines = GAME_MAIL.split("\n")
    body = "\n".join(lines[:3] + ["I think the KD is best here, sorry for the wait"] + lines[3:])
    assert extract_reply(body, answered=ANSWERED) == "I think the KD is best here, sorry for the wait"
