"""A value of the right shape near a credential's name: the general reading behind the worded rules of
`bot.memory.rules.credential_words`.

People and extraction models put any words between a name and its value ("the Disney+ password, which is ...",
"the code the bank just texted is ...", "Der Code für die Haustür ist ...", "logs in to the council tax portal
with ..."), so instead of a pattern per wording this reads every credential name (`credential_names`, many
languages and typos) and looks at the next few words of the same clause for a value shaped like what that name
opens:
- after a password or login name, a chosen string: letters with digits or symbols, at least three kinds of
  character ("Heron&Kite2020", "kitsune_2077"); right after a verb ("is", "ist", "est", "has been", ":") two kinds
  are enough ("bumblebee2k21");
- after a code's name, a code: four to eight digits, digits in groups ("2-9-0-4"), or a few letters with digits
  ("2B-7710"); after "code" alone only right after a verb, and never for the codes that open nothing (zip, error,
  promo codes);
- after a key's name, a long random-looking string (hex, base32 and UUID-shaped ones included, since the name
  says they are secret), but not after "public key";
and a chosen string before a name it is linked to ("Heron&Kite2020 is the new password"). Words that name
something else (versions, algorithms, regions, file and domain names, handles, years after "since") are no value,
so talk about passwords stays. Pure functions of a string.
"""

from __future__ import annotations

import re

from bot.memory.rules.credential_names import (
    AT_A_PLACE,
    BARE_CODE_NAMES,
    CODE_NAMES,
    KEY_NAMES,
    LOGIN_NAMES,
    NOT_A_CODE,
    NOT_A_CODE_AFTER,
    PASSWORD_NAMES,
)
from bot.memory.rules.findings import API_KEY, PASSWORD, Finding

