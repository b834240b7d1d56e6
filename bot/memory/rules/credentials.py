"""Credentials never stored: finds API keys, tokens, passwords given as such, card and IBAN numbers in text.

Pure functions of a string (no I/O, no model), so the same decision holds for facts, summaries and pending turns:
- keys and tokens by the shapes their issuers give them (`sk-`, `ghp_`/`github_pat_`, `xox?-`, `AKIA`, Discord bot
  tokens and webhooks, JWTs, Stripe, Google, Slack, GitLab, npm, Hugging Face, Telegram, SendGrid, private key
  blocks, passwords in URLs), values given for a key-like name (`API_KEY=...`, "the client secret is ..."), and
  long random-looking strings (upper and lower case and digits, mixed the way random text mixes them, but not
  words and small numbers joined by separators, like a file or branch name "Q3-forecast-2024-final");
- passwords, PINs, door codes, recovery phrases and backup codes given as such, but not talk about them
  (`bot.memory.rules.credential_words`), and any value of the right shape a few words from a credential's name in
  any of many languages (`bot.memory.rules.credential_window`);
- card numbers (13-19 digits of a known card range that pass the Luhn check) and IBANs (the country's length and
  the mod-97 check), so order numbers, phone numbers and ids that fail the checks are kept;
- wallet seed phrases, twelve or more BIP-39 words in a row (`bot.memory.rules.seed_phrases`).
A password's hash ("$2b$12$...", "$argon2id$...") is what a database keeps instead of the password: nothing in it
is cut.
Hex strings (commit hashes, digests, UUIDs) count only when a key-like name labels them; what is public by its
form (an Ethereum address, a GPG key id, `npub1`/`age1` keys, Stripe's publishable keys and object ids, an SSH
fingerprint, a placeholder like `ghp_xxxx...` or `xoxb-your-token`) or by its name ("public key", "clé publique",
"fingerprint", "username", "SSID") is kept (`_public`); a URL's password field
that holds a placeholder ("USER:PASSWORD@", "user:<password>@") is documentation, not a secret. A `Finding` is
the span of the secret itself, so a turn can keep its sentence with the value replaced (`redact`), while a summary
drops the sentence that held it (`without_credential_sentences`). Messages read together:
`bot.memory.rules.credential_batch`.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter

from bot.memory.rules.checksums import IBAN_LENGTHS, PUBLIC_TEST_CARDS, card_range_valid, iban_valid, luhn_valid
from bot.memory.rules.common_words import WORDS as COMMON_WORDS
from bot.memory.rules.credential_reader import credentials_read
from bot.memory.rules.credential_window import near_names
from bot.memory.rules.credential_words import passwords
from bot.memory.rules.findings import API_KEY, CARD, IBAN, PASSWORD, PRIVATE_KEY, TOKEN, Finding, merged
from bot.memory.rules.seed_phrases import seed_phrases

# --- shapes issuers give their keys ------------------------------------------------------------------------

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        (PRIVATE_KEY, r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*-----|.*)"),
        (PRIVATE_KEY, r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"),  # age's identities
        (API_KEY, r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|or-v1-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        (TOKEN, r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"),
        (TOKEN, r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
        (API_KEY, r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
        (API_KEY, r"\bAIza[0-9A-Za-z_-]{35}"),
        (API_KEY, r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        (TOKEN, r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),  # Airtable personal access tokens
        (TOKEN, r"\bhf_[A-Za-z0-9]{30,}|\bnpm_[A-Za-z0-9]{36}\b|\bglpat-[A-Za-z0-9_-]{20,}|\bdop_v1_[a-f0-9]{64}\b"),
        (API_KEY, r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|\bkey-[0-9a-f]{32}\b"),
        (TOKEN, r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b|\boauth:[a-z0-9]{30}\b"),
        # Discord: a bot token is the bot's id in base64, a timestamp and an HMAC; a webhook URL carries its token.
        (TOKEN, r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"),
        (TOKEN, r"https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
        (TOKEN, r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
        # Other services' incoming webhooks: whoever holds the URL can post (Teams, Zapier, Make, IFTTT, Mattermost).
        (TOKEN, r"https?://[\w-]+\.webhook\.office\.com/webhookb2/[^\s,;'\"<>]{20,}"
                r"|https?://outlook\.office(?:365)?\.com/webhook/[^\s,;'\"<>]{20,}"
                r"|https?://hooks\.zapier\.com/hooks/catch/\d+/\w+/?"
                r"|https?://hook\.(?:[a-z]{2}\d\.)?(?:make|integromat)\.com/\w{16,}"
                r"|https?://maker\.ifttt\.com/(?:trigger/[\w-]+/(?:json/)?)?with/key/[\w-]{12,}"
                r"|https?://[\w.-]+/hooks/[a-z0-9]{26}\b"),
        (TOKEN, r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}"),
        (API_KEY, r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{5}(?:-[A-Z0-9]{5}){4}\b"),  # licence keys
        (PASSWORD, r"\b[A-Z2-7]{4}(?: [A-Z2-7]{4}){5,}\b|\b\d{6}(?:-\d{6}){7}\b"),  # TOTP seeds, BitLocker keys
        # GitHub's recovery codes, listed together: "1e7cd-c6c5b 88469-ba324 ..."
        (PASSWORD, r"(?<![\w-])[0-9a-f]{5}-[0-9a-f]{5}(?:[\s,]+[0-9a-f]{5}-[0-9a-f]{5}){1,15}(?![\w-])"),
    )
)
# Apple's app-specific passwords: four groups of four random letters ("kpfn-wqxe-trhs-mbzv"), not words.
_APP_PASSWORD = re.compile(r"(?<![\w-])[a-z]{4}(?:-[a-z]{4}){3}(?![\w-])")
# A password's hash in the modular crypt or PHC format ("$2b$12$...", "$argon2id$v=19$m=65536,t=3,p=4$salt$hash"):
# what a database stores instead of the password, which it does not reveal.
_PASSWORD_HASH = re.compile(r"\$(?:argon2(?:id|i|d)|2[abxy]?|scrypt|pbkdf2(?:-sha\d+)?|[156]|7|y|gy)\$[^\s`'\"]{20,}")
# A public key or certificate block: published to be shared.
_PUBLIC_BLOCK = re.compile(
    r"(?s)-----BEGIN (?:[A-Z0-9]+ )*(?:PUBLIC KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?)-----.*?-----END [A-Z0-9 ]+-----"
)
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]{0,15}://[^\s:/@]{0,256}:(?![<{$\[])([^\s@/]{3,256})@", re.IGNORECASE)
# What a URL's password field holds in documentation: "USER:PASSWORD@", "user:<password>@", "user:***@".
_PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*|[<{\[$].*|\*+|x{3,}|\.{3,}|(?:your|my)[_-]?password|password|secret|pass")
_URL = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]{0,15}://|www\.)\S+|\b[\w-]{1,63}(?:\.[\w-]{1,63}){0,8}\.[a-z]{2,24}/\S*", re.IGNORECASE
)
# A password assigned to a setting named for one, in a shell, a config file, docker or PHP ("DB_PASS=Xk9!mW2#pL7q",
# "-e POSTGRES_PASSWORD=hunter2-but-longer", "define('DB_PASSWORD', 'wp_Zebra_8')", "pg_pw=Harbor!Seal_44"):
# any value but a reference to another setting or a placeholder.
_PASSWORD_SETTING = re.compile(
    r"(?<![\w$])(?P<name>(?:[A-Za-z0-9]+_)+(?:PASSWORD|PASSWD|PASS|PWD|PW)|(?-i:PASSWORD|PASSWD|PASS|PWD))"
    r"(?!_(?:FILE|PATH|HASH|HASHER|TIMEOUT|LENGTH|MIN|MAX|POLICY|RESET|EXPIRY|AGE|ROUNDS|ITERATIONS|URL|ENABLED"
    r"|REQUIRED|VALIDATORS?|FIELD|PROMPT)\b)(?:_[A-Za-z0-9]+)*['\"]?\s*(?:=|:\s*|,\s*)['\"]?"
    r"(?P<value>[^\s'\"`;,)/]{4,128})(?![\w/])",
    re.IGNORECASE,
)
_SETTING_PLACEHOLDER = re.compile(r"[$%{<\[*].*|.*[}>\]]|x+|\.+|changeme|password|secret|none|null|true|false|\d{1,3}",
                                  re.IGNORECASE)
# A session cookie's value: whoever pastes it is logged in.
_SESSION_COOKIE = re.compile(
    r"\b(?:PHPSESSID|JSESSIONID|ASP\.NET_SessionId|sessionid|session_id|connect\.sid|laravel_session|_session_id)"
    r"=([A-Za-z0-9%._-]{16,})"
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
    r"|tokens?|private[\s_-]?key|keys?|bearer|authorization|licen[cs]e[\s_-]?(?:keys?|codes?)|product[\s_-]?keys?"
    r"|serial[\s_-]?keys?|activation[\s_-]?(?:keys?|codes?)|(?:session[\s_-]?id|sessionid|session)?[\s_-]?cookies?"
    r"|sessionid)"
)
_LABELLED_KEY = re.compile(
    rf"\b{_KEY_NAMES}(?:\s+(?:for|to|of|on|from)\s+(?:[\w.'’-]+\s+){{0,3}}?[\w.'’-]+)?"
    rf"(?:\s*(?:is|was|are|=|:|:=|->)\s*|\s+)(?:bearer\s+)?{_VALUE}",
    re.IGNORECASE,
)
_ENV_ASSIGNMENT = re.compile(
    rf"\b[A-Z0-9_]{{0,40}}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD)[A-Z0-9_]{{0,40}}\s*[=:]\s*{_VALUE}", re.IGNORECASE
)

# --- numbers with checksums ---------------------------------------------------------------------------------

_DIGIT_RUN = re.compile(r"(?<![\w+#./:-])\d+(?:[ -]\d+)*(?![\w/-]|\.\d)")  # groups of digits, "4539 1488 ..."
_DIGIT_GROUP = re.compile(r"\d+")
_IBAN_CANDIDATE = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b")

# --- random-looking strings ---------------------------------------------------------------------------------

_PUBLIC_ID_BEFORE = re.compile(
    r"(?:(?:playlist|video|track|album|channel|episode)(?:\s+id)?(?:\s+is|:)?|ssh-(?:rsa|ed25519|dss)"
    r"|ecdsa-sha2-\S+|sk-ssh-\S+)\s+$",
    re.IGNORECASE,
)
# Values that are public by their form: receiving addresses and public keys, ids of objects, fingerprints, and
# placeholders in documentation ("ghp_xxxxxxxx", "xoxb-your-token").
_PUBLIC_FORM = re.compile(
    r"0x[0-9a-fA-F]{40}|0x[0-9a-fA-F]{16}|(?:npub|age)1[02-9ac-hj-np-z]{20,}|pk_(?:live|test)_\w+|pk\.eyJ[\w.-]+"
    r"|(?:cus|pi|acct|price|prod|sub|evt|seti|txn)_[A-Za-z0-9]{14,}|SHA256:[A-Za-z0-9+/]{43}=?"
    r"|[\w-]*x{8,}[\w-]*|[\w-]*[_-]your[_-][\w-]+|SW-\d{4}-\d{4}-\d{4}"  # the last: a Nintendo friend code
)
# Names that make the value after them public or no secret: "public key", "publishable key", "clé publique",
# "klucz publiczny", a fingerprint, a username or a network's name; at most a few words before the value.
_PUBLIC_NAME = re.compile(
    r"(?:\b(?:public|publishable|publieke?|öffentliche[rn]?)\s+(?:[\w-]+\s+){0,2}?(?:keys?|address|token|ids?"
    r"|recipient|fingerprint|sleutel(?:-id)?|schlüssel)|\b(?:key|sleutel|klucz|clé|clave|chave)\s+(?:[\w-]+\s+)?"
    r"(?:publiczny|publique|pública|publica|pubblica)|\bpubkey|\bfingerprint|\busername|\buser\s+name|\bgamertag"
    r"|\bfriend\s+code"
    r"|\bssid|\bnetwork\s+(?:[\w-]+\s+){0,3}?(?:is\s+)?(?:named|called)|公钥|公開鍵)"
    # then at most four words that name no credential ("username bob and my passcode is ..." names one), and a verb
    # or a colon
    r"(?:\s+(?!(?:pass|pw|pin|code|key|token|secret|mdp|senha|contrase|clave|wachtwoord|kennwort|hasł|otp|combo"
    r"|combination|login|cred))[\w'’-]+){0,4}?\s*(?:is|was|are|:|=|est|ist|es|é|jest)?\s*[`'\"“‘(]?$",
    re.IGNORECASE,
)
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
    """Words and small numbers joined by separators: "room-214-blue", "settings.api_key", "v2.14.3-arm64"; a part
    whose letters mix cases at random ("dEf2") is no word."""
    parts = [part for part in re.split(r"[-_./:]+", core) if part]
    return len(parts) >= 2 and all(
        (part.isalpha() and (part.islower() or part.istitle() or part.isupper()) and len(part) <= 12)
        or (part.isdigit() and len(part) <= 4)
        or re.fullmatch(r"[vV]?\d+|(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)\d{1,3}|\d{1,3}(?:[a-z]+|[A-Z]+)", part)
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
            if (len(digits) >= 13 and luhn_valid(digits) and card_range_valid(digits)
                    and digits not in PUBLIC_TEST_CARDS):
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
        if (end := _iban_end(match)) is not None:
            found.append(Finding(IBAN, match.start(), end))
    return found


def _iban_end(match: re.Match[str]) -> int | None:
    """Where the IBAN a candidate starts with ends: the country's length of letters and digits, so the words after
    a compact IBAN ("ES74...8583 PARA LO" once upper-cased) are not read into it; None when it fails the check."""
    length = IBAN_LENGTHS.get(match.group(0)[:2])
    if length is None:
        return None
    seen = 0
    for offset, char in enumerate(match.group(0)):
        seen += char != " "
        if seen == length:
            end = match.start() + offset + 1
            return end if iban_valid(match.string[match.start() : end]) else None
    return None


def _keys(text: str, urls: list[tuple[int, int]]) -> list[Finding]:
    found = [Finding(kind, *match.span()) for kind, pattern in _SHAPES for match in pattern.finditer(text)]
    found += [Finding(PASSWORD, *match.span(1)) for match in _URL_PASSWORD.finditer(text)
              if not _PLACEHOLDER.fullmatch(match.group(1))]
    found += [Finding(TOKEN, *match.span(1)) for pattern in (_SECRET_PARAM, _SESSION_COOKIE)
              for match in pattern.finditer(text)]
    found += [Finding(PASSWORD, *match.span("value")) for match in _PASSWORD_SETTING.finditer(text)
              if not _SETTING_PLACEHOLDER.fullmatch(match.group("value")) and not _inside(match.start(), urls)]
    found += [Finding(PASSWORD, *match.span()) for match in _APP_PASSWORD.finditer(text)
              if sum(group not in COMMON_WORDS for group in match.group(0).split("-")) >= 3]
    for pattern in (_LABELLED_KEY, _ENV_ASSIGNMENT):
        for match in pattern.finditer(text):
            value = match.group(1).rstrip(".,:;")
            if _secret_like(value) and not _inside(match.start(1), urls):
                found.append(Finding(API_KEY, match.start(1), match.start(1) + len(value)))
    for match in _RANDOM_CANDIDATE.finditer(text):
        if looks_random(match.group(0)) and not _wordy(match.group(0)) and not _inside(match.start(), urls):
            found.append(Finding(API_KEY, *match.span()))
    return found


def _public(text: str, finding: Finding) -> bool:
    """A value that is public by its form, or by the name just before it in the same sentence unless an issuer's
    shape makes it a secret whatever it is called."""
    value = text[finding.start : finding.end]
    if public_form(value):
        return True
    if any(pattern.fullmatch(value) for _, pattern in _SHAPES):
        return False
    before = re.split(r"[.!?\n]\s", text[max(0, finding.start - 60) : finding.start])[-1]
    return bool(_PUBLIC_NAME.search(before) or _PUBLIC_ID_BEFORE.search(before))


def public_form(value: str) -> bool:
    """Whether `value` is public by its form alone (an Ethereum address, a publishable key, a friend code)."""
    return bool(_PUBLIC_FORM.fullmatch(value))


def public_after(before: str, value: str) -> bool:
    """Whether `value`, coming right after `before` (an earlier message, say), is public by its form or its name
    ("wireguard peer public key for the office" … "M1nR40ogsMaI+6I6...")."""
    text = f"{before} {value}"
    return _public(text, Finding(API_KEY, len(text) - len(value), len(text)))


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _normalised(text: str) -> str:
    """NFKC, without invisible format characters: full-width digits or zero-width spaces hide nothing."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")


