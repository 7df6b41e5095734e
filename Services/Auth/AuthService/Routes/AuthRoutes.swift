import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Supabase Auth's HTTP API under `/auth/v1`. Handlers decode, tell the app from the `apikey`,
/// call `Accounts`, and encode.
struct AuthRoutes {
    let accounts: Accounts
    let keyRing: KeyRing
    let settings: AuthSettings
    /// The console's credential on the admin routes (`COLONY_CONSOLE_KEY`; nil refuses the console).
    var consoleKey: InternalKey? = nil

    func add(to router: Router<ColonyRequestContext>) {
        let group = router.group("auth/v1").add(middleware: SupabaseAPIVersionMiddleware())
        group.post("signup", use: signUp)
        group.post("token", use: token)
        group.post("otp", use: otp)
        group.post("verify", use: verify)
        group.get("verify", use: verifyLink)
        group.post("recover", use: recover)
        group.get("reauthenticate", use: reauthenticate)
        group.get("user", use: getUser)
        group.put("user", use: updateUser)
        group.delete("user", use: deleteUser)
        group.post("user/export", use: requestExport)
        group.get("user/export", use: listExports)
        group.post("logout", use: logout)
        group.get("settings", use: appSettings)
        group.get(".well-known/jwks.json", use: jwks)
        AdminRoutes(accounts: accounts, keyRing: keyRing, consoleKey: consoleKey).add(to: group)
        DisabledFeatureRoutes().add(to: group)
        OAuthRoutes(auth: self).add(to: group)
        FactorRoutes(auth: self).add(to: group)
        addResendAndHealth(to: group)
    }

    // MARK: bodies

    struct SignUpBody: Decodable {
        var email: String?
        var phone: String?
        var password: String?
        var data: [String: JSONValue]?
        var codeChallenge: String?
        var codeChallengeMethod: String?
    }

    struct TokenBody: Decodable {
        var email: String?
        var phone: String?
        var password: String?
        var refreshToken: String?
        var provider: String?
        var idToken: String?
        var nonce: String?
        var data: [String: JSONValue]?
        var authCode: String?
        var codeVerifier: String?
        /// With `id_token`: link the identity to the signed-in caller instead of signing in with it.
        var linkIdentity: Bool?
    }

    struct OTPBody: Decodable {
        var email: String?
        var phone: String?
        var createUser: Bool?
        var data: [String: JSONValue]?
        var codeChallenge: String?
        var codeChallengeMethod: String?
    }

    struct VerifyBody: Decodable {
        var type: String
        var token: String?
        var tokenHash: String?
        var email: String?
        var phone: String?
        var redirectTo: String?
    }

    struct RecoverBody: Decodable {
        var email: String
        var codeChallenge: String?
        var codeChallengeMethod: String?
    }

    struct DeleteUserBody: Decodable {
        var nonce: String?
    }

    struct UpdateUserBody: Decodable {
        var email: String?
        var phone: String?
        var password: String?
        var data: [String: JSONValue]?
        var nonce: String?
        var codeChallenge: String?
        var codeChallengeMethod: String?
    }

    // MARK: handlers

    @Sendable func signUp(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let body = try await context.requestDecoder.decode(SignUpBody.self, from: request, context: context)
        // No address and no password: an anonymous sign-in (supabase `signInAnonymously`).
        if (body.email ?? "").isEmpty, (body.phone ?? "").isEmpty, body.password == nil {
            return try json(try await accounts.signInAnonymously(app: app, data: body.data ?? [:], client: client(request, context)), request, context)
        }
        guard let password = body.password else { throw AuthErrors.validation("Signup requires a valid password") }
        let result = try await accounts.signUp(
            app: app, email: body.email, phone: body.phone, password: password, data: body.data ?? [:],
            pkce: try PKCEChallenge.parse(challenge: body.codeChallenge, method: body.codeChallengeMethod),
            redirectTo: request.uri.queryParameters["redirect_to"].map(String.init), client: client(request, context)
        )
        switch result {
        case .session(let session): return try json(session, request, context)
        case .user(let user): return try json(user, request, context)
        }
    }

