import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// Auth answers chat which of some addresses have an account of an app, from `users` itself: an
/// address whose sign-up committed is known before its `user_registered` reaches chat's projection.
/// Service credential only (`InternalRoute`); never routed by the gateway. Chat counts every
/// address it asks about against the asking user's budget before it asks.
enum InternalUserRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext) {
        InternalRoute.get(InternalUsersByEmailRoute.path, on: router, key: context.configuration.internalKey) { request, _ in
            let query = request.uri.queryParameters
            guard let app = query.get("app").flatMap({ App(rawValue: $0) }) else {
                throw APIError.unprocessable("app must be one of Colony's apps", code: "validation_failed")
            }
            let emails = Array(Set(query.getAll("email").map { $0.lowercased() }))
            guard emails.count <= InternalUsersByEmailRoute.maxEmails, emails.allSatisfy({ $0.utf8.count <= 320 && !$0.contains("\0") }) else {
                throw APIError.unprocessable("at most \(InternalUsersByEmailRoute.maxEmails) addresses of at most 320 bytes", code: "validation_failed")
            }
            let users = try await context.database.withConnection { connection in
                try await AccountsByEmail(logger: context.logger).find(emails, app: app, on: connection)
            }
            return try RouteSupport.json(InternalUsersByEmailRoute.Answer(users: users), status: .ok)
        }
    }
}

/// The app's accounts with these (lower-cased) addresses, with their sign-up names.
struct AccountsByEmail: Sendable {
    let logger: Logger

    func find(_ emails: [String], app: App, on connection: PostgresConnection) async throws -> [InternalUsersByEmailRoute.Account] {
        guard !emails.isEmpty else { return [] }
        var accounts: [InternalUsersByEmailRoute.Account] = []
        for try await row in try await connection.query("""
            SELECT id, lower(email), raw_user_meta_data::text FROM users
            WHERE app = \(app.rawValue) AND lower(email) = ANY(\(emails)) ORDER BY id
            """, logger: logger) {
            let (id, email, metadata) = try row.read { c in try (c.next(UUID.self), c.next(String.self), c.next(String.self)) }
            let fields = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(metadata.utf8))) ?? [:]
            accounts.append(.init(id: id, email: email, displayName: SignUpMetadata.displayName(fields, maxLength: 60)))
        }
        return accounts
    }
}
