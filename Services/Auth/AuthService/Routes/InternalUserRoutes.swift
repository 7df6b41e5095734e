import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// Auth answers chat which of some addresses have an account of an app, from `users` itself: an
/// address whose sign-up committed is known before its `user_registered` reaches chat's projection.
/// Chat counts every address it asks about against the asking user's budget before it asks. And it
/// answers every service which accounts are suspended while tokens issued before may be live
/// (`SuspendedAccountsRoute`). Service credential only (`InternalRoute`); never routed by the gateway.
enum InternalUserRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext, settings: AuthSettings) {
        InternalRoute.get(SuspendedAccountsRoute.path, on: router, key: context.configuration.internalKey) { _, _ in
            let tokenLifetime = App.allCases.map { settings.app($0).accessTokenLifetimeSeconds }.max() ?? 3600
            let accounts = try await context.database.withConnection { connection in
                try await SuspendedAccountsList(logger: context.logger).recent(withinSeconds: tokenLifetime, on: connection)
            }
            return try RouteSupport.json(SuspendedAccountsRoute.Answer(accounts: accounts), status: .ok)
        }
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

/// The suspensions in force that began within `seconds` (the longest access-token lifetime of any
/// app) and a minute for clocks: older ones left no live token behind.
struct SuspendedAccountsList: Sendable {
    let logger: Logger

    func recent(withinSeconds seconds: Int, on connection: PostgresConnection) async throws -> [SuspendedAccountsRoute.Account] {
        var accounts: [SuspendedAccountsRoute.Account] = []
        for try await row in try await connection.query("""
            SELECT id, app, banned_until FROM users
            WHERE banned_at > now() - make_interval(secs => \(Double(seconds + 60))) AND banned_until > now()
            ORDER BY banned_at
            """, logger: logger) {
            let (id, app, until) = try row.read { c in try (c.next(UUID.self), c.next(String.self), c.next(Date.self)) }
            guard let app = App(rawValue: app) else { continue }
            accounts.append(.init(userId: id, app: app, until: until))
        }
        return accounts
    }
}
