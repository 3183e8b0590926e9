"""Pure ASGI middleware and exception handlers: body size limit, security headers, errors."""
