"""TF-IDF fact selection: relevant facts first, in English and in scripts without spaces, fitted once per revision."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from bot.memory.models import Fact
from bot.memory.pipeline.selector import (
    CONFIDENCE_WEIGHT,
    SIMILARITY_WEIGHT,
    FactIndex,
    FactSelector,
    analyze,
    build_query,
)


def facts_of(*contents: str, confidence: float = 0.8) -> list[Fact]:
    return [Fact(id=f"fact_{i:08x}", content=text, confidence=confidence) for i, text in enumerate(contents)]


DISTRACTORS = [
    "Has a cat named Miso", "Lives in Lisbon", "Plays the piano on weekends", "Is training for a half marathon",
    "Prefers tea over coffee", "Reads science fiction novels", "Speaks Portuguese and Spanish",
    "Has two younger sisters", "Drives an electric car", "Is allergic to peanuts", "Enjoys bouldering",
    "Grows tomatoes on the balcony", "Collects vinyl records", "Watches Formula 1 races", "Is learning Japanese",
    "Works remotely three days a week", "Bakes sourdough bread", "Volunteers at an animal shelter",
    "Travels to Italy every summer", "Plays chess online", "Prefers dark mode everywhere", "Uses a split keyboard",
    "Has a vegetable garden", "Writes poetry in a notebook", "Likes jazz music", "Cycles to the office",
    "Owns a 3D printer", "Is vegetarian", "Follows the Premier League", "Knits scarves in winter",
    "Has a fear of heights", "Studied history at university", "Plays board games with friends", "Lives with a dog",
    "Practices yoga every morning", "Is saving for a house", "Listens to true crime podcasts",
    "Went to Iceland last year", "Prefers short answers", "Wants answers in French", "Drinks oat milk",
    "Has a motorcycle licence", "Is a fan of Studio Ghibli films", "Paints watercolours", "Likes spicy food",
    "Is afraid of spiders", "Plays the violin", "Goes camping in autumn", "Builds mechanical keyboards",
    "Is learning to surf",
]
GO_FACT = "Writes Go microservices at work"


def test_an_english_query_ranks_the_relevant_fact_first_among_fifty_distractors() -> None:
    assert len(DISTRACTORS) == 50
    facts = facts_of(*DISTRACTORS, GO_FACT, confidence=0.8)
    for fact in facts[:25]:
        fact.confidence = 0.95  # half the distractors are more certain than the right fact
    index = FactIndex.build(facts)
    top = index.top("how should I profile my Go services? the microservice is slow", top_k=5)
    assert top[0].content == GO_FACT
    top = index.top("any tips for hiking, I'm going to the mountains", top_k=1)
    assert top[0].content != GO_FACT


def test_equal_similarity_ranks_the_more_confident_fact_first() -> None:
    facts = [
        Fact(id="fact_00000001", content="Uses Python for data analysis", confidence=0.7),
        Fact(id="fact_00000002", content="Uses Python for data analysis", confidence=0.95),
        Fact(id="fact_00000003", content="Has a cat", confidence=0.8),
    ]
    assert [f.id for f in FactIndex.build(facts).top("python data analysis", top_k=3)] == [
        "fact_00000002", "fact_00000001", "fact_00000003",
    ]


def test_relevance_beats_confidence_when_the_similarity_gap_is_large() -> None:
    facts = [Fact(id="fact_00000001", content="Has a cat named Miso", confidence=1.0),
             Fact(id="fact_00000002", content="Writes Go microservices", confidence=0.7)]
    assert FactIndex.build(facts).top("Go microservices", top_k=1)[0].id == "fact_00000002"


def _reference_similarity(contents: list[str], query: str) -> np.ndarray:
    """The documented similarity, written out by hand: BM25 weights (k1 1.2, no length normalisation, terms in
    most facts dropped); a fact's match is the weight of the query terms it holds, divided by the best match."""
    from bot.memory.pipeline.selector import index_terms

    docs = [index_terms(text) for text in contents]
    n = len(docs)
    df: dict[str, int] = {}
    for terms in docs:
        for term in set(terms):
            df[term] = df.get(term, 0) + 1
    idf = {t: (0.0 if d > max(0.15 * n, 10) else math.log1p((n - d + 0.5) / (d + 0.5))) for t, d in df.items()}
    query_terms = {t for t in index_terms(query) if t in idf}
    matches = [
        sum(idf[t] * (terms.count(t) * 2.2) / (terms.count(t) + 1.2) for t in query_terms if t in terms)
        for terms in docs
    ]
    best = max(matches, default=0.0)
    return np.array([m / best if best else 0.0 for m in matches])


