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
        guard let token = BearerToken.from(authorization: header) else {
            throw APIError.unauthorized("expected a bearer token", code: "invalid_token")
        }
        let user = try await verifier.verify(token)
        var context = context
        context.user = user
        context.logger[metadataKey: "user_id"] = .string(user.id.uuidString.lowercased())
        return try await RequestCaller.$user.withValue(user) { try await next(request, context) }
    }
}

extension TokenMiddleware {
    /// For routes an app's servers call with its service-role key (`Authorization: Bearer`, or
    /// `apikey` as Supabase's clients send it): the key's app, or a 401.
    public func requireServiceKey(_ request: Request) async throws -> App {
        var presented: [String] = []
        if let header = request.headers[.authorization], let token = BearerToken.from(authorization: header) { presented.append(token) }
        if let key = request.headers[HTTPField.Name("apikey")!] { presented.append(key) }
        guard !presented.isEmpty else { throw APIError.unauthorized("a service-role key is required", code: "invalid_service_key") }
        var failure = APIError.unauthorized("a service-role key is required", code: "invalid_service_key")
        for key in presented {
            do { return try await verifier.verifyServiceKey(key) } catch { failure = error }
        }
        throw failure
    }
}
