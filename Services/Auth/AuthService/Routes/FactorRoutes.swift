import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// Supabase Auth's MFA endpoints: the signed-in user's factors (`/factors`), and an operator's
/// view of a user's factors with the service-role key or the console's credential
/// (`/admin/users/{id}/factors`).
struct FactorRoutes {
    let auth: AuthRoutes

    var accounts: Accounts { auth.accounts }

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.post("factors", use: enroll)
        group.post("factors/:factor_id/challenge", use: challenge)
        group.post("factors/:factor_id/verify", use: verify)
        group.delete("factors/:factor_id", use: unenroll)
        group.get("admin/users/:id/factors", use: adminList)
        group.put("admin/users/:id/factors/:factor_id", use: adminUpdate)
        group.delete("admin/users/:id/factors/:factor_id", use: adminDelete)
    }

    struct EnrollBody: Decodable {
        var factorType: String?
        var friendlyName: String?
        var issuer: String?
        var phone: String?
    }

    struct ChallengeBody: Decodable {
        var channel: String?
    }

    struct VerifyBody: Decodable {
        var challengeId: String?
        var code: String?
    }

    @Sendable func enroll(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await factorOwner(app: app, request)
        let body = try await context.requestDecoder.decode(EnrollBody.self, from: request, context: context)
        let enrolled = try await accounts.enrollFactor(app: app, caller: caller, request: .init(factorType: body.factorType, friendlyName: body.friendlyName, issuer: body.issuer, phone: body.phone))
        return try json(enrolled, request, context)
    }

    @Sendable func challenge(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await factorOwner(app: app, request)
        let factorID = try factorID(context)
        // The body is optional (`{"channel": "sms"}` for a phone factor).
        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
        let body = bytes.readableBytes == 0 ? ChallengeBody() : try ColonyRequestDecoder.decode(ChallengeBody.self, from: Data(buffer: bytes))
        let answer = try await accounts.challengeFactor(app: app, caller: caller, factorID: factorID, channel: body.channel, client: auth.client(request, context))
        return try json(answer, request, context)
    }

    @Sendable func verify(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await factorOwner(app: app, request)
        let factorID = try factorID(context)
        let body = try await context.requestDecoder.decode(VerifyBody.self, from: request, context: context)
        let session = try await accounts.verifyFactor(app: app, caller: caller, factorID: factorID, challengeID: body.challengeId, code: body.code, client: auth.client(request, context))
        return try json(session, request, context)
    }

    @Sendable func unenroll(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await auth.anonApp(request)
        let caller = try await factorOwner(app: app, request)
        return try json(try await accounts.unenrollFactor(app: app, caller: caller, factorID: try factorID(context)), request, context)
    }

    /// The signed-in caller, who may not be anonymous: an account with no address has nothing a
    /// second factor would protect (GoTrue's `requireNotAnonymous` on every `/factors` route).
    func factorOwner(app: App, _ request: Request) async throws -> AuthenticatedCaller {
        let caller = try await accounts.authenticate(app: app, bearer: auth.bearer(request))
        if caller.claims.isAnonymous == true {
            throw APIError(.forbidden, code: "no_authorization", message: "Anonymous user not allowed to perform these actions")
        }
        return caller
    }

    /// The admin routes' caller rules (an app's service-role key, or the console for an operator).
    var admin: AdminRoutes { AdminRoutes(accounts: accounts, keyRing: auth.keyRing, consoleKey: auth.consoleKey) }

    @Sendable func adminList(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await admin.adminCaller(request).app
        return try json(try await accounts.adminFactors(app: app, userID: try admin.userID(context)), request, context)
    }

    struct AdminUpdateBody: Decodable {
        var friendlyName: String?
        var phone: String?
    }

    @Sendable func adminUpdate(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await admin.adminCaller(request)
        let userID = try admin.userID(context)
        let factorID = try factorID(context)
        let body = try await context.requestDecoder.decode(AdminUpdateBody.self, from: request, context: context)
        return try json(try await accounts.adminUpdateFactor(app: caller.app, userID: userID, factorID: factorID, friendlyName: body.friendlyName, phone: body.phone,
                                                             actor: caller.actor), request, context)
    }

    @Sendable func adminDelete(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await admin.adminCaller(request)
        let userID = try admin.userID(context)
        return try json(try await accounts.adminDeleteFactor(app: caller.app, userID: userID, factorID: try factorID(context), operatorActor: caller.operatorActor),
                        request, context)
    }

    /// A path id that is no UUID names no factor.
    func factorID(_ context: ColonyRequestContext) throws -> UUID {
        guard let text = context.parameters.get("factor_id"), let id = UUID(uuidString: text) else { throw FactorErrors.notFound }
        return id
    }
}