def test_score_is_point_six_similarity_plus_point_four_confidence() -> None:
    contents = [GO_FACT, "Writes Python scripts at home", "Has a cat named Miso", "Deploys Go services to k8s",
                "我在用Go写微服务"]
    facts = [Fact(id=f"fact_{i:08x}", content=c, confidence=conf)
             for i, (c, conf) in enumerate(zip(contents, [0.7, 0.9, 1.0, 0.8, 0.75], strict=True))]
    index = FactIndex.build(facts)
    query = "my Go services at work are slow"
    expected = _reference_similarity(contents, query)
    assert expected.max() > 0.3  # the check below is not trivially about zeros
    np.testing.assert_allclose(index.similarities(query), expected, atol=1e-9)
    assert ((index.similarities(query) >= 0) & (index.similarities(query) <= 1)).all()
    expected_score = 0.6 * expected + 0.4 * np.array([f.confidence for f in facts])
    assert (SIMILARITY_WEIGHT, CONFIDENCE_WEIGHT) == (0.6, 0.4)
    ranked = index.top(query, top_k=len(facts))
    assert [f.id for f in ranked] == [facts[i].id for i in np.argsort(-expected_score, kind="stable")]


def test_a_longer_fact_is_not_punished_for_its_extra_details() -> None:
    facts = facts_of("Runs marathons", "Runs marathons in Berlin every autumn with a club from work")
    index = FactIndex.build(facts)
    sims = index.similarities("any tips for marathons?")
    assert sims[0] == pytest.approx(sims[1]) and sims[0] > 0


@pytest.mark.parametrize("top_k", [0, 1, 3, 7, 50, 100])
def test_top_k_is_respected_and_ordered_best_first(top_k: int) -> None:
    facts = facts_of(*DISTRACTORS)
    for i, fact in enumerate(facts):
        fact.confidence = (i % 10) / 10
    index = FactIndex.build(facts)
    query = "music: jazz, violin, piano and vinyl"
    top = index.top(query, top_k)
    assert len(top) == min(top_k, len(facts))
    position = {f.id: i for i, f in enumerate(facts)}
    scores = 0.6 * index.similarities(query) + 0.4 * index.confidence
    picked = [scores[position[f.id]] for f in top]
    assert picked == sorted(picked, reverse=True)
    if 0 < top_k < len(facts):
        assert min(picked) >= np.sort(scores)[::-1][top_k - 1] - 1e-12  # nothing better was left out


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_ties_put_newer_facts_first_even_at_the_cut_off(top_k: int) -> None:
    facts = facts_of("Likes tea", "Likes coffee", "Likes cocoa", confidence=0.8)
    ranked = [f.content for f in FactIndex.build(facts).top("", top_k=top_k)]
    assert ranked == ["Likes cocoa", "Likes coffee", "Likes tea"][:top_k]


# --- scripts without spaces --------------------------------------------------------------------------------

CHINESE = ["我在用Go写微服务", "我喜欢爬山", "我养了一只猫叫咪咪", "我每天早上喝咖啡", "我住在上海"]
JAPANESE = ["私は毎朝コーヒーを飲みます", "週末は山に登ります", "猫を二匹飼っています", "東京に住んでいます",
            "Pythonでデータ分析をしています"]


def seed_similarities(contents: list[str], query: str) -> np.ndarray:
    """The seed note's selector: a fresh word-level TfidfVectorizer over facts + dialogue."""
    matrix = TfidfVectorizer().fit_transform([*contents, query])
    result: np.ndarray = cosine_similarity(matrix[-1], matrix[:-1]).ravel()
    return result


@pytest.mark.parametrize(
    ("contents", "query", "expected"),
    [
        (CHINESE, "微服务的性能怎么优化", "我在用Go写微服务"),
        (CHINESE, "周末去哪里爬山比较好", "我喜欢爬山"),
        (CHINESE, "咪咪最近不爱吃饭", "我养了一只猫叫咪咪"),
        (JAPANESE, "おすすめのコーヒー豆は？", "私は毎朝コーヒーを飲みます"),
        (JAPANESE, "猫のごはんについて教えて", "猫を二匹飼っています"),
        (JAPANESE, "登山の準備は何が必要？", "週末は山に登ります"),
    ],
)
def test_cjk_ranking_works_where_the_seeds_word_tokenizer_fails(contents: list[str], query: str,
                                                               expected: str) -> None:
    # The right fact is the *least* confident one, so only similarity can put it first.
    facts = [Fact(id=f"fact_{i:08x}", content=c, confidence=0.7 if c == expected else 0.9)
             for i, c in enumerate(contents)]
    assert FactIndex.build(facts).top(query, top_k=1)[0].content == expected
    seed = seed_similarities(contents, query)
    assert seed[contents.index(expected)] == 0.0  # a whole sentence is one "word": nothing ever matches


