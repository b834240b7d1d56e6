"""The engine's own words that users read, marked for the catalogs.

The engine keeps these in English, as data (a summary's label, a fact's category, a kind of sensitive data, why a
text was refused); the application shows them through `Speech.tr`, which finds them in the catalogs because they are
marked here. `tests/test_i18n.py` checks that every such word of the engine is listed.
"""

from __future__ import annotations

from bot.i18n.speech import N_

SECTION_LABELS = (
    N_("Work"), N_("Personal"), N_("Top of mind"), N_("Recent months"), N_("Earlier"), N_("Long-term background"),
)
FACT_CATEGORIES = (
    N_("preference"), N_("knowledge"), N_("context"), N_("behavior"), N_("goal"), N_("relationship"),
)
SENSITIVE_CATEGORIES = (
    N_("health"), N_("sex life"), N_("religion"), N_("politics"), N_("finances"), N_("recovery and addiction"),
    N_("organ donation"), N_("criminal record"), N_("immigration status"), N_("gender identity"),
    N_("trade-union membership"), N_("genetic data"), N_("biometric data"), N_("sensitive"),
)
REFUSAL_REASONS = (
    N_("authority claim"), N_("permission claim"), N_("instruction to the bot"), N_("markup"), N_("impersonation"),
    N_("mention"),
)
