"""Stand-ins and readers shared by the tests that try to break the bot's promises (`hostile`, `storage`)."""