def test_mixed_english_and_cjk() -> None:
    facts = facts_of("我在用Go写微服务", "I love hiking in the Alps", "私はPythonが好きです", "我喜欢爬山",
                     confidence=0.8)
    index = FactIndex.build(facts)
    assert index.top("how do I profile Go code?", 1)[0].content == "我在用Go写微服务"
    assert index.top("best Python libraries for 分析", 1)[0].content == "私はPythonが好きです"
    assert index.top("周末 hiking 计划", 2)[0].content in {"I love hiking in the Alps", "我喜欢爬山"}


def test_analyzer_tokens() -> None:
    assert analyze("I'm hiking, she hikes; we hiked") == ["hik", "hik", "hik"]
    assert analyze("Studies STUDIED study") == ["study", "study", "study"]
    assert analyze("我喜欢") == ["喜", "欢", "我喜", "喜欢"]  # 我 alone is a function character
    assert analyze("我喜欢", cjk_bigrams=False) == ["我", "喜", "欢"]
    assert analyze("猫を飼う") == ["猫", "飼", "猫を", "を飼", "飼う"]  # lone hiragana are particles
    assert analyze("コーヒー") == ["コ", "ヒ", "コー", "ーヒ", "ヒー"]
    assert analyze("Go写微服务") == ["go", "写", "微", "服", "务", "写微", "微服", "服务"]
    assert analyze("system design on my computer") == ["system", "design", "computer"]  # not stop words here
    assert analyze("ＧＯ") == ["go"]  # full width folds
    assert analyze("the and of a") == []
    assert analyze("") == []


# --- degenerate input ---------------------------------------------------------------------------------------


def test_no_facts() -> None:
    index = FactIndex.build([])
    assert index.top("anything", 5) == []
    assert FactSelector().select("1", 1, [], ["hello"]) == []


def test_facts_of_only_stop_words_rank_by_confidence() -> None:
    facts = [Fact(id="fact_00000001", content="the and of", confidence=0.7),
             Fact(id="fact_00000002", content="is it a", confidence=0.9),
             Fact(id="fact_00000003", content="!!!", confidence=0.8)]
    index = FactIndex.build(facts)
    assert index.matrix_t is None and not index.vocabulary
    assert [f.id for f in index.top("tell me about the weather", 3)] == ["fact_00000002", "fact_00000003",
                                                                         "fact_00000001"]


@pytest.mark.parametrize("query", ["", "   \n", "the of and", "???", "zzzz unknownword"])
def test_an_empty_or_unmatched_query_ranks_by_confidence(query: str) -> None:
    facts = facts_of("Likes tea", "Plays chess", "Speaks Dutch")
    for fact, confidence in zip(facts, [0.75, 0.95, 0.85], strict=True):
        fact.confidence = confidence
    assert [f.content for f in FactIndex.build(facts).top(query, 3)] == ["Plays chess", "Speaks Dutch",
                                                                          "Likes tea"]


def test_build_query_uses_the_last_three_turns() -> None:
    assert build_query(["one", "two", "three", "four"]) == "two\nthree\nfour"
    assert build_query(["only"]) == "only"
    assert build_query([]) == ""
    assert build_query(["a", "b"], turns=0) == ""


def test_select_scores_against_the_last_three_turns_only() -> None:
    facts = [Fact(id="fact_00000001", content="Writes Go microservices", confidence=0.9),
             Fact(id="fact_00000002", content="Has a cat named Miso", confidence=0.8)]
    selector = FactSelector(top_k=1)
    old_talk = ["my cat Miso is sick", "ok", "thanks", "anyway"]
    assert selector.select("1", 1, facts, old_talk)[0].content == "Writes Go microservices"  # cat turn too old
    assert selector.select("1", 1, facts, ["anyway", "my cat Miso is sick"])[0].content == "Has a cat named Miso"


# --- the cache ---------------------------------------------------------------------------------------------


