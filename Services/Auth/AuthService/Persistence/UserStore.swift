import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// An account as stored: one row of `users` with its identities.
public struct UserRecord: Sendable, Equatable {
    public var id: UUID
    public var app: App
    public var email: String?
    public var phone: String?
    public var encryptedPassword: String?
    public var emailConfirmedAt: Date?
    public var phoneConfirmedAt: Date?
    public var confirmationSentAt: Date?
    public var recoverySentAt: Date?
    public var emailChangeSentAt: Date?
    public var phoneChangeSentAt: Date?
    public var newEmail: String?
    public var newPhone: String?
    public var appMetadata: [String: JSONValue]
    public var userMetadata: [String: JSONValue]
    public var lastSignInAt: Date?
    public var bannedUntil: Date?
    public var createdAt: Date
    public var updatedAt: Date
    public var identities: [IdentityRecord] = []
    /// When the owner proved the address (a code or link, Apple's verified email), as opposed
    /// to `…ConfirmedAt`, which an app's autoconfirm also sets (see `AccountProof`).
    public var emailProvenAt: Date? = nil
    public var phoneProvenAt: Date? = nil
    /// The password was set by someone who had proven no address of the account (a sign-up).
    public var passwordUnproven = false
    /// A secure email change: 0 while both addresses must still confirm, 1 once one has.
    public var emailChangeConfirmStatus = 0
    /// Signed in with no address; false once one is confirmed or an identity linked (GoTrue's `is_anonymous`).
    public var isAnonymous = false
    /// Its MFA factors, verified or not (`FactorStore.column`).
    public var factors: [FactorRecord] = []
    /// When an operator invited the account (GoTrue's `invited_at`).
    public var invitedAt: Date? = nil

    public var isBanned: Bool { bannedUntil.map { $0 > Date() } ?? false }
}

public struct IdentityRecord: Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var provider: String
    public var providerId: String
    public var identityData: [String: JSONValue]
    public var lastSignInAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
}

/// Plain SQL over `users` and `identities`; every query is scoped to one app.
struct UserStore {
    let logger: Logger

    static let columns = """
        id, app, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at,
        confirmation_sent_at, recovery_sent_at, email_change_sent_at, phone_change_sent_at, new_email, new_phone,
        raw_app_meta_data::text, raw_user_meta_data::text, last_sign_in_at, banned_until, created_at, updated_at,
        (SELECT coalesce(json_agg(json_build_object(
            'id', i.id, 'user_id', i.user_id, 'provider', i.provider, 'provider_id', i.provider_id, 'identity_data', i.identity_data,
            'last_sign_in_at', to_char(i.last_sign_in_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'created_at', to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'updated_at', to_char(i.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY i.created_at), '[]')::text
         FROM identities i WHERE i.user_id = users.id) AS identities,
        email_proven_at, phone_proven_at, password_unproven, email_change_confirm_status, is_anonymous,
        \(FactorStore.column), invited_at
        """

    /// By id: the hot path of refresh and `GET /user`, so a prepared statement (parsed and
    /// planned once per connection).
    func find(id: UUID, app: App, on connection: PostgresConnection, forUpdate: Bool = false) async throws -> UserRecord? {
        if forUpdate {
            for try await user in try await connection.execute(UserByIDForUpdate(id: id, app: app.rawValue), logger: logger) { return user }
        } else {
            for try await user in try await connection.execute(UserByID(id: id, app: app.rawValue), logger: logger) { return user }
        }
        return nil
    }

    struct UserByID: PostgresPreparedStatement {
        static let sql = "SELECT \(UserStore.columns) FROM users WHERE id = $1 AND app = $2"
        var id: UUID
        var app: String
        func makeBindings() throws -> PostgresBindings { try UserStore.bindings(id, app) }
        func decodeRow(_ row: PostgresRow) throws -> UserRecord? { try UserStore.user(from: row) }
    }