    @Sendable func token(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let grantType = request.uri.queryParameters["grant_type"].map(String.init) ?? ""
        let body = try await context.requestDecoder.decode(TokenBody.self, from: request, context: context)
        let client = client(request, context)
        let session: SessionResponse
        switch grantType {
        case "password":
            guard let password = body.password else { throw AuthErrors.invalidCredentials }
            session = try await accounts.signInWithPassword(app: app, email: body.email, phone: body.phone, password: password, client: client)
        case "refresh_token":
            guard let refreshToken = body.refreshToken, !refreshToken.isEmpty else { throw AuthErrors.badRequest("refresh_token required") }
            session = try await accounts.refresh(app: app, refreshToken: refreshToken, client: client)
        case "id_token":
            guard let idToken = body.idToken, let provider = body.provider else { throw AuthErrors.badRequest("provider and id_token are required") }
            if body.linkIdentity == true {
                guard let bearer = bearer(request) else {
                    throw APIError(.badRequest, code: "invalid_request", message: "Linking requires a valid user access token in Authorization")
                }
                let caller = try await accounts.authenticate(app: app, bearer: bearer)
                session = try await accounts.linkIdentityWithIDToken(app: app, caller: caller, provider: provider, idToken: idToken, nonce: body.nonce, data: body.data ?? [:], client: client)
            } else {
                session = try await accounts.signInWithIDToken(app: app, provider: provider, idToken: idToken, nonce: body.nonce, data: body.data ?? [:], client: client)
            }
        case "pkce":
            guard let authCode = body.authCode, let verifier = body.codeVerifier else { throw AuthErrors.badRequest("invalid request: both auth code and code verifier should be non-empty") }
            session = try await accounts.exchangeAuthCode(app: app, authCode: authCode, codeVerifier: verifier, client: client)
        default:
            throw APIError(.badRequest, code: "unsupported_grant_type", message: "unsupported_grant_type")
        }
        return try json(session, request, context)
    }

    @Sendable func otp(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let body = try await context.requestDecoder.decode(OTPBody.self, from: request, context: context)
        let messageID = try await accounts.sendOTP(
            app: app, email: body.email, phone: body.phone, createUser: body.createUser ?? true, data: body.data ?? [:],
            pkce: try PKCEChallenge.parse(challenge: body.codeChallenge, method: body.codeChallengeMethod),
            redirectTo: request.uri.queryParameters["redirect_to"].map(String.init), client: client(request, context)
        )
        if let messageID { return try json(MessageIDResponse(messageId: messageID), request, context) }
        return try json(EmptyResponse(), request, context)
    }

    @Sendable func verify(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let body = try await context.requestDecoder.decode(VerifyBody.self, from: request, context: context)
        guard let type = Accounts.VerifyType(rawValue: body.type) else { throw AuthErrors.badRequest("Unsupported verification type") }
        switch try await accounts.verify(app: app, type: type, code: body.token, email: body.email, phone: body.phone, tokenHash: body.tokenHash, client: client(request, context)) {
        case .session(let session): return try json(session, request, context)
        case .emailChangePending(let user): return try json(SingleConfirmationResponse(user: user), request, context)
        }
    }

    /// The mailed link: no API key, a redirect either way.
    @Sendable func verifyLink(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let token = query["token"].map(String.init), let type = query["type"].flatMap({ Accounts.VerifyType(rawValue: String($0)) }) else {
            throw AuthErrors.badRequest("Verify requires a token and a type")
        }
        let (_, location) = try await accounts.verifyLink(type: type, token: token, redirectTo: query["redirect_to"].map(String.init), client: client(request, context))
        return Response(status: .seeOther, headers: [.location: location])
    }

    @Sendable func recover(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let body = try await context.requestDecoder.decode(RecoverBody.self, from: request, context: context)
        try await accounts.recover(app: app, email: body.email, pkce: try PKCEChallenge.parse(challenge: body.codeChallenge, method: body.codeChallengeMethod),
                                   redirectTo: request.uri.queryParameters["redirect_to"].map(String.init), client: client(request, context))
        return try json(EmptyResponse(), request, context)
    }

    /// A code to the user's address, for changes that need proof (`nonce`).
    @Sendable func reauthenticate(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        if let messageID = try await accounts.reauthenticate(app: app, caller: caller, acceptLanguage: request.headers[.acceptLanguage]) {
            return try json(MessageIDResponse(messageId: messageID), request, context)
        }
        return try json(EmptyResponse(), request, context)
    }

    @Sendable func getUser(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        return try json(UserResource(try await accounts.currentUser(app: app, bearer: bearer(request))), request, context)
    }

    @Sendable func updateUser(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        let body = try await context.requestDecoder.decode(UpdateUserBody.self, from: request, context: context)
        let user = try await accounts.updateUser(
            app: app, caller: caller,
            changes: .init(email: body.email, phone: body.phone, password: body.password, data: body.data, nonce: body.nonce),
            pkce: try PKCEChallenge.parse(challenge: body.codeChallenge, method: body.codeChallengeMethod),
            redirectTo: request.uri.queryParameters["redirect_to"].map(String.init), acceptLanguage: request.headers[.acceptLanguage]
        )
        return try json(user, request, context)
    }

