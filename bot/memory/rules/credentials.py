"""Credentials never stored: finds API keys, tokens, passwords given as such, card and IBAN numbers in text.

Pure functions of a string (no I/O, no model), so the same decision holds for facts, summaries and pending turns:
- keys and tokens by the shapes their issuers give them (`sk-`, `ghp_`/`github_pat_`, `xox?-`, `AKIA`, Discord bot
  tokens and webhooks, JWTs, Stripe, Google, Slack, GitLab, npm, Hugging Face, Telegram, SendGrid, private key
  blocks, passwords in URLs), values given for a key-like name (`API_KEY=...`, "the client secret is ..."), and
  long random-looking strings (upper and lower case and digits, mixed the way random text mixes them);
- passwords, PINs, door codes, recovery phrases and backup codes given as such ("my password is ...", "hunter2 is
  my password", "login: me / pass", in English and the common German, French, Spanish, Portuguese, Italian, Dutch,
  Chinese and Japanese phrasings), but not talk about them ("forgot their password", "uses a password manager");
- card numbers (13-19 digits of a known card range that pass the Luhn check) and IBANs (the country's length and
  the mod-97 check), so order numbers, phone numbers and ids that fail the checks are kept.
Hex strings (commit hashes, digests, UUIDs) count only when a key-like name labels them. A `Finding` is the span of
the secret itself, so a turn can keep its sentence with the value replaced (`redact`), while a summary drops the
sentence that held it (`without_credential_sentences`).
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from bot.memory.rules.checksums import card_range_valid, iban_valid, luhn_valid

API_KEY = "API key"
TOKEN = "token"  # noqa: S105 -- a kind's name
PASSWORD = "password"  # noqa: S105 -- a kind's name
CARD = "card number"
IBAN = "IBAN"
PRIVATE_KEY = "private key"


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential: what kind, and where (`text[start:end]` is the secret itself)."""

    kind: str
    start: int
    end: int