_LETTER = r"A-Za-z0-9_À-ɏЀ-ӿ"
# A name may end a compound ("WLAN-Passwort", "wifi-password") but not open one: "secret-santa", "token-based",
# "password-protected" and a tag like "secret-4471-2" name no credential.
_NAME = re.compile(
    rf"(?<![{_LETTER}])(?:(?P<password>{PASSWORD_NAMES})|(?P<code>{CODE_NAMES})|(?P<login>{LOGIN_NAMES})"
    rf"|(?P<bare>{BARE_CODE_NAMES})|(?P<key>{KEY_NAMES}))(?![{_LETTER}]|-[{_LETTER}])",
    re.IGNORECASE,
)
_WINDOW_CHARS = 90
_WINDOW_WORDS = 9
_CLAUSE_END = re.compile(r"[.!?](?=\s|$)|[;\n。！？]|\s(?:but|because|although|aber|mais|pero|ma|maar|ale|но)\s")
# A word of the window: a run of anything but spaces, CJK text and CJK punctuation ("新しいのは kitsune_2077").
_WORD = re.compile(r"[^\s\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff0f\uff1a-\uff20，。、：；！？「」『』（）]+")
# Words after which a value is given: "is", "ist", "est", "has been", "went with", ":", "—".
_GIVING = re.compile(
    r"(?:is|was|are|were|been|be|to|with|using|via|through|mit|avec|con|com|met|z|с|now|still|again|est|désormais|maintenant|toujours|ist|war|lautet|jetzt"
    r"|nun|noch|es|era|ahora|sigue|siendo|é|agora|è|adesso|ora|jest|teraz|brzmi|это|теперь|он|она|был|стал|är"
    r"|er|blijft|nu|是|为|は|:|=|—|–|-|->|=>|w/|actually|it's|its|it’s|really)",
    re.IGNORECASE,
)
# Words that leave a value given once a verb gave it: "is still the old one, dandelion99", "no it's actually ...".
_FILLER = re.compile(
    r"(?:the|a|an|same|old|usual|one|as|before|ever|lol|lmao|haha|no|yes|ok|okay|sorry|wait|oops|again|still|just"
    r"|now|currently|literally|basically|honestly|btw|ofc|i|think|guess|mean|believe)",
    re.IGNORECASE,
)
# Words that make what follows an identifier, not a value: "as admin_2024", "PR 4521", "since 2019", "at 2130".
_NOT_A_VALUE_AFTER = re.compile(
    r"(?:as|user(?:name)?|handle|called|named|id|#|pr|issue|ticket|order|room|flat|line|chapter|page|bus|route"
    r"|port|version|build|step|level|no|nr|number|ext|since|in|from|until|till|by|before|after|at|around|of|on"
    r"|seit|depuis|desde|dal|od|с|от|vor|nach|à|en|em|um|für|for)",
    re.IGNORECASE,
)
_UNIT = re.compile(
    r"\s*(?:%|€|\$|£|¥|zł|km|kg|mi|gb|mb|tb|ghz|mhz|hz|w|kw|mah|mm|cm|px|dpi|fps|ms|s|sec|secs|min|mins|minutes?"
    r"|h|hrs?|hours?|days?|weeks?|months?|years?|times|digits?|characters?|chars?|letters?|words?|attempts?|tries"
    r"|people|users|requests|steps|points|pts|bpm|rpm|am|pm|uhr|stellen|chiffres|dígitos|cifre)(?![\w])",
    re.IGNORECASE,
)
# Words shaped like a password that name a technology: algorithms, encodings, architectures, cloud regions.
_TECHNICAL = re.compile(
    r"(?:sha-?\d+|md5|aes-?\d+\w*|rsa-?\d+|ed25519|argon2\w*|pbkdf2\w*(?:-sha-?\d+)?|hmac(?:-sha-?\d+|-md5)?"
    r"|bcrypt|scrypt|base(?:32|64)|utf-?\d+\w*"
    r"|iso-?\d+(?:-\d+)*|x86(?:[_-]64)?|amd64|arm64|aarch64|i[3-9]86|wpa[23]?(?:-\w+)?|wep|tls1?\.?\d*|ssl\d*"
    r"|(?:us|eu|ap|sa|ca|me|af|il|cn)-[a-z]+-\d+|ipv[46]|oauth2?|\d+fa|web3|h\.?26[45]|mp[34]|\w+\.(?:py|js|ts|md"
    r"|txt|env|json|ya?ml|toml|ini|cfg|conf|sh|exe|pdf|docx?|xlsx?|csv|zip|png|jpe?g|html?|log|key|pem|crt)"
    r"|chacha20\w*|xchacha\w*|poly1305|twofish|serpent|blowfish|camellia\w*"
    r"|1password|lastpass|bitwarden|keepass\w*|dashlane|nordpass|enpass|keeper|protonpass"
    r"|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|ai|co|uk|de|fr|es|it|nl|pl|ru|jp|cn|kr|eu|gov|edu))",
    re.IGNORECASE,
)
_DESCRIBING_SUFFIX = re.compile(
    r".*-(?:[a-z]+ed|[a-z]+ing|based|only|like|style|free|proof|safe|length|characters?|digits?|long|factor|step)",
    re.IGNORECASE,
)
_SYMBOLS = frozenset("!@#$%^&*?~+=_|<>[]{}§€£\\")
_CODE = re.compile(
    r"[#*]?\d{4,8}[#*]?|\d(?:[-.]\d){3,7}|\d{2,4}(?:[- ]\d{2,4}){1,2}"
    r"|(?=(?:[A-Z-]*\d){3})[A-Z0-9]{1,3}-?\d{3,6}|\d{3,6}-?[A-Z]{1,2}",
)
_DATE = re.compile(r"\d{4}-\d{1,2}(?:-\d{1,2})?|\d{1,2}[-.]\d{1,2}[-.]\d{2,4}")
_YEAR = re.compile(r"(?:19[5-9]\d|20[0-4]\d)")
_KEY = re.compile(r"[A-Za-z0-9+/_=.:-]{12,}")
_BASE32 = re.compile(r"[A-Z2-7]{16,}=*")
_PUBLIC_BEFORE = re.compile(r"(?:public|gpg|pgp|host|ssh|primary|foreign|sort|music|house|car|room|hotel|spare)"
                            r"[\s_-]+$", re.IGNORECASE)
_QUOTES = "'\"`“”‘’«»„"
_LINKED_BEFORE = re.compile(
    rf"(?<![^\s,;:(])(?P<value>[^\s,;:(]{{6,64}}?)[,.]?\s+(?:(?:that|which|this|it)\s*(?:'s|’s|\s+is|\s+was)|is|was|as"
    rf"|=|are|will\s+be|has\s+been|becomes|est|ist|es|è|é|era|war|c'est|это)\s+(?:[^\s.!?]+\s+){{0,5}}?"
    rf"(?:{PASSWORD_NAMES}|{LOGIN_NAMES})(?![{_LETTER}])",
    re.IGNORECASE,
)