    /// The account and whether `session` is still one of its sessions (`GET /user`).
    func find(id: UUID, app: App, session: UUID, on connection: PostgresConnection) async throws -> (UserRecord, sessionLive: Bool)? {
        for try await found in try await connection.execute(UserWithSession(id: id, app: app.rawValue, session: session), logger: logger) { return found }
        return nil
    }

    struct UserWithSession: PostgresPreparedStatement {
        static let sql = """
            SELECT EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3 AND s.user_id = users.id), \(UserStore.columns)
            FROM users WHERE id = $1 AND app = $2
            """
        var id: UUID
        var app: String
        var session: UUID
        func makeBindings() throws -> PostgresBindings { try UserStore.bindings(id, app, session) }
        func decodeRow(_ row: PostgresRow) throws -> (UserRecord, sessionLive: Bool)? {
            var c = RowCells(row)
            let sessionLive: Bool = try c.next()
            guard let user = try UserStore.user(from: &c) else { return nil }
            return (user, sessionLive)
        }
    }

    struct UserByIDForUpdate: PostgresPreparedStatement {
        static let sql = "SELECT \(UserStore.columns) FROM users WHERE id = $1 AND app = $2 FOR UPDATE"
        var id: UUID
        var app: String
        func makeBindings() throws -> PostgresBindings { try UserStore.bindings(id, app) }
        func decodeRow(_ row: PostgresRow) throws -> UserRecord? { try UserStore.user(from: row) }
    }

    func find(email: String, app: App, on connection: PostgresConnection, forUpdate: Bool = false) async throws -> UserRecord? {
        if !forUpdate {
            // Sign-in's lookup: prepared.
            for try await user in try await connection.execute(UserByEmail(email: email, app: app.rawValue), logger: logger) { return user }
            return nil
        }
        let query = PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM users WHERE email = $1 AND app = $2 FOR UPDATE", binds: try binds(email, app.rawValue))
        return try await single(query, on: connection)
    }

    struct UserByEmail: PostgresPreparedStatement {
        static let sql = "SELECT \(UserStore.columns) FROM users WHERE email = $1 AND app = $2"
        var email: String
        var app: String
        func makeBindings() throws -> PostgresBindings { try UserStore.bindings(email, app) }
        func decodeRow(_ row: PostgresRow) throws -> UserRecord? { try UserStore.user(from: row) }
    }

    func find(phone: String, app: App, on connection: PostgresConnection, forUpdate: Bool = false) async throws -> UserRecord? {
        let lock = forUpdate ? " FOR UPDATE" : ""
        let query = PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM users WHERE phone = $1 AND app = $2\(lock)", binds: try binds(phone, app.rawValue))
        return try await single(query, on: connection)
    }

    /// A page of the app's accounts, oldest first, and the app's total.
    func list(app: App, page: Int, perPage: Int, on connection: PostgresConnection) async throws -> (users: [UserRecord], total: Int) {
        let query = PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM users WHERE app = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3", binds: try binds(app.rawValue, perPage, (page - 1) * perPage))
        let users = try await rows(query, on: connection)
        let total = try await connection.query("SELECT count(*)::int FROM users WHERE app = \(app.rawValue)", logger: logger).firstValue(Int.self) ?? 0
        return (users, total)
    }

