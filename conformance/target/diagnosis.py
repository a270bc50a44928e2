"""Why a target could not be tested, in one line that names the cause and the fix.

A run that cannot reach its server, or that the server refuses as a whole, gives no verdicts:
it ends with exit status 2 and one of these lines (the README's exit-code table). The cause of
a connection failure is read from the exception's type
(:class:`~conformance.transport.Failure`), never from aiohttp's text, which says
``ssl:default`` even for a plain-HTTP port that nothing listens on.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from conformance.client import STOPPED_ANSWERING
from conformance.model import RunResult
from conformance.run.refusal import RETRY_LATER, Refusal, retries_phrase
from conformance.run.settings import Settings
from conformance.target.options import TargetOptions
from conformance.transport import Exchange, Failure, Network, Termination
from conformance.wire_json import parse_json

PROXY_VARIABLES_HINT = "or HTTPS_PROXY / HTTP_PROXY, NO_PROXY"


def _where(url: str) -> str:
    """``host:port`` of a URL, with the scheme's default port spelled out."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _with_scheme(url: str, scheme: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))


def _reason(text: str) -> str:
    """The informative tail of an aiohttp connection error."""
    for marker in ("certificate verify failed: ", "[SSL: ", "[SSL] "):
        if marker in text:
            return text[text.index(marker):][:200].rstrip(")]'\" ")
    if "[" in text and text.endswith("]"):
        return text[text.rindex("[", 0, len(text) - 1) + 1:-1][:200]
    return text[:200]


def unreachable(exchange: Exchange, base_url: str, network: Network,
                options: TargetOptions) -> str:
    """Why ``exchange`` (the first request of a run) got no answer, and what to do."""
    url = exchange.request.url
    where = _where(url)
    text = " ".join((exchange.error or "no response").split())
    flag = options.flag
    proxy = network.redacted().proxy
    failure = exchange.failure
    if failure is None and exchange.termination is Termination.TOTAL_TIME_LIMIT:
        return (f"{where} accepted the connection but sent no answer to GET {url} within "
                f"{options.timeout:g} s: raise {flag('timeout')} if the server is slow")
    if failure is Failure.REFUSED:
        return (f"cannot connect to {where}: connection refused, nothing listens there: start "
                f"the server, or check {flag('base-url')}")
    if failure is Failure.DNS:
        return (f"cannot connect to {urlsplit(url).hostname}: the host name does not resolve "
                f"(DNS): check {flag('base-url')}")
    if failure is Failure.UNREACHABLE:
        return (f"cannot connect to {where}: no route to the host: check {flag('base-url')} "
                f"and the network, or pass {flag('proxy')} URL")
    if failure is Failure.CONNECT_TIMEOUT:
        return (f"cannot connect to {where}: no connection within the connect timeout: check "
                f"{flag('base-url')} and any firewall on the way, or pass {flag('proxy')} URL")
    if failure is Failure.TLS_CERTIFICATE:
        return (f"cannot verify the TLS certificate of {url} ({_reason(text)}): pass "
                f"{flag('cacert')} FILE with the CA that signed it (or {flag('insecure')} to "
                "skip verification)")
    if failure is Failure.TLS_PLAIN_HTTP:
        return (f"{where} speaks plain HTTP, not TLS: use http://, as in {flag('base-url')} "
                f"{_with_scheme(base_url, 'http')}")
    if failure is Failure.PROXY_REFUSED:
        return (f"the proxy {proxy} did not let the request through ({_reason(text)}): check "
                f"{flag('proxy')} ({PROXY_VARIABLES_HINT}), with credentials as "
                "http://USER:PASS@HOST:PORT if it asks for them")
    if failure is Failure.PROXY_UNREACHABLE:
        return (f"cannot connect to the proxy {proxy} ({_reason(text)}): check "
                f"{flag('proxy')} ({PROXY_VARIABLES_HINT})")
    https = urlsplit(url).scheme == "https"
    if failure in (Failure.TLS_CLIENT_CERTIFICATE, Failure.TLS) or (
            failure in (Failure.CLOSED, Failure.RESET) and https and not network.cert):
        # TLS 1.3 servers refuse a missing client certificate after the handshake: the
        # client sees the connection closed (or reset, when the alert races the request)
        # before any answer
        return (f"the TLS connection to {url} failed ({_reason(text)}): if the server asks "
                f"for a client certificate, pass {flag('cert')} FILE {flag('key')} FILE")
    method = exchange.request.method
    if failure is Failure.CLOSED and not https and method == "GET":
        # the first contact: an HTTPS port closes a plain-HTTP request unanswered
        return (f"{where} closed the connection without answering {method} {url}: if it "
                f"serves HTTPS, use https://, as in {flag('base-url')} "
                f"{_with_scheme(base_url, 'https')}")
    if failure in (Failure.RESET, Failure.CLOSED):
        how = "reset" if failure is Failure.RESET else "closed"
        return (f"{where} {how} the connection without answering {method} {url}, on a fresh "
                "connection too: the server broke before answering; look at its logs")
    return f"cannot connect to {url}: {text}"


