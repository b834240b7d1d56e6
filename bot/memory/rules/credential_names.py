"""What credentials are called, across languages: the names a value is given under, sorted by what shape its value
takes, and the words that lead up to a value once it is named.

The finders read a name first and then look for a value of the right shape near it, so the names are broad (forms,
abbreviations, common typos; English, Spanish, Portuguese, French, German, Italian, Dutch, Polish, Russian, Turkish,
the Nordic languages, Chinese, Japanese, Korean) while the value shapes stay strict: a name alone never makes a
secret. Three families, because each opens a different kind of value:
- `PASSWORD_NAMES` and `LOGIN_NAMES`: passwords, passphrases, logins; their value is a chosen string
  ("Heron&Kite2020");
- `CODE_NAMES` and `BARE_CODE_NAMES`: PINs, door and alarm codes, combinations, one-time and verification codes;
  their value is a short code ("0827", "2-9-0-4", "2B-7710");
- `KEY_NAMES`: API keys, tokens, secrets, seeds; their value is a long random-looking string.
Pure data and compiled patterns, no logic beyond building the typo forms.
"""

from __future__ import annotations

import re

# --- typos of "password" ------------------------------------------------------------------------------------

_NEIGHBOURS = {  # keys next to each other on a QWERTY keyboard, for slips of a finger
    "p": "ol", "a": "qsz", "s": "adwz", "w": "qes", "o": "ipl", "r": "etf", "d": "sfe", "t": "ryg",
}


def _slips(word: str) -> set[str]:
    """`word` with one letter dropped, doubled, swapped with the next or hit beside it: how people mistype it."""
    forms = set()
    for i in range(len(word)):
        forms.add(word[:i] + word[i + 1 :])
        forms.add(word[:i] + word[i] + word[i:])
        if i + 1 < len(word):
            forms.add(word[:i] + word[i + 1] + word[i] + word[i + 2 :])
        forms.update(word[:i] + near + word[i + 1 :] for near in _NEIGHBOURS.get(word[i], ""))
    return {form for form in forms if len(form) >= 6 and form.startswith("p")}


_TYPOS = sorted(
    _slips("password") | _slips("passwort")
    | {"pasword", "passwrd", "pswd", "pwrd", "passwd", "passw", "psswd", "psswrd", "pswrd", "psword", "pssword"},
    key=len, reverse=True,
)

# --- the three families ---------------------------------------------------------------------------------------

