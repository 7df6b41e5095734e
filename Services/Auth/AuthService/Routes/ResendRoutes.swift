import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// `POST /resend` and GoTrue's `GET /health` under `/auth/v1` (the gateway forwards the whole
/// prefix; auth's own `/health`, `/ready` and `/metrics` stay at the root of its port).
extension AuthRoutes {
    func addResendAndHealth(to group: RouterGroup<ColonyRequestContext>) {
        group.post("resend", use: resend)
        group.get("health", use: health)
    }

    struct ResendBody: Decodable {
        var type: String?
        var email: String?
        var phone: String?
        var codeChallenge: String?
        var codeChallengeMethod: String?
    }

    @Sendable func resend(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await anonApp(request)
        let body = try await context.requestDecoder.decode(ResendBody.self, from: request, context: context)
        let messageID = try await accounts.resend(
            app: app, type: body.type, email: body.email, phone: body.phone,
            pkce: try PKCEChallenge.parse(challenge: body.codeChallenge, method: body.codeChallengeMethod),
            redirectTo: request.uri.queryParameters["redirect_to"].map(String.init), client: client(request, context)
        )
        if let messageID { return try json(MessageIDResponse(messageId: messageID), request, context) }
        return try json(EmptyResponse(), request, context)
    }

    /// GoTrue's health answer (no API key, as GoTrue's own; the clients read nothing else).
    struct GoTrueHealth: ResponseEncodable {
        var version = "v2.196.0"
        var name = "GoTrue"
        var description = "Colony's auth service, speaking Supabase Auth (GoTrue) v2.196.0's API"
    }

    @Sendable func health(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        try json(GoTrueHealth(), request, context)
    }
}