def test_the_index_is_fitted_once_per_revision() -> None:
    selector = FactSelector()
    facts = facts_of("Writes Go", "Likes tea")
    first = selector.index_for("1", 7, facts)
    assert selector.index_for("1", 7, facts) is first
    selector.select("1", 7, facts, ["tea?"])
    selector.select("1", 7, facts, ["go?"])
    assert selector.index_for("1", 7, facts) is first
    changed = [*facts, *facts_of("Plays chess")]
    second = selector.index_for("1", 8, changed)
    assert second is not first
    assert [f.content for f in second.facts] == ["Writes Go", "Likes tea", "Plays chess"]
    assert selector.index_for("1", 8, changed) is second


def test_select_uses_the_cached_index_for_the_same_revision() -> None:
    builds: list[int] = []

    def counting_build(facts: Sequence[Fact]) -> FactIndex:
        builds.append(len(facts))
        return FactIndex.build(facts)

    selector = FactSelector(build=counting_build)
    facts = facts_of("Writes Go", "Likes tea")
    for text in ["go", "tea", "both", "neither"]:
        selector.select("1", 3, facts, [text])
    assert builds == [2]
    selector.select("1", 4, [*facts, *facts_of("Plays chess")], ["chess"])
    assert builds == [2, 3]


def test_users_have_separate_cache_entries() -> None:
    selector = FactSelector()
    alice = selector.index_for("1", 1, facts_of("Alice fact"))
    bob = selector.index_for("2", 1, facts_of("Bob fact"))
    assert alice is not bob
    assert selector.index_for("1", 1, facts_of("ignored")) is alice


def test_cache_size_bound_evicts_the_least_recently_used() -> None:
    selector = FactSelector(cache_size=2)
    a = selector.index_for("a", 1, facts_of("A"))
    b = selector.index_for("b", 1, facts_of("B"))
    assert selector.index_for("a", 1, facts_of("A")) is a  # touch a: b is now least recently used
    selector.index_for("c", 1, facts_of("C"))
    assert selector.index_for("a", 1, facts_of("A")) is a
    assert selector.index_for("b", 1, facts_of("B")) is not b  # evicted, refitted
    assert selector.index_for("c", 1, facts_of("C")) is not None


def test_forget_drops_the_cached_index() -> None:
    selector = FactSelector()
    first = selector.index_for("1", 1, facts_of("A"))
    selector.forget("1")
    assert selector.index_for("1", 1, facts_of("A")) is not first


def test_a_confident_off_topic_fact_no_longer_beats_the_on_topic_one_with_a_three_turn_query() -> None:
    """Three chat turns touch many things the memory holds (coffee, yoga, Formula 1), but they are about the run:
    the marathon fact matches the most of them. Scaled to the best match it scores 1, so the more confident
    facts that share a word or two with the chat cannot outrank it, however long the query."""
    on_topic = Fact(id="fact_000000ff", content="Is training for the Berlin marathon and runs 60 km a week",
                    confidence=0.7)
    facts = [*facts_of(*DISTRACTORS, confidence=0.95), on_topic]
    turns = [
        "I went for a long run this morning before breakfast, cycled back along the river and had oat milk in "
        "my coffee",
        "Nice! How far did you get, and how are your legs after that? Still doing yoga every morning?",
        "About 25 km. The marathon is only six weeks away now and my knees hurt a bit; I watched Formula 1 to "
        "recover",
    ]
    index = FactIndex.build(facts)
    assert index.top(build_query(turns), top_k=1) == [on_topic]
    assert index.similarities(build_query(turns))[-1] == pytest.approx(1.0)


# --- fused with meaning (DESIGN section 16) --------------------------------------------------------------------


def unit(*components: float, size: int = 8) -> np.ndarray:
    vector = np.zeros(size, dtype=np.float32)
    vector[: len(components)] = components
    return vector / np.linalg.norm(vector)


def test_with_vectors_a_fact_sharing_no_word_with_the_query_ranks_by_meaning() -> None:
    facts = facts_of("Adopted a beagle puppy last spring", "Plays the cello", "Bakes sourdough bread", confidence=0.9)
    fact_vectors = [unit(1, 0.2), unit(0, 1), unit(0.1, 0, 1)]
    query = ["How do I stop my dog chewing the sofa?"]
    selector = FactSelector(top_k=1)
    lexical = selector.select("u", 1, facts, query, 1)
    fused = selector.select("v", 1, facts, query, 1, query_vector=unit(1, 0.1), fact_vectors=fact_vectors)
    assert lexical[0].content != facts[0].content  # no shared word: confidence and age decide
    assert fused[0].content == facts[0].content


