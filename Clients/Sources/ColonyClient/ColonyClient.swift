import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_exported import OpenAPIRuntime
@_exported import OpenAPIURLSession

/// How every service module reaches Colony: the gateway's base URL, a URLSession transport, the
/// caller's bearer token on each request, and dates read and written with fractional seconds
/// (Colony's times are ISO 8601 with milliseconds).
///
/// With supabase-swift, the token is the session's, refreshed by `AuthClient` as it expires:
///
///     let colony = ColonyConnection(gateway: URL(string: "https://api.example.com")!, apiKey: anonKey) {
///         try await supabase.auth.session.accessToken
///     }
///     let circles = CirclesAPI.Client(colony)
public struct ColonyConnection: Sendable {
    public var serverURL: URL
    public var configuration: Configuration
    public var transport: any ClientTransport
    public var middlewares: [any ClientMiddleware]

    /// - Parameters:
    ///   - gateway: the gateway's base URL (the documents' paths carry each service's prefix).
    ///   - apiKey: the app's anon key, sent as `apikey` as supabase-swift does (the gateway may route on it).
    ///   - session: the URLSession requests go through.
    ///   - accessToken: the signed-in user's access token, asked for before every request
    ///     (nil sends none; operations that need a user then answer 401).
    public init(gateway: URL, apiKey: String? = nil, session: URLSession = .shared,
                accessToken: @escaping @Sendable () async throws -> String?) {
        self.serverURL = gateway
        self.configuration = Configuration(dateTranscoder: .iso8601WithFractionalSeconds)
        self.transport = URLSessionTransport(configuration: .init(session: session))
        self.middlewares = [BearerTokenMiddleware(apiKey: apiKey, accessToken: accessToken)]
    }
}

/// Adds `Authorization: Bearer <token>` (and the app's `apikey`) to every request.
public struct BearerTokenMiddleware: ClientMiddleware {
    let apiKey: String?
    let accessToken: @Sendable () async throws -> String?

    public init(apiKey: String? = nil, accessToken: @escaping @Sendable () async throws -> String?) {
        self.apiKey = apiKey
        self.accessToken = accessToken
    }

    public func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                          next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = try await accessToken() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        if let apiKey {
            request.headerFields[HTTPField.Name("apikey")!] = apiKey
        }
        return try await next(request, body, baseURL)
    }
}
