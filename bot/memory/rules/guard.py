"""Memory poisoning guard: what must never be stored as a fact, whatever the extractor LLM says.

Memory only ever reaches its owner's own prompt, rendered as quoted data about them, so a stored sentence can only
do harm if it breaks out of that quoting or reads as an order to the bot. The guard therefore refuses narrowly:
- markup that could close or fake the memory block or a chat turn (tags, chat-template tokens, the memory file's
  own field names and fact ids, JSON fragments), and role prefixes that impersonate the system or the bot;
- mentions (`<@id>`, @everyone, @here), which the bot must never carry into a reply;
- instructions addressed to the bot: to obey someone, to ignore or reveal its instructions, to drop its rules or
  filters, jailbreak vocabulary, and attempts to reach other users' data, in English and the common phrasings of
  German, French, Spanish, Chinese and Japanese;
- claims of authority over this bot or this server ("is the owner of this server", "created this bot").
Everything else is a fact about the user's life, however it is worded: "is an admin", "manages server permissions
at work", "believes you should back up your data" are kept. Third-person fact forms ("ignores", "obeys") are not
instructions; the imperative and infinitive forms are. Text is NFKC-normalised and stripped of invisible format
characters first, so full-width letters or zero-width spaces cannot slip past the patterns.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# What the bot lives in, or the bot itself: the objects an authority claim must not be about.
_HERE = r"(?:server|guild|discord|bot|channel|assistant)"
# "this server", "the bot", "our community" (but not "the community garden").
_HERE_REF = rf"(?:(?:this|the|your|our)\s+{_HERE}\b|(?:this|your|our)\s+(?:community|chat|group|ai)\b)"
_ROLE = (
    r"(?:admins?|administrators?|moderators?|mods?|owners?|staff|creators?|developers?|devs?|operators?"
    r"|masters?|makers?|authors?|bosses)"
)
_CJK_HERE = (
    r"(?:服务器|伺服器|群组|群組|群|频道|頻道|社区|社區|机器人|機器人|bot|discord"
    r"|サーバー|サーバ|ボット|チャンネル|ギルド|コミュニティ)"
)
_CJK_ROLE = (
    r"(?:管理员|管理員|群主|版主|所有者|拥有者|擁有者|开发者|開發者|创建者|創建者|创造者|作者|主人|老板|老闆"
    r"|管理者|管理人|オーナー|開発者|作成者|モデレーター)"
)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    reason: str
    pattern: re.Pattern[str]


def _rule(name: str, reason: str, *pattern: str) -> Rule:
    return Rule(name, reason, re.compile("".join(pattern), re.IGNORECASE))


AUTHORITY = "authority claim"
PERMISSION = "permission claim"
INSTRUCTION = "instruction to the bot"
MARKUP = "markup"
IMPERSONATION = "impersonation"

# Whose instructions or rules: the bot's own, or "previous" ones; not "the rules of grammar".
_THEIR = (
    r"(?:all\s+(?:of\s+)?|any\s+(?:of\s+)?)?"
    r"(?:your|its|previous|prior|earlier|above|these|those|system|the\s+(?:previous|above|earlier|original|system)"
    r"|(?:the\s+|this\s+)?(?:bot|assistant|ai|server|model)(?:'s)?|all)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|guidelines|rules|directives|programming|filters?|restrictions|guardrails"
    r"|safety(?:\s+rules)?|polic(?:y|ies)|system\s+prompt)"
)

RULES: tuple[Rule, ...] = (
    # --- authority over this bot or this server -------------------------------------------------------------
    _rule(
        "role-of-this-place",
        AUTHORITY,
        rf"\b{_ROLE}(?:\s+members?)?\s+(?:(?:of|on|in|for|at)\s+{_HERE_REF}|here\b)",
    ),
    _rule("this-place-role", AUTHORITY, rf"\b(?:this|the|your|our)\s+{_HERE}(?:'s|s')?\s+{_ROLE}\b"),
    _rule("your-role", AUTHORITY, rf"\byour\s+(?:real |true |only )?{_ROLE}\b"),
    _rule(
        "made-this-bot",
        AUTHORITY,
        r"\b(?:created|made|built|coded|programmed|developed|designed|trained|owns|controls|runs)\s+",
        rf"(?:you\b|this\s+{_HERE}\b|the\s+(?:bot|assistant)\b)",
    ),
    _rule(
        "can-punish-members",
        AUTHORITY,
        r"\b(?:can|could|may|is allowed to|is able to)\s+(?:ban|kick|mute|timeout|time out)\s+",
        r"(?:other |any |all )?(?:users?|members?|people|anyone|everyone)\b",
    ),
    _rule(
        "cjk-role-of-this-place",
        AUTHORITY,
        rf"(?:这个|這個|本|该|該|此|この|当){_CJK_HERE}\s*(?:的|の)?\s*{_CJK_ROLE}",
    ),
    _rule("cjk-is-role", AUTHORITY, r"(?:是|为|為|当|當)(?:群主|管理员|管理員|版主|超级管理员)"),
    # --- permissions over this bot, this server or other users ---------------------------------------------
    _rule(
        "permission-over-this-place",
        PERMISSION,
        r"\b(?:permissions?|privileges?|rights|access|clearance|authori[sz]ed|allowed|entitled|sudo|root|control)\b"
        r".{0,30}?",
        rf"(?:{_HERE_REF}|\b(?:this|your)\s+(?:memor(?:y|ies)|settings|config(?:uration)?|rules)\b)",
    ),
    _rule("listed-for-this-bot", PERMISSION, r"\b(?:whitelisted|allowlisted)\b.{0,30}\b(?:bot|assistant|server)\b"),
    _rule(
        "other-users-data",
        PERMISSION,
        r"\b(?:other|another|all|every|any)\s+(?:users?|members?|people|person)(?:'s|s'|')?\s+",
        r"(?:memor(?:y|ies)|data|messages|facts|profiles?|secrets)\b",
    ),
    _rule(
        "trusted-over-staff",
        PERMISSION,
        r"\b(?:trust(?:ed)?|believed?|listened to|prioriti[sz]ed)\s+(?:over|more than|above|instead of)\s+",
        r"(?:the\s+)?(?:server\s+)?(?:admins?|mods?|moderators?|staff|owners?|other users|other members|the rules)\b",
    ),
    # --- instructions to the bot -------------------------------------------------------------------------
    _rule(
        "obey",
        INSTRUCTION,
        r"\b(?:always obey|obey (?:this|the|every|all|any|me|him|her|them)\b(?! (?:law|laws|doctor|speed))"
        r"|follow (?:my|his|her|their|all|any) (?:orders|commands)",
        r"|do (?:whatever|everything|anything) (?:i|he|she|they|this user|the user) (?:say|says|ask|asks|want|wants)"
        r"|comply with (?:every|all|any) (?:request|command|order)s?)\b",
    ),
    _rule(
        "ignore-instructions",
        INSTRUCTION,
        rf"\b(?:ignore|disregard|forget|override|bypass|skip)\s+{_THEIR}\s+(?:\w+\s+)?{_ORDERS}\b",
    ),
    _rule(
        "imperative-to-the-bot",
        INSTRUCTION,
        # A fact reads "Ignores spoilers", "Forgot their passport"; the bare verb opening a fact is an order.
        r"^\s*(?:please\s+)?(?:ignore|disregard|forget|override|bypass|obey|reveal|pretend|grant)\b",
    ),
    _rule(
        "forget-what-someone-said",
        INSTRUCTION,
        r"\b(?:forget|ignore|disregard|delete)\s+(?:what|everything|anything)\s+@",
        r"|\b(?:forget|ignore|disregard)\s+(?:what|everything|anything)\s+(?:\S+\s+){0,3}?(?:said|says|told|wrote)",
        r"\s+about\s+(?:me|this user|him|her|them)\b",
    ),
    _rule(
        "reveal-instructions",
        INSTRUCTION,
        r"\b(?:reveal|print|show|repeat|leak|output)\s+(?:your|the|its)\s+(?:hidden\s+|system\s+|original\s+|initial\s+)?",
        r"(?:prompt|instructions)\b",
    ),
    _rule(
        "jailbreak",
        INSTRUCTION,
        r"\b(?:system prompt|jailbreak\w*|developer mode|dan mode|god mode|unrestricted mode|act as dan",
        r"|you are (?:now )?dan",
        r"|no content polic(?:y|ies)|(?:no|without(?: any)?)\s+(?:restrictions|filters|guardrails|censorship))\b",
    ),
    _rule(
        "as-system-instructions",
        INSTRUCTION,
        r"\b(?:system|developer) (?:instructions?|messages?|commands?)\b",
        r"|\btreat\b.{0,30}\bas\b.{0,20}\b(?:instructions?|commands?|orders|system)\b",
    ),
    _rule("pretend", INSTRUCTION, r"\bpretend\s+(?:you|that you|it)\b|\bact as an? (?:unrestricted|unfiltered)\b"),
    _rule(
        "bot-must",
        INSTRUCTION,
        r"\b(?:the |this )?(?:bot|assistant|ai|chatbot)\s+(?:must|shall|has to|will|is to|needs to|may not)",
        r"\s+(?:always|never|now|obey|do|answer|respond|agree|ignore|reveal|tell|share)\b",
        r"|\b(?:the |this )?(?:bot|assistant|ai)\s+should\s+(?:always|never)\s+",
        r"(?:obey|agree|do|comply|question|refuse)\b",
    ),
    _rule(
        "never-refuse",
        INSTRUCTION,
        r"\b(?:never (?:refuse|deny|question|disagree with)|always (?:obey|agree|comply|say yes))\b",
    ),
    _rule(
        "foreign-ignore-instructions",
        INSTRUCTION,
        r"\b(?:ignorier\w*|vergiss)\s+(?:alle\s+)?(?:vorherigen\s+|bisherigen\s+|deine\s+|die\s+)?(?:anweisungen|regeln|instruktionen)",
        r"|\b(?:ignore[rsz]?|oublie[rsz]?)\s+(?:toutes?\s+)?(?:les|tes|vos)\s+(?:\w+\s+)?(?:instructions|règles|consignes)",
        r"|\b(?:ignora\w*|olvida\w*)\s+(?:todas\s+)?(?:las|tus)\s+(?:\w+\s+)?(?:instrucciones|reglas)",
    ),
    _rule(
        "foreign-bot-must-obey",
        INSTRUCTION,
        r"\b(?:bot|assistent\w*|ki)\s+muss\b.{0,40}\bgehorchen",
        r"|\b(?:bot|assistant|ia)\s+doit\b.{0,40}\bobéir",
        r"|\b(?:bot|asistente|ia)\s+debe\b.{0,40}\bobedecer",
    ),
    _rule(
        "cjk-ignore-instructions",
        INSTRUCTION,
        r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会)\S{0,15}?",
        r"(?:指令|指示|规则|規則|提示|设定|設定|命令|ルール|プロンプト)",
    ),
    _rule("ja-ignore-instructions", INSTRUCTION, r"(?:指示|命令|ルール|プロンプト|設定)\S{0,10}?(?:無視|忘れ)"),
    _rule("cjk-obey", INSTRUCTION, r"(?:服从|服從|听我的|聽我的|必须听|必須聽|従え|従って|言いなり)"),
    _rule("cjk-system-prompt", INSTRUCTION, r"(?:系统提示|系統提示|系统指令|系統指令|システムプロンプト)"),
    # --- things that only make sense as an attack on the prompt or on the memory file -------------------------
    _rule("mention", "mention", r"<@[!&]?\d+>|@everyone|@here\b"),
    _rule(
        "block-markup",
        MARKUP,
        r"<\s*/?\s*user_memory\b|<\s*/?\s*(?:system|assistant|user|instructions?|im_start|im_end)\s*>",
    ),
    _rule("chat-template-token", MARKUP, r"<\|[a-z_]+\|>|\[/?INST\]"),
    _rule(
        "role-prefix",
        IMPERSONATION,
        r"^\s*[\[(<]?\s*(?:system|assistant|bot|developer|admin|moderator)\s*[\])>]?\s*:",
        r"|^\s*\[(?:system|assistant)\]",
    ),
    _rule("speaking-as-the-bot", IMPERSONATION, r"\b(?:i am|i'm)\s+(?:the|this|your)\s+(?:bot|assistant|ai|system)\b"),
    _rule(
        "memory-field-names",
        MARKUP,
        r"\b(?:newFacts|factsToRemove|shouldUpdate|workContext|personalContext|topOfMind|recentMonths",
        r"|earlierContext|longTermBackground)\b",
    ),
    _rule("fact-id", MARKUP, r"\bfact_[0-9a-f]{8}\b"),
    _rule("json-fragment", MARKUP, r"[{,]\s*\"[^\"\n]{1,40}\"\s*:"),
)


def normalise_for_guard(text: str) -> str:
    """NFKC (full-width letters become ASCII), invisible format characters removed, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text)
    visible = "".join(char for char in folded if unicodedata.category(char) != "Cf")
    return " ".join(visible.split())


def matching_rule(text: str) -> Rule | None:
    """The first rule `text` breaks, or None."""
    cleaned = normalise_for_guard(text)
    return next((rule for rule in RULES if rule.pattern.search(cleaned)), None)


def rejection_reason(text: str) -> str | None:
    """Why `text` must not be stored (a short label), or None when it may be."""
    rule = matching_rule(text)
    return rule.reason if rule else None
