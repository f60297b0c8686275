"""E-mail messages of the notices (RFC 5322, MIME; docs/notices.md "The messages").

Each notice becomes one message: `From` and `Reply-To` from the case file's `[notify]`,
`To` = the account's addresses from the accounts file, `Subject` with the notice's
reference, `Date` and `Message-ID` derived from the case and the notice (never the clock or
chance, so the same analysis gives the same bytes), and a `multipart/alternative` body of a
`text/plain` and a `text/html` part made from the one template: each part as it is (`7bit`)
when it is ASCII without NUL or the boundary, in lines of at most 998 octets (RFC 5322
2.1.1), else UTF-8 in base64.

The standard library's `email` package builds them (`Composer.canonical`). A case has
thousands of messages alike but for their recipients, reference and bodies, so
`Composer.message` builds the parts every message shares once, with the package, and fills
in each message's own headers (folded and encoded by the package when they need it) and its
bodies (encoded as the package encodes them): the bytes are the package's own, byte
for byte (tests compare the two on hostile and long values).
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import html
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email import policy as email_policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime

from ..case import Case, mail_address

POLICY = email_policy.SMTP  # CRLF line ends, lines folded at 78 characters
BOUNDARY = "=_kv-forensics-notice"  # "=" ends a base64 body, "_" is no base64 character
_DELIMITER = f"--{BOUNDARY}".encode("ascii")
MAX_LINE = 78
SEVEN_BIT_LINE = 998  # octets a line may hold, line end aside (RFC 5322 2.1.1, RFC 2045 2.7)
_SENTINEL = {
    "To": "to@sentinel.invalid",
    "Subject": "subject-sentinel",
    "Message-ID": "<id@sentinel.invalid>",
}
# each sentinel body takes the encoding it stands for (`encoding`)
_SENTINEL_BODY = {
    ("7bit", "plain"): "text-sentinel",
    ("7bit", "html"): "html-sentinel",
    ("base64", "plain"): "text-sentinel\u00e9",
    ("base64", "html"): "html-sentinel\u00e9",
}
# a header value the package writes as it is (when short): printable ASCII words, one space
# between them
_AS_IT_IS = re.compile(r"[!-~]+(?: [!-~]+)*")
# a `,` or `;` between addresses: one outside a quoted name ("Doe, John" <j@example.com>)
_LIST_SEPARATOR = re.compile(r'[,;](?=(?:[^"]*"[^"]*")*[^"]*$)')


def addresses(values: Sequence[str | None]) -> tuple[list[str], list[str]]:
    """(the e-mail addresses in `values`, the parts that are not one): each value holds one
    or more addresses separated by `,` or `;`, each `addr` or `Name <addr>` (the name is
    dropped: it is data of the accounts file, not the recipient's own). Addresses repeated
    (letter case aside) are kept once, in the order first given."""
    found: dict[str, str] = {}
    bad: list[str] = []
    for value in values:
        if value is None:
            continue
        for part in _LIST_SEPARATOR.split(value):
            if not part.strip():
                continue
            parsed = mail_address(part)
            if parsed is None:
                bad.append(part.strip())
            else:
                found.setdefault(parsed[1].lower(), parsed[1])
    return list(found.values()), bad


def message_date(case: Case) -> datetime:
    """The messages' `Date`: `[notify] date`, else the latest of the case's events and the
    window's end (the case's own last time; never the clock)."""
    if case.notify.date is not None:
        return case.notify.date
    return max([case.window_end, *(e.at for e in case.events)])


def reference(case: Case, account_id: str) -> str:
    """The notice's reference (four groups of four hex digits): the same for an account on
    every run of the case, different for every account and case."""
    digest = _case_key(case.name, case.window_start).copy()
    digest.update(account_id.encode("utf-8", "surrogatepass"))
    d = digest.hexdigest()[:16].upper()
    return f"{d[:4]}-{d[4:8]}-{d[8:12]}-{d[12:]}"


@functools.lru_cache(maxsize=8)
def _case_key(name: str, start: datetime) -> hashlib._Hash:
    """The hash of what a case's references start with (the same for each of its notices)."""
    return hashlib.sha256(f"{name}\0{start.isoformat()}\0".encode("utf-8", "surrogatepass"))


