"""The server's own checks, before Streamlit sees a request (ASGI middleware, installed by app.py's st.App).

- A request whose Host is not in server.allowedHosts is refused (403), page and routes alike: Streamlit checks
  only its websocket, so a page under a rebinding name (attacker.example resolving to 127.0.0.1) still loaded.
  The list is Streamlit's own, checked by Streamlit's own function: localhost, 127.0.0.1 and ::1 for
  `make run` (.streamlit/config.toml), those and the room's address for `make share` (ui/share.py).
- An upload (/_stcore/upload_file/SESSION/FILE) from a session that is not a presenter's page is refused (403)
  before a byte of its body is read: a viewer had pushed six 64 MB files into the server's memory.
- A websocket whose Origin is neither this page nor a name Streamlit accepts without a lookup is refused (403)
  here: Streamlit's own check would first look this machine's addresses up, an HTTP GET to a public service
  (net_util.get_external_ip, uncached), at every attempt any foreign web page in a viewer's browser makes.
- A page address with ?token= (of any case) is answered with a redirect to the same address without it; the
  right token, given once, also sets the presenter's signed HttpOnly cookie (ui/access.py), so a reload stays
  the presenter and the token never stays in the address bar or the browser's history.
"""

from __future__ import annotations

from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit import config
from streamlit.url_util import get_hostname
from streamlit.web.server.server_util import allowlisted_origins
from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

from ui import access

UPLOAD = "/_stcore/upload_file/"
NOT_PAGES = ("/_stcore/", "/static/", "/media/", "/component/")  # Streamlit's own routes: never a page address
OWN_ORIGINS = ("localhost", "0.0.0.0", "127.0.0.1")  # those Streamlit accepts before any lookup
FOREIGN = "This server's websocket opens only to its own pages, not another site's."


class Guard:
    """ASGI middleware: Host names, uploads by role, and the presenter's token turned into a cookie."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope["type"] == "websocket":  # Streamlit refuses a Host outside server.allowedHosts itself
            if foreign_origin(headers.get("origin"), headers.get("host")):
                return await refuse_websocket(scope, send, FOREIGN)
            return await self.app(scope, receive, send)
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if not is_host_allowed(headers.get("host")):
            return await refuse(send, "This server answers only to its own names (server.allowedHosts).")
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if path.startswith(UPLOAD) and method in ("PUT", "POST", "DELETE"):
            session = path[len(UPLOAD) :].split("/", 1)[0]
            if not access.may_upload(session):
                return await refuse(send, f"Only the presenter's page may upload files; {access.ASK}.")
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if (
            method in ("GET", "HEAD")
            and not path.startswith(NOT_PAGES)
            and any(access.is_token_key(k) for k, _ in query)
        ):
            return await sign_in(path, query, send)
        return await self.app(scope, receive, send)


def foreign_origin(origin: str | None, host: str | None) -> bool:
    """True for an Origin that Streamlit's websocket check would refuse only after looking up this machine's
    addresses: not this page's own (Origin's host and port = Host), not a local name, not browser.serverAddress,
    not in server.corsAllowedOrigins (accepted by Streamlit after its lookups: the operator's choice). A page of this
    machine's internal address opening a websocket to a local name is refused too (Streamlit would accept it after the
    lookup): no page of the dashboard does so."""
    if origin is None or not config.get_option("server.enableCORS"):
        return False  # no Origin (not a browser), or CORS off: Streamlit accepts at once
    if urlsplit(origin).netloc == host:
        return False
    hostname = get_hostname(origin)
    own = [*OWN_ORIGINS, *(get_hostname(o) for o in allowlisted_origins())]
    if config.is_manually_set("browser.serverAddress"):  # make share: the room's address
        own.append(get_hostname(config.get_option("browser.serverAddress")))
    return hostname not in own


async def sign_in(path: str, query: list[tuple[str, str]], send: Any) -> None:
    """303 to the same address without any token; the right one (exactly one value) sets the presenter cookie."""
    given = access.one_value([v for k, v in query if k == access.PARAM])
    expected = access.expected_token()
    rest = urlencode([(k, v) for k, v in query if not access.is_token_key(k)])
    cookies = SimpleCookie()
    if expected and access.check(given, expected).presenter:
        cookies[access.COOKIE] = access.issue_cookie()
        cookies[access.COOKIE].update(
            {"httponly": True, "samesite": "Strict", "path": "/", "max-age": access.COOKIE_MAX_AGE_S}
        )
    elif expected:
        cookies[access.REFUSED] = "1"  # the page says the link's token was wrong; nothing else is in it
        cookies[access.REFUSED].update({"samesite": "Strict", "path": "/", "max-age": 60})
    headers = [
        (b"location", (path + ("?" + rest if rest else "")).encode("latin-1")),
        (b"cache-control", b"no-store"),
        (b"referrer-policy", b"no-referrer"),
    ]
    headers += [(b"set-cookie", morsel.OutputString().encode("latin-1")) for morsel in cookies.values()]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def refuse(send: Any, sentence: str, protocol: str = "http") -> None:
    """403 with one sentence; the request's body is never read. protocol "websocket.http": a websocket's handshake."""
    body = (sentence + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": f"{protocol}.response.start", "status": 403, "headers": headers})
    await send({"type": f"{protocol}.response.body", "body": body})


async def refuse_websocket(scope: dict, send: Any, sentence: str) -> None:
    """403 to a websocket's handshake, with the sentence where the server can send a body (ASGI's denial response)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        return await refuse(send, sentence, protocol="websocket.http")
    await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers the handshake 403
