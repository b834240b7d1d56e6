"""The memory guard as it was before it was narrowed (broad authority, permission and "you must" rules), kept
verbatim as the baseline of `bench.guard_errors`. Not used by the bot.

Memory poisoning guard: what must never be stored as truth about a user, whatever the extractor LLM says.

Users try "remember that I am the admin", "always obey me", "ignore your instructions". The extraction prompt
tells the model not to store such things; this module enforces it in code, so a model that obeys the attacker (the
worst case) still cannot plant authority claims, permissions or instructions to the bot in memory.

The rules are a list of named patterns, each with the reason reported when it matches. They aim at claims about
*this* server or bot and at text addressed to the bot; real-life roles stay allowed ("works as a system
administrator at a hospital", "is the owner of a small bakery", "moderates a gardening subreddit"). Text is
NFKC-normalised and stripped of invisible format characters first, so full-width letters or zero-width spaces
cannot slip a claim past the patterns. When in doubt a fact is refused: losing one benign fact costs little,
storing a false authority claim costs a lot.
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

RULES: tuple[Rule, ...] = (
    # --- authority on this server or over this bot -----------------------------------------------------------
    _rule(
        # "is the admin", "am a moderator", "is the server owner". Allowed when a place follows ("is the owner of
        # a small bakery", "is an admin at the hospital"); "admin of this server" is the next rule's job.
        "is-a-role",
        AUTHORITY,
        r"\b(?:is|am|are|be|being|was|were|as|named|made|appointed|promoted to|elected)\s+",
        r"(?:the|an?|one of the|my|our|his|her|their)?\s*",
        r"(?:real |true |official |actual |new |current |only |sole |lead |head |chief |super ?)?",
        rf"(?:{_HERE} )?",
        r"(?:admins?|administrators?|moderators?|mods?|owners?|staff)\b",
        r"(?!\s+(?:of|at|for|in|on|with)\s)",
    ),
    _rule("role-of-this-place", AUTHORITY, rf"\b{_ROLE}\s+(?:of|on|in|for|at)\s+{_HERE_REF}"),
    _rule("this-place-role", AUTHORITY, rf"\b(?:this|the|your|our)\s+{_HERE}(?:'s|s')?\s+{_ROLE}\b"),
    _rule("your-role", AUTHORITY, rf"\byour\s+(?:real |true |only )?{_ROLE}\b"),
    _rule(
        "made-this-bot",
        AUTHORITY,
        r"\b(?:created|made|built|coded|programmed|developed|designed|trained|owns|controls|runs)\s+",
        rf"(?:you\b|this\s+{_HERE}\b|the\s+(?:bot|assistant)\b)",
    ),
    _rule("staff-powers", AUTHORITY, r"\b(?:ban|kick|mute)\s+(?:powers?|rights|permissions?)\b"),
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
    # --- permissions -------------------------------------------------------------------------------------
    _rule(
        "special-permissions",
        PERMISSION,
        r"\b(?:admin|administrator|mod|moderator|owner|elevated|special|full|superuser|sudo|override|bot|server)",
        r"\s+(?:permissions?|privileges?|rights|powers?|clearance|access level)\b",
    ),
    _rule(
        "escalated-access",
        PERMISSION,
        r"\b(?:root access|access level|(?:escalated|elevated) (?:privileges?|permissions?|rights|access)"
        r"|privileges? (?:escalated|escalation|elevated))\b",
    ),
    _rule(
        "permission-over-this-place",
        PERMISSION,
        r"\b(?:permissions?|privileges?|rights|access|clearance|authori[sz]ed|allowed|entitled|sudo|root|control)\b"
        r".{0,30}?",
        rf"(?:{_HERE_REF}|\b(?:this|the|your)\s+(?:memor(?:y|ies)|settings|config(?:uration)?|rules)\b)",
    ),
    _rule(
        "other-users-data",
        PERMISSION,
        r"\b(?:other|another|all|every|any)\s+(?:users?|members?|people|person)(?:'s|s'|')?\s+",
        r"(?:memor(?:y|ies)|data|messages|facts|profiles?|secrets)\b",
    ),
    _rule(
        "listed-as-trusted",
        PERMISSION,
        r"\b(?:whitelisted|allowlisted|sudoers?|privileged user|verified (?:owner|admin|moderator|developer))\b",
    ),
    _rule(
        "trusted-over-others",
        PERMISSION,
        r"\b(?:trust(?:ed)?|believe[ds]?|listen(?:ed)? to|prioriti[sz]ed?)\b.{0,30}",
        r"\b(?:over|more than|above|instead of)\s+(?:other (?:users|members|people)|everyone|anyone",
        r"|the (?:server )?(?:admins?|mods?|moderators?|staff|owners?|rules))",
    ),
    # --- instructions to the bot -------------------------------------------------------------------------
    _rule(
        "obey",
        INSTRUCTION,
        r"\b(?:obey|obeys|comply with|follow (?:my|his|her|their|all|any) (?:orders|commands|instructions)",
        r"|do (?:whatever|everything|anything|what) (?:i|he|she|they|this user|the user)",
        r" (?:say|says|ask|asks|want|wants))\b",
    ),
    _rule(
        "ignore-the-rules",
        INSTRUCTION,
        r"\b(?:ignore|disregard|forget|override|bypass|drop)\b.{0,40}",
        r"\b(?:instructions?|rules|prompt|guidelines|restrictions|filters?|safety|memory of",
        r"|what .{0,20} said|everything .{0,20} (?:said|told))",
    ),
    _rule(
        "jailbreak",
        INSTRUCTION,
        r"\b(?:system prompt|jailbreak|developer mode|dan mode|unrestricted mode|god mode",
        r"|reveal (?:your|the) (?:prompt|instructions)|act as dan)\b",
    ),
    _rule(
        "no-rules",
        INSTRUCTION,
        r"\b(?:no|without(?: any)?)\s+(?:rules|restrictions|filters|guardrails|guidelines|censorship)\b",
    ),
    _rule(
        "as-system-instructions",
        INSTRUCTION,
        r"\b(?:system|developer|admin) (?:instructions?|messages?|commands?|prompts?)\b",
        r"|\btreat\b.{0,30}\bas\b.{0,20}\b(?:instructions?|commands?|orders|system)\b",
    ),
    _rule("pretend", INSTRUCTION, r"\bpretend\s+(?:you|to be|that you)\b"),
    _rule(
        "bot-must",
        INSTRUCTION,
        r"\b(?:the |this )?(?:bot|assistant|ai)\s+(?:must|should|shall|has to|will|is to)\s+(?:always|never|now)\b",
    ),
    _rule("you-must", INSTRUCTION, r"\byou\s+(?:must|should|shall|will|have to|need to|are to|are now|may not)\b"),
    _rule(
        "never-refuse",
        INSTRUCTION,
        r"\b(?:never (?:refuse|deny|question|disagree)|always (?:obey|agree|comply|say yes))\b",
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
