"""Credentials given over several messages: "I changed my router password again" … "it's now sunflower42 lol".

One message alone holds no secret here: the name is in one, the value in the next (or the value first, then
"^ that's the new admin password"). So a batch of one user's messages is read three ways, and a span any of them
finds is cut: each message alone (`find_credentials`), the messages joined into one text ("for the record my
steam pw" + "is turnip-rocket-66"), and each message that names a credential without giving it, read with the
next two messages as the value it names (the single-text rules judge "<name>: <what follows>", so what counts as
a value is decided in one place), or with the one or two before it as the value given first: a lone
password-like word or code, or a word shaped like a chosen password when the naming message points back ("oops,
that was my steam password") or the earlier message is short ("Candlewick#808 is what I went with"). Names and
lead-in words come from `bot.memory.rules.credential_names`, so a split in Italian, Russian, Japanese or Korean is
read like one in English.
Pure functions of the texts; arrival redaction and the step before extraction both use `redact_batch`.

A value given before its name ("Kingfisher#31" … "thats my new email password") cannot be known on arrival, so a
message that is nothing but one password-like word is kept cut wherever it is written down (`held_back`): the
next message may name it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.memory.rules.credential_names import CODE_NAMES, LEAD_INS, LOGIN_NAMES, PASSWORD_NAMES
from bot.memory.rules.credential_window import chosen
from bot.memory.rules.credential_words import password_shaped, strongly_shaped
from bot.memory.rules.credentials import cut, find_credentials, public_after, public_form
from bot.memory.rules.findings import API_KEY, PASSWORD, TOKEN, Finding, merged

FOLLOWING = 2  # how many later messages may carry the value a message names

_NAME = re.compile(  # not a name when it opens a compound: "password-protected", "secret-santa"
    r"(?:\b(?:(?:wi-?fi|wlan|router|admin|master|email|e-mail|account|login|steam|netflix|bank|vault|laptop|phone)"
    r"[\s-]?)?(?:passwords?|passwd|pwd|pw|pass(?:code|phrase)?|passwort|kennwort|contraseña|contrasena|senha"
    r"|wachtwoord|mot de passe|mdp|password|clave)\b"
    r"|\b(?:api|secret|access|bot|deploy|auth|personal access|ssh|private)[\s_-]?(?:keys?|tokens?)\b|\btokens?\b"
    r"|\b(?:seed|recovery|backup)[\s-](?:phrase|codes?|keys?)\b|\bmnemonic\b"
    r"|\b(?:pins?|pin[\s-]?(?:code|number)|cvv2?|cvc2?|otp|puk|combination)\b"
    r"|\b(?:(?:door|gate|alarm|garage|safe|lock|locker|entry|security|access|building|office|unlock|login|verification"
    r"|sms|2fa|one-time|confirmation|auth|bank)[\s-])?codes?\b|\bcode (?:de|für|del|da|per)\b"
    r"|(?:密码|密碼|口令|パスワード|暗証番号|비밀번호)"
    rf"|(?<![\w-])(?:{PASSWORD_NAMES}|{LOGIN_NAMES}|{CODE_NAMES})(?![\w-]))(?!-\w)",
    re.IGNORECASE,
)
_DIGIT_NAME = re.compile(
    rf"\b(?:pins?|pin[\s-]?(?:code|number)|cvv2?|cvc2?|otp|puk|codes?|combination)\b|暗証番号|{CODE_NAMES}",
    re.IGNORECASE,
)
_PHRASE_NAME = re.compile(r"\b(?:pass[\s-]?phrase|master password|seed[\s-]phrase|recovery[\s-]phrase|mnemonic)\b",
                          re.IGNORECASE)
# Words that lead up to a value: "it's now", "the new one is", "went with", "c'est", "ahora es", "è".
_LEAD_IN = re.compile(
    r"^(?:(?:ok|okay|so|and|also|btw|oh|well|nvm|found it|yeah|yes|right|the|new|current|old|one|it'?s|its|it is"
    r"|is|was|now|still|set to|changed to|to|went with|using|use|same as before but with an? \w+|this time"
    rf"|c'est|es|ist|jetzt|è|é|e|ahora|agora|nu|teraz|now it'?s|{LEAD_INS})\b[\s,:]*|[:=—–>-]+\s*|\^\s*)+",
    re.IGNORECASE,
)
_CODE_VALUE = re.compile(
    r"(?<![\w:/.,-])(?:#?[A-Z]?\d{3,8}[A-Z#]?(?:[ -]\d{3,4})?|\d(?:[ -]\d){3,7})(?![\w:/.,%-])"
)
_UNIT_AFTER = re.compile(r"\s*(?:am|pm|h|min|minutes|hours|days|digits?|characters?|chars?|times|%|€|\$|£)\b",
                         re.IGNORECASE)
_POINTS_BACK = re.compile(
    r"^\s*(?:\^+|↑)?\s*(?:that'?s|thats|that is|this is|this was|that was|is|was|es|c'est|ist|das ist|è)\s+"
    r"(?:\w+\s+){0,4}?(?:password|passwort|pw|pin|passcode|code|key|token|contraseña|senha|mot de passe)\b",
    re.IGNORECASE,
)
# A message that names a credential and points back at what came before: "oops wrong window, that was my steam
# password", "lol that's my actual password for the forum".
_POINTER = re.compile(
    r"(?:^|[\s,])(?:\^+|↑|that|that'?s|thats|this|it|those|these|ça|c'était|c'est|das|dies|eso|esto|esa|ese"
    r"|quello|questo|quella|isso|isto|esse|essa|dat|dit|to|это|那|这|それ|これ|그거|이거)(?=[\s,.!?]|$)",
    re.IGNORECASE,
)
# Names whose value may come first: a password or a login, or a code when the earlier message is only the code.
_PASSWORD_NAME = re.compile(  # CJK names sit between other letters: no word edges
    rf"(?<![\w-])(?:{PASSWORD_NAMES}|{LOGIN_NAMES})(?![\w-])|密码|密碼|口令|パスワード|비밀번호|비번", re.IGNORECASE
)
_CODE_NAME = re.compile(rf"(?<![\w-]){CODE_NAMES}(?![\w-])", re.IGNORECASE)
_MAX_CODE_WORDS = 8
_SHORT_MESSAGE = 6  # words: a message this short may be nothing but a value and a remark ("X is what I went with")


def batch_findings(texts: Sequence[str]) -> list[list[Finding]]:
    """The credentials in each of `texts` (one user's messages, in order), read alone and together."""
    found = [find_credentials(text) for text in texts]
    for index, finding in _joined(texts):
        found[index].append(finding)
    for index, text in enumerate(texts):
        name = _NAME.search(text)
        if name is None or found[index]:
            continue
        for later in range(index + 1, min(index + 1 + FOLLOWING, len(texts))):
            given = _named_value(name.group(0), texts[later])
            if given:
                found[later] += given
                break
        for earlier in range(index - 1, max(-1, index - 1 - FOLLOWING), -1):
            if not found[earlier] and (given := _named_before(text, texts[earlier])):
                found[earlier] += given
                break
    for index, text in enumerate(texts):  # public by its form ("SW-7703-1185-4420"), or named public just before
        found[index] = [f for f in found[index] if not public_form(text[f.start : f.end]) and (
            f.kind not in (API_KEY, TOKEN) or f.start > 0 or index == 0
            or not public_after(texts[index - 1], text[f.start : f.end]))]
    return [merged(findings) for findings in found]


def _named_before(naming: str, text: str) -> list[Finding]:
    """The value an earlier message gave before a later one named it: a lone password-like word, a lone code
    before a code's name, or, when a password's or a login's name points back ("that was my steam password") or
    the earlier message is short ("Candlewick#808 is what I went with"), a word shaped like a chosen password in
    it."""
    if _POINTS_BACK.match(naming) and (bare := _bare_value(text)):
        return bare
    if _CODE_NAME.search(naming) and _CODE_VALUE.fullmatch(text.strip()):
        return [Finding(PASSWORD, text.index(text.strip()), text.index(text.strip()) + len(text.strip()))]
    if not _PASSWORD_NAME.search(naming) or not (_POINTER.search(naming) or len(text.split()) <= _SHORT_MESSAGE):
        return []
    if bare := _bare_value(text):
        return bare
    for word in re.finditer(r"[^\s,;]+", text):
        value = word.group(0).strip("'\"`“”‘’.!?()")
        if chosen(value, given=False):
            start = text.find(value, word.start())
            return [Finding(PASSWORD, start, start + len(value))]
    return []


def held_back(text: str) -> list[Finding]:
    """A lone password-like word (`text` is nothing else, and no rule finds a credential in it): what a message's
    written-down copy keeps cut, since a later message may say it was a password."""
    return [] if find_credentials(text) else _bare_value(text)


def journaled(text: str) -> str:
    """`text`, already cut on arrival, as it is written down: without a lone password-like word (`held_back`)."""
    return cut(text, held_back(text))


def redact_batch(texts: Sequence[str]) -> list[str]:
    """Each of `texts` with what `batch_findings` finds in it replaced by a marker ("[password removed]")."""
    return [cut(text, findings) for text, findings in zip(texts, batch_findings(texts), strict=True)]


def _joined(texts: Sequence[str]) -> list[tuple[int, Finding]]:
    """What the texts joined by spaces hold, as spans of the texts they fall in (cut at each text's edges)."""
    if len(texts) < 2:
        return []
    starts, position = [], 0
    for text in texts:
        starts.append(position)
        position += len(text) + 1
    found: list[tuple[int, Finding]] = []
    for finding in find_credentials(" ".join(texts)):
        for index, start in enumerate(starts):
            end = start + len(texts[index])
            if finding.start < end and finding.end > start:
                local = Finding(finding.kind, max(finding.start, start) - start, min(finding.end, end) - start)
                if local.end > local.start:
                    found.append((index, local))
    return found


def _named_value(name: str, text: str) -> list[Finding]:
    """The value a later message gives for `name`: what the single-text rules find in "<name>: <rest>" after the
    lead-in words, a code after a code's name, or the whole message when it is one password-like word (or a few
    plain words after a passphrase's name)."""
    lead = _LEAD_IN.match(text)
    offset = lead.end() if lead else 0
    rest = text[offset:]
    if not rest.strip():
        return []
    prefix = f"{name}: "
    shifted = [
        Finding(f.kind, f.start - len(prefix) + offset, f.end - len(prefix) + offset)
        for f in find_credentials(prefix + rest) if f.end > len(prefix)
    ]
    shifted = [f for f in shifted if _value_like(text[max(f.start, offset) : f.end])]
    if shifted:
        return [Finding(f.kind, max(f.start, offset), f.end) for f in shifted]
    if _DIGIT_NAME.search(name):
        return _code(text)
    if _PHRASE_NAME.search(name) and re.fullmatch(r"[^\W\d_]+(?: [^\W\d_]+){2,7}", rest.strip()):
        return [Finding(PASSWORD, offset, offset + len(rest.strip()))]
    return _bare_value(text)


def _value_like(value: str) -> bool:
    """What a later message gives as the value must look like one: the rules read it after a strong name, where
    any word would do ("password: jk")."""
    return password_shaped(value) or strongly_shaped(value) or " " in value.strip() or len(value) >= 12 or bool(
        re.search(r"\d{3}", value)
    )


def _code(text: str) -> list[Finding]:
    """A code in a short message after a code's name ("nvm found it, 2286", "730 512 is that normal")."""
    if len(text.split()) > _MAX_CODE_WORDS:
        return []
    for match in _CODE_VALUE.finditer(text):
        if not _UNIT_AFTER.match(text, match.end()):
            return [Finding(PASSWORD, *match.span())]
    return []


def _bare_value(text: str) -> list[Finding]:
    """A message that is nothing but one password-like word (quoted or not), after the lead-in words."""
    lead = _LEAD_IN.match(text)
    offset = lead.end() if lead else 0
    word = text[offset:].strip()
    trailing = re.match(r"(\S+)(?:\s+(?:lol|haha|xd|:\)|pls|please|now|btw))?\s*[.!]?$", word, re.IGNORECASE)
    if trailing is None:
        return []
    value = trailing.group(1).strip("'\"`“”‘’")
    start = text.find(value, offset)
    if re.fullmatch(r"v?\d+(?:\.\d+)+[\w-]*", value, re.IGNORECASE):
        return []  # a version: "v2.14.3"
    if len(value) >= 6 and (password_shaped(value) or re.search(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]", value)):
        return [Finding(PASSWORD, start, start + len(value))]
    return []
