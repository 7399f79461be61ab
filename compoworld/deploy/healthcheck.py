"""Container health check with nothing but the standard library (the image has no curl).

``python -m compoworld.deploy.healthcheck [URL]`` exits 0 when ``URL`` (default
``$HEALTHCHECK_URL`` or ``http://127.0.0.1:8000/health``) answers 200 with
``{"status": "ok"}``, else 1 with the reason on stderr. Used by the Dockerfile's
HEALTHCHECK and by docker-compose.yml. It imports nothing heavy so it stays cheap
when run every few seconds.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

__all__ = ["DEFAULT_URL", "check", "main"]

DEFAULT_URL = "http://127.0.0.1:8000/health"


def check(url: str, timeout_s: float = 4.0) -> str | None:
    """Return ``None`` if ``url`` reports healthy, else a one-line reason."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        return f"{url} answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url} unreachable: {exc}"
    if status != 200:
        return f"{url} answered HTTP {status}"
    try:
        payload = json.loads(body)
    except ValueError:
        return f"{url} did not answer JSON"
    if not isinstance(payload, dict) or payload.get("status") != "ok":
        return f"{url} reports {payload!r}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    url = args[0] if args else os.environ.get("HEALTHCHECK_URL", DEFAULT_URL)
    reason = check(url)
    if reason is not None:
        print(f"unhealthy: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