    /// `GET /admin/users?filter=`: a page of what the search matches, in its order, and how many
    /// it matches (at most `UserSearch.maximumMatches`).
    func search(app: App, _ search: UserSearch, page: Int, perPage: Int, on connection: PostgresConnection) async throws -> (users: [UserRecord], total: Int) {
        let ids = try await connection.query(try Self.searchQuery(app: app, search), logger: logger).values(UUID.self)
        // The list's bounds keep `(page - 1) * perPage` far from overflowing.
        let start = (page - 1) * perPage
        guard start < ids.count else { return ([], ids.count) }
        let wanted = Array(ids[start..<min(ids.count, start + perPage)])
        let found = try await rows(PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM users WHERE app = $1 AND id = ANY($2)", binds: try binds(app.rawValue, wanted)), on: connection)
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // An account deleted between the two reads is left out.
        return (wanted.compactMap { byID[$0] }, ids.count)
    }

    /// The account ids a search matches: the id's match, then emails, phones and display names
    /// starting with the text, each in byte order of the text matched, at most
    /// `UserSearch.maximumMatches`. Each kind reads its own index of migration 11 in order and
    /// stops at the limit, so a one-letter text costs no more than a long one. The expressions
    /// are the indexes' own, character for character: another spelling would not use them.
    static func searchQuery(app: App, _ search: UserSearch) throws -> PostgresQuery {
        let limit = UserSearch.maximumMatches
        let name = "lower(coalesce(nullif(raw_user_meta_data->>'display_name', ''), nullif(raw_user_meta_data->>'full_name', ''), raw_user_meta_data->>'name'))"
        var bindings = PostgresBindings()
        bindings.append(app.rawValue)
        bindings.append(search.prefixPattern)
        var branches = [
            "(SELECT id, 1 AS branch, lower(email) AS key FROM users WHERE app = $1 AND lower(email) LIKE lower($2) ORDER BY lower(email) USING ~<~ LIMIT \(limit))",
            "(SELECT id, 3, \(name) FROM users WHERE app = $1 AND \(name) LIKE lower($2) ORDER BY \(name) USING ~<~ LIMIT \(limit))",
        ]
        if let id = search.id {
            bindings.append(id)
            branches.append("(SELECT id, 0, '' FROM users WHERE app = $1 AND id = $\(bindings.count))")
        }
        if let phone = search.phonePattern {
            bindings.append(phone)
            branches.append("(SELECT id, 2, phone FROM users WHERE app = $1 AND phone LIKE $\(bindings.count) ORDER BY phone USING ~<~ LIMIT \(limit))")
        }
        // An account matched twice counts once, where it matched first.
        return PostgresQuery(unsafeSQL: """
            WITH matches AS (\(branches.joined(separator: "\n    UNION ALL "))),
            found AS (SELECT DISTINCT ON (id) id, branch, key FROM matches ORDER BY id, branch)
            SELECT id FROM found ORDER BY branch, key COLLATE "C", id LIMIT \(limit)
            """, binds: bindings)
    }

    /// Inserts the account; a second account with the address in the same app is
    /// `user_already_exists` (the unique indexes decide, so concurrent sign-ups cannot both win).
    func insert(_ user: UserRecord, on connection: PostgresConnection) async throws {
        do {
            try await connection.query("""
                INSERT INTO users (id, app, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at,
                    confirmation_sent_at, raw_app_meta_data, raw_user_meta_data, last_sign_in_at, banned_until, created_at, updated_at,
                    email_proven_at, phone_proven_at, password_unproven, is_anonymous, invited_at)
                VALUES (\(user.id), \(user.app.rawValue), \(user.email), \(user.phone), \(user.encryptedPassword), \(user.emailConfirmedAt), \(user.phoneConfirmedAt),
                    \(user.confirmationSentAt), \(try json(user.appMetadata))::jsonb, \(try json(user.userMetadata))::jsonb, \(user.lastSignInAt), \(user.bannedUntil), \(user.createdAt), \(user.updatedAt),
                    \(user.emailProvenAt), \(user.phoneProvenAt), \(user.passwordUnproven), \(user.isAnonymous), \(user.invitedAt))
                """, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AuthErrors.userAlreadyExists
        }
    }

    /// Writes every mutable field back.
    func update(_ user: UserRecord, on connection: PostgresConnection) async throws {
        do {
            try await connection.query("""
                UPDATE users SET email = \(user.email), phone = \(user.phone), encrypted_password = \(user.encryptedPassword),
                    email_confirmed_at = \(user.emailConfirmedAt), phone_confirmed_at = \(user.phoneConfirmedAt),
                    confirmation_sent_at = \(user.confirmationSentAt), recovery_sent_at = \(user.recoverySentAt),
                    email_change_sent_at = \(user.emailChangeSentAt), phone_change_sent_at = \(user.phoneChangeSentAt),
                    new_email = \(user.newEmail), new_phone = \(user.newPhone),
                    raw_app_meta_data = \(try json(user.appMetadata))::jsonb, raw_user_meta_data = \(try json(user.userMetadata))::jsonb,
                    last_sign_in_at = \(user.lastSignInAt), banned_until = \(user.bannedUntil), updated_at = now(),
                    email_proven_at = \(user.emailProvenAt), phone_proven_at = \(user.phoneProvenAt), password_unproven = \(user.passwordUnproven),
                    email_change_confirm_status = \(user.emailChangeConfirmStatus), is_anonymous = \(user.isAnonymous), invited_at = \(user.invitedAt)
                WHERE id = \(user.id)
                """, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AuthErrors.emailOrPhoneTaken
        }
    }

    func delete(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM users WHERE id = \(id)", logger: logger)
    }

    func touchSignIn(id: UUID, on connection: PostgresConnection) async throws -> Date {
        try await connection.query("UPDATE users SET last_sign_in_at = now() WHERE id = \(id) RETURNING last_sign_in_at", logger: logger)
            .firstValue(Date.self) ?? Date()
    }

    // MARK: identities

    func identities(of userID: UUID, on connection: PostgresConnection) async throws -> [IdentityRecord] {
        var result: [IdentityRecord] = []
        let rows = try await connection.query("""
            SELECT id, user_id, provider, provider_id, identity_data::text, last_sign_in_at, created_at, updated_at
            FROM identities WHERE user_id = \(userID) ORDER BY created_at
            """, logger: logger)
        for try await row in rows {
            let (id, user, provider, providerID, data, lastSignIn, created, updated) = try row.read { c in
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Date?.self), c.next(Date.self), c.next(Date.self))
            }
            result.append(IdentityRecord(id: id, userId: user, provider: provider, providerId: providerID, identityData: try decodeJSON(data), lastSignInAt: lastSignIn, createdAt: created, updatedAt: updated))
        }
        return result
    }

    func findIdentity(provider: String, providerID: String, app: App, on connection: PostgresConnection) async throws -> UUID? {
        try await connection.query("SELECT user_id FROM identities WHERE app = \(app.rawValue) AND provider = \(provider) AND provider_id = \(providerID)", logger: logger)
            .firstValue(UUID.self)
    }

    /// Adds or refreshes the identity (provider data, last sign-in).
    func upsertIdentity(userID: UUID, app: App, provider: String, providerID: String, data: [String: JSONValue], signedIn: Bool, id: UUID? = nil, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO identities (id, user_id, app, provider, provider_id, identity_data, last_sign_in_at)
            VALUES (\(id ?? UUID.timeOrdered()), \(userID), \(app.rawValue), \(provider), \(providerID), \(try json(data))::jsonb, \(signedIn ? Date() : nil))
            ON CONFLICT (app, provider, provider_id) DO UPDATE SET
                identity_data = identities.identity_data || EXCLUDED.identity_data,
                last_sign_in_at = COALESCE(EXCLUDED.last_sign_in_at, identities.last_sign_in_at),
                updated_at = now()
            """, logger: logger)
    }

    /// The account's own `email` or `phone` identity (provider id = the user id, as GoTrue's).
    /// `id`: the identity's id when an answer named it before the row existed (a queued sign-up).
    func addOwnIdentity(for user: UserRecord, provider: String, id: UUID? = nil, on connection: PostgresConnection) async throws {
        try await upsertIdentity(userID: user.id, app: user.app, provider: provider, providerID: user.id.uuidString.lowercased(),
                                 data: Self.ownIdentityData(for: user, provider: provider), signedIn: false, id: id, on: connection)
    }

    static func ownIdentityData(for user: UserRecord, provider: String) -> [String: JSONValue] {
        var data: [String: JSONValue] = ["sub": .string(user.id.uuidString.lowercased()), "email_verified": .bool(user.emailConfirmedAt != nil), "phone_verified": .bool(user.phoneConfirmedAt != nil)]
        if provider == "email", let email = user.email { data["email"] = .string(email) }
        if provider == "phone", let phone = user.phone { data["phone"] = .string(phone) }
        return data
    }

    func deleteIdentity(userID: UUID, provider: String, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM identities WHERE user_id = \(userID) AND provider = \(provider)", logger: logger)
    }

    // MARK: helpers

    /// The identities column: a JSON array built by the query.
    static func identities(fromJSON text: String) throws -> [IdentityRecord] {
        struct Row: Decodable {
            var id: UUID, userId: UUID, provider: String, providerId: String, identityData: [String: JSONValue]
            var lastSignInAt: Date?, createdAt: Date, updatedAt: Date
        }
        return try ColonyJSON.decoder().decode([Row].self, from: Data(text.utf8)).map {
            IdentityRecord(id: $0.id, userId: $0.userId, provider: $0.provider, providerId: $0.providerId, identityData: $0.identityData, lastSignInAt: $0.lastSignInAt, createdAt: $0.createdAt, updatedAt: $0.updatedAt)
        }
    }

    private func single(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> UserRecord? {
        try await rows(query, on: connection).first
    }

    private func rows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [UserRecord] {
        var users: [UserRecord] = []
        for try await row in try await connection.query(query, logger: logger) {
            if let user = try Self.user(from: row) { users.append(user) }
        }
        return users
    }

    /// A user from a row of `columns`.
    static func user(from row: PostgresRow) throws -> UserRecord? {
        try row.read { try user(from: &$0) }
    }

    /// A user from `columns`, the next cells of a row (a statement may select others before them).
    static func user(from cells: inout RowCells) throws -> UserRecord? {
        let id: UUID = try cells.next()
        guard let app = App(rawValue: try cells.next(String.self)) else { return nil }
        return UserRecord(
            id: id,
            app: app,
            email: try cells.next(String?.self),
            phone: try cells.next(String?.self),
            encryptedPassword: try cells.next(String?.self),
            emailConfirmedAt: try cells.next(Date?.self),
            phoneConfirmedAt: try cells.next(Date?.self),
            confirmationSentAt: try cells.next(Date?.self),
            recoverySentAt: try cells.next(Date?.self),
            emailChangeSentAt: try cells.next(Date?.self),
            phoneChangeSentAt: try cells.next(Date?.self),
            newEmail: try cells.next(String?.self),
            newPhone: try cells.next(String?.self),
            appMetadata: try decodeJSON(try cells.next(String.self)),
            userMetadata: try decodeJSON(try cells.next(String.self)),
            lastSignInAt: try cells.next(Date?.self),
            bannedUntil: try cells.next(Date?.self),
            createdAt: try cells.next(Date.self),
            updatedAt: try cells.next(Date.self),
            identities: try Self.identities(fromJSON: try cells.next(String.self)),
            emailProvenAt: try cells.next(Date?.self),
            phoneProvenAt: try cells.next(Date?.self),
            passwordUnproven: try cells.next(Bool.self),
            emailChangeConfirmStatus: try cells.next(Int.self),
            isAnonymous: try cells.next(Bool.self),
            factors: try FactorStore.factors(fromJSON: try cells.next(String.self)),
            invitedAt: try cells.next(Date?.self)
        )
    }

    private func binds(_ values: any PostgresEncodable & Sendable...) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        for value in values { try bindings.append(value) }
        return bindings
    }

    static func bindings(_ values: any PostgresEncodable & Sendable...) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        for value in values { try bindings.append(value) }
        return bindings
    }
}

func json(_ object: [String: JSONValue]) throws -> String {
    String(decoding: try ColonyJSON.encode(object), as: UTF8.self)
}

func decodeJSON<T: Decodable>(_ text: String, as type: T.Type = T.self) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(text.utf8))
}
