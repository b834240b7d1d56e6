"""The seed's ways of doing things, re-implemented exactly, as the baselines our engine is measured against.

Source: the design note `seeds/000_ae121e99512bfe4a.txt`, section 3.6 (DeerFlow's documented fact selection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity


def extract_recent_turns(conversation: Sequence[str], n: int = 3) -> str:
    """The seed's helper: the text of the last `n` turns."""
    return "\n".join(conversation[-n:])


def select_relevant_facts(facts: Sequence[dict[str, Any]], conversation: Sequence[str], top_k: int = 15) -> list:
    """Seed section 3.6, verbatim in behaviour: a new word TF-IDF fitted on facts + dialogue for every reply."""
    # 1. the last 3 turns of dialogue
    dialogue_text = extract_recent_turns(conversation, n=3)

    # 2. TF-IDF vectors (sklearn defaults: word tokens of 2+ word characters, lowercase, l2, smooth idf)
    texts = [f["content"] for f in facts] + [dialogue_text]
    vectorizer = TfidfVectorizer()
    tfidf_matrix = vectorizer.fit_transform(texts)

    # 3. cosine similarity of the dialogue to every fact
    fact_vectors = tfidf_matrix[:-1]
    dialogue_vector = tfidf_matrix[-1]
    similarities = cosine_similarity(dialogue_vector, fact_vectors).flatten()

    # 4. combined score
    scored_facts = []
    for i, fact in enumerate(facts):
        score = similarities[i] * 0.6 + fact["confidence"] * 0.4
        scored_facts.append((fact, score))

    # 5. sort, take the top 15
    scored_facts.sort(key=lambda x: x[1], reverse=True)
    return [f[0] for f in scored_facts[:top_k]]


def fact_dicts(facts: Sequence[Any]) -> list[dict[str, Any]]:
    """Facts as the seed holds them: plain dicts read from the JSON file."""
    return [fact.model_dump(mode="json") for fact in facts]
