"""Sender authentication of received replies: one more signal for the From check (README, "Mail that
providers accept").

A reply moves a seat only when it comes from the seat's registered address (``inbound``), and anyone
can write any From line.  The domain of that address can say, with DMARC (RFC 7489), that mail
claiming it which no aligned DKIM signature (or SPF) vouches for is to be refused (``p=reject``) or
put aside (``p=quarantine``).  ``check_sender`` says whether a received mail fails so: such a reply
changes nothing, is recorded, and is answered like a forged sender, at the registered address.

Who judges, in this order:

1. With ``PBEM_TRUSTED_AUTHSERV_ID`` set (the relay in front of the SMTP front, which saw the
   connecting client and so could check SPF as well as DKIM), the *topmost* ``Authentication-Results``
   header, and only when its authserv-id is that relay's (RFC 8601 §5: a relay adds its own on top,
   anything below was written by someone else, possibly the sender).  Its ``dmarc=`` result counts;
   the policy is read from it (``policy.dmarc=``, or Gmail's ``(p=REJECT …)``) or else looked up.
2. Otherwise pbem checks for itself: the DMARC record found by the DNS tree walk (DMARCbis: the From
   domain, then each parent down to two labels, so no public-suffix list is needed), and, only when
   that policy is ``reject`` or ``quarantine``, the DKIM signatures whose ``d=`` is aligned with the
   From domain (``adkim=s``: the same domain; ``r``: the same or a parent or subdomain of it), each
   verified with dkimpy.  The SMTP front does not record the client's address, so pbem cannot check
   SPF: a domain that publishes ``p=reject`` and signs nothing fails here (put a relay in front and
   trust it to count SPF too).

DNS lookups have a time-out (``PBEM_DNS_TIMEOUT``) and are cached per process (answers for their TTL,
within a minute and an hour; "no record" for five minutes; a temporary error for 30 seconds).  A
temporary error (a time-out, SERVFAIL) is ``temperror``, never a failure: the mail goes on as if
unchecked.  Names under the special-use domains (RFC 6761: ``.test``, ``.example``, ``.invalid``,
``.localhost``; RFC 2606's ``example.com``/``.net``/``.org``) are never looked up: nobody's mail comes
from them, and tests use them.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses
from typing import Any, Protocol

import dkim
import dns.exception
import dns.nameserver
import dns.rdatatype
import dns.resolver

from pbem.config import Settings

__all__ = [
    "DnsTxt",
    "NOT_CHECKED",
    "SenderAuth",
    "SenderChecks",
    "TemporaryDnsError",
    "check_sender",
    "checks_for",
]

#: The recipients whose mail is checked: a seat's reply address, an invitation's.
CHECKED_PREFIXES = ("hearts+", "invite+")
#: Policies under which a failing mail is refused.
ENFORCED = frozenset({"reject", "quarantine"})
#: At most this many DKIM signatures of a mail are tried, and this many DMARC names looked up.
MAX_SIGNATURES = 5
MAX_WALK = 8

SPECIAL_USE = ("test", "example", "invalid", "localhost", "local", "onion", "home.arpa",
               "example.com", "example.net", "example.org")


class TemporaryDnsError(Exception):
    """A lookup timed out or the servers failed (SERVFAIL): try again later; never a failure."""


@dataclass(frozen=True)
class SenderAuth:
    """What was found about the sender of one mail.

    ``result``: ``pass`` / ``fail`` (DMARC, RFC 7489 §6.6.2), ``none`` (nothing to check: no policy
    published, no From domain, a special-use domain) or ``temperror``; ``policy`` the policy that
    applies (``reject``, ``quarantine``, ``none``) when known; ``by`` who judged (``relay``: the
    trusted Authentication-Results; ``pbem``: its own checks; ``""``: not checked)."""

    result: str
    domain: str = ""
    policy: str | None = None
    by: str = ""
    dkim: str = ""  # pbem's own DKIM result: pass, fail, temperror, none (no aligned signature)

    @property
    def refused(self) -> bool:
        """The mail fails DMARC under ``p=reject`` or ``p=quarantine``: it must change nothing."""
        return self.result == "fail" and self.policy in ENFORCED

    def as_json(self) -> dict[str, Any]:
        """For the mail's recorded outcome."""
        found: dict[str, Any] = {"dmarc": self.result, "by": self.by}
        if self.domain:
            found["domain"] = self.domain
        if self.policy:
            found["policy"] = self.policy
        if self.dkim:
            found["dkim"] = self.dkim
        return found


