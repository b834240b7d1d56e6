"""Ticket channels through discord.py's own dispatch: each restricted ticket channel a user talks in gets its own
summaries, and `MEMORY_MAX_PLACES` keeps only the most recently updated ones (the DM place's are never dropped)."""

from __future__ import annotations

from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import dispatch
from tests.support.llm_server import extraction

TICKETS = 4


async def test_only_the_most_recently_updated_ticket_channels_keep_their_summaries(make_harness: MakeHarness) -> None:
    h = await make_harness(memory_max_places=2)
    s = make_scene(h)
    h.llm.extract = lambda body: extraction(work="Runs a small bakery")
    await dispatch(h.bot, "message", h.discord.message(s.alice_dm, s.alice_user, "I run a small bakery."))
    await h.settle()

    channels = []
    for n in range(TICKETS):
        ticket = h.discord.text_channel(s.guild, name=f"ticket-{n}", private=True)
        channels.append(ticket)
        h.llm.extract = lambda body, n=n: extraction(top=f"Order {n} has not arrived")  # type: ignore[misc]
        await dispatch(h.bot, "message", h.discord.mention_bot(ticket, s.alice, f"order {n} has not arrived"))
        await h.settle()
        stored = h.memory_on_disk(ALICE_ID)
        assert stored is not None and len(stored["places"]) == min(n + 1, 2)

    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None
    assert f"channel:{channels[-1].id}" in stored["places"]  # the ticket just written is kept
    assert stored["places"][f"channel:{channels[-1].id}"]["user"]["topOfMind"]["summary"] == "Order 3 has not arrived"
    assert f"channel:{channels[0].id}" not in stored["places"]
    assert stored["user"]["workContext"]["summary"] == "Runs a small bakery"  # the DM place's summaries stay
