"""Turns for the search API's one search thread, taken fairly by tenants and, within a tenant,
by its callers (API keys)."""

from __future__ import annotations

import asyncio
from collections import deque

Line = deque[asyncio.Future[None]]


class FairTurns:
    """One search at a time, taken in turn: the turn goes round the tenants that wait, and
    within a tenant round its callers that wait; each caller's searches wait in its own line. A
    caller or tenant that comes back goes to the end of its round, so neither one caller's
    queue nor a tenant's many keys ever stand between another tenant and its turn."""

    def __init__(self) -> None:
        self._tenants: dict[str, dict[str, Line]] = {}
        self._busy = False

    async def acquire(self, caller: str, tenant: str = "") -> None:
        if not self._busy:
            self._busy = True
            return
        turn = asyncio.get_running_loop().create_future()
        self._tenants.setdefault(tenant, {}).setdefault(caller, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the turn came as it was cancelled: pass it on
            else:
                self._forget(turn, caller, tenant)
            raise

    def release(self) -> None:
        while self._tenants:
            tenant = next(iter(self._tenants))
            callers = self._tenants.pop(tenant)
            caller = next(iter(callers))
            line = callers.pop(caller)
            turn = line.popleft()
            if line:
                callers[caller] = line  # its next search waits for its tenant's other callers
            if callers:
                self._tenants[tenant] = callers  # and the tenant for the other tenants
            if not turn.done():
                turn.set_result(None)
                return
        self._busy = False

    def _forget(self, turn: asyncio.Future[None], caller: str, tenant: str) -> None:
        callers = self._tenants.get(tenant, {})
        if turn in (line := callers.get(caller, deque())):
            line.remove(turn)
            if not line:
                del callers[caller]
            if not callers:
                del self._tenants[tenant]
