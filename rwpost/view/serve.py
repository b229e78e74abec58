"""Serve the view with uvicorn on the loopback interface (another one only when asked, with a warning)."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable

from rwpost.errors import ConfigError

LOOPBACK = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> list[str] | None:
    """Host headers the app answers: on loopback only this machine's names (a DNS-rebound name is
    refused); on another interface any (the user asked for it)."""
    return ["127.0.0.1", "localhost", "::1", host] if is_loopback(host) else None


def check_port(host: str, port: int) -> None:
    """Refuse, in one line, a port out of range or already taken, before the server starts."""
    if not 0 < port < 65536:
        raise ConfigError(f"--port {port}: not a port number (1-65535)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(f"--host {host} --port {port}: cannot listen there ({exc.strerror})") from None


def serve(
    folders: list[str | os.PathLike[str]],
    host: str = LOOPBACK,
    port: int = 8765,
    *,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the view of ``folders`` until interrupted."""
    import uvicorn

    from rwpost.view.app import build_app

    check_port(host, port)
    app = build_app(folders, allowed_hosts=allowed_hosts(host, port))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    if on_ready is not None:
        shown = f"[{host}]" if ":" in host else host
        on_ready(f"http://{shown}:{port}/")
    server.run()
