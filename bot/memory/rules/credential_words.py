"""Passwords, PINs, door codes, recovery phrases and backup codes given as such, in the wordings people and
extraction models use: after a name ("my password is ...", "is now / is still / is: / — ...", "PIN: 4471", "the
code they texted me is ..."), before one ("hunter2 is my password"), without one where the words say what it opens
("logged in with ...", "opens with 3-8-1-6"), and a passphrase of plain words after a strong name, even one that
starts with a common word; in English and the common German, French, Spanish, Portuguese, Italian, Dutch, Polish,
Russian, Chinese, Japanese and Korean phrasings. Not talk about them ("forgot their password", "uses a password
manager", "is the same as the old one"). Pure functions of a string; `bot.memory.rules.credentials` joins them
with the shapes of keys and the checksummed numbers."""

from __future__ import annotations

import re

from bot.memory.rules.credential_names import AT_A_PLACE
from bot.memory.rules.credential_window import named_otherwise
from bot.memory.rules.findings import PASSWORD, Finding
from bot.memory.rules.function_words import OTHER_LANGUAGES

# --- passwords, PINs and codes given as such ----------------------------------------------------------------

_OWNER = r"(?:\w{1,20}[\s-])?"  # "email password", "WLAN-Passwort"
# A strong name is followed by the password itself ("password is dolphin"); after a weak one ("login is slow",
# "season pass is valid", "la clave es practicar") only something shaped like a password counts.
_STRONG_NAMES = (
    r"(?:passwords?|passwd|pwd|pw|passcodes?|mot de passe|mdp|passwort|kennwort|wlan-passwort|contraseña"
    r"|contrasena|senha|wachtwoord|parola d'ordine|passwrod|pasword|passowrd|paswd|hasło|haslo|пароль"
    r"|(?:wi-?fi|wlan|wpa2?|network|wireless)[\s-]key|psk)"
)
_WEAK_NAMES = r"(?:pass|logins?|credentials|creds|combination|clave|wi-?fi|wlan|admin)"
_DIGIT_NAMES = (
    r"(?:pin(?:[\s-]?(?:code|number))?|cvv2?|cvc2?|csc|puk(?:[\s-]code)?|otp|passcode|keypad|combo|padlock"
    r"|lockbox|key[\s-]?safe|(?:room\s+)?safe|пин-код|код|kod|código|codigo|digicode"
    r"|(?!(?:zip|post|bar|qr|source|geo|uni|en|de|trans|promo|area|country|product|error|status|exit|dress|hex"
    r"|sort|iata|airport|color|colour|op|pseudo|micro|byte|machine)code)\w+code"
    r"|code (?:de (?:la |l')?|du |pin\b|d'accès\b)[\w\s]{0,12}?(?=\s*(?:est|c'est|:|,))"
    r"|(?:the|a|my|their|this|that)\s+code(?=\s+(?:they|you|i|we|he|she|it)\s)"
    r"|(?:door|gate|alarm|garage|safe|lock|locker|entry|security|access|building|office|unlock|keypad"
    r"|registration|verification|login|guard|one-time|sms|confirmation|2fa|auth|bank|card|lobby|intercom)"
    r"[\s-]code"
    r"|code\s+(?:for|to|of)\s+(?:[\w'’]+\s+){0,3}?(?:door|gate|alarm|garage|safe|lock|locker|building|office"
    r"|house|flat|apartment)s?)"
)
_PHRASE_NAMES = (
    r"(?:pass[\s-]?phrase|master[\s-](?:phrase|passphrase)|seed[\s-]phrase|phrases? secrètes?|frases? secretas?"
    r"|frases? de (?:contraseña|paso|semilla|recuperação|recuperación)|frases? segretas?|geheimphrase|wachtzin"
    r"|recovery[\s-](?:phrase|codes?|keys?)|mnemonic|backup[\s-]codes?"
    r"|(?:2fa|mfa|two[\s-]factor)[\s-](?:backup[\s-]|recovery[\s-])?codes?"
    # "Their 1Password master is ...": a password manager's master, however it is called
    r"|(?:1password|bitwarden|keepass(?:xc)?|lastpass|dashlane|enpass|password[\s-]manager)(?:'s)?[\s-]master"
    r"(?:[\s-](?:password|pass|key|phrase))?"
    # "The shared drive phrase is ...": a phrase that opens something
    r"|(?:drive|disk|vault|wallet|backup|encryption|unlock|safe|account|login|laptop|phone)[\s-]phrase"
    r"|(?:opens|unlocks|decrypts)\s+with\s+(?:the|a|this)\s+phrase)"
)
_PASSWORD_HINT = re.compile(
    r"pass|pw|pin|code|cvv|cvc|csc|login|cred|combination|clave|senha|mdp|contrase|wachtwoord|kennwort|phrase"
    r"|mnemonic|recovery|use|remember|combo|padlock|lockbox|safe|keypad|unlock|opens|log|sign|wi-?fi|wlan|wpa|admin|psk|key"
    r"|expir|master|answer|maiden|réponse|respuesta|resposta|antwort|ответ"
    r"|changed|set|reset|punch|hasł|hasl|пароль|пин|код|kod|código|codigo|密|口令|パスワード|暗証|番号|비밀번호",
    re.IGNORECASE,
)
_CJK_PASSWORD = re.compile(  # the value is what follows in Latin letters and digits
    r"(?:密码|密碼|口令|パスワード|暗証番号|番号|비밀번호|비번)\s*[^\sA-Za-z0-9]{0,4}?\s*[「『“]?([!-~]*[A-Za-z0-9][!-~]{2,})"
)
_ADVERB = (
    r"(?:\s+(?:still|now|currently|literally|probably|actually|just|also|again|always|set\s+to|changed\s+to"
    r"|toujours|jetzt|immer\s+noch|ahora|agora|ainda|ancora|nog|steeds|nu|siendo|sempre|maintenant|devenue?))*"
)
# "to" gives a value after a change ("changed their password to ..."), not after "had to", "need to", "want to".
_TO = r"(?<!had\s)(?<!have\s)(?<!has\s)(?<!need\s)(?<!needs\s)(?<!want\s)(?<!wants\s)(?<!going\s)(?<!got\s)" \
    r"(?<!able\s)(?<!tried\s)(?<!try\s)to"