def near_names(text: str) -> list[Finding]:
    """Each value of the right shape in the window after a credential's name, or linked to one before it."""
    found: list[Finding] = []
    for name in _NAME.finditer(text):
        family = name.lastgroup or ""
        if _skipped(text, name, family):
            continue
        value = _value_after(text, name.end(), family)
        if value is not None:
            found.append(Finding(API_KEY if family == "key" else PASSWORD, *value))
    for match in _LINKED_BEFORE.finditer(text):
        start, end = _stripped(text, *match.span("value"))
        if chosen(text[start:end], given=False):
            found.append(Finding(PASSWORD, start, end))
    return found


MARKER = re.compile(r"\[[\w ]{1,20} removed\]")  # what `credentials.redact` leaves of a value


def _skipped(text: str, name: re.Match[str], family: str) -> bool:
    """Names that open nothing here: "zip code", "código postal", "public key", "lives at PIN 110001" (an Indian
    postal code), and the name in the marker of a value already cut ("[password removed]")."""
    before = text[max(0, name.start() - 24) : name.start()]
    if before.endswith("[") and text.startswith(" removed]", name.end()):  # a cut value's marker
        return True
    if family in ("code", "bare") and AT_A_PLACE.search(before):
        return True
    if family == "bare":
        return bool(NOT_A_CODE.search(before) or NOT_A_CODE_AFTER.match(text, name.end()))
    return family == "key" and bool(_PUBLIC_BEFORE.search(before))


def _value_after(text: str, start: int, family: str) -> tuple[int, int] | None:
    """The first word of the clause after a name (a few words, not past the clause's end) that is a value of
    the name's family."""
    end = min(len(text), start + _WINDOW_CHARS)
    stop = _CLAUSE_END.search(text, start, end)
    if stop is not None:
        end = stop.start()
    cut = MARKER.search(text, start, end)  # the name's value is cut already: what follows is another thing
    if cut is not None:
        end = cut.start()
    previous, given = "", False
    for count, word in enumerate(_WORD.finditer(text, start, end)):
        if count >= _WINDOW_WORDS:
            break
        given = (
            bool(_GIVING.fullmatch(previous)) or previous[-1:] in (":", "=")
            or (count == 0 and text[start : word.start()].strip() in (":", "="))
            or (given and bool(_FILLER.fullmatch(previous)))
        )
        grouped = _GROUPED.match(text, word.start(), end) if family != "login" else None
        span = grouped.span() if grouped else _stripped(text, *word.span())
        value = text[span[0] : span[1]]
        identifier = names_an_identifier(previous)
        if value and not identifier and _fits(value, family, given=given) and not _UNIT.match(text, span[1]):
            return span
        previous = word.group(0).strip(_QUOTES + ",")
    return None