NOT_CHECKED = SenderAuth("none")


# -- DNS --------------------------------------------------------------------------------------------------


class _Resolver(Protocol):
    def resolve(self, qname: str, rdtype: Any, *, lifetime: float | None = None,
                search: bool | None = None) -> Any: ...


def make_resolver(servers: str, timeout: float) -> dns.resolver.Resolver:
    """A dnspython resolver for ``PBEM_DNS_SERVERS`` (``HOST[:PORT]``, commas between; empty: the
    system's), each query given up after ``timeout`` seconds."""
    resolver = dns.resolver.Resolver(configure=not servers)
    if servers:
        nameservers = []
        for item in servers.split(","):
            item = item.strip()
            host, port = item, 53
            match = re.fullmatch(r"\[?([^\]]+?)\]?:(\d+)", item)
            if match and (item.startswith("[") or item.count(":") == 1):
                host, port = match.group(1), int(match.group(2))
            nameservers.append(dns.nameserver.Do53Nameserver(host, port))
        resolver.nameservers = nameservers
    resolver.timeout = timeout
    resolver.lifetime = timeout
    resolver.cache = None  # DnsTxt keeps its own, with the negative and temporary answers too
    return resolver


class DnsTxt:
    """TXT lookups with a time-out and a cache (see the module docstring for how long)."""

    POSITIVE_MIN, POSITIVE_MAX = 60.0, 3600.0
    NEGATIVE = 300.0
    TEMPORARY = 30.0

    def __init__(self, resolver: _Resolver, timeout: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.resolver = resolver
        self.timeout = timeout
        self.clock = clock
        self.lookups = 0  # queries actually sent (for tests and the operator)
        self._cache: dict[str, tuple[float, tuple[str, ...] | None | TemporaryDnsError]] = {}

    def txt(self, name: str) -> tuple[str, ...] | None:
        """The TXT records of ``name`` (each one's strings joined), None when it has none;
        ``TemporaryDnsError`` when the answer could not be had."""
        key = name.rstrip(".").lower()
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            found = cached[1]
        else:
            found, ttl = self._lookup(key)
            self._cache[key] = (now + ttl, found)
        if isinstance(found, TemporaryDnsError):
            raise found
        return found

    def _lookup(self, name: str) -> tuple[tuple[str, ...] | None | TemporaryDnsError, float]:
        self.lookups += 1
        try:
            answer = self.resolver.resolve(name + ".", dns.rdatatype.TXT, lifetime=self.timeout, search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return None, self.NEGATIVE
        except (dns.exception.Timeout, dns.resolver.NoNameservers, dns.resolver.YXDOMAIN,
                dns.exception.DNSException, OSError) as error:
            return TemporaryDnsError(f"{name}: {type(error).__name__}"), self.TEMPORARY
        texts = tuple(b"".join(rdata.strings).decode("utf-8", "replace") for rdata in answer)
        ttl = getattr(getattr(answer, "rrset", None), "ttl", self.POSITIVE_MIN)
        return texts, min(max(float(ttl), self.POSITIVE_MIN), self.POSITIVE_MAX)


# -- the checks -------------------------------------------------------------------------------------------------


@dataclass
class SenderChecks:
    """The checks of one process: the settings they follow and the DNS they look things up in."""

    trusted_authserv_id: str
    dns: DnsTxt

    @classmethod
    def from_settings(cls, settings: Settings, resolver: _Resolver | None = None) -> SenderChecks:
        resolver = resolver or make_resolver(settings.dns_servers, settings.dns_timeout)
        return cls(settings.trusted_authserv_id, DnsTxt(resolver, settings.dns_timeout))

    def check(self, raw: bytes) -> SenderAuth:
        """What DMARC says of the From domain of ``raw`` (see the module docstring)."""
        headers = BytesHeaderParser(policy=compat32).parsebytes(_header_block(raw))
        domain = from_domain(headers.get_all("From") or [])
        if not domain:
            return SenderAuth("none", by="pbem")
        if self.trusted_authserv_id:
            relayed = self._relay_says(headers.get_all("Authentication-Results") or [], domain)
            if relayed is not None:
                return relayed
        return self._own_check(raw, headers, domain)

    # The trusted relay's word.
    def _relay_says(self, results: Sequence[str], domain: str) -> SenderAuth | None:
        if not results:
            return None
        top = parse_authentication_results(str(results[0]))
        if top is None or top.authserv_id != self.trusted_authserv_id:
            return None  # not the relay's (or written beneath it): pbem judges for itself
        dmarc = top.result("dmarc")
        if dmarc is None:
            return None
        result, properties, comment = dmarc
        said_domain = properties.get("header.from", domain).lower()
        if said_domain != domain:
            return None  # about another From than the one pbem reads
        verdict = {"pass": "pass", "fail": "fail", "temperror": "temperror"}.get(result, "none")
        policy = properties.get("policy.dmarc") or _policy_in_comment(comment)
        if verdict == "fail" and policy is None:
            try:
                policy = self.policy(domain)[0]
            except TemporaryDnsError:
                return SenderAuth("temperror", domain, None, "relay")
        return SenderAuth(verdict, domain, policy.lower() if policy else None, "relay")

    # pbem's own.
    def _own_check(self, raw: bytes, headers: Any, domain: str) -> SenderAuth:
        if is_special_use(domain):
            return SenderAuth("none", domain, None, "pbem")
        try:
            policy, strict = self.policy(domain)
        except TemporaryDnsError:
            return SenderAuth("temperror", domain, None, "pbem")
        if policy is None:
            return SenderAuth("none", domain, None, "pbem")
        if policy not in ENFORCED:
            return SenderAuth("none", domain, policy, "pbem")  # p=none: nothing would change
        dkim_result = self.aligned_dkim(raw, headers, domain, strict)
        verdict = {"pass": "pass", "temperror": "temperror"}.get(dkim_result, "fail")
        return SenderAuth(verdict, domain, policy, "pbem", dkim_result)

    def policy(self, domain: str) -> tuple[str | None, bool]:
        """The DMARC policy that applies to ``domain`` and whether DKIM alignment is strict: the
        record of the domain itself (``p=``) or of the nearest parent that has one (``sp=``, else
        ``p=``); ``(None, False)`` when there is none."""
        labels = domain.split(".")
        for start in range(0, min(len(labels) - 1, MAX_WALK)):
            name = ".".join(labels[start:])
            if is_special_use(name):
                return None, False
            records = [r for r in self.dns.txt(f"_dmarc.{name}") or () if r.strip().lower().startswith("v=dmarc1")]
            if len(records) != 1:
                continue  # none, or several (RFC 7489 §6.6.3: as if none)
            tags = _tags(records[0])
            policy = tags.get("p", "").lower()
            if start > 0 and tags.get("sp"):
                policy = tags["sp"].lower()
            if policy not in ("none", "quarantine", "reject"):
                continue
            return policy, tags.get("adkim", "r").lower() == "s"
        return None, False

    def aligned_dkim(self, raw: bytes, headers: Any, domain: str, strict: bool) -> str:
        """``pass`` when a DKIM signature aligned with ``domain`` verifies; ``temperror`` when none
        did but a key could not be looked up; ``fail`` otherwise (``none``: no aligned signature)."""
        signatures = headers.get_all("DKIM-Signature") or []
        aligned = [index for index, value in enumerate(signatures[:MAX_SIGNATURES])
                   if _aligned(_tags(str(value)).get("d", "").lower().rstrip("."), domain, strict)]
        if not aligned:
            return "none"
        temporary = False
        for index in aligned:
            problems: list[str] = []
            verifier = dkim.DKIM(raw, timeout=self.dns.timeout)
            try:
                if verifier.verify(idx=index, dnsfunc=self._dkim_dnsfunc(problems)):
                    return "pass"
            except dkim.DKIMException:
                pass
            temporary = temporary or bool(problems)
        return "temperror" if temporary else "fail"

    def _dkim_dnsfunc(self, problems: list[str]) -> Callable[..., bytes | None]:
        def lookup(name: bytes, timeout: float = 5) -> bytes | None:
            text = name.decode("ascii", "replace").rstrip(".")
            if is_special_use(text):
                return None
            try:
                found = self.dns.txt(text)
            except TemporaryDnsError as error:
                problems.append(str(error))
                raise dkim.DnsTimeoutError(str(error)) from error
            return found[0].encode("utf-8") if found else None
        return lookup


def _aligned(signing: str, domain: str, strict: bool) -> bool:
    if not signing or "." not in signing:
        return False
    if signing == domain:
        return True
    return not strict and (domain.endswith("." + signing) or signing.endswith("." + domain))


def is_special_use(domain: str) -> bool:
    name = domain.rstrip(".").lower()
    return any(name == suffix or name.endswith("." + suffix) for suffix in SPECIAL_USE)


def from_domain(values: Sequence[Any]) -> str:
    """The domain of the one mailbox in the From header ("" for none, several, or none parsable)."""
    addresses = [address for _, address in getaddresses([str(v) for v in values]) if address]
    if len(addresses) != 1 or "@" not in addresses[0]:
        return ""
    return addresses[0].rpartition("@")[2].strip().rstrip(".").lower()


def _tags(text: str) -> dict[str, str]:
    """``tag=value; …`` (DKIM-Signature, DMARC record), values with whitespace removed."""
    found: dict[str, str] = {}
    for part in text.split(";"):
        name, sep, value = part.partition("=")
        if sep:
            found.setdefault(name.strip().lower(), re.sub(r"\s+", "", value))
    return found


def _header_block(raw: bytes) -> bytes:
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = raw.find(separator)
        if end >= 0:
            return raw[: end + len(separator)]
    return raw


# -- Authentication-Results (RFC 8601) --------------------------------------------------------------------


@dataclass(frozen=True)
class AuthenticationResults:
    authserv_id: str
    #: (method, result, properties such as header.from, the comments' text), in order.
    results: tuple[tuple[str, str, dict[str, str], str], ...]

    def result(self, method: str) -> tuple[str, dict[str, str], str] | None:
        for name, result, properties, comment in self.results:
            if name == method:
                return result, properties, comment
        return None


def _strip_comments(text: str) -> tuple[str, str]:
    """``text`` without its (nested) comments, and the comments' text."""
    kept, comments, depth, escaped = [], [], 0, False
    for char in text:
        if escaped:
            (comments if depth else kept).append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "(":
            depth += 1
            if depth > 1:
                comments.append(char)
        elif char == ")" and depth:
            depth -= 1
            comments.append(" " if depth == 0 else char)
        else:
            (comments if depth else kept).append(char)
    return "".join(kept), "".join(comments)


def parse_authentication_results(value: str) -> AuthenticationResults | None:
    """One ``Authentication-Results`` field's value; None when it has no authserv-id."""
    value = re.sub(r"\r?\n[ \t]", " ", value)
    parts = value.split(";")
    head, _ = _strip_comments(parts[0])
    tokens = head.split()
    if not tokens:
        return None
    results = []
    for part in parts[1:]:
        text, comment = _strip_comments(part)
        words = text.split()
        if not words or "=" not in words[0]:
            continue
        method, _, result = words[0].partition("=")
        properties = {}
        for word in words[1:]:
            name, sep, prop = word.partition("=")
            if sep:
                properties[name.lower()] = prop.strip('"').lower()
        results.append((method.lower().split("/")[0], result.lower(), properties, comment))
    return AuthenticationResults(tokens[0].lower(), tuple(results))


_POLICY_COMMENT = re.compile(r"\bp=(reject|quarantine|none)\b", re.IGNORECASE)


def _policy_in_comment(comment: str) -> str | None:
    match = _POLICY_COMMENT.search(comment)
    return match.group(1).lower() if match else None


# -- for the inbound processing -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _checks(trusted: str, servers: str, timeout: float) -> SenderChecks:
    return SenderChecks(trusted, DnsTxt(make_resolver(servers, timeout), timeout))


def checks_for(settings: Settings) -> SenderChecks:
    """The process's checks for ``settings`` (one DNS cache per process and configuration)."""
    return _checks(settings.trusted_authserv_id, settings.dns_servers, settings.dns_timeout)


def check_sender(svc: Any, raw: bytes, recipient: str) -> SenderAuth:
    """What DMARC says of a received mail to ``recipient``: checked for a seat's or an invitation's
    address (the mails whose From decides who may act), ``NOT_CHECKED`` for the others.  Call it
    outside any transaction: it may wait on DNS.  ``svc.sender_checks`` when the services carry one
    (tests), else the process's own."""
    local = recipient.split("@", 1)[0].lower()
    if not local.startswith(CHECKED_PREFIXES):
        return NOT_CHECKED
    checks = getattr(svc, "sender_checks", None) or checks_for(svc.settings)
    return checks.check(raw)