def error_message(exchange: Exchange) -> str | None:
    """The server's own words from an error envelope (``error.message``, or FastAPI's
    ``detail``), shortened; None when the body has none."""
    try:
        body = parse_json(exchange.body)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    if message is None:
        message = body.get("detail") or body.get("message")
    if not isinstance(message, str) or not message.strip():
        return None
    message = " ".join(message.split())
    return message if len(message) <= 80 else message[:79] + "…"


def key_refused(exchange: Exchange, options: TargetOptions, *, key_sent: bool) -> str:
    """The server refused the credentials (401 / 403) of the first request."""
    said = error_message(exchange)
    words = f': "{said}"' if said else ""
    what = "refused the API key" if key_sent else "asks for an API key"
    where = f"(HTTP {exchange.status} to {exchange.request.method} {exchange.request.url}{words})"
    return (f"the server {what} {where}: pass {options.flag('api-key')} or set "
            "CONFORMANCE_API_KEY")


def still_refused(exchange: Exchange, options: TargetOptions, retries: int) -> str:
    """429 / 503 to the first request, after every retry."""
    what = "rate-limits this client (429)" if exchange.status == 429 else "is unavailable (503)"
    return (f"the server {what} after {retries_phrase(retries)} of the first request, GET "
            f"{exchange.request.url}: wait and run again, or raise {options.flag('retries')}")


def stopped_unanswered(result: RunResult, options: TargetOptions) -> str | None:
    """The run stopped early (its deadline passed, or the server stopped answering) before
    any completion request got a status line; None otherwise."""
    stats = result.stats
    if stats.stopped is None or stats.answered:
        return None
    return stopped_line(stats.stopped, options)


def stopped_line(stopped: str, options: TargetOptions) -> str:
    """Why a run stopped before anything was answered (``stopped``, the client's or the fuzz
    guard's sentence), and what to do (``conformance run`` and ``conformance fuzz`` alike)."""
    flag = options.flag
    if stopped.startswith(STOPPED_ANSWERING):
        hint = f"look at its logs, or raise {flag('timeout')} if it is that slow"
    else:
        hint = f"raise {flag('run-timeout')}"
    # the client's sentence names the command line's flags; the front end's may be prefixed
    said = stopped.replace("--timeout", flag("timeout")).replace(
        "--run-timeout", flag("run-timeout"))
    return f"{said}; nothing could be judged: {hint}"


