"""The aiohttp side of the mock: routes, middleware, streaming, auth, limits and latency."""
