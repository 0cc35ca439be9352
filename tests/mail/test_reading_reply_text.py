"""extract_reply: the new text only, never the quoted mail or the signature."""

from __future__ import annotations

import pytest

from pbem.mail.reading.reply_text import extract_reply

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
