"""Record the completions requests a client sends (lm-eval's, for the replay test's fixture).

A pass-through proxy: every ``POST`` to it goes on to ``--upstream`` unchanged, and its JSON
body and the upstream's JSON answer are appended to ``--out``, one ``{"request", "response"}``
object a line, in the order the answers came back::

    mockserver --port 8000 &
    python docs/lm-eval/record_requests.py --upstream http://127.0.0.1:8000 --port 8001 \\
        --out requests.jsonl &
    lm_eval --model local-completions \\
        --model_args base_url=http://127.0.0.1:8001/v1/completions,...

Only for re-making ``tests/fixtures/lm_eval/``; nothing in the product or the tests runs it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aiohttp import ClientSession, web

UPSTREAM = web.AppKey("upstream", str)
OUT = web.AppKey("out", Path)
SESSION = web.AppKey("session", ClientSession)


async def forward(request: web.Request) -> web.Response:
    """Send the request on, write the exchange down, answer what the upstream answered."""
    body = await request.read()
    session = request.app[SESSION]
    async with session.post(request.app[UPSTREAM] + request.path_qs, data=body,
                            headers={"Content-Type": "application/json"}) as answer:
        data = await answer.read()
        status = answer.status
    record = {"request": json.loads(body), "status": status, "response": json.loads(data)}
    with request.app[OUT].open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return web.Response(status=status, body=data, content_type="application/json")


async def _session(app: web.Application):  # type: ignore[no-untyped-def]
    async with ClientSession() as session:
        app[SESSION] = session
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the server to forward to")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines file to append to")
    args = parser.parse_args()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[UPSTREAM] = args.upstream.rstrip("/")
    app[OUT] = args.out
    app.cleanup_ctx.append(_session)
    app.add_routes([web.post("/{tail:.*}", forward)])
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
