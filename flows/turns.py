"""Turns for the search API's one search thread, taken fairly by callers (API keys)."""

from __future__ import annotations

import asyncio
from collections import deque


class FairTurns:
    """One search at a time, taken in turn by callers: each caller's searches wait in its own
    line, and the turn goes round the callers that wait (a caller that comes back goes to the
    end of the round), so one caller's queue never stands between another and its turn."""

    def __init__(self) -> None:
        self._lines: dict[str, deque[asyncio.Future[None]]] = {}
        self._busy = False

    async def acquire(self, caller: str) -> None:
        if not self._busy:
            self._busy = True
            return
        turn = asyncio.get_running_loop().create_future()
        self._lines.setdefault(caller, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the turn came as it was cancelled: pass it on
            elif turn in (line := self._lines.get(caller, deque())):
                line.remove(turn)
                if not line:
                    del self._lines[caller]
            raise

    def release(self) -> None:
        while self._lines:
            caller = next(iter(self._lines))
            line = self._lines.pop(caller)
            turn = line.popleft()
            if line:
                self._lines[caller] = line  # its next search waits for the others' turns
            if not turn.done():
                turn.set_result(None)
                return
        self._busy = False
