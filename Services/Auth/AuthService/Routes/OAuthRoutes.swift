import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// The OAuth web flow and identities, as GoTrue serves them:
/// - `GET /authorize?provider=…&redirect_to=…&scopes=…[&code_challenge=…&code_challenge_method=s256]`
///   → 302 to the provider. Browsers send no headers, so the app is named by `apikey` in the
///   query (clients pass it through their query parameters: supabase_auth's
///   `options.query_params`, supabase-swift's `queryParams`), or the `apikey` header.
/// - `GET|POST /callback` (POST: Apple's form_post) → 302 to `redirect_to` with `?code=` (PKCE)
///   or `#access_token=…` (implicit), or with `error` and `error_description`.
/// - `GET /user/identities/authorize` (signed in; `skip_http_redirect=true` → `{"url"}`) and
///   `DELETE /user/identities/{identity_id}`: manual linking, when the app allows it.
struct OAuthRoutes {
    let auth: AuthRoutes

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("authorize", use: authorize)
        group.get("callback", use: callback)
        group.post("callback", use: callback)
        group.get("user/identities/authorize", use: linkIdentity)
        group.delete("user/identities/:identity_id", use: unlinkIdentity)
    }

    /// Parameters auth controls or reads itself; everything else goes on to the provider.
    static let ownParameters: Set<String> = [
        "provider", "redirect_to", "scopes", "code_challenge", "code_challenge_method", "apikey", "skip_http_redirect", "invite_token",
        "client_id", "redirect_uri", "response_type", "state", "scope", "nonce", "response_mode", "client_secret", "grant_type",
    ]

    static func authorizeRequest(_ request: Request) throws -> OAuthAuthorizeRequest {
        let query = request.uri.queryParameters
        let extra = query.compactMap { key, value -> (String, String)? in
            let name = String(key)
            return ownParameters.contains(name.lowercased()) ? nil : (name, String(value))
        }
        return OAuthAuthorizeRequest(
            provider: query["provider"].map(String.init) ?? "", redirectTo: query["redirect_to"].map(String.init),
            scopes: query["scopes"].map(String.init),
            pkce: try PKCEChallenge.parse(challenge: query["code_challenge"].map(String.init), method: query["code_challenge_method"].map(String.init)),
            extra: extra
        )
    }

    @Sendable func authorize(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let url = try await auth.accounts.oauthAuthorizationURL(app: app, request: try Self.authorizeRequest(request), client: auth.client(request, context))
        return Self.redirect(url)
    }

    @Sendable func callback(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        var fields: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { fields[String(key)] = String(value) }
        if request.method == .post {
            // Apple posts `code`, `state` and (once) `user` as a form.
            let body = try await request.body.collect(upTo: 64 * 1024)
            for (key, value) in Self.formFields(String(buffer: body)) { fields[key] = value }
        }
        let location = try await auth.accounts.oauthCallback(
            OAuthCallbackParameters(state: fields["state"], code: fields["code"], error: fields["error"], errorDescription: fields["error_description"], appleUser: fields["user"]),
            client: auth.client(request, context)
        )
        return Self.redirect(location)
    }

    @Sendable func linkIdentity(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await auth.accounts.authenticate(app: app, bearer: auth.bearer(request))
        let url = try await auth.accounts.identityLinkURL(app: app, caller: caller, request: try Self.authorizeRequest(request), client: auth.client(request, context))
        if request.uri.queryParameters["skip_http_redirect"] == "true" {
            return try json(["url": url], request, context)
        }
        return Self.redirect(url)
    }

    @Sendable func unlinkIdentity(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await auth.accounts.authenticate(app: app, bearer: auth.bearer(request))
        guard let identityID = context.parameters.get("identity_id").flatMap(UUID.init(uuidString:)) else {
            throw APIError(.notFound, code: "validation_failed", message: "identity_id must be an UUID")
        }
        try await auth.accounts.unlinkIdentity(app: app, caller: caller, identityID: identityID)
        return try json(EmptyResponse(), request, context)
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// `application/x-www-form-urlencoded` fields (`+` is a space); malformed pairs are skipped.
    static func formFields(_ body: String) -> [(String, String)] {
        body.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let rawKey = parts.first else { return nil }
            func decode(_ text: Substring) -> String? { String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let key = decode(rawKey), !key.isEmpty else { return nil }
            return (key, parts.count > 1 ? decode(parts[1]) ?? "" : "")
        }
    }
}
