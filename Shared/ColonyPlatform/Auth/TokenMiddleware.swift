import ColonyModels
import HTTPTypes
import Hummingbird

/// Requires `Authorization: Bearer <token>` on every route behind it and puts the verified
/// caller on the context. Anything short of a valid token is a 401.
public struct TokenMiddleware: RouterMiddleware {
    public typealias Context = ColonyRequestContext

    let verifier: TokenVerifier

    public init(verifier: TokenVerifier) {
        self.verifier = verifier
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("missing access token", code: "missing_token")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw APIError.unauthorized("expected a bearer token", code: "invalid_token")
        }
        let user = try await verifier.verify(String(parts[1]))
        var context = context
        context.user = user
        context.logger[metadataKey: "user_id"] = .string(user.id.uuidString.lowercased())
        return try await next(request, context)
    }
}

extension TokenMiddleware {
    /// For routes an app's servers call with its service-role key (`Authorization: Bearer`, or
    /// `apikey` as Supabase's clients send it): the key's app, or a 401.
    public func requireServiceKey(_ request: Request) async throws -> App {
        var presented: [String] = []
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented.append(String(parts[1])) }
        }
        if let key = request.headers[HTTPField.Name("apikey")!] { presented.append(key) }
        guard !presented.isEmpty else { throw APIError.unauthorized("a service-role key is required", code: "invalid_service_key") }
        var failure = APIError.unauthorized("a service-role key is required", code: "invalid_service_key")
        for key in presented {
            do { return try await verifier.verifyServiceKey(key) } catch { failure = error }
        }
        throw failure
    }
}
