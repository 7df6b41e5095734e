#!/usr/bin/env python3
"""A stand-in OAuth 2.0 / OpenID Connect provider for Colony's tests (never the real Google, Apple or
GitHub), as mail-catcher.py stands in for SMTP: one threaded HTTP server speaking the real protocols
in three flavours by path prefix, approving every authorization at once (no login page) with the
identity a test queued, and recording every request it saw.

  oauth-provider.py serve --port P [--host 127.0.0.1] [--issuer-base http://127.0.0.1:P]
                          [--client ID:SECRET]... [--code-lifetime SECONDS]

--port 0 picks a free port. The first line on stdout is always `listening on PORT`; the request log
goes to stderr.

Flavours (<base> is --issuer-base, default http://<host>:<port>):
  /oidc    Google-like and generic OpenID Connect, issuer <base>/oidc:
           /.well-known/openid-configuration, /authorize, /token, /userinfo, /jwks
  /apple   Sign in with Apple (web), issuer <base>/apple, Apple's own paths /auth/authorize, /auth/token,
           /auth/keys (also as /authorize, /token, /jwks); with response_mode=form_post (which Apple
           demands when name or email is asked for) the answer is an HTML page whose form posts
           `code`, `state` (and `user` JSON on the first authorization of that sub by that client) to
           redirect_uri. id_token claims as Apple's: `email_verified`/`is_private_email` as strings.
           No userinfo (Apple has none). A cancelled sign-in posts error=user_cancelled_authorize.
  /github  /login/oauth/authorize, /login/oauth/access_token (JSON with `Accept: application/json`,
           else form-encoded; errors answered 200 with an `error` field, as GitHub does), /api/user,
           /api/user/emails (needs scope `user:email` or `user`, as GitHub; a User-Agent is required).

Token endpoints: client authentication by client_secret_basic or client_secret_post (not both),
redirect_uri equal to the authorization's, codes single-use (a replay also revokes the tokens the
code gave, RFC 6749 4.1.2) and short-lived (--code-lifetime, 60 s), PKCE (S256 or plain) checked when
the authorization carried a challenge (a verifier without one is refused), errors as RFC 6749 5.2
(`{"error":"invalid_grant","error_description":...}`, 400; invalid_client 401).

Control endpoints for tests (JSON in and out):
  POST   /_control/clients   {"client_id","client_secret", optional "redirect_uris":[...],
                              Apple's signed secret: "team_id","key_id","public_key_pem"}    -> {"ok":true}
  POST   /_control/next      {"flavour":"oidc|apple|github","sub","email","email_verified","name",
                              optional "picture","given_name","family_name","is_private_email","login",
                              "emails":[{"email","primary","verified","visibility"}], "public_email",
                              "claims":{extra id_token/userinfo claims}, "client_id" (only that client's
                              authorizations take it)}   queues the identity the next authorization of
                              that flavour approves (oldest first; none queued: a fresh identity);
                              {"flavour":…,"deny":true[,"error":"…"]} queues a refusal (access_denied)
                              -> the identity as it will be used (sub filled in)
  DELETE /_control/next[?flavour=F]   drops queued identities
  POST   /_control/id_token  {"flavour","aud","sub","email","email_verified","nonce","exp_in","name",
                              optional "claims":{...} (override any claim), "untrusted_key":true (signed
                              by a key not in the JWKS, same kid)}  -> {"id_token"}
  GET    /_control/log[?path=PREFIX]  -> {"requests":[{"time","method","path","query","form","json",
                              "client_auth","authorization","accept","status","answer"}]}
  DELETE /_control/log
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import html
import json
import re
import secrets
import signal
import sys
import threading
import time
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

FLAVOURS = ("oidc", "apple", "github")
MAX_BODY = 64 << 10
PKCE_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


class SigningKey:
    """An RS256 key of one flavour, published in its JWKS."""

    def __init__(self, kid: str):
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.private.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64url(int_bytes(numbers.n)), "e": b64url(int_bytes(numbers.e))}

    def sign(self, claims: dict) -> str:
        header = {"alg": "RS256", "kid": self.kid, "typ": "JWT"}
        signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
        signature = self.private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)


class ProtocolError(Exception):
    """An RFC 6749 error answer."""

    def __init__(self, error: str, description: str, status: int = 400):
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


class Provider:
    """Everything the server remembers, behind one lock (handlers run on threads of their own)."""

    def __init__(self, base: str, code_lifetime: float):
        self.base = base.rstrip("/")
        self.code_lifetime = code_lifetime
        self.lock = threading.Lock()
        self.keys = {flavour: SigningKey(f"{flavour}-{secrets.token_hex(4)}") for flavour in ("oidc", "apple")}
        self.clients: dict[str, dict] = {}
        self.queued: dict[str, list[dict]] = {flavour: [] for flavour in FLAVOURS}
        self.codes: dict[str, dict] = {}
        self.access_tokens: dict[str, dict] = {}
        self.refresh_tokens: dict[str, dict] = {}
        self.apple_authorized: set[tuple[str, str]] = set()
        self.log: list[dict] = []

    def issuer(self, flavour: str) -> str:
        return f"{self.base}/{flavour}"

    # Identities.

    def fresh_identity(self, flavour: str, given: dict) -> dict:
        identity = {key: value for key, value in given.items() if key not in ("flavour", "client_id")}
        if not identity.get("sub"):
            # GitHub's ids are numbers; the others' opaque strings.
            identity["sub"] = str(secrets.randbelow(10**9) + 10**8) if flavour == "github" else secrets.token_hex(10)
        identity["sub"] = str(identity["sub"])
        identity.setdefault("email", f"user-{identity['sub']}@{flavour}.example.test")
        identity.setdefault("email_verified", True)
        identity.setdefault("name", f"Test User {identity['sub'][:6]}")
        return identity

    def take_identity(self, flavour: str, client_id: str) -> dict:
        with self.lock:
            queue = self.queued[flavour]
            for index, entry in enumerate(queue):
                if entry.get("client_id") in (None, client_id):
                    del queue[index]
                    return entry
        return self.fresh_identity(flavour, {})

    # Clients.

    def authenticate_client(self, handler: "Handler", form: dict, flavour: str) -> tuple[str, str]:
        """The client id and how it authenticated; ProtocolError invalid_client otherwise."""
        header = handler.headers.get("Authorization", "")
        basic = None
        if header[:6].lower() == "basic ":
            try:
                decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
                user, _, password = decoded.partition(":")
                # RFC 6749 2.3.1: both parts are form-urlencoded before they are joined.
                basic = (urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password))
            except (binascii.Error, UnicodeDecodeError, ValueError):
                raise ProtocolError("invalid_client", "malformed Basic credentials", 401)
        posted = form.get("client_secret")
        # Apple takes the client secret in the body only; its errors are 400s.
        refused = 400 if flavour == "apple" else 401
        if basic and flavour == "apple":
            raise ProtocolError("invalid_client", "Apple takes client_secret_post only", refused)
        if basic and posted is not None:
            raise ProtocolError("invalid_request", "more than one client authentication method (RFC 6749 2.3)")
        if basic:
            client_id, secret, method = basic[0], basic[1], "client_secret_basic"
            if form.get("client_id") not in (None, client_id):
                raise ProtocolError("invalid_request", "client_id differs from the authenticated client")
        else:
            client_id, secret, method = form.get("client_id", ""), posted, "client_secret_post"
        with self.lock:
            client = self.clients.get(client_id)
        if not client_id or client is None:
            raise ProtocolError("invalid_client", "unknown client", refused)
        if secret is None:
            raise ProtocolError("invalid_client", "client authentication required", refused)
        if not self.secret_matches(client, client_id, secret, flavour):
            raise ProtocolError("invalid_client", "client authentication failed", refused)
        return client_id, method

    def secret_matches(self, client: dict, client_id: str, secret: str, flavour: str) -> bool:
        if client.get("client_secret") is not None and secrets.compare_digest(secret.encode(), str(client["client_secret"]).encode()):
            return True
        if flavour == "apple" and client.get("public_key"):
            return self.apple_client_secret_valid(client, client_id, secret)
        return False

    def apple_client_secret_valid(self, client: dict, client_id: str, token: str) -> bool:
        """Apple's client secret: an ES256 JWT by the team's key (iss team id, sub client id, aud Apple)."""
        try:
            header_part, payload_part, signature_part = token.split(".")
            header = json.loads(b64url_decode(header_part))
            claims = json.loads(b64url_decode(payload_part))
            signature = b64url_decode(signature_part)
            if header.get("alg") != "ES256" or header.get("kid") != client.get("key_id") or len(signature) != 64:
                return False
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            client["public_key"].verify(der, f"{header_part}.{payload_part}".encode(), ec.ECDSA(hashes.SHA256()))
            audiences = claims.get("aud") if isinstance(claims.get("aud"), list) else [claims.get("aud")]
            now = time.time()
            return (claims.get("iss") == client.get("team_id") and claims.get("sub") == client_id
                    and any(aud in ("https://appleid.apple.com", self.issuer("apple")) for aud in audiences)
                    and isinstance(claims.get("exp"), (int, float)) and claims["exp"] > now
                    and isinstance(claims.get("iat"), (int, float)) and claims["iat"] <= now + 60
                    and claims["exp"] - claims["iat"] <= 15777000)  # Apple: at most six months
        except (ValueError, TypeError, KeyError, InvalidSignature, binascii.Error, UnicodeDecodeError, AttributeError):
            return False

    # Tokens.

    def id_token(self, flavour: str, audience: str, identity: dict, nonce: str | None, expires_in: float = 3600,
                 access_token: str | None = None, overrides: dict | None = None, untrusted: bool = False) -> str:
        now = int(time.time())
        claims: dict = {"iss": self.issuer(flavour), "aud": audience, "sub": identity["sub"], "iat": now,
                        "exp": int(now + expires_in), "auth_time": now}
        if identity.get("email") is not None:
            claims["email"] = identity["email"]
        if flavour == "apple":
            # Apple writes these booleans as strings.
            claims["email_verified"] = "true" if identity.get("email_verified", True) else "false"
            claims["is_private_email"] = "true" if identity.get("is_private_email") else "false"
            claims["nonce_supported"] = True
            claims["real_user_status"] = 2
        else:
            claims["azp"] = audience
            claims["email_verified"] = bool(identity.get("email_verified", True))
            for key in ("name", "picture", "given_name", "family_name"):
                if identity.get(key) is not None:
                    claims[key] = identity[key]
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token:
            claims["at_hash"] = b64url(hashlib.sha256(access_token.encode()).digest()[:16])
        claims.update(identity.get("claims") or {})
        claims.update(overrides or {})
        key = self.keys[flavour]
        if untrusted:
            key = SigningKey(key.kid)
        return key.sign(claims)

    def userinfo(self, identity: dict) -> dict:
        info = {"sub": identity["sub"], "email": identity.get("email"), "email_verified": bool(identity.get("email_verified", True))}
        for key in ("name", "picture", "given_name", "family_name"):
            if identity.get(key) is not None:
                info[key] = identity[key]
        info.update(identity.get("claims") or {})
        return info

    def discovery(self, flavour: str) -> dict:
        issuer = self.issuer(flavour)
        if flavour == "apple":
            return {"issuer": issuer, "authorization_endpoint": f"{issuer}/auth/authorize", "token_endpoint": f"{issuer}/auth/token",
                    "revocation_endpoint": f"{issuer}/auth/revoke", "jwks_uri": f"{issuer}/auth/keys",
                    "response_types_supported": ["code"], "response_modes_supported": ["query", "fragment", "form_post"],
                    "subject_types_supported": ["pairwise"], "id_token_signing_alg_values_supported": ["RS256"],
                    "scopes_supported": ["openid", "email", "name"], "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss", "nonce", "nonce_supported", "real_user_status", "sub", "transfer_sub"]}
        return {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
                "userinfo_endpoint": f"{issuer}/userinfo", "jwks_uri": f"{issuer}/jwks",
                "response_types_supported": ["code"], "response_modes_supported": ["query", "fragment", "form_post"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "email", "profile"],
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                "claims_supported": ["aud", "email", "email_verified", "exp", "family_name", "given_name", "iat", "iss", "name", "nonce", "picture", "sub", "azp", "at_hash", "auth_time"],
                "code_challenge_methods_supported": ["plain", "S256"], "grant_types_supported": ["authorization_code", "refresh_token"]}


def github_id(sub: str) -> int:
    """GitHub's numeric user id: the sub when it is a number, else a stable number made from it."""
    return int(sub) if sub.isdigit() and len(sub) < 16 else zlib.crc32(sub.encode()) + 10**9


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ColonyOAuthStandIn/1.0"
    timeout = 15  # a client that stops sending mid-request does not hold a thread forever
    provider: Provider  # set on the subclass made by serve()

    # Plumbing.

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        # Garbage is logged escaped and cut short: one readable line per request.
        message = (format % args).encode("ascii", "backslashreplace").decode()
        sys.stderr.write("oauth-provider: %s %s\n" % (self.address_string(), message[:400]))
        sys.stderr.flush()

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def do_GET(self) -> None:
        self.dispatch("GET")

    def do_POST(self) -> None:
        self.dispatch("POST")

    def do_DELETE(self) -> None:
        self.dispatch("DELETE")

    def do_PUT(self) -> None:
        self.dispatch("PUT")

    def do_HEAD(self) -> None:
        self.dispatch("HEAD")

    def read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self.close_connection = True
            raise ProtocolError("invalid_request", "chunked bodies are not accepted here; send Content-Length")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise ProtocolError("invalid_request", "bad Content-Length")
        if length < 0 or length > MAX_BODY:
            # The body stays unread: the connection cannot carry another request.
            self.close_connection = True
            raise ProtocolError("invalid_request", "body too large", 413)
        return self.rfile.read(length) if length else b""

    def parse_form(self, body: bytes) -> dict:
        try:
            pairs = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=100)
        except (UnicodeDecodeError, ValueError):
            raise ProtocolError("invalid_request", "the form is not UTF-8 application/x-www-form-urlencoded")
        form: dict = {}
        for key, value in pairs:
            if key in form:
                # RFC 6749 3.1/3.2: parameters must not be included more than once.
                raise ProtocolError("invalid_request", f"parameter {key} given more than once")
            form[key] = value
        return form

    def send(self, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Pragma", "no-cache")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.answered = status

    def send_json(self, status: int, value, headers: dict | None = None) -> None:
        self.send(status, json.dumps(value).encode(), "application/json; charset=utf-8", headers)

    def send_error_json(self, error: ProtocolError) -> None:
        headers = {}
        if error.status == 401 and self.headers.get("Authorization", "")[:6].lower() == "basic ":
            headers["WWW-Authenticate"] = 'Basic realm="oauth-provider"'
        self.send_json(error.status, {"error": error.error, "error_description": error.description}, headers)

    def redirect(self, location: str) -> None:
        self.send(302, b"", "text/plain", {"Location": location})

    def dispatch(self, method: str) -> None:
        self.answered = 0
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        entry = {"time": time.time(), "method": method, "path": path, "query": {}, "form": {}, "json": None,
                 "client_auth": None, "authorization": None, "accept": self.headers.get("Accept"), "status": 0, "answer": None}
        self.entry = entry
        try:
            query = self.parse_form(url.query.encode())
            entry["query"] = query
            body = self.read_body() if method in ("POST", "PUT", "DELETE") else b""
            form: dict = {}
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if body and content_type == "application/x-www-form-urlencoded":
                form = self.parse_form(body)
            elif body and content_type == "application/json":
                try:
                    entry["json"] = json.loads(body)
                except (ValueError, UnicodeDecodeError):
                    raise ProtocolError("invalid_request", "the body is not JSON")
            entry["form"] = {key: ("<redacted>" if key == "client_secret" else value) for key, value in form.items()}
            authorization = self.headers.get("Authorization")
            if authorization:
                entry["authorization"] = authorization.split(" ", 1)[0]
            self.route(method, path, query, form, entry["json"])
        except ProtocolError as error:
            entry["answer"] = error.error
            self.send_error_json(error)
        except Exception as error:  # a bug here must not kill the thread's connection silently
            import traceback
            traceback.print_exc(file=sys.stderr)
            entry["answer"] = f"server_error: {error!r}"
            if not self.answered:
                self.send_json(500, {"error": "server_error", "error_description": "the stand-in failed; see its stderr"})
        entry["status"] = self.answered
        if not path.startswith("/_control"):
            with self.provider.lock:
                self.provider.log.append(entry)
                del self.provider.log[:-5000]

    def route(self, method: str, path: str, query: dict, form: dict, body_json) -> None:
        parts = path.strip("/").split("/", 1)
        head, rest = parts[0], ("/" + parts[1] if len(parts) > 1 else "")
        params = {**query, **form} if method == "POST" else query
        if head == "_control":
            return self.control(method, rest, query, body_json)
        if head == "oidc" or head == "apple":
            flavour = head
            if rest == "/.well-known/openid-configuration" and method in ("GET", "HEAD"):
                return self.send_json(200, self.provider.discovery(flavour))
            if rest in ("/authorize", "/auth/authorize") and method in ("GET", "POST", "HEAD"):
                return self.authorize(flavour, params)
            if rest in ("/token", "/auth/token") and method == "POST":
                return self.token(flavour, query, form)
            if rest in ("/jwks", "/auth/keys") and method in ("GET", "HEAD"):
                return self.send_json(200, {"keys": [self.provider.keys[flavour].jwk]})
            if rest == "/userinfo" and flavour == "oidc" and method in ("GET", "POST"):
                return self.userinfo(form)
            if rest in ("/revoke", "/auth/revoke") and method == "POST":
                return self.revoke(flavour, form)
        if head == "github":
            if rest == "/login/oauth/authorize" and method in ("GET", "POST", "HEAD"):
                return self.authorize("github", params)
            if rest == "/login/oauth/access_token" and method == "POST":
                return self.github_token(query, form, body_json)
            if rest in ("/api/user", "/api/user/emails") and method in ("GET", "HEAD"):
                return self.github_api(rest)
        if path == "/" and method == "GET":
            return self.send(200, (__doc__ or "").encode(), "text/plain; charset=utf-8")
        self.send_json(404, {"error": "not_found", "error_description": f"no {method} {path} here"})

    # Authorization endpoint.

    def authorize(self, flavour: str, params: dict) -> None:
        provider = self.provider
        client_id = params.get("client_id", "")
        redirect_uri = params.get("redirect_uri")
        with provider.lock:
            client = provider.clients.get(client_id)
        # RFC 6749 4.1.2.1: without a known client and a valid redirect_uri the error is shown, never redirected.
        if client is None:
            return self.error_page(400, "invalid_client", f"unknown client_id {client_id!r}")
        if not redirect_uri:
            return self.error_page(400, "invalid_request", "redirect_uri is required")
        target = urllib.parse.urlsplit(redirect_uri)
        if target.scheme not in ("http", "https") or not target.netloc or target.fragment:
            return self.error_page(400, "invalid_request", "redirect_uri must be an absolute http(s) URL without a fragment")
        if client.get("redirect_uris") and redirect_uri not in client["redirect_uris"]:
            return self.error_page(400, "redirect_uri_mismatch", "redirect_uri is not registered for this client")
        state = params.get("state")
        response_type = params.get("response_type", "code" if flavour == "github" else "")
        scopes = params.get("scope", "").replace(",", " ").split()
        mode = params.get("response_mode") or "query"

        def answer(values: dict) -> None:
            if state is not None:
                values["state"] = state
            if mode == "form_post":
                return self.form_post(redirect_uri, values)
            separator = "#" if mode == "fragment" else ("&" if "?" in redirect_uri else "?")
            return self.redirect(redirect_uri + separator + urllib.parse.urlencode(values))

        def refuse(error: str, description: str) -> None:
            self.entry["answer"] = error
            return answer({"error": error, "error_description": description})

        if mode not in ("query", "fragment", "form_post"):
            mode = "query"
            return refuse("invalid_request", "response_mode must be query, fragment or form_post")
        if response_type not in (("code", "code id_token") if flavour == "apple" else ("code",)):
            return refuse("unsupported_response_type", f"response_type {response_type!r} is not supported")
        if flavour == "apple" and ("name" in scopes or "email" in scopes) and mode != "form_post":
            return refuse("invalid_request", "response_mode must be form_post when name or email scope is requested")
        if flavour == "oidc" and "openid" not in scopes:
            return refuse("invalid_scope", "scope must include openid")
        challenge = params.get("code_challenge")
        method = params.get("code_challenge_method")
        if challenge is not None:
            method = method or "plain"  # RFC 7636 4.3
            if method not in ("S256", "plain"):
                return refuse("invalid_request", "code_challenge_method must be S256 or plain")
            if not PKCE_VERIFIER.match(challenge) or (method == "S256" and len(challenge) != 43):
                return refuse("invalid_request", "malformed code_challenge")
        elif method is not None:
            return refuse("invalid_request", "code_challenge_method without code_challenge")

        identity = provider.take_identity(flavour, client_id)
        if identity.get("deny"):
            default = "user_cancelled_authorize" if flavour == "apple" else "access_denied"
            return refuse(identity.get("error") or default, "the user denied the request")
        code = ("" if flavour != "apple" else "c") + secrets.token_urlsafe(24)
        first_apple = False
        with provider.lock:
            provider.codes[code] = {"flavour": flavour, "client_id": client_id, "redirect_uri": redirect_uri, "identity": identity,
                                    "nonce": params.get("nonce"), "scope": " ".join(scopes), "challenge": challenge, "method": method,
                                    "expires": time.time() + provider.code_lifetime, "used": False, "tokens": []}
            if flavour == "apple" and (identity["sub"], client_id) not in provider.apple_authorized:
                provider.apple_authorized.add((identity["sub"], client_id))
                first_apple = True
        self.entry["answer"] = "code"
        values = {"code": code}
        if flavour == "apple" and response_type == "code id_token":
            values["id_token"] = provider.id_token("apple", client_id, identity, params.get("nonce"))
        if flavour == "apple" and first_apple and mode == "form_post" and ("name" in scopes or "email" in scopes):
            # Apple sends the user's name once, on the first authorization, and never in the id_token.
            user: dict = {}
            if "name" in scopes:
                name = identity.get("name") or ""
                first, _, last = name.partition(" ")
                user["name"] = {"firstName": identity.get("given_name", first), "lastName": identity.get("family_name", last)}
            if "email" in scopes and identity.get("email"):
                user["email"] = identity["email"]
            values["user"] = json.dumps(user)
        return answer(values)

    def form_post(self, redirect_uri: str, values: dict) -> None:
        inputs = "\n".join(f'<input type="hidden" name="{html.escape(key)}" value="{html.escape(str(value))}"/>' for key, value in values.items())
        page = (f'<!DOCTYPE html>\n<html><head><title>Submit This Form</title></head>\n'
                f'<body onload="javascript:document.forms[0].submit()">\n'
                f'<form method="post" action="{html.escape(redirect_uri)}">\n{inputs}\n'
                f'<noscript><button type="submit">Continue</button></noscript>\n</form>\n</body></html>\n')
        self.send(200, page.encode(), "text/html; charset=utf-8")

    def error_page(self, status: int, error: str, description: str) -> None:
        self.entry["answer"] = error
        page = f"<!DOCTYPE html>\n<html><body><h1>{html.escape(error)}</h1><p>{html.escape(description)}</p></body></html>\n"
        self.send(status, page.encode(), "text/html; charset=utf-8")

    # Token endpoint.

    def token(self, flavour: str, query: dict, form: dict) -> None:
        if (self.headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
            raise ProtocolError("invalid_request", "the token request must be application/x-www-form-urlencoded")
        if "client_secret" in query or "code" in query:
            raise ProtocolError("invalid_request", "credentials belong in the body, not the URL")
        client_id, method = self.provider.authenticate_client(self, form, flavour)
        self.entry["client_auth"] = method
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.redeem_code(flavour, client_id, form)
            response = self.issue_tokens(flavour, client_id, grant, refresh=True)
        elif grant_type == "refresh_token":
            with self.provider.lock:
                grant = self.provider.refresh_tokens.get(form.get("refresh_token", ""))
            if grant is None or grant["client_id"] != client_id or grant["flavour"] != flavour:
                raise ProtocolError("invalid_grant", "unknown or revoked refresh token")
            response = self.issue_tokens(flavour, client_id, {**grant, "nonce": None}, refresh=False)
        elif not grant_type:
            raise ProtocolError("invalid_request", "grant_type is required")
        else:
            raise ProtocolError("unsupported_grant_type", f"grant_type {grant_type!r} is not supported")
        self.entry["answer"] = "tokens"
        self.send_json(200, response)

    def redeem_code(self, flavour: str, client_id: str, form: dict, redirect_optional: bool = False) -> dict:
        provider = self.provider
        code = form.get("code")
        if not code:
            raise ProtocolError("invalid_request", "code is required")
        with provider.lock:
            grant = provider.codes.get(code)
            if grant is None or grant["flavour"] != flavour:
                raise ProtocolError("invalid_grant", "unknown authorization code")
            if grant["used"]:
                # RFC 6749 4.1.2: a code used twice is refused, and what it gave is revoked.
                for token in grant["tokens"]:
                    provider.access_tokens.pop(token, None)
                    provider.refresh_tokens.pop(token, None)
                raise ProtocolError("invalid_grant", "authorization code already used")
            if grant["client_id"] != client_id:
                raise ProtocolError("invalid_grant", "authorization code was issued to another client")
            if time.time() > grant["expires"]:
                raise ProtocolError("invalid_grant", "authorization code expired")
            # GitHub lets the exchange leave redirect_uri out; given, it must match there too.
            if form.get("redirect_uri") != grant["redirect_uri"] and not (redirect_optional and "redirect_uri" not in form):
                raise ProtocolError("invalid_grant", "redirect_uri differs from the authorization request's")
            verifier = form.get("code_verifier")
            if grant["challenge"] is not None:
                if verifier is None:
                    raise ProtocolError("invalid_grant", "code_verifier is required (the authorization carried a code_challenge)")
                if not PKCE_VERIFIER.match(verifier):
                    raise ProtocolError("invalid_grant", "malformed code_verifier")
                computed = b64url(hashlib.sha256(verifier.encode()).digest()) if grant["method"] == "S256" else verifier
                if not secrets.compare_digest(computed, grant["challenge"]):
                    raise ProtocolError("invalid_grant", "code_verifier does not match the code_challenge")
            elif verifier is not None:
                raise ProtocolError("invalid_grant", "code_verifier given but the authorization carried no code_challenge")
            # Spent even when the answer is lost: a code is good for one exchange only.
            grant["used"] = True
        return grant

    def issue_tokens(self, flavour: str, client_id: str, grant: dict, refresh: bool) -> dict:
        provider = self.provider
        access = ("ya29." if flavour == "oidc" else "a") + secrets.token_urlsafe(32)
        record = {"flavour": flavour, "client_id": client_id, "identity": grant["identity"], "scope": grant["scope"], "expires": time.time() + 3600}
        response = {"access_token": access, "token_type": "Bearer", "expires_in": 3600}
        if flavour == "oidc":
            response["scope"] = grant["scope"]
        refresh_token = None
        if refresh:
            refresh_token = ("1//" if flavour == "oidc" else "r") + secrets.token_urlsafe(32)
            response["refresh_token"] = refresh_token
        if "openid" in grant["scope"].split() or flavour == "apple":
            response["id_token"] = provider.id_token(flavour, client_id, grant["identity"], grant.get("nonce"), access_token=access)
        with provider.lock:
            provider.access_tokens[access] = record
            if refresh_token:
                provider.refresh_tokens[refresh_token] = record
            if "tokens" in grant:
                grant["tokens"] += [access] + ([refresh_token] if refresh_token else [])
        return response

    def revoke(self, flavour: str, form: dict) -> None:
        client_id, method = self.provider.authenticate_client(self, form, flavour)
        self.entry["client_auth"] = method
        token = form.get("token", "")
        with self.provider.lock:
            for table in (self.provider.access_tokens, self.provider.refresh_tokens):
                if table.get(token, {}).get("client_id") == client_id:
                    del table[token]
        self.send_json(200, {})

    def bearer(self) -> dict | None:
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in ("bearer", "token") or not token.strip():
            return None
        with self.provider.lock:
            record = self.provider.access_tokens.get(token.strip())
        if record is None or record["expires"] < time.time():
            return None
        return record

    def userinfo(self, form: dict) -> None:
        record = self.bearer()
        if record is None or record["flavour"] != "oidc":
            return self.send_json(401, {"error": "invalid_token", "error_description": "missing, unknown or expired access token"},
                                  {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        self.entry["answer"] = "userinfo"
        self.send_json(200, self.provider.userinfo(record["identity"]))

    # GitHub.

    def github_token(self, query: dict, form: dict, body_json) -> None:
        # GitHub takes the parameters as a form, as JSON or in the URL, and answers errors with 200.
        params = {**query, **form, **({key: str(value) for key, value in body_json.items()} if isinstance(body_json, dict) else {})}
        wants_json = "application/json" in (self.headers.get("Accept") or "")

        def answer(values: dict) -> None:
            if wants_json:
                return self.send_json(200, values)
            self.send(200, urllib.parse.urlencode(values).encode(), "application/x-www-form-urlencoded; charset=utf-8")

        try:
            client_id, method = self.provider.authenticate_client(self, params, "github")
        except ProtocolError as error:
            self.entry["answer"] = "incorrect_client_credentials"
            return answer({"error": "incorrect_client_credentials", "error_description": "The client_id and/or client_secret passed are incorrect.",
                           "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials",
                           "detail": error.description})
        self.entry["client_auth"] = method
        try:
            grant = self.redeem_code("github", client_id, params, redirect_optional=True)
        except ProtocolError as error:
            github_error = "redirect_uri_mismatch" if "redirect_uri" in error.description else "bad_verification_code"
            self.entry["answer"] = github_error
            return answer({"error": github_error, "error_description": "The code passed is incorrect or expired." if github_error == "bad_verification_code" else "The redirect_uri MUST match the registered callback URL for this application.",
                           "error_uri": f"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#{github_error.replace('_', '-')}",
                           "detail": error.description})
        access = "gho_" + secrets.token_urlsafe(27)
        with self.provider.lock:
            self.provider.access_tokens[access] = {"flavour": "github", "client_id": client_id, "identity": grant["identity"],
                                                   "scope": grant["scope"], "expires": time.time() + 8 * 3600}
            grant["tokens"].append(access)
        self.entry["answer"] = "tokens"
        answer({"access_token": access, "token_type": "bearer", "scope": ",".join(grant["scope"].split())})

    def github_api(self, rest: str) -> None:
        if not self.headers.get("User-Agent"):
            return self.send(403, b"Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).\n", "text/plain; charset=utf-8")
        record = self.bearer()
        if record is None or record["flavour"] != "github":
            return self.send_json(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
        identity = record["identity"]
        scopes = set(record["scope"].split())
        if rest == "/api/user":
            number = github_id(identity["sub"])
            login = identity.get("login") or re.sub(r"[^A-Za-z0-9-]", "-", (identity.get("email") or "user").split("@")[0])[:39]
            public = identity["public_email"] if "public_email" in identity else identity.get("email")
            self.entry["answer"] = "user"
            return self.send_json(200, {"login": login, "id": number, "node_id": b64url(f"04:User{number}".encode()),
                                        "avatar_url": identity.get("picture") or f"https://avatars.githubusercontent.com/u/{number}?v=4",
                                        "html_url": f"https://github.com/{login}", "type": "User", "site_admin": False,
                                        "name": identity.get("name"), "email": public or None, "created_at": "2020-01-01T00:00:00Z"})
        if not scopes & {"user:email", "user"}:
            return self.send_json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest/users/emails#list-email-addresses-for-the-authenticated-user", "status": "404"})
        emails = identity.get("emails")
        if not isinstance(emails, list):
            emails = [{"email": identity.get("email"), "primary": True, "verified": bool(identity.get("email_verified", True)), "visibility": "public"}] if identity.get("email") else []
        self.entry["answer"] = "emails"
        self.send_json(200, [{"email": item.get("email"), "primary": bool(item.get("primary", False)), "verified": bool(item.get("verified", False)),
                              "visibility": item.get("visibility")} for item in emails if isinstance(item, dict)])

    # Control.

    def control(self, method: str, rest: str, query: dict, body) -> None:
        provider = self.provider
        if method in ("POST", "PUT") and not isinstance(body, dict):
            raise ProtocolError("invalid_request", "send a JSON object (Content-Type: application/json)")
        if rest == "/clients" and method == "POST":
            client_id = body.get("client_id")
            if not isinstance(client_id, str) or not client_id:
                raise ProtocolError("invalid_request", "client_id is required")
            client = {"client_secret": body.get("client_secret"), "redirect_uris": body.get("redirect_uris") or [],
                      "team_id": body.get("team_id"), "key_id": body.get("key_id"), "public_key": None}
            if body.get("public_key_pem"):
                try:
                    client["public_key"] = serialization.load_pem_public_key(str(body["public_key_pem"]).encode())
                except ValueError as error:
                    raise ProtocolError("invalid_request", f"public_key_pem: {error}")
            with provider.lock:
                provider.clients[client_id] = client
            return self.send_json(200, {"ok": True})
        if rest == "/next" and method == "POST":
            flavour = body.get("flavour")
            if flavour not in FLAVOURS:
                raise ProtocolError("invalid_request", "flavour must be oidc, apple or github")
            entry = {"deny": True, "error": body.get("error")} if body.get("deny") else provider.fresh_identity(flavour, body)
            entry["client_id"] = body.get("client_id")
            with provider.lock:
                provider.queued[flavour].append(entry)
            return self.send_json(200, entry)
        if rest == "/next" and method == "DELETE":
            with provider.lock:
                for flavour in FLAVOURS:
                    if query.get("flavour") in (None, flavour):
                        provider.queued[flavour].clear()
            return self.send_json(200, {"ok": True})
        if rest == "/id_token" and method == "POST":
            flavour = body.get("flavour", "oidc")
            if flavour not in ("oidc", "apple") or not isinstance(body.get("aud"), (str, list)):
                raise ProtocolError("invalid_request", "flavour must be oidc or apple, and aud is required")
            identity = provider.fresh_identity(flavour, {key: body[key] for key in ("sub", "email", "email_verified", "name", "picture", "is_private_email") if key in body})
            try:
                expires_in = float(body.get("exp_in", 3600))
            except (TypeError, ValueError):
                raise ProtocolError("invalid_request", "exp_in must be a number of seconds")
            overrides = body.get("claims") if isinstance(body.get("claims"), dict) else None
            token = provider.id_token(flavour, body["aud"], identity, body.get("nonce"), expires_in, overrides=overrides, untrusted=bool(body.get("untrusted_key")))
            return self.send_json(200, {"id_token": token, "sub": identity["sub"]})
        if rest == "/log" and method == "GET":
            prefix = query.get("path", "")
            with provider.lock:
                entries = [entry for entry in provider.log if entry["path"].startswith(prefix)]
            return self.send_json(200, {"requests": entries})
        if rest == "/log" and method == "DELETE":
            with provider.lock:
                provider.log.clear()
            return self.send_json(200, {"ok": True})
        self.send_json(404, {"error": "not_found", "error_description": f"no {method} /_control{rest}"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address) -> None:
        # A client that hung up or sent garbage is logged in a line, not a traceback, and the server goes on.
        sys.stderr.write(f"oauth-provider: connection from {client_address[0]} failed: {sys.exc_info()[1]!r}\n")


def serve(args: argparse.Namespace) -> None:
    server = Server((args.host, args.port), Handler)
    port = server.server_address[1]
    provider = Provider(args.issuer_base or f"http://{args.host}:{port}", args.code_lifetime)
    for pair in args.client:
        client_id, separator, secret = pair.partition(":")
        if not separator or not client_id:
            sys.exit("oauth-provider: --client takes ID:SECRET")
        provider.clients[client_id] = {"client_secret": secret, "redirect_uris": [], "public_key": None}
    server.RequestHandlerClass = type("BoundHandler", (Handler,), {"provider": provider})
    print(f"listening on {port}", flush=True)
    sys.stderr.write(f"oauth-provider: issuers {provider.issuer('oidc')}, {provider.issuer('apple')}, GitHub at {provider.issuer('github')}\n")
    sys.stderr.flush()

    def stop(*_) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("serve")
    server.add_argument("--host", default="127.0.0.1")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--issuer-base")
    server.add_argument("--client", action="append", default=[], help="ID:SECRET, a client registered from the start")
    server.add_argument("--code-lifetime", type=float, default=60.0)
    serve(parser.parse_args())


if __name__ == "__main__":
    main()