    @Sendable func deleteUser(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        // The body is optional: `{"nonce": "…"}` when the session signed in long ago.
        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
        let body = bytes.readableBytes == 0 ? DeleteUserBody() : try ColonyRequestDecoder.decode(DeleteUserBody.self, from: Data(buffer: bytes))
        try await accounts.deleteOwnAccount(app: app, caller: caller, nonce: body.nonce)
        return Response(status: .noContent)
    }

    /// Colony's: a copy of the caller's data from every service, mailed as a signed link. 202
    /// with the export; the body is optional, `{"nonce": "…"}` when the session signed in long ago.
    @Sendable func requestExport(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
        let body = bytes.readableBytes == 0 ? DeleteUserBody() : try ColonyRequestDecoder.decode(DeleteUserBody.self, from: Data(buffer: bytes))
        let export = try await accounts.requestOwnExport(app: app, caller: caller, nonce: body.nonce)
        var response = try json(export, request, context)
        response.status = .accepted
        return response
    }

    /// The caller's exports, newest first (at most 20): `{"exports": [...]}`.
    @Sendable func listExports(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        return try json(ExportList(exports: try await accounts.listOwnExports(app: app, caller: caller)), request, context)
    }

    struct ExportList: Encodable {
        var exports: [ExportResource]
    }

    @Sendable func logout(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let caller = try await accounts.authenticate(app: app, bearer: bearer(request))
        let scopeText = request.uri.queryParameters["scope"].map(String.init) ?? "global"
        guard let scope = Accounts.LogoutScope(rawValue: scopeText) else {
            throw AuthErrors.badRequest("Unsupported logout scope \"\(scopeText)\"")
        }
        try await accounts.logout(app: app, caller: caller, scope: scope)
        return Response(status: .noContent)
    }

    @Sendable func appSettings(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let settings = settings.app(app)
        // The app's OAuth providers, listed as GoTrue lists its enabled providers.
        let providers: [String: JSONValue] = settings.oauthProviders.reduce(into: [:]) { $0[$1.key] = .bool($1.value.isEnabled) }
        let body: [String: JSONValue] = [
            "external": .object(providers.merging([
                "email": .bool(settings.emailEnabled || settings.magicLinkEnabled), "phone": .bool(settings.phoneEnabled),
                "apple": .bool(settings.appleEnabled), "anonymous_users": .bool(settings.anonymousSignIns),
            ]) { provider, own in provider == .bool(true) ? provider : own }),
            "disable_signup": .bool(settings.disableSignup),
            "mailer_autoconfirm": .bool(settings.emailAutoconfirm),
            "phone_autoconfirm": .bool(false),
            "sms_provider": .string(settings.phoneEnabled ? "colony" : ""),
            "saml_enabled": .bool(false),
            // Colony's: the app's contact for its users (null fields when the operator gave none).
            "support": .object(["email": settings.supportEmail.map(JSONValue.string) ?? .null, "url": settings.supportUrl.map(JSONValue.string) ?? .null]),
        ]
        return try json(body, request, context)
    }

    /// Public: other services fetch it to verify access tokens.
    @Sendable func jwks(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"], body: .init(byteBuffer: ByteBuffer(string: try await keyRing.jwks())))
    }

    // MARK: helpers

    /// The app the request's `apikey` names (anon or service role).
    func anonApp(_ request: Request) async throws -> App {
        guard let key = request.headers[.apiKey] ?? request.uri.queryParameters["apikey"].map(String.init), !key.isEmpty else {
            throw AuthErrors.noAPIKey
        }
        guard let record = try await keyRing.apiKey(key) else { throw AuthErrors.invalidAPIKey }
        return record.app
    }

    func bearer(_ request: Request) -> String? {
        request.headers[.authorization].flatMap(BearerToken.from(authorization:))
    }

    func client(_ request: Request, _ context: ColonyRequestContext) -> ClientInfo {
        ClientInfo(ip: context.clientAddress, userAgent: request.headers[.userAgent], acceptLanguage: request.headers[.acceptLanguage])
    }
}

func json(_ value: some Encodable, _ request: Request, _ context: ColonyRequestContext) throws -> Response {
    try context.responseEncoder.encode(value, from: request, context: context)
}

/// Supabase clients read error codes from `{"code", "message"}` only when the response says it
/// speaks API version 2024-01-01.
struct SupabaseAPIVersionMiddleware: RouterMiddleware {
    typealias Context = ColonyRequestContext
    static let header = HTTPField.Name("X-Supabase-Api-Version")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = APIError.response(for: error, logger: context.logger)
        }
        response.headers[Self.header] = "2024-01-01"
        return response
    }
}
