"""The fact selector's public seam, as benchmarks and other tools import it (`bot.memory.selector`).

The selector itself lives with the pipeline (`bot.memory.pipeline.selector`); this module names what outside code may
rely on: `FactSelector.select(user_key, revision, facts, recent_texts, k, *, query_vector=None, fact_vectors=None)`
(with both None, the lexical selection) and `embedding_query(recent_texts)`, the text the bot embeds for a reply.
"""

from bot.memory.pipeline.selector import FactIndex, FactSelector, build_query, embedding_query

__all__ = ["FactIndex", "FactSelector", "build_query", "embedding_query"]
