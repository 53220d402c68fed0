"""How long the observer waits on a server: its queries are small, so a server silent this long
has stopped answering (frozen, paused, cut off from the network), and the observer gives its
session up instead of holding the run, or the command, until the server answers again."""

from __future__ import annotations

# Opening an observer's session, and each of its queries.
OBSERVER_SESSION_TIMEOUT_S = 5.0