_IS = (
    rf"(?:(?:is\s+set\s+to|set\s+to|(?:got|was|been|has\s+been)\s+(?:changed|set|reset)\s+to|used\s+to\s+be"
    rf"|is|was|are|were|ist|lautet|est|c'est|es|é|è|sigue|{_TO}|para|auf|naar)\b{_ADVERB}(?:\s*:)?"
    rf"|:=|=|:|->|(?<=\s)[-–—]|(?:(?<=pin)|(?<=pw)|(?<=code)|(?<=word))['’]s\b)"
)
_QUOTED = (
    r"""(?:'[^'\n]{1,80}'|"[^"\n]{1,80}"|“[^”\n]{1,80}”|‘[^’\n]{1,80}’|`[^`\n]{1,80}`|«[^»\n]{1,80}»"""
    r"""|„[^“\n]{1,80}“)"""
)
_TOKEN = r"[^\s,;]{1,80}"  # noqa: S105 -- a pattern
# Between the name and the verb: "for the NAS", "on the back of the card", "(don't judge)", "they saved".
_BETWEEN = (
    r"(?:\s+(?:for|to|of|on|at|in|de|du|da|do|dela|dele|del|della|für|fürs|zu|van|voor|vom|from|od|от|al|per)\b"
    r"(?:\s+[\w.'’@+-]+){0,5}?)?(?:\s*\([^)\n]{0,40}\))?(?:\s+(?:that\s+)?(?:they|you|i|we|he|she"
    r"|(?:the|my|their|his|her|our|your)\s+\w+)\s+\w+\b(?:\s+(?:me|us|them|him|her))?)?"
)
_DIGIT_GROUPS = r"\d{1,4}(?: \d{1,4}){1,3}(?![\w.,/-])"  # "66 41 20": a code read out in groups
_PASSWORD_GIVEN = re.compile(
    rf"\b{_OWNER}(?:(?P<strong>{_STRONG_NAMES})|(?P<weak>{_WEAK_NAMES})|(?P<digits>{_DIGIT_NAMES}))"
    rf"{_BETWEEN}\s*,?\s*{_IS}\s*(?P<value>{_QUOTED}|(?(digits){_DIGIT_GROUPS}|(?!))|{_TOKEN}"
    rf"(?:\s*/\s*(?![^\s:]+:){_TOKEN})?)",
    re.IGNORECASE,
)
_NAME_ALONE = re.compile(rf"{_PHRASE_NAMES}\s+", re.IGNORECASE)
_PHRASE_GIVEN = re.compile(rf"\b{_PHRASE_NAMES}(?:{_BETWEEN}\s*{_IS}|\s)\s*([^.!?\n]{{4,200}})", re.IGNORECASE)
# What opens an encrypted store, given as plain words: "The backup drive (VeraCrypt) unlocks with sailboat under a
# copper moon."
_STORE_OPENS_WITH = re.compile(
    r"\b(?:veracrypt|truecrypt|bitlocker|luks|keepass(?:xc)?|encrypted|encryption|vault|wallet|gpg|pgp|7-?zip"
    r"|password manager)\b[^.!?\n]{0,40}?\b(?:unlocks?|opens?|decrypts?)\s+with\s+"
    r"(?P<value>[A-Za-z]+(?: [A-Za-z]+){2,8})(?=\s*(?:$|[.!?\n]))",
    re.IGNORECASE,
)
_OPENED_OTHERWISE = frozenset(  # "opens with face id on my phone", "unlocks with the yubikey": no phrase given
    ["my", "your", "their", "his", "her", "our", "its", "face", "fingerprint", "touch", "id", "key", "keys", "yubikey",
     "card", "pin", "code", "password", "app", "phone"]
)
_PASSWORD_BEFORE = re.compile(
    rf"(?<![^\s,;])({_QUOTED}|{_TOKEN})\s+(?:is|was|as)\s+(?:my|their|his|her|our|the|a)\s+(?:\w+\s+){{0,2}}?"
    r"(?:password|passphrase|(?P<code>passcode|pin))\b",
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
_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+){2,}", re.IGNORECASE)  # "hazel-mitten-quartz-orbit" (a passphrase)
_NEAR_A_NAME = re.compile(  # "same password as before, Honeycomb_88,": a password-like word a few words on
    rf"\b{_STRONG_NAMES}\b[^.!?\n]{{0,40}}?(?:[,:]|\s[-–—])\s*(?:it'?s\s+)?({_TOKEN})", re.IGNORECASE
)
_GETS_IN = re.compile(
    rf"\b(?:(?:log(?:ged|s|ging)?|sign(?:ed|s|ing)?)\s+in\s+with|unlocks?\s+with|opens?\s+with|punch(?:es|ed)?\s+in"
    rf"|(?:changed|set|reset)\s+(?:it|(?P<named>the\s+\w+\s+{_STRONG_NAMES}|\w+\s+{_STRONG_NAMES}))\s+to"
    rf"|(?:account|login|profile|router|laptop|phone|computer|tablet|ipad|server|vault)\s+uses"
    rf"|(?:remembered|realised|realized|recalled)\s+it\s+was"
    rf"|(?:cambi[éeó]|mud(?:ei|ou)|chang[ée])\s+(?:\w+\s+){{0,3}}?(?:a|para|en|à|por))"
    rf"\s+(?P<value>{_QUOTED}|{_TOKEN})",
    re.IGNORECASE,
)
# A lock's code given with the lock's name alone: "staff room door is 1405", "opens the back gate of the allotment
# with 6033" (digits only: "the gate is 1.2 m wide", "opens the door with a smile" are no codes).
_LOCK = r"(?:door|gate|padlock|lockbox|locker|shed|garage|alarm|safe|bike lock|lock)"
_LOCK_CODE = re.compile(
    rf"(?:\b{_LOCK}\s+(?:is|was|=|:)\s+(?:now\s+|still\s+)?(?P<value>\d{{4,8}}[A-Z#]?|\d(?:-\d){{3,7}})"
    rf"|\b(?:opens?|unlocks?|opening|unlocking)\s+(?:the\s+|my\s+|their\s+|his\s+|her\s+|our\s+)?"
    rf"(?:[\w'-]+\s+){{0,3}}?{_LOCK}(?:\s+(?:of|to|at|for|on)\s+(?:the\s+)?[\w'-]+(?:\s+[\w'-]+)?)?\s+with\s+"
    rf"(?:the\s+code\s+)?(?P<opens>\d{{4,8}}[A-Z#]?|\d(?:-\d){{3,7}}))"
    r"(?![\w,/%-]|\.\d|\s*(?:am|pm|h|min|minutes|hours|days|years|m|km|cm|mm|ft|feet|metres|meters|kg|%|s)\b)",
    re.IGNORECASE,
)
_USE_TO_GET_IN = re.compile(
    rf"\b(?:use|uses|used|using)\s+(?P<named>{_TOKEN})\s+to\s+(?:(?:log|sign)\s*(?:in|on)|get\s+in|unlock)\b",
    re.IGNORECASE,
)
# "Use 318 604, it expires in 10 minutes": a one-time code is told by its expiry, with no name
_EXPIRING_CODE = re.compile(
    r"\b(?:use|enter|type|it'?s|is|code)\s*:?\s*(\d{3}[ -]?\d{3}|\d{4,8})(?![\w-])"
    r"(?=[^.!?\n]{0,40}?\b(?:expires?|expiring|valid|good)\s+(?:in|for)\s+(?:\d+|one|two|five|ten|fifteen|thirty)"
    r"\s*(?:min|mins|minutes?|seconds?|secs?|s|m)\b)",
    re.IGNORECASE,
)
# The answer to a security question: after "security answer", "answer to the security question", "mother's maiden
# name for the security question", in a few languages, one word, a quoted answer or up to three capitalised words.
_SECURITY_ANSWER = re.compile(
    r"(?i:\b(?:security|secret)[\s-](?:q(?:uestion)?\s+)?answers?|\banswers?\s+to\s+(?:[\w'’]+\s+){0,4}?security\s+"
    r"q(?:uestion)?\b|\bmaiden\s+name\s+for\s+(?:[\w'’]+\s+){0,3}?security\s+q(?:uestion)?\b"
    r"|\bréponse\s+à\s+la\s+question\s+secrète|\brespuesta\s+(?:a\s+la\s+)?pregunta\s+de\s+seguridad"
    r"|\bresposta\s+(?:à\s+)?pergunta\s+de\s+segurança|\bantwort\s+auf\s+(?:die\s+)?sicherheitsfrage"
    r"|\bответ\s+на\s+секретный\s+вопрос|\b(?:réponse\s+secrète|respuesta\s+secreta|resposta\s+secreta"
    r"|geheime\s+antwort|risposta\s+segreta)"
    # the question itself, quoted: "answer to 'What street did you grow up on?' is Larkspur Lane"
    r"|\banswers?\s+to\s+['\"“‘][^'\"”’\n]{8,80}\?['\"”’])"
    r"[^.!?\n:—–]{0,60}?(?:\s(?:is|was|est|es|é|ist)\b|:|\s[—–-])\s*(?:(?:still|now|just)\s+)?"
    r"(?P<value>\"[^\"\n]{1,40}\"|“[^”\n]{1,40}”|[A-ZА-Я][\w'’.]*(?:\s+[A-ZА-Я][\w'’.]*){0,2}|[^\s,.;!?()]{2,40})",
)
# A passphrase of plain words after a strong name, even one that starts with a common word; unless its words
# describe the password instead ("is the same as my email one", "is too weak", "is written on the router").
_PHRASE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+){3,9}?(?=\s*(?:$|[.,;!?\n(]|\s(?:lol|haha|lmao|xd)\b))")
_DESCRIBING_WORDS = (
    """same different too very so not never long short weak strong written saved stored kept lost forgotten
    printed shared changed reset expired managed generated in on with for of from by to somewhere manager app
    characters letters digits numbers words because but and or which that was is are has have will can should
    needs need name birthday birthdays dog cat it they i we you he she them always usually often forget forgot
    forgets remember remembers use uses keep keeps think thinks said says hidden taped stuck known given sent
    posted listed noted pinned scribbled located kept somewhere everywhere nowhere sticky note paper me us him
    lol haha took takes"""
)
_DESCRIBING = frozenset(_DESCRIBING_WORDS.split())
# Words a passphrase may hold once ("one small step for hamsters"), though twice they describe where a password is.
_LINKING = frozenset(["in", "on", "with", "for", "of", "from", "by", "to", "and", "or"])
_NUMERALS = frozenset(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"])


def _plain_phrase(phrase: str) -> bool:
    """Plain words that are a passphrase, not a description of a password: no describing word, except one linking
    word inside a phrase of five to seven words (a passphrase's length) that does not open like a description
    ("leaked in a breach last year")."""
    words = phrase.lower().split()
    linking = [word for word in words if word in _LINKING]
    if set(words) & (_DESCRIBING - _LINKING):
        return False
    if not linking:
        return True
    opening = words[0] in _NUMERALS or not (words[0] in _NOT_A_VALUE or _ADJECTIVE.fullmatch(words[0]))
    return len(linking) == 1 and opening and words[0] not in _LINKING and 5 <= len(words) <= 7
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
    shorter safer easier harder simpler fine ok okay good bad great terrible awful valid invalid
    zu sehr nicht kein keine noch trop très pas plus demasiado muy ya troppo molto non più te zeer niet nog geen
    zbyt bardzo nie слишком очень не уже"""
)
_NOT_A_VALUE = frozenset(_NOT_A_VALUES.split()) | OTHER_LANGUAGES
_UNIT = re.compile(
    r"\s*(?:characters?|chars?|letters?|digits?|numbers?|words?|symbols?|long|min|minutes|hours|days|weeks|months"
    r"|years|times|%)\b",
    re.IGNORECASE,
)


def password_shaped(value: str) -> bool:
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


# A code: digits (in groups, with a letter or a # at an end: "C1429", "G-402817", "0-3-7-9"), or five to eight
# capitals and digits mixed ("7XK2P").
_CODE_SHAPE = re.compile(
    r"(?=(?:\D*\d){3})(?:[A-Z]-?)?[\d#*][\d#* -]{1,12}[A-Z*#]?|(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z\d]{5,8}"
)
_ADJECTIVE = re.compile(r"[a-z]+(?:ing|ed|able|ible|ous|ful|less|ive|ly|ent|ant|ic|al)")


def _given_value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    """The span of a password given after its name, or None when what follows is not a value."""
    value = match.group("value")
    start, end = match.span("value")
    if value[:1] in "'\"`“‘«„":
        return (start, end) if not match.group("weak") or _weak_value(value.strip("'\"`“”‘’")) else None
    core = value.rstrip(".,;:)")
    word = core.rstrip("!?")
    if re.match(r"[\[<{(]|([*x.#-])\1*$", core, re.IGNORECASE):
        return None  # a placeholder: "[password removed]", "<your password>", "****"
    phrase = _PHRASE.match(text, start)
    if match.group("strong") and phrase and _plain_phrase(phrase.group(0)):
        return phrase.span()  # "is correct horse battery staple", "is the quick brown fox jumps"
    if not core or word.lower() in _NOT_A_VALUE or _UNIT.match(text, end):
        # "is the same as my email one: Luna2016!": a value may still follow a colon in the same clause
        rest = re.match(r"[^.!?\n:]{0,60}:\s*(" + _TOKEN + ")", text[end:])
        if rest and password_shaped(rest.group(1)):
            return end + rest.start(1), end + rest.end(1)
        return None
    if re.match(r"[A-Za-z_][\w.]*[\[(]", core):
        return None  # code: `password = os.environ["DB_PASSWORD"]`
    if match.group("digits"):
        return (start, start + len(core)) if _CODE_SHAPE.fullmatch(core) else None
    if match.group("weak") and not _weak_value(core):
        return None
    if match.group("strong") and _ADJECTIVE.fullmatch(word):
        return None  # "is expiring", "is outdated": lower-case words that describe it
    return start, start + len(core)


def _weak_value(core: str) -> bool:
    """After a weak name ("login", "wifi", "admin") only a password-like value counts, or "user:password"."""
    parts = re.split(r"\s*[/:]\s*", core)
    if " " in core and len(parts) < 2:
        return False
    return any(password_shaped(part) or strongly_shaped(part) for part in parts) or bool(
        re.fullmatch(r"\d+(?:[-.]\d+)+", core)
    )


def _postal(text: str, label_start: int) -> bool:
    """"Lives in PIN code 560001": an Indian postal code, not a PIN."""
    return bool(AT_A_PLACE.search(text[max(0, label_start - 8) : label_start]))


def passwords(text: str) -> list[Finding]:
    """Passwords, PINs and codes given as such, each way of giving one in turn."""
    if not _PASSWORD_HINT.search(text):  # most texts name none of these: skip the costlier patterns
        return []
    return [
        *_named_then_given(text),
        *_given_in_a_phrase(text),
        *_plain_codes(text),
        *(Finding(PASSWORD, *match.span(1)) for match in _CJK_PASSWORD.finditer(text)
          if not named_otherwise(match.group(1).lstrip("#"))),  # "#4826": a keypad's key, not an issue's number
        *_password_shaped_around_a_name(text),
        *_used_to_get_in(text),
        *(Finding(PASSWORD, *match.span(1)) for match in _EXPIRING_CODE.finditer(text)),
        *_security_answers(text),
        *(Finding(PASSWORD, *match.span(match.lastgroup or 0)) for match in _LOCK_CODE.finditer(text)
          if not _postal(text, match.start())),
    ]


def _security_answers(text: str) -> list[Finding]:
    """The answer given to a security question, unless what follows describes it ("is stored hashed")."""
    found: list[Finding] = []
    for match in _SECURITY_ANSWER.finditer(text):
        value = match.group("value").rstrip(".'’")
        if value.lower() in _NOT_A_VALUE or _ADJECTIVE.fullmatch(value):
            continue
        start = match.start("value")
        found.append(Finding(PASSWORD, start, start + len(value)))
    return found


def _named_then_given(text: str) -> list[Finding]:
    """"My password is ...", "PIN: ...": a value after the name, unless it is no value or a postal code."""
    found: list[Finding] = []
    for match in _PASSWORD_GIVEN.finditer(text):
        if match.group("digits") and _postal(text, match.start("digits")):
            continue
        if text[max(0, match.start() - 1) : match.start()] in ("/", "@", ":"):
            continue  # inside a URL: "postgres://admin:...@host" is the URL rule's
        span = _given_value(text, match)
        if span is not None:
            found.append(Finding(PASSWORD, *span))
    return found


def _given_in_a_phrase(text: str) -> list[Finding]:
    """Recovery phrases and backup codes after their name, unless what follows is no value ("is lost"); after a
    colon, a sentence of three or more words even when it opens with an article ("gpg passphrase: The owls are not
    what they seem!"); plain words that open an encrypted store."""
    found: list[Finding] = []
    for match in _PHRASE_GIVEN.finditer(text):
        value = match.group(1).strip()
        first = value.split()[0].lower()
        phrase = _PHRASE.match(value)
        plain = phrase is not None and _plain_phrase(phrase.group(0))
        between = text[match.start() : match.start(1)]
        if not _NAME_ALONE.fullmatch(between) or re.search(r"\d", value[:8]):  # a verb or a colon gives it
            given = first not in _NOT_A_VALUE and not _ADJECTIVE.fullmatch(first)
        else:  # the name alone, then words: only a phrase's plain words ("backup codes somewhere offline" is none)
            given = False
        if given or value[:1] in "'\"“" or plain or (between.rstrip().endswith(":") and _sentence_given(value)):
            found.append(Finding(PASSWORD, match.start(1), match.end(1)))
    found += [Finding(PASSWORD, *match.span("value")) for match in _STORE_OPENS_WITH.finditer(text)
              if _plain_phrase(match.group("value")) and match.group("value").split()[0].lower() not in _NOT_A_VALUE
              and not _OPENED_OTHERWISE & set(match.group("value").lower().split())]
    return found


def _sentence_given(value: str) -> bool:
    """Three or more words whose first word after an article gives something, not a description ("the same as")."""
    words = value.lower().split()
    given = words[1:] if words[0] in ("the", "a", "an") else words
    return len(words) >= 3 and bool(given) and given[0] not in _NOT_A_VALUE and not _ADJECTIVE.fullmatch(given[0])


def _plain_codes(text: str) -> list[Finding]:
    """"PIN code 7742", "cvv 319": digits right after a code's name, unless a postal code."""
    return [
        Finding(PASSWORD, *match.span(1)) for match in _CODE_PLAIN.finditer(text) if not _postal(text, match.start())
    ]


def _password_shaped_around_a_name(text: str) -> list[Finding]:
    """"hunter2 is my password", "with password Bluebird!7", "uses 3108 as the PIN": no verb gives the value, so it
    must look like one (a code, for a PIN)."""
    found = [
        Finding(PASSWORD, *match.span(1))
        for pattern in (_PASSWORD_BEFORE, _PASSWORD_PLAIN)
        for match in pattern.finditer(text)
        if password_shaped(match.group(1)) or _HYPHENATED.fullmatch(match.group(1))
        or (match.groupdict().get("code") and _CODE_SHAPE.fullmatch(match.group(1)))
    ]
    found += [
        Finding(PASSWORD, *match.span(1)) for match in _NEAR_A_NAME.finditer(text) if strongly_shaped(match.group(1))
    ]
    return found


def _used_to_get_in(text: str) -> list[Finding]:
    """"Logged in with Hx7$mQ2#rTv9", "use guest-pass-0611 to log in", "opens with 3-8-1-6", "changed it to
    Zebra$Crossing2": what lets someone in, given without its name, counts when it looks like a password or a code."""
    found = []
    for match in (*_GETS_IN.finditer(text), *_USE_TO_GET_IN.finditer(text)):
        value = (match.groupdict().get("value") or match.group("named")).rstrip(".,;:!?)")
        named = match.groupdict().get("named")
        if strongly_shaped(value) or _CODE_SHAPE.fullmatch(value) or (named and password_shaped(value)):
            start = match.start("value" if match.groupdict().get("value") else "named")
            found.append(Finding(PASSWORD, start, start + len(value)))
    return found


def strongly_shaped(value: str) -> bool:
    """Shaped like a chosen password, not a word, a number or a version: six or more characters mixing at least
    three of upper case, lower case, digits and symbols."""
    core = value.strip("'\"`“”‘’.,;:)(")
    kinds = (
        any(c.isupper() for c in core) + any(c.islower() for c in core) + any(c.isdigit() for c in core)
        + any(c in "!@#$%^&*?~+=_.-" for c in core)
    )
    return len(core) >= 6 and kinds >= 3 and not re.fullmatch(r"v?\d+(?:\.\d+)+\w*", core)


