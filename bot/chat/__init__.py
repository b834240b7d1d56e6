"""The chat side of the bot: the reply model client, streaming, attachments and reply chains.

Nothing here knows about memory; the chat cog puts the pieces together with the memory service.
"""
