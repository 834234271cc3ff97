"""The Prefect API a CLI flow run reports to: PREFECT_API_URL if set, else Prefect's temporary
local server, started here before any flow so that a first run works and a killed run leaves
nothing behind.

Prefect 3.9 starts that server (a uvicorn subprocess) lazily from whichever thread first needs
the API and waits PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS (its default, 20 s, is less
than a fresh HOME's database migration takes on a loaded 2-core machine). Started here, from the
main thread, with a generous timeout (flows/quiet.py sets 300 s unless the environment says
otherwise), and with the Linux parent-death signal set in the child: when the CLI dies by any
signal, SIGKILL included, the kernel kills the server too. Prefect's later calls reuse this
server (it is a per-process singleton), so no other thread starts one.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1


class OrchestratorUnavailable(RuntimeError):
    """The temporary Prefect server did not answer in time."""


def _parent_death_signal() -> Callable[[], None]:
    """A preexec function: SIGKILL this child when the starting thread's process dies.

    Resolved before the fork, so the child only makes one system call (no imports, no locks);
    a parent already gone between fork and prctl is detected by the parent pid check."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _subprocess_dying_with(preexec: Callable[[], None]) -> types.ModuleType:
    """The subprocess module, except that Popen children get `preexec`."""
    shim = types.ModuleType("subprocess")
    shim.__dict__.update(subprocess.__dict__)

    class Popen(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("preexec_fn", preexec)
            super().__init__(*args, **kwargs)

    shim.__dict__["Popen"] = Popen
    return shim


def ensure_api() -> int | None:
    """Start the temporary server unless PREFECT_API_URL names one; its pid, if started here.

    Call from the main thread (the parent-death signal follows the thread that forked)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

    if PREFECT_API_URL.value():
        return None
    from prefect.server.api import server as prefect_server

    timeout = PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
    instance = prefect_server.SubprocessASGIServer()
    if instance.running and instance.server_process is not None:
        return instance.server_process.pid
    if sys.platform == "linux" and threading.current_thread() is threading.main_thread():
        vars(prefect_server)["subprocess"] = _subprocess_dying_with(_parent_death_signal())
    try:
        instance.start(timeout=timeout)
    except RuntimeError as exc:
        instance.stop()
        raise OrchestratorUnavailable(
            f"Prefect's temporary server did not start within {timeout} s (raise "
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, or set PREFECT_API_URL to a "
            f"running `prefect server start`): {str(exc)[:200]}"
        ) from exc
    finally:
        vars(prefect_server)["subprocess"] = subprocess
    assert instance.server_process is not None
    return instance.server_process.pid
