"""Discord-facing features, one cog per module."""
