"""The configured Dask scheduler: its address, whether a Dask scheduler answers there (within a
bounded time, whatever the server does), and a Client connected to it."""
from __future__ import annotations

from typing import Any
from urllib.parse import urlparse


class SchedulerError(ConnectionError):
    """The configured Dask scheduler cannot be reached."""


def parse_scheduler(address: str) -> tuple[str, int]:
    """'tcp://host:port' (or 'host:port') -> (host, port); ValueError if it is not one."""
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if parsed.scheme not in ("tcp", "tls") or not parsed.hostname or parsed.port is None:
        raise ValueError("expected tcp://host:port")
    return parsed.hostname, parsed.port


def _scheduler_identity(address: str, timeout_s: float) -> dict[str, Any]:
    """The scheduler's answer to Dask's `identity` request, within timeout_s whatever the server
    does: an open port alone proves nothing (a server that accepts and stays silent held a Client
    for minutes), and distributed's own connect timeout does not bound its handshake. The request
    runs on its own event loop in a daemon thread (the caller may be inside a running loop, e.g.
    a notebook), and is abandoned at the deadline."""
    import asyncio
    import threading

    from distributed import comm
    from distributed.security import Security

    async def ask() -> dict[str, Any]:
        # deserialize=False: nothing from an unknown server is unpickled
        connection = await comm.connect(address, timeout=timeout_s, deserialize=False,
                                        **Security().get_connection_args("client"))
        try:
            await connection.write({"op": "identity", "reply": True})
            return await connection.read()
        finally:
            connection.abort()

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["reply"] = asyncio.run(asyncio.wait_for(ask(), timeout_s))
        except BaseException as error:  # reported by the caller
            outcome["error"] = error

    thread = threading.Thread(target=run, name="dask-scheduler-check", daemon=True)
    thread.start()
    thread.join(timeout_s + 1)  # wait_for ends it at timeout_s; the second is for its clean-up
    if "reply" in outcome:
        return outcome["reply"]
    error = outcome.get("error")
    if error is None or isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    raise error


def scheduler_problem(address: str, timeout_s: float) -> str | None:
    """Why the scheduler at `address` cannot be used (None if a Dask scheduler answers there
    within timeout_s)."""
    key = "rdataframe.dask.scheduler"
    try:
        parse_scheduler(address)
    except ValueError as error:
        return f"config key '{key}' = {address!r}: not a scheduler address ({error})"
    where = f"config key '{key}' = {address!r}"
    try:
        reply = _scheduler_identity(address, timeout_s)
    except Exception as error:
        return (f"{where}: no Dask scheduler answered within {timeout_s:g} s "
                f"(rdataframe.dask.connect_timeout_s): {type(error).__name__}: {error}")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        return f"{where}: the server there is not a Dask scheduler (it answered {str(reply)[:80]!r})"
    return None


def connect_scheduler(address: str, timeout_s: float):
    """A dask.distributed Client on `address`, or SchedulerError within about timeout_s."""
    problem = scheduler_problem(address, timeout_s)
    if problem:
        raise SchedulerError(problem)
    from dask.distributed import Client

    try:
        return Client(address, timeout=f"{timeout_s}s")
    except (OSError, TimeoutError) as error:
        raise SchedulerError(f"config key 'rdataframe.dask.scheduler' = {address!r}: no Dask scheduler answers "
                             f"within {timeout_s:g} s: {error}") from error