def refused_run(result: RunResult, settings: Settings, options: TargetOptions) -> str | None:
    """One line when the server refused the run as a whole, so no verdict can mean anything:
    every completion request got no answer, or a 401 / 403, or a 404; or more than half of
    them stayed rate-limited through the retries; or the run stopped early (its deadline, a
    server that stopped answering) before any completion request was answered; or none of them
    got a 2xx (:func:`no_success`). None when the run can be judged."""
    stats = result.stats
    total = stats.completions
    if total == 0:
        return stopped_unanswered(result, options)

    def first(kind: Refusal) -> Exchange | None:
        label = next((label for name, _, label in stats.refused if name == kind.value), None)
        return result.exchanges.get(label) if label is not None else None

    every = {kind for kind in Refusal if stats.refused_count(kind.value) == total}
    exchange = first(next(iter(every))) if every else None
    if Refusal.NO_ANSWER in every and exchange is not None:
        return unreachable(exchange, settings.base_url, settings.network, options)
    stopped = stopped_unanswered(result, options)
    if stopped is not None:
        return stopped
    if Refusal.AUTH in every and exchange is not None:
        return key_refused(exchange, options, key_sent=bool(settings.api_key))
    if Refusal.NOT_FOUND in every and exchange is not None:
        said = error_message(exchange)
        words = f': "{said}"' if said else ""
        return (f"every completion request was answered 404 ({exchange.request.method} "
                f"{exchange.request.url}{words}): check {options.flag('model')} (GET "
                f"{settings.models_url} lists the models) and {options.flag('base-url')}")
    limited = stats.refused_count(Refusal.RATE_LIMITED.value)
    if 2 * limited > total:
        return (f"the server rate-limited {limited} of {total} completion requests (429 after "
                f"{retries_phrase(settings.retries)} each), too many to judge the rest: lower "
                f"{options.flag('concurrency')} (now {settings.concurrency}) or raise "
                f"{options.flag('retries')}")
    if stats.succeeded == 0:
        return no_success(
            [(status, count, where_of(result.exchanges.get(label))) for status, count, label
             in stats.statuses], options, settings.retries)
    return None


Tally = Sequence[tuple[int | None, int, str | None]]
"""How many completion requests got each status (None: no status line), with where the first
of each went and what the server said (:func:`where_of`)."""


def no_success(tally: Tally, options: TargetOptions, retries: int | None) -> str:
    """The one line of a run in which no valid completion request got a 2xx (``conformance
    run`` and ``conformance fuzz`` alike): the most common status with the server's first
    words, the other statuses, and what to look at. Every rule would SKIP naming ERRORS-008,
    so the run has no verdict to give. ``retries``: how often a 429 / 503 was retried (None:
    not said, a fuzz run gives up at once on a ``Retry-After`` beyond its wait)."""
    ranked = sorted(tally, key=lambda entry: -entry[1])
    status, count, where = ranked[0]
    total = sum(entry[1] for entry in tally)
    answered = "got no answer" if status is None else f"were answered HTTP {status}"
    if status in RETRY_LATER and retries is not None:
        answered += f" after {retries_phrase(retries)} each"
    what = f"all {total}" if count == total else f"{count} of {total}"
    others = ", ".join(f"{'no answer' if other is None else f'HTTP {other}'} x{n}"
                       for other, n, _ in ranked[1:])
    rest = f", the others {others}" if others else ""
    return (f"no completion request got a 2xx: {what} {answered}"
            f"{f' ({where})' if where else ''}{rest}: {_no_success_hint(status, options)}")


def where_of(exchange: Exchange | None) -> str | None:
    """``POST URL: "the server's first words"`` of an answer, for a one-line diagnosis."""
    if exchange is None:
        return None
    words = first_words(exchange)
    said = f': "{words}"' if words else ""
    return f"{exchange.request.method} {exchange.request.url}{said}"


def _no_success_hint(status: int | None, options: TargetOptions) -> str:
    flag = options.flag
    if status in RETRY_LATER:
        return f"wait and run again, or raise {flag('retries')}"
    if status is None:
        return (f"the server answers none of them; look at its logs, or raise "
                f"{flag('timeout')} if it is that slow")
    if status >= 500:
        return "the server fails them; look at its logs (behind a gateway: is its upstream up?)"
    if status >= 400:
        return f"the server takes none of them: check {flag('model')} and {flag('profile')}"
    return f"check {flag('base-url')}"


def first_words(exchange: Exchange) -> str | None:
    """The server's own words in an answer: its error envelope's message, else the start of
    its body as text (an HTML page's or a proxy's plain text), shortened; None when empty."""
    said = error_message(exchange)
    if said is not None:
        return said
    text = " ".join(exchange.body[:2048].decode("utf-8", "replace").split())
    if not text:
        return None
    return text if len(text) <= 80 else text[:79] + "…"