# --- shapes issuers give their keys ------------------------------------------------------------------------

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        (PRIVATE_KEY, r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*-----|.*)"),
        (API_KEY, r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|or-v1-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        (TOKEN, r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"),
        (TOKEN, r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
        (API_KEY, r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
        (API_KEY, r"\bAIza[0-9A-Za-z_-]{35}"),
        (API_KEY, r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        (TOKEN, r"\bhf_[A-Za-z0-9]{30,}|\bnpm_[A-Za-z0-9]{36}\b|\bglpat-[A-Za-z0-9_-]{20,}|\bdop_v1_[a-f0-9]{64}\b"),
        (API_KEY, r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|\bkey-[0-9a-f]{32}\b"),
        (TOKEN, r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b|\boauth:[a-z0-9]{30}\b"),
        # Discord: a bot token is the bot's id in base64, a timestamp and an HMAC; a webhook URL carries its token.
        (TOKEN, r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"),
        (TOKEN, r"https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
        (TOKEN, r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
        (TOKEN, r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}"),
        (API_KEY, r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{5}(?:-[A-Z0-9]{5}){4}\b"),  # licence keys
    )
)
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]{0,15}://[^\s:/@]{1,256}:([^\s@/]{3,256})@", re.IGNORECASE)
_URL = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]{0,15}://|www\.)\S+|\b[\w-]{1,63}(?:\.[\w-]{1,63}){0,8}\.[a-z]{2,24}/\S*", re.IGNORECASE
)
_SECRET_PARAM = re.compile(
    r"[?&#](?:api[_-]?key|key|token|access_token|auth|secret|password|pwd|sig|signature)=([^&\s#]{8,})",
    re.IGNORECASE,
)

# --- values given for a key-like name ----------------------------------------------------------------------

_VALUE = r"""['"`“‘]?([A-Za-z0-9_+/=.:-]{12,})"""
_KEY_NAMES = (
    r"(?:api[\s_-]?keys?|apikey|access[\s_-]?keys?(?:[\s_-]?id)?|secret(?:[\s_-]?(?:access[\s_-]?)?key)?"
    r"|client[\s_-]?secret|(?:auth|access|refresh|session|bot|api|bearer|personal[\s_-]access)[\s_-]?tokens?"
    r"|tokens?|private[\s_-]?key|keys?|bearer|authorization)"
)
_LABELLED_KEY = re.compile(
    rf"\b{_KEY_NAMES}(?:\s+(?:for|to|of|on|from)\s+(?:[\w.'’-]+\s+){{0,3}}?[\w.'’-]+)?"
    rf"(?:\s*(?:is|was|are|=|:|:=|->)\s*|\s+)(?:bearer\s+)?{_VALUE}",
    re.IGNORECASE,
)
_ENV_ASSIGNMENT = re.compile(
    rf"\b[A-Z0-9_]{{0,40}}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD)[A-Z0-9_]{{0,40}}\s*[=:]\s*{_VALUE}", re.IGNORECASE
)

# --- passwords, PINs and codes given as such ----------------------------------------------------------------

_OWNER = r"(?:\w{1,20}[\s-])?"  # "email password", "WLAN-Passwort"
# A strong name is followed by the password itself ("password is dolphin"); after a weak one ("login is slow",
# "season pass is valid", "la clave es practicar") only something shaped like a password counts.
_STRONG_NAMES = (
    r"(?:passwords?|passwd|pwd|pw|passcodes?|mot de passe|mdp|passwort|kennwort|wlan-passwort|contraseña"
    r"|contrasena|senha|wachtwoord|parola d'ordine)"
)
_WEAK_NAMES = r"(?:pass|logins?|credentials|creds|combination|clave)"
_DIGIT_NAMES = (
    r"(?:pin(?:[\s-]?(?:code|number))?|cvv2?|cvc2?|csc"
    r"|(?:door|gate|alarm|garage|safe|lock|locker|entry|security|access|building|office|unlock)[\s-]code"
    r"|code\s+(?:for|to|of)\s+(?:[\w'’]+\s+){0,3}?(?:door|gate|alarm|garage|safe|lock|locker|building|office"
    r"|house|flat|apartment)s?)"
)
_PHRASE_NAMES = (
    r"(?:pass[\s-]?phrase|seed[\s-]phrase|recovery[\s-](?:phrase|codes?|keys?)|mnemonic|backup[\s-]codes?"
    r"|(?:2fa|mfa|two[\s-]factor)[\s-](?:backup[\s-]|recovery[\s-])?codes?)"
)
_PASSWORD_HINT = re.compile(
    r"pass|pw|pin|code|cvv|cvc|csc|login|cred|combination|clave|senha|mdp|contrase|wachtwoord|kennwort|phrase"
    r"|mnemonic|recovery|密|口令|パスワード|暗証",
    re.IGNORECASE,
)
_CJK_PASSWORD = re.compile(r"(?:密码|密碼|口令|パスワード|暗証番号)\s*(?:是|为|為|は|:|：)?\s*([^\s、。，,]{3,})")
_IS = r"(?:(?:is\s+set\s+to|set\s+to|is|was|are|were|ist|lautet|est|c'est|es|é|è)\b|:=|=|:|->|-|–)"
_QUOTED = r"""(?:'[^'\n]{1,80}'|"[^"\n]{1,80}"|“[^”\n]{1,80}”|‘[^’\n]{1,80}’|`[^`\n]{1,80}`)"""
_TOKEN = r"[^\s,;]{1,80}"  # noqa: S105 -- a pattern
_PASSWORD_GIVEN = re.compile(
    rf"\b{_OWNER}(?:(?P<strong>{_STRONG_NAMES})|(?P<weak>{_WEAK_NAMES})|(?P<digits>{_DIGIT_NAMES}))"
    rf"(?:\s+(?:for|to|of|on|at|in|de|du|da|do|dela|dele|del|für|zu)(?:\s+[\w.'’@-]+){{0,4}}?)?"
    rf"\s*{_IS}\s*(?P<value>{_QUOTED}|{_TOKEN}(?:\s*/\s*{_TOKEN})?)",
    re.IGNORECASE,
)
_PHRASE_GIVEN = re.compile(rf"\b{_PHRASE_NAMES}\s*(?:{_IS}|\s)\s*([^.!?\n]{{4,200}})", re.IGNORECASE)
_PASSWORD_BEFORE = re.compile(
    rf"(?<![^\s,;])({_QUOTED}|{_TOKEN})\s+(?:is|was|as)\s+(?:my|their|his|her|our|the|a)\s+(?:\w+\s+){{0,2}}?"
    r"(?:password|passcode|pin|passphrase)\b",
    re.IGNORECASE,
)
_CODE_PLAIN = re.compile(  # "pin code 7742", "cvv 319", "their PIN, 5521,"
    rf"\b(?:{_DIGIT_NAMES}|passcode)\s*(?:#|no\.?|,|\()?\s*(\d{{3,8}})\b", re.IGNORECASE
)
_PASSWORD_PLAIN = re.compile(  # "with password Bluebird!7", "password Adm1n2024": no verb, so it must look like one
    rf"\b(?:password|passwort|pwd|pw|pass|passcode)\s+(?:(?:was\s+|is\s+)?(?:set\s+|changed\s+)?to\s+)?"
    rf"({_QUOTED}|{_TOKEN})",
    re.IGNORECASE,
)
# Words that follow "password is" without being one: "is the same", "is too weak", "is 16 characters long".
_NOT_A_VALUES = (
    """a an the my your their his her our its this that these those it they he she i we you one same different
    too very so quite really pretty rather not never no none nothing something anything everything still also just
    only always usually probably definitely weak strong secure insecure safe unsafe long short simple easy hard
    difficult complex complicated obvious new old default expired reset changed saved stored written shared
    required needed missing wrong incorrect correct right forgotten lost leaked compromised encrypted hashed
    protected managed generated random unique in on at for with of to by from under behind inside into about
    like as and or but if when because where which what who how why all any some each every both either neither
    here there now then set being been be is are was were has have had do does did will would can could should
    may might must shall case sensitive locked blocked empty blank unknown private personal confidential mine
    theirs yours ours hers itself literally basically actually apparently better worse stronger weaker longer
    shorter safer easier harder simpler fine ok okay good bad great terrible awful valid invalid"""
)
_NOT_A_VALUE = frozenset(_NOT_A_VALUES.split())
_UNIT = re.compile(
    r"\s*(?:characters?|chars?|letters?|digits?|numbers?|words?|symbols?|long|min|minutes|hours|days|weeks|months"
    r"|years|times|%)\b",
    re.IGNORECASE,
)

# --- numbers with checksums ---------------------------------------------------------------------------------

_DIGIT_RUN = re.compile(r"(?<![\w+#./:-])\d+(?:[ -]\d+)*(?![\w/-]|\.\d)")  # groups of digits, "4539 1488 ..."
_DIGIT_GROUP = re.compile(r"\d+")
_IBAN_CANDIDATE = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b")

# --- random-looking strings ---------------------------------------------------------------------------------

_RANDOM_CANDIDATE = re.compile(r"(?<![\w+/.@:-])[A-Za-z0-9_+/-]{20,}={0,2}(?![\w+/=@-])")
_MIN_RANDOM_LENGTH = 20
_MIN_CLASS_CHANGES = 0.3  # share of neighbouring characters of different kinds (upper, lower, digit, other)
_MIN_ENTROPY_BITS = 3.5  # per character


def _kind_of_char(char: str) -> int:
    return 0 if char.isupper() else 1 if char.islower() else 2 if char.isdigit() else 3


def looks_random(token: str) -> bool:
    """Upper and lower case letters and digits, mixed the way random text mixes them: not hex (hashes, UUIDs),
    not one case (licence plates, VINs, model numbers), not camel-cased words with a number ("xXShadowHunter99")."""
    if len(token) < _MIN_RANDOM_LENGTH:
        return False
    core = token.rstrip("=")
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)):
        return False
    changes = sum(_kind_of_char(a) != _kind_of_char(b) for a, b in itertools.pairwise(core))
    if changes < _MIN_CLASS_CHANGES * (len(core) - 1):
        return False
    counts = Counter(core)
    entropy = -sum(count / len(core) * math.log2(count / len(core)) for count in counts.values())
    return entropy >= _MIN_ENTROPY_BITS


def _wordy(core: str) -> bool:
    """Words and small numbers joined by separators: "room-214-blue", "settings.api_key", "v2.14.3-arm64"."""
    parts = [part for part in re.split(r"[-_./:]+", core) if part]
    return len(parts) >= 2 and all(
        (part.isalpha() and (part.islower() or part.istitle() or part.isupper()) and len(part) <= 12)
        or (part.isdigit() and len(part) <= 4)
        or re.fullmatch(r"v?\d+|[a-z]+\d{1,3}|\d{1,3}[a-z]+", part, re.IGNORECASE)
        for part in parts
    )


def _secret_like(value: str) -> bool:
    """A value given for a key-like name: long, letters and digits, not words, a version or a plain number."""
    core = value.strip("'\"`“”‘’.,;:)")
    return (
        len(core) >= 12
        and any(c.isdigit() for c in core)
        and any(c.isalpha() for c in core)
        and not _wordy(core)
    )


def _password_shaped(value: str) -> bool:
    """A bare word that looks like a password: letters with digits or symbols, or a quoted string."""
    if value[:1] in "'\"`“‘":
        return True
    core = value.strip(".,;:!?)(")
    if len(core) < 5 or core.lower() in _NOT_A_VALUE:
        return False
    if re.fullmatch(r"\d+(?:[-./]\d+)*|\d+(?:st|nd|rd|th|s|k|m|gb|mb|tb|px|x|h|am|pm|yo)?", core, re.IGNORECASE):
        return False
    if re.fullmatch(r"\d+-[a-z]+", core, re.IGNORECASE):  # "20-character"
        return False
    has_alpha = any(c.isalpha() for c in core)
    return has_alpha and (any(c.isdigit() for c in core) or any(c in "!@#$%^&*?~+=_" for c in core))


_ADJECTIVE = re.compile(r"[a-z]+(?:ing|ed|able|ible|ous|ful|less|ive|ly|ent|ant|ic|al)")


def _given_value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    """The span of a password given after its name, or None when what follows is not a value."""
    value = match.group("value")
    start, end = match.span("value")
    if value[:1] in "'\"`“‘":
        return start, end
    core = value.rstrip(".,;:)")
    word = core.rstrip("!?")
    if re.match(r"[\[<{(]|([*x.#-])\1*$", core, re.IGNORECASE):
        return None  # a placeholder: "[password removed]", "<your password>", "****"
    if not core or word.lower() in _NOT_A_VALUE or _UNIT.match(text, end):
        # "is the same as my email one: Luna2016!": a value may still follow a colon in the same clause
        rest = re.match(r"[^.!?\n:]{0,60}:\s*(" + _TOKEN + ")", text[end:])
        if rest and _password_shaped(rest.group(1)):
            return end + rest.start(1), end + rest.end(1)
        return None
    if re.match(r"[A-Za-z_][\w.]*[\[(]", core):
        return None  # code: `password = os.environ["DB_PASSWORD"]`
    if match.group("digits"):
        return (start, start + len(core)) if re.fullmatch(r"(?=(?:\D*\d){3})[\d#*][\d#* -]{2,10}", core) else None
    if match.group("weak") and not (
        any(_password_shaped(part) for part in core.split("/")) or re.fullmatch(r"\d+(?:[-.]\d+)+", core)
    ):
        return None
    if match.group("strong") and _ADJECTIVE.fullmatch(word):
        return None  # "is expiring", "is outdated": lower-case words that describe it
    return start, start + len(core)


def _postal(text: str, label_start: int) -> bool:
    """"Lives in PIN code 560001": an Indian postal code, not a PIN."""
    return bool(re.search(r"\b(?:in|at|area)\s+$", text[max(0, label_start - 8) : label_start], re.IGNORECASE))


def _passwords(text: str) -> list[Finding]:
    """Passwords, PINs and codes given as such, each way of giving one in turn."""
    if not _PASSWORD_HINT.search(text):  # most texts name none of these: skip the costlier patterns
        return []
    return [
        *_named_then_given(text),
        *_given_in_a_phrase(text),
        *_plain_codes(text),
        *(Finding(PASSWORD, *match.span(1)) for match in _CJK_PASSWORD.finditer(text)),
        *_password_shaped_around_a_name(text),
    ]


def _named_then_given(text: str) -> list[Finding]:
    """"My password is ...", "PIN: ...": a value after the name, unless it is no value or a postal code."""
    found: list[Finding] = []
    for match in _PASSWORD_GIVEN.finditer(text):
        if match.group("digits") and _postal(text, match.start("digits")):
            continue
        span = _given_value(text, match)
        if span is not None:
            found.append(Finding(PASSWORD, *span))
    return found


def _given_in_a_phrase(text: str) -> list[Finding]:
    """Recovery phrases and backup codes after their name, unless what follows is no value ("is lost")."""
    found: list[Finding] = []
    for match in _PHRASE_GIVEN.finditer(text):
        value = match.group(1).strip()
        if value.split()[0].lower() not in _NOT_A_VALUE or value[:1] in "'\"“":
            found.append(Finding(PASSWORD, match.start(1), match.end(1)))
    return found


def _plain_codes(text: str) -> list[Finding]:
    """"PIN code 7742", "cvv 319": digits right after a code's name, unless a postal code."""
    return [
        Finding(PASSWORD, *match.span(1)) for match in _CODE_PLAIN.finditer(text) if not _postal(text, match.start())
    ]


def _password_shaped_around_a_name(text: str) -> list[Finding]:
    """"hunter2 is my password", "with password Bluebird!7": no verb gives the value, so it must look like one."""
    return [
        Finding(PASSWORD, *match.span(1))
        for pattern in (_PASSWORD_BEFORE, _PASSWORD_PLAIN)
        for match in pattern.finditer(text)
        if _password_shaped(match.group(1))
    ]


def _cards_in(groups: list[re.Match[str]]) -> list[Finding]:
    """Card numbers among neighbouring digit groups: each run of whole groups with 13-19 digits is tried, so a card
    followed by its security code ("4539 1488 0343 6467 123") or after another number is still found."""
    found: list[Finding] = []
    first = 0
    while first < len(groups):
        digits = ""
        for last in range(first, len(groups)):
            digits += groups[last].group(0)
            if len(digits) > 19:
                break
            if len(digits) >= 13 and luhn_valid(digits) and card_range_valid(digits):
                found.append(Finding(CARD, groups[first].start(), groups[last].end()))
                first = last
                break
        first += 1
    return found


def _numbers(text: str) -> list[Finding]:
    found: list[Finding] = []
    for run in _DIGIT_RUN.finditer(text):
        found += _cards_in(list(_DIGIT_GROUP.finditer(text, run.start(), run.end())))
    for match in _IBAN_CANDIDATE.finditer(text.upper()):
        if iban_valid(match.group(0)):
            found.append(Finding(IBAN, *match.span()))
    return found


def _keys(text: str, urls: list[tuple[int, int]]) -> list[Finding]:
    found = [Finding(kind, *match.span()) for kind, pattern in _SHAPES for match in pattern.finditer(text)]
    found += [Finding(PASSWORD, *match.span(1)) for match in _URL_PASSWORD.finditer(text)]
    found += [Finding(TOKEN, *match.span(1)) for match in _SECRET_PARAM.finditer(text)]
    for pattern in (_LABELLED_KEY, _ENV_ASSIGNMENT):
        for match in pattern.finditer(text):
            value = match.group(1).rstrip(".,:;")
            if _secret_like(value) and not _inside(match.start(1), urls):
                found.append(Finding(API_KEY, match.start(1), match.start(1) + len(value)))
    for match in _RANDOM_CANDIDATE.finditer(text):
        if looks_random(match.group(0)) and not _inside(match.start(), urls):
            found.append(Finding(API_KEY, *match.span()))
    return found


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _merged(findings: list[Finding]) -> list[Finding]:
    """Sorted, overlapping spans joined (the earlier finding's kind wins)."""
    merged: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged


def _normalised(text: str) -> str:
    """NFKC, without invisible format characters: full-width digits or zero-width spaces hide nothing."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")


def _find(text: str) -> list[Finding]:
    urls = [match.span() for match in _URL.finditer(text)]
    return _merged(_keys(text, urls) + _passwords(text) + _numbers(text))


def find_credentials(text: str) -> list[Finding]:
    """Every credential in `text`, in order, as spans of `text` itself.

    Text that hides one behind full-width characters or invisible format characters is reported as one finding
    covering all of it (its spans cannot be mapped back character by character)."""
    found = _find(text)
    clean = _normalised(text)
    if clean != text and not found:
        hidden = _find(clean)
        if hidden:
            return [Finding(hidden[0].kind, 0, len(text))]
    return found


def credential_kind(text: str) -> str | None:
    """What kind of credential `text` holds ("password", "API key", ...), or None: the reason to refuse it."""
    found = find_credentials(text)
    return found[0].kind if found else None


def redact(text: str) -> str:
    """`text` with each credential replaced by a marker naming its kind ("[password removed]"): what a pending
    turn keeps, so the words around it can still be learned."""
    parts: list[str] = []
    position = 0
    for finding in find_credentials(text):
        parts.append(text[position : finding.start])
        parts.append(f"[{finding.kind} removed]")
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def without_credential_sentences(text: str) -> str:
    """`text` without the sentences that hold a credential (a summary keeps no trace of one); unchanged when it
    holds none. Sentences that only make one when joined again are dropped too."""
    while findings := find_credentials(text):
        kept: list[str] = []
        position = 0
        for boundary in [*_SENTENCE_END.finditer(text), None]:
            end = boundary.start() if boundary is not None else len(text)
            if not any(f.start < end and f.end > position for f in findings):
                sentence = text[position:end].strip()
                if sentence:
                    kept.append(sentence)
            position = boundary.end() if boundary is not None else len(text)
        text = " ".join(kept)
    return text