class Composer:
    """The messages of one case (see the module doc). `sender` and `reply_to` are
    `[notify]` addresses (`Name <addr>` or `addr`); `date` the messages' Date."""

    def __init__(self, sender: str, reply_to: str | None, date: datetime, subject: str):
        parsed = mail_address(sender)
        if parsed is None:  # the case file check refuses it first
            raise ValueError(f"not an e-mail address: {sender!r}")
        # written as the package writes an Address: a name holding `,` or `.` gets its quotes
        self.sender = str(Address(display_name=parsed[0], addr_spec=parsed[1]))
        self.reply_to = None
        if reply_to is not None:
            to = mail_address(reply_to)
            if to is None:  # the case file check refuses it first
                raise ValueError(f"not an e-mail address: {reply_to!r}")
            self.reply_to = str(Address(display_name=to[0], addr_spec=to[1]))
        self.domain = parsed[1].rsplit("@", 1)[1]
        self.date = format_datetime(date.astimezone(UTC))
        self.subject = subject  # with `{reference}`
        # the message's bytes around its own values, per encoding of its two parts
        self._frames: dict[tuple[str, str], list[bytes]] = {}

    def _pieces(self, text_cte: str, html_cte: str) -> list[bytes]:
        """The bytes the package writes around a message's own values (headers, bodies),
        built once per pair of part encodings."""
        pieces = self._frames.get((text_cte, html_cte))
        if pieces is not None:
            return pieces
        text, html_body = _SENTINEL_BODY[text_cte, "plain"], _SENTINEL_BODY[html_cte, "html"]
        frame = self.canonical(
            [_SENTINEL["To"]], _SENTINEL["Subject"], _SENTINEL["Message-ID"], text, html_body
        )
        (got_text_cte, text_mark), (got_html_cte, html_mark) = _body(text), _body(html_body)
        assert (got_text_cte, got_html_cte) == (text_cte, html_cte)  # `_SENTINEL_BODY`
        pieces = []
        rest = frame
        for mark in (
            *(f"{name}: {value}\r\n".encode() for name, value in _SENTINEL.items()),
            text_mark,
            html_mark,
        ):
            before, found, rest = rest.partition(mark)
            assert found, mark  # the package writes a short ASCII value as it is
            pieces.append(before)
        pieces.append(rest)
        self._frames[text_cte, html_cte] = pieces
        return pieces

    def message_id(self, ref: str, to: Sequence[str], text: str) -> str:
        """`<reference.hash@sender's domain>`: the hash of the recipients and the message's
        text (`\n`-joined), so a notice whose content changes gets a new id."""
        return self._id(ref, to, text.encode("utf-8", "surrogatepass"))

    def _id(self, ref: str, to: Sequence[str], text: bytes) -> str:
        """`message_id` of the text's UTF-8 bytes."""
        digest = hashlib.sha256()
        if to:  # as the `\n`-joined text, without the copy joining it would make
            digest.update(("\n".join(to) + "\n").encode("utf-8", "surrogatepass"))
        digest.update(text)
        return f"<{ref.replace('-', '').lower()}.{digest.hexdigest()[:16]}@{self.domain}>"

    def notice(self, to: Sequence[str], ref: str, text: str, html_body: str) -> bytes:
        """A notice's message: `Subject` with its reference, the HTML part `html_body` (a
        fragment) as a whole document, `Message-ID` by `message_id`; the bytes `message`
        gives for these, the text encoded once."""
        subject = self.subject.format(reference=ref)
        html_part = html_document(subject, html_body)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: each step encodes it its own way
            return self.message(to, subject, self.message_id(ref, to, text), text, html_part)
        return self._message(to, subject, self._id(ref, to, data), _encoded(data), _body(html_part))

    def canonical(
        self, to: Sequence[str], subject: str, message_id: str, text: str, html_body: str
    ) -> bytes:
        """The message built by the `email` package (what `message` writes faster)."""
        msg = EmailMessage(policy=POLICY)
        msg["From"] = self.sender
        if self.reply_to is not None:
            msg["Reply-To"] = self.reply_to
        msg["To"] = ", ".join(to)
        msg["Subject"] = subject
        msg["Date"] = self.date
        msg["Message-ID"] = message_id
        msg.set_content(text, subtype="plain", charset="utf-8", cte=encoding(text))
        msg.add_alternative(html_body, subtype="html", charset="utf-8", cte=encoding(html_body))
        msg.set_boundary(BOUNDARY)
        return msg.as_bytes()

    def message(
        self, to: Sequence[str], subject: str, message_id: str, text: str, html_body: str
    ) -> bytes:
        """The bytes `canonical` gives for these values (see the module doc)."""
        return self._message(to, subject, message_id, _body(text), _body(html_body))

    def _message(
        self,
        to: Sequence[str],
        subject: str,
        message_id: str,
        text: tuple[str, bytes],
        html_body: tuple[str, bytes],
    ) -> bytes:
        """`message` of the two parts as `_body` gives them (encoding, body)."""
        p = self._pieces(text[0], html_body[0])
        return b"".join(
            (
                p[0],
                _header("To", ", ".join(to)),
                p[1],
                _header("Subject", subject),
                p[2],
                _header("Message-ID", message_id),
                p[3],
                text[1],
                p[4],
                html_body[1],
                p[5],
            )
        )