def _find(text: str) -> list[Finding]:
    urls = [match.span() for match in _URL.finditer(text)]
    never_cut = [match.span() for pattern in (_PASSWORD_HASH, _PUBLIC_BLOCK) for match in pattern.finditer(text)]
    near = [f for f in near_names(text) if not _inside(f.start, urls)]
    patterns = [f for f in merged(_keys(text, urls) + passwords(text) + near + _numbers(text) + seed_phrases(text))
                if (f.kind not in (API_KEY, TOKEN, PASSWORD) or not _public(text, f))
                and not _inside(f.start, never_cut)]
    read = [f for f in credentials_read(text) if not _inside(f.start, urls + never_cut)
            and (f.kind not in (API_KEY, TOKEN) or not _public(text, f))]
    return _read_after_cuts(text, merged(patterns + read), urls)  # a pattern's kind wins on the same span


def _read_after_cuts(text: str, found: list[Finding], urls: list[tuple[int, int]]) -> list[Finding]:
    """`found` and what the trained reader finds in the text once `found` is cut: a cut word is a marker
    ("[password removed]") beside its neighbours, which may then read as a value too; read until nothing more is
    found, so that a redacted text holds nothing the finder would cut again. Each round cuts at least one more word
    and markers are never read, so it ends."""
    while found:
        redacted = cut(text, found)
        # where each uncut piece starts in the cut text and in `text`
        starts: list[tuple[int, int]] = []
        length = position = 0
        for finding in found:
            starts.append((length, position))
            length += finding.start - position + len(f"[{finding.kind} removed]")
            position = finding.end
        starts.append((length, position))
        more = []
        for f in credentials_read(redacted):
            shift = next(original - cut_at for cut_at, original in reversed(starts) if cut_at <= f.start)
            if not _inside(f.start + shift, urls):
                more.append(Finding(f.kind, f.start + shift, f.end + shift))
        if not more:
            return found
        found = merged(found + more)
    return found


def find_credentials(text: str) -> list[Finding]:
    """Every credential in `text`, in order, as spans of `text` itself.

    Text that hides one behind full-width characters or invisible format characters is reported as one finding
    covering all of it (its spans cannot be mapped back character by character)."""
    found = _find(text)
    clean = _normalised(text)
    if clean != text:
        hidden = _find(clean)
        if hidden and [f.kind for f in hidden] != [f.kind for f in found]:  # what the hiding changed
            return [Finding(hidden[0].kind, 0, len(text))]
    return found


def credential_kind(text: str) -> str | None:
    """What kind of credential `text` holds ("password", "API key", ...), or None: the reason to refuse it."""
    found = find_credentials(text)
    return found[0].kind if found else None


def redact(text: str) -> str:
    """`text` with each credential replaced by a marker naming its kind ("[password removed]"): what a pending
    turn keeps, so the words around it can still be learned."""
    return cut(text, find_credentials(text))


def cut(text: str, findings: list[Finding]) -> str:
    """`text` with each of `findings` (sorted, not overlapping) replaced by a marker naming its kind."""
    parts: list[str] = []
    position = 0
    for finding in findings:
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