def test_the_cosine_is_rescaled_per_query_so_confidence_does_not_decide() -> None:
    # Cosines of a small model all sit near 0.8: raw, their spread (0.02) would lose to a confidence gap of 0.1.
    facts = [Fact(id="fact_a", content="alpha", confidence=0.8), Fact(id="fact_b", content="beta", confidence=0.9)]
    index = FactIndex.build(facts, [unit(1, 0.75), unit(1, 0.85)])
    query = unit(1, 0.7)
    assert [f.id for f in index.top("gamma", 2, query_vector=query)] == ["fact_a", "fact_b"]
    meanings = index.meaning.rescaled(query) if index.meaning else None
    assert meanings is not None and meanings.min() == 0.0 and meanings.max() == 1.0


def test_a_fact_without_a_vector_keeps_its_lexical_similarity() -> None:
    facts = facts_of("Writes Go microservices", "Plays the cello", "Bakes sourdough bread")
    index = FactIndex.build(facts, [None, unit(1), unit(0, 1)])
    fused = index.fused("which Go framework should I use", unit(0, 1))
    assert fused[0] == pytest.approx(index.similarities("which Go framework should I use")[0])
    assert index.vectors_held == 2


@pytest.mark.parametrize("kind", ["another length", "all zeros"])
def test_a_query_vector_that_does_not_fit_leaves_the_lexical_ranking(kind: str) -> None:
    query_vector = unit(1, size=4) if kind == "another length" else np.zeros(8, dtype=np.float32)
    facts = facts_of("Writes Go microservices", "Plays the cello")
    index = FactIndex.build(facts, [unit(1), unit(0, 1)])
    assert list(index.fused("Go", query_vector)) == list(index.similarities("Go"))


def test_without_vectors_the_selection_is_todays() -> None:
    facts = facts_of(*DISTRACTORS)
    texts = ["any tips for my vegetable garden?", "I grow tomatoes too"]
    assert FactSelector().select("a", 1, facts, texts) == FactSelector().select(
        "b", 1, facts, texts, query_vector=None, fact_vectors=None
    )
    assert FactSelector().select("c", 1, facts, texts, query_vector=unit(1)) == FactSelector().select(
        "d", 1, facts, texts
    )  # a query vector without fact vectors changes nothing


def test_the_embedded_query_is_the_conversation_the_lexical_query_reads() -> None:
    from bot.memory.selector import embedding_query

    turns = ["We talked about my beagle", "the puppy?", "How do I stop her chewing the legs of the sofa every night?"]
    assert embedding_query(turns) == build_query(turns) == "\n".join(turns)
    assert embedding_query(["one", *turns]) == build_query(turns)
    assert embedding_query([]) == ""
    assert embedding_query(["我家的小狗总是在晚上咬沙发的腿怎么办"]) == "我家的小狗总是在晚上咬沙发的腿怎么办"


def test_a_query_vector_that_is_not_finite_leaves_the_lexical_ranking() -> None:
    facts = facts_of("Writes Go microservices", "Plays the cello")
    index = FactIndex.build(facts, [unit(1), unit(0, 1)])
    broken = np.full(8, np.nan, dtype=np.float32)
    assert list(index.fused("Go", broken)) == list(index.similarities("Go"))


def test_index_terms_of_mixed_scripts_keep_each_run_apart() -> None:
    from bot.memory.pipeline.selector import index_terms

    assert index_terms("Melanie's cats") == ["melan", "cat"]
    assert index_terms("我的猫 and Melanie's cats") == ["猫", "我的", "的猫", "melan", "cat"]


def test_a_new_revision_reuses_the_words_of_unchanged_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.memory.pipeline import selector as module

    before = facts_of(*(f"Plans trip {n} to Lisbon with her sister in the spring" for n in range(30)))
    after = [*before[:28], *facts_of("Moved the billing service to a new cluster", "Learns the cello on Sundays")]
    old = module.FactIndex.build(before)
    split: list[str] = []
    terms_of = module.index_terms

    def counted(text: str) -> list[str]:
        split.append(text)
        return terms_of(text)

    monkeypatch.setattr(module, "index_terms", counted)
    selector = module.FactSelector()
    reused = selector.build(after, previous=old)
    assert split == [after[28].content, after[29].content]  # only the new facts' words were split
    split.clear()
    fresh = module.FactIndex.build(after)
    assert len(split) == 30
    assert isinstance(reused, module.FactIndex) and reused.vocabulary == fresh.vocabulary
    assert reused.terms == fresh.terms and reused.matrix_t is not None and fresh.matrix_t is not None
    assert (reused.matrix_t != fresh.matrix_t).nnz == 0  # the same index, whatever it reused
    assert reused.top("the cello", 1) == fresh.top("the cello", 1) == [after[29]]