def _header(name: str, value: str) -> bytes:
    """A header line as the package writes it: as it is when short, single-spaced printable
    ASCII; otherwise folded (and encoded) by the package."""
    if len(name) + 2 + len(value) <= MAX_LINE and _AS_IT_IS.fullmatch(value):
        return f"{name}: {value}\r\n".encode("ascii")
    return str(POLICY.header_factory(name, value).fold(policy=POLICY)).encode("ascii")


def encoding(text: str) -> str:
    """A text part's transfer encoding: `7bit` (the text as it is, readable in the raw
    message) when it is ASCII without NUL or the MIME boundary, in lines of at most 998
    octets, else `base64` (UTF-8)."""
    return _body(text)[0]


def _body(text: str) -> tuple[str, bytes]:
    """A text part's (transfer encoding, body) as the package writes them: UTF-8, CRLF line
    ends, a last line ended; as it is in `7bit` (`encoding`'s rule), or in base64 in lines of
    76 characters (57 bytes each), each ending CRLF."""
    return _encoded(text.encode("utf-8", "surrogateescape"))


def _encoded(data: bytes) -> tuple[str, bytes]:
    """`_body` of the text's UTF-8 bytes."""
    if b"\r" in data:  # line ends of every kind: as `splitlines` finds them
        data = b"\r\n".join(data.splitlines()) + b"\r\n"
    else:  # only LF (a notice): the same lines, a last one ended
        data = (data if data.endswith(b"\n") else data + b"\n").replace(b"\n", b"\r\n")
    # as it is, a line holding the boundary would end the part (base64 never holds it); the
    # lines are measured only for a part that may go so
    if data.isascii() and b"\0" not in data and _DELIMITER not in data and _lines_fit(data):
        return "7bit", data
    import numpy as np  # only here: a notify whose parts all go as they are never loads it

    encoded = binascii.b2a_base64(data, newline=False)
    n, rest = divmod(len(encoded), 76)
    # the whole lines at once (a notice's base64 is tens of thousands of lines): each row of
    # 76 characters, then CR LF
    table = np.empty((n, 78), dtype=np.uint8)
    table[:, :76] = np.frombuffer(encoded, dtype=np.uint8, count=n * 76).reshape(n, 76)
    table[:, 76:] = (13, 10)
    return "base64", table.tobytes() + (encoded[n * 76 :] + b"\r\n" if rest else b"")


def _lines_fit(data: bytes) -> bool:
    """Whether every line of `data` (CRLF line ends, the last line ended) holds at most
    `SEVEN_BIT_LINE` octets: stepping from the last line end within reach of a line's start
    (a few steps for a notice, not one per line)."""
    reach = SEVEN_BIT_LINE + 2  # a line's octets, then CR; its LF is at most this far on
    at, end = 0, len(data)
    while at < end:
        last = data.rfind(b"\n", at, at + reach)
        if last < 0:
            return False
        at = last + 1
    return True


def html_document(title: str, body: str) -> str:
    """A notice's HTML part: a whole document around the body's HTML."""
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title, quote=True)}</title>\n</head>\n<body>\n{body}</body>\n"
        "</html>\n"
    )
