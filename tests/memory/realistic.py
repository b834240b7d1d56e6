"""Realistic memory contents for load tests and benchmarks: facts of the length the extractor writes for a
talkative user (150-300 characters, third person, several details each), seeded and distinct."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.memory.models import Fact, MemoryFile, iso
from bot.memory.rules.sensitive import categories_in

_OPENERS = (
    "Works as a {job} at a {org} in {place}, where they mostly {task}",
    "Has been learning {skill} for about {n} months, practising in the evenings after work",
    "Lives with their {person} and a {pet} named {name} in a small flat near the old harbour of {place}",
    "Is preparing a talk for a local meetup about {skill}, and worries that the live demo will fail",
    "Spends most weekends {hobby}, usually with friends from their university days",
    "Recently moved from {place} to {place2} for a new job and is still looking for a good bakery nearby",
    "Prefers answers that start with a short summary and then give {style}, and dislikes long disclaimers",
    "Is planning a two-week trip to {place} next spring with their {person}, mainly to {activity}",
    "Maintains an open-source {project} in their free time and triages its issues on Sunday mornings",
    "Grew up in {place} speaking two languages at home and still calls their {person} every week",
)
_CLAUSES = (
    "they find {skill} harder than expected but enjoy it",
    "their {person} keeps asking them for advice about {skill}",
    "they want to get better at {hobby} before the summer",
    "they keep notes about {project} in a paper notebook",
    "their team recently switched to {skill} for new services",
    "they are saving money for a new bike and a trip to {place}",
    "they try to avoid meetings before ten in the morning",
    "they would like to mentor juniors at their {org} next year",
    "they sleep badly when deadlines at work pile up",
    "they cook {dish} for friends almost every Friday",
)
_WORDS = {
    "job": ("backend engineer", "nurse", "data analyst", "high-school teacher", "architect", "sysadmin",
            "product designer", "lab technician", "accountant", "paramedic"),
    "org": ("logistics start-up", "public hospital", "bank", "design agency", "city library", "game studio",
            "university lab", "shipping company", "insurance firm", "bike shop"),
    "place": ("Lisbon", "Osaka", "Toronto", "Lyon", "Melbourne", "Taipei", "Austin", "Kraków", "Nairobi",
              "Edinburgh", "Porto", "Seoul", "Tallinn", "Hanoi", "Oslo", "Bogotá"),
    "task": ("maintain the billing service", "run night shifts on the cardiology ward", "build weekly reports",
             "review building permits", "keep the servers patched", "plan the next product release"),
    "skill": ("Rust", "Korean", "watercolour painting", "Kubernetes", "jazz piano", "woodworking", "statistics",
              "Elixir", "bouldering technique", "sourdough baking", "Go", "film photography"),
    "person": ("sister", "brother", "partner", "mother", "father", "best friend", "daughter", "flatmate"),
    "pet": ("cat", "dog", "rabbit", "parrot", "tortoise"),
    "name": ("Miso", "Pixel", "Noodle", "Biscuit", "Tofu", "Kernel", "Pepper", "Mochi", "Ziggy", "Olive"),
    "hobby": ("trail running in the hills", "bouldering at the climbing gym", "birdwatching by the river",
              "playing tabletop role-playing games", "restoring old film cameras", "cycling long distances"),
    "style": ("a code example", "a numbered plan", "the trade-offs in a table", "one concrete recommendation"),
    "activity": ("hike the coastal trails", "visit their grandparents", "eat their way through the markets",
                 "see the autumn leaves", "attend a music festival"),
    "project": ("static site generator", "Discord bot for their book club", "home weather station",
                "budgeting app", "chess opening trainer", "recipe scraper"),
    "dish": ("a big pot of curry", "homemade pizza", "dumplings", "a vegetarian lasagne", "paella"),
}


def _fill(template: str, rng: random.Random) -> str:
    values = {key: rng.choice(options) for key, options in _WORDS.items()}
    values["place2"] = rng.choice([p for p in _WORDS["place"] if p != values["place"]])
    values["n"] = str(rng.randint(2, 30))
    return template.format(**values)


def long_fact_texts(count: int, seed: int = 1, *, low: int = 150, high: int = 300) -> list[str]:
    """`count` distinct fact sentences of `low`-`high` characters, seeded; ordinary ones: the few that the sensitive
    backstop's trained reader takes for sensitive ("...they sleep badly when deadlines at work pile up") are skipped,
    as the tests that use them measure load, not the backstop."""
    rng = random.Random(seed)
    texts: list[str] = []
    seen: set[str] = set()
    while len(texts) < count:
        target = rng.randint(low, high)
        text = _fill(rng.choice(_OPENERS), rng)
        while len(text) < target:
            longer = text + rng.choice(("; ", ", and ", "; also, ")) + _fill(rng.choice(_CLAUSES), rng)
            if len(longer) >= high:
                break
            text = longer
        text += "."
        if low <= len(text) <= high and text not in seen and not categories_in(text):
            seen.add(text)
            texts.append(text)
    return texts


def memory_at_cap(facts: int = 100, seed: int = 1) -> MemoryFile:
    """A memory file with `facts` long facts, confidences spread over 0.7-1.0, created over the last year."""
    rng = random.Random(seed)
    now = datetime(2025, 6, 1, tzinfo=UTC)
    memory = MemoryFile()
    for i, text in enumerate(long_fact_texts(facts, seed)):
        created = iso(now - timedelta(days=rng.randint(0, 365)))
        memory.facts.append(
            Fact(id=f"fact_{seed % 4096:03x}{i:05x}", content=text, category="context",
                 confidence=round(rng.uniform(0.7, 1.0), 2), createdAt=created, lastConfirmedAt=created)
        )
    return memory