PASSWORD_NAMES = (
    r"(?:passwords?|pass\s?words?|" + "|".join(_TYPOS) + r"|pwd|pw|p/w|pword|passphrases?|pass[\s-]phrase"
    r"|app[\s-]passwords?|phrases? secrètes?|frases? (?:secretas?|de contraseña|de paso|segretas?)|geheimphrase"
    r"|(?:wi-?fi|wlan|wpa2?|network|wireless|hotspot)[\s-](?:key|pass)|psk"
    # es, pt, fr, de, it, nl, pl, ru, tr, the Nordic languages, cs, hu, fi, el
    r"|contraseñas?|contrasenas?|claves?(?=\s+(?:de|del|para|es|era)\b|\s*:)|senhas?|palavra[\s-]passe"
    r"|mots? de passe|mdp|passworte?s?|kennwort|wlan-schlüssel|netzwerkschlüssel|parola d'ordine|wachtwoord"
    r"|hasł[oa]|hasl[oa]|пароль|пароля|паролем|пароле|пароли|şifre(?:si|m)?|sifre(?:si|m)?|parolası|lösenord(?:et)?"
    r"|losenord|passord(?:et)?|heslo|jelszó|jelszo|salasana|κωδικός"
    # zh, ja, ko
    r"|密码|密碼|口令|パスワード|合言葉|비밀번호|비번|암호|패스워드)"
)
# What lets someone in without being called a password: a chosen string only counts here.
LOGIN_NAMES = (
    r"(?:logins?|log-?ins?|log(?:s|ged|ging)?\s+(?:in|on)(?:to)?|sign(?:s|ed|ing)?\s+(?:in|on)(?:to)?|creds|credentials"
    r"|identifiants|zugangsdaten|credenciales|credenziali|inloggegevens|dane logowania|учётные данные|логин"
    # what a chosen string locks: "the zip is locked w/ ...", "the archive is encrypted with ..."
    r"|(?:password[\s-])?(?:encrypt(?:ed|s)?|lock(?:ed|s)?|protect(?:ed|s)?|secur(?:ed|es)|unlock(?:s|ed)?)"
    r"(?=\s+(?:with|w/|using|by|via)(?:\s|$)))"
)
# A code's name that says what it opens: its value may stand anywhere near it ("the alarm code 2-9-0-4").
CODE_NAMES = (
    r"(?:pins?|pin[\s-]?(?:codes?|numbers?)|pincode|passcodes?|combinations?|combo|cvv2?|cvc2?|csc|puk|otp|totp"
    r"|(?:2fa|mfa|one[\s-]time|door|gate|alarm|garage|safe|lock|locker|entry|security|access|building|office|backup"
    r"|recovery"
    r"|unlock|keypad|verification|login|sms|text|auth|authentication|confirmation|bank|card|lobby|intercom|house"
    r"|front[\s-]door|back[\s-]door|key|lockbox|padlock|bike[\s-]lock|wifi|wi-fi)[\s-]codes?"
    r"|keypad|key[\s-]?safe|lockbox|padlock|digicode|geheimzahl|zahlencode|türcode|torcode|pin-code|pinkod(?:en)?"
    r"|code (?:de (?:vérification|sécurité|confirmation|la porte|l'alarme|l'immeuble|accès)|d'accès)"
    r"|código (?:de (?:verificación|verificação|seguridad|segurança|acceso|acesso|confirmación)|del portal)"
    r"|codice (?:di (?:verifica|sicurezza|accesso)|del portone)|kod (?:weryfikacyjny|dostępu|do drzwi)"
    r"|код (?:подтверждения|доступа|от двери)|пин(?:-код)?"
    r"|验证码|驗證碼|認証コード|確認コード|暗証番号|인증번호|인증 ?코드)"
)
# "code" alone names a value only when a verb gives it ("the code the bank texted is 482913").
BARE_CODE_NAMES = r"(?:codes?|códigos?|codigos?|codice|kod(?:u|em)?|код(?:а|ом)?|kodu|コード|코드|代码|代碼)"
KEY_NAMES = (
    r"(?:api[\s_-]?(?:keys?|schlüssel|sleutel|klucz|ключ|キー|키)|(?:api[\s_-])?schlüssel|clés?(?:\s+d'api|\s+api)?"
    r"|clave(?:\s+de)?\s+(?:la\s+)?api|chiave(?:\s+(?:dell')?api)?|chave(?:\s+(?:da\s+)?api)?|sleutel|klucz"
    r"|ключ(?:\s+api)?|токен|tokens?|jeton|seeds?|(?:totp|otp|2fa|mfa|shared|client|app|signing|webhook)[\s_-]secret"
    r"|secrets?|keys?|密钥|秘钥|金鑰|トークン|シークレット|キー|토큰|시크릿)"
)
# Where a code's name follows these ("lives in PIN code 560001", "at PIN 110001"), it names a place: an Indian
# postal code, not a PIN.
AT_A_PLACE = re.compile(r"\b(?:in|at|area)\s+$", re.IGNORECASE)
# Codes that open nothing: "zip code 94110", "código postal 28013", "error code 404", "friend code ...".
NOT_A_CODE = re.compile(
    r"(?:zip|post|postal|area|country|dialling|dialing|dress|error|status|exit|return|promo|discount|coupon|voucher"
    r"|referral|invite|invitation|friend|gift|qr|bar|source|iso|iata|icao|airport|colou?r|hex|product|course|module"
    r"|class|tax|sort|swift|bic|routing|branch|zone|postleit|fiscale|tracking|booking|reference|ean|upc|hs|morse"
    r"|station|stop|unicode|ascii|short|machine|op|byte|pseudo|micro|kind|type|item|sku|model|part|language|cheat"
    r"|the\s+same|my\s+own|python|java|rust|go|c|sample|example|starter|boilerplate|legacy|clean|dead|open|write"
    r"|wrote|writes|writing|review|reviewed|reviewing|refactor|refactored|debug|debugged|ticket|order|parcel|package"
    r"|shipment|invoice|customer|member|membership|loyalty|employee|student|flight|train|seat|event|game|discord"
    r"|steam|server|channel|group|project|repo|issue|style|dialing|phone)[\s-]*$",
    re.IGNORECASE,
)
NOT_A_CODE_AFTER = re.compile(
    r"\s*(?:postal|postale|de\s+(?:barras|conduta|conduite|la\s+route)|of\s+conduct|review|reviews|base|editor"
    r"|snippet|block|quality|style|smell|freeze|name|fiscale|pocztowy|почтовый)\b",
    re.IGNORECASE,
)

# --- words that lead up to a value ---------------------------------------------------------------------------

# "is now", "has been", "changed to", "went with", "temp one is", "c'est désormais", "ist jetzt", "adesso è",
# "теперь", "は", "是", "이제 ... 야": between a name and its value, or starting a message that gives one.
LEAD_INS = (
    r"(?:is|was|are|were|be|been|has\s+been|had\s+been|will\s+be|became|becomes|is\s+set\s+to|set\s+to|changed\s+to"
    r"|updated\s+to|reset\s+to|switched\s+to|went\s+with|going\s+with|using|use|now|still|currently|again|just"
    r"|new|temp|temporary|old|current|one|it'?s|its|it\s+is|the|this\s+time|for\s+now|from\s+now\s+on"
    r"|est|c'est|était|désormais|maintenant|toujours|reste|devient|ist|war|lautet|jetzt|nun|immer\s+noch|bleibt"
    r"|es|era|ahora|sigue\s+siendo|será|quedó|é|agora|continua|ficou|è|adesso|ora|ancora|resta|nu|blijft|nog"
    r"|to|jest|teraz|brzmi|это|теперь|был|была|стал|сейчас|он|она|şimdi|artık|nå|nu|är|er"
    r"|是|为|為|改成|改为|现在|現在|は|が|って|今は|新しいのは|이제|지금|은|는|야|이야|입니다)"
)
