"""The bot's own words in its users' languages: gettext catalogs (`bot/locales/`, kept with Babel), the choice of a
reader's language from what Discord says about them, Babel's number and date formats, and the translator that
gives Discord the commands' localized names and descriptions.

Memory is never translated: it stays in the words the user used. Only what the bot itself says passes through here.
"""
