"""Security headers on every response (pure ASGI middleware: no per-request overhead).

Content-Security-Policy allows only the page's own origin: no inline scripts, no external
hosts. `frame-ancestors` comes from settings (embedding is allowed by default so that
teachers can put the page in slides).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def security_headers(frame_ancestors: str) -> list[tuple[bytes, bytes]]:
    """The headers added to every response.

    `frame_ancestors` "*" leaves the directive out: in CSP, `*` matches only network schemes,
    so it would refuse slides opened from a file (file:) or written as data:/about: pages.
    Any other value (e.g. "'none'", "'self' https://school.example") is sent as given.
    """
    csp = (
        "default-src 'self'; script-src 'self'; "
        # Plotly writes <style> elements and inline style attributes at run time.
        "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
        "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'self'"
    )
    if frame_ancestors.strip() != "*":
        csp += f"; frame-ancestors {frame_ancestors}"
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"cross-origin-opener-policy", b"same-origin"),
    ]


class SecurityHeadersMiddleware:
    """Adds `security_headers(frame_ancestors)` to every HTTP response."""

    def __init__(self, app: ASGIApp, frame_ancestors: str) -> None:
        self.app = app
        self.headers = security_headers(frame_ancestors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + self.headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