def _fits(value: str, family: str, *, given: bool) -> bool:
    """Whether `value` is what a name of `family` opens; `given` when a verb or a colon leads up to it."""
    if " " in value:  # groups read out together: a code ("36 24 12") or a key ("q7kd m2vx tn4p zs8w")
        return _grouped_value(value, family, given=given)
    if family == "key":
        return _key_shaped(value) or (given and _short_key(value))
    if family in ("code", "bare"):
        coded = bool(_CODE.fullmatch(value)) and not _DATE.fullmatch(value)
        if coded and _YEAR.fullmatch(value):
            coded = given
        return (coded and (given or family == "code")) or (family == "code" and chosen(value))
    if family == "login":
        return given and chosen(value)
    return chosen(value, given=given) or (given and family == "password" and (
        _plain_password(value) or (bool(_CODE.fullmatch(value)) and not _YEAR.fullmatch(value))))


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the quotes and punctuation around a word ("Gr@nite42." → "Gr@nite42")."""
    while start < end and text[start] in _QUOTES + "([=:":
        start += 1
    while end > start and text[end - 1] in _QUOTES + ".,;:)]":
        end -= 1
    return start, end


def _kinds(value: str) -> int:
    return (
        any(c.isupper() for c in value) + any(c.islower() for c in value) + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


# Groups read out together after a name: digits ("36 24 12", "4 8 1 5") or four characters each.
_GROUPED = re.compile(  # "36 24 12", "739 204" (a one-time code as apps show it), "q7kd m2vx tn4p zs8w"
    r"\d{1,4}(?:[ ]\d{1,4}){2,5}(?![\w.,/-])|\d{3}[ ]\d{3}(?![\w.,/-])|[A-Za-z0-9]{4}(?: [A-Za-z0-9]{4}){3,7}(?![\w-])"
)


def _grouped_value(value: str, family: str, *, given: bool) -> bool:
    """Digit groups with at least four digits after a code's or password's name; groups of four letters and digits
    (a setup key, an app password) after a password's or key's name, when at least two groups carry a digit (so
    words of four letters do not count)."""
    groups = value.split()
    if all(group.isdigit() for group in groups):
        return family in ("code", "bare", "password") and sum(map(len, groups)) >= 4 and (given or family == "code")
    with_digits = sum(any(c.isdigit() for c in group) for group in groups)
    return family in ("password", "key") and with_digits >= 2 and any(c.isalpha() for c in value)


def _short_key(value: str) -> bool:
    """A key given right after a verb ("the key is fe4c9a2b7d"): eight characters or more, letters and digits
    mixed, not words joined by separators."""
    if not 8 <= len(value) <= 64 or not re.fullmatch(r"[A-Za-z0-9_-]+", value) or named_otherwise(value):
        return False
    parts = [part for part in re.split(r"[-_]+", value) if part]
    wordy = all(part.isalpha() or (part.isdigit() and len(part) <= 4) for part in parts)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and not wordy


def names_an_identifier(previous: str) -> bool:
    """Whether the word before a value makes it an identifier, not a secret: "PR 4521", "room 214", "since 2019",
    "+44 7700"."""
    return bool(_NOT_A_VALUE_AFTER.fullmatch(previous) or re.fullmatch(r"\+?\d+", previous))


def named_otherwise(value: str) -> bool:
    """A word that is something other than a password: a handle, hashtag, URL, e-mail, path, version, placeholder,
    technology, code (`os.environ['DB_PASSWORD']`), or a number with its unit ("24-character")."""
    return bool(
        value[0] in "@#/" or re.match(r"[A-Za-z_][\w.]*[\[(]", value) or "/" in value
        or re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", value)
        or re.fullmatch(r"[A-Za-z]*v?\d+(?:\.\d+)+\w*", value) or re.fullmatch(r"[A-Z_]+", value)
        or _TECHNICAL.fullmatch(value) or _DESCRIBING_SUFFIX.fullmatch(value)
        or re.fullmatch(r"\d+(?:-[a-z]+)+|\d+(?:st|nd|rd|th|k|m|gb|mb|tb|px|x|h|am|pm|yo)", value, re.IGNORECASE)
        or re.fullmatch(r"[A-Za-z_]\w{0,2}=\S+", value)  # a parameter: "N=2^15", "k=8"
        or re.fullmatch(r"\^.*\$|.*\(\?[=!:<].*", value)  # a regular expression: "^(?=.*[A-Z]).{12,}$"
    )


def chosen(value: str, *, given: bool = True) -> bool:
    """Shaped like a chosen password: six or more characters, letters with digits or symbols, three kinds of
    character at least, and no other thing's name. Where no verb gives it (`given` false) it must also carry a
    symbol, or hyphens in a long word of both cases and digits ("Chouette-Lune-4"): "Pixel8", "GPT-4o" or
    "token-10" near a password's name is a product or a label."""
    if not 6 <= len(value) <= 64 or named_otherwise(value):
        return False
    letters = any(c.isalpha() for c in value)
    symbol = any(c in _SYMBOLS for c in value)
    marked = any(c.isdigit() for c in value) or symbol
    hyphened = "-" in value and len(value) >= 8 and _kinds(value) == 4
    return letters and marked and _kinds(value) >= 3 and (given or symbol or hyphened)


def _plain_password(value: str) -> bool:
    """Right after a verb ("is bumblebee2k21"): letters with digits or symbols, five characters or more."""
    if not 5 <= len(value) <= 64 or named_otherwise(value):
        return False
    return any(c.isalpha() for c in value) and (any(c.isdigit() for c in value) or any(c in _SYMBOLS for c in value))


def _key_shaped(value: str) -> bool:
    """A long random-looking string after a key's name: letters and digits, twelve characters or more, not words
    joined by separators, not a version or a URL."""
    if not _KEY.fullmatch(value) or "://" in value or named_otherwise(value):
        return False
    if _BASE32.fullmatch(value):
        return True
    parts = [part for part in re.split(r"[-_.:/+=]+", value) if part]
    wordy = all(part.isalpha() or (part.isdigit() and len(part) <= 4) for part in parts)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and not wordy
