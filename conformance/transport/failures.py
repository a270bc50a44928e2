"""Why a request got no answer, read from the exception's type, never from its text.

aiohttp words every connection failure as "Cannot connect to host H:P ssl:default [...]": the
``ssl:default`` is there even for a plain-HTTP port that nothing listens on, so a diagnosis that
searched the text for "ssl" called a refused connection a TLS failure. The exception tree says
what happened:

    ClientConnectorError (os_error: the socket's OSError)
      ├── ClientConnectorDNSError             the host name does not resolve (aiohttp >= 3.11)
      ├── ClientProxyConnectionError          the proxy itself could not be reached
      └── ClientConnectorSSLError / ClientSSLError
            └── ClientConnectorCertificateError   the certificate is not trusted
    ClientHttpProxyError                      the proxy answered CONNECT with an error (407, ...)
    ConnectionTimeoutError                    no connection within the connect timeout
    ServerDisconnectedError, ClientOSError    the connection was made, then closed unanswered

The OpenSSL reason of an ``ssl.SSLError`` (``WRONG_VERSION_NUMBER``: the peer answered the
handshake with plain HTTP) is a field of the error, not its text.
"""

from __future__ import annotations

import enum
import errno
import socket
import ssl

import aiohttp


class Failure(str, enum.Enum):
    """What stopped a request from getting an answer."""

    REFUSED = "refused"
    """Nothing listens on the port (the connection was refused)."""
    DNS = "dns"
    """The host name does not resolve."""
    UNREACHABLE = "unreachable"
    """No route to the host or its network."""
    CONNECT_TIMEOUT = "connect-timeout"
    """No connection within the connect timeout."""
    TLS_CERTIFICATE = "tls-certificate"
    """The server's certificate is not trusted (or not for this host)."""
    TLS_PLAIN_HTTP = "tls-plain-http"
    """An ``https://`` URL, but the server answered the handshake in plain HTTP."""
    TLS_CLIENT_CERTIFICATE = "tls-client-certificate"
    """The server asked for a client certificate the run did not send."""
    TLS = "tls"
    """Another TLS handshake failure."""
    PROXY_UNREACHABLE = "proxy-unreachable"
    """The proxy could not be reached."""
    PROXY_REFUSED = "proxy-refused"
    """The proxy refused to forward the request (407 asks for credentials)."""
    CLOSED = "closed"
    """The connection was made, then closed before any answer."""
    RESET = "reset"
    """The connection was made, then reset (TCP RST) before any answer."""
    INVALID_URL = "invalid-url"
    """The URL cannot be requested (no scheme, no host, not http(s))."""
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


PLAIN_HTTP_REASONS = frozenset({"WRONG_VERSION_NUMBER", "HTTP_REQUEST", "RECORD_LAYER_FAILURE",
                                "PACKET_LENGTH_TOO_LONG"})
"""OpenSSL's reasons when a handshake's reply is not TLS: an HTTP answer where a ServerHello
should be (``RECORD_LAYER_FAILURE`` is OpenSSL 3.2's word for it)."""
CLIENT_CERTIFICATE_REASONS = frozenset({"TLSV13_ALERT_CERTIFICATE_REQUIRED",
                                        "SSLV3_ALERT_HANDSHAKE_FAILURE",
                                        "SSLV3_ALERT_BAD_CERTIFICATE"})
"""The alerts a server sends when the client did not present a certificate it demands."""
UNREACHABLE_ERRNOS = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EHOSTDOWN,
                                errno.ENETDOWN})

# aiohttp < 3.10 has no ConnectionTimeoutError; < 3.11 no ClientConnectorDNSError
_CONNECT_TIMEOUT: tuple[type[BaseException], ...] = tuple(
    t for t in (getattr(aiohttp, "ConnectionTimeoutError", None),) if t is not None)
_DNS: tuple[type[BaseException], ...] = tuple(
    t for t in (getattr(aiohttp, "ClientConnectorDNSError", None),) if t is not None)


def classify(exc: BaseException) -> Failure:
    """The failure an exception raised while sending a request (or awaiting its answer)
    stands for."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return Failure.TLS_CERTIFICATE
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return Failure.PROXY_REFUSED
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return Failure.PROXY_UNREACHABLE
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return Failure.INVALID_URL
    if isinstance(exc, _DNS):
        return Failure.DNS
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return _tls(exc)
    if isinstance(exc, _CONNECT_TIMEOUT):
        return Failure.CONNECT_TIMEOUT
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _socket(exc.os_error)
    if isinstance(exc, aiohttp.ServerDisconnectedError | ConnectionResetError
                  | aiohttp.ClientOSError | aiohttp.ClientPayloadError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ssl.SSLError):
            return _tls(cause)
        reset = (isinstance(exc, ConnectionResetError) or isinstance(cause, ConnectionResetError)
                 or getattr(exc, "errno", None) == errno.ECONNRESET)
        return Failure.RESET if reset else Failure.CLOSED
    return Failure.OTHER


def _socket(error: OSError) -> Failure:
    if isinstance(error, socket.gaierror):
        return Failure.DNS
    if isinstance(error, ConnectionRefusedError):
        return Failure.REFUSED
    if isinstance(error, TimeoutError):
        return Failure.CONNECT_TIMEOUT
    if isinstance(error, ssl.SSLError):
        return _tls(error)
    if error.errno in UNREACHABLE_ERRNOS:
        return Failure.UNREACHABLE
    return Failure.OTHER


def _tls(exc: BaseException) -> Failure:
    error = getattr(exc, "os_error", None) or exc
    if isinstance(error, ssl.SSLCertVerificationError):
        return Failure.TLS_CERTIFICATE
    reason = getattr(error, "reason", None)
    if reason in PLAIN_HTTP_REASONS:
        return Failure.TLS_PLAIN_HTTP
    if reason in CLIENT_CERTIFICATE_REASONS:
        return Failure.TLS_CLIENT_CERTIFICATE
    return Failure.TLS
