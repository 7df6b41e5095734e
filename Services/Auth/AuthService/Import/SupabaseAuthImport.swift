import ColonyImport
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// A Supabase project's `auth.users` and `auth.identities` into one app's user pool.
///
/// | Supabase | Colony (`auth`) |
/// |---|---|
/// | `auth.users` | `users`: id, email, phone, `encrypted_password` (bcrypt, so old passwords sign in), `email_confirmed_at` and `phone_confirmed_at` (`confirmed_at` is their generated least; read only from an export older than `email_confirmed_at`), metadata, `banned_until` (`infinity` too), `created_at`, `last_sign_in_at` kept; GoTrue's `''` for no email, phone or password reads as none; the addresses count as unproven (see the security model). No identity is made up: the account has exactly the identities `auth.identities` gives it |
/// | `auth.users` with another hash (GoTrue keeps argon2 and Firebase scrypt hashes of users it imported) | imported without a password, reported as changed per scheme: the user signs in by link or code (or a recovery link) and sets one |
/// | `auth.users` with metadata over Colony's limits (16 KiB, 8 levels) | imported with the largest keys left out, reported as changed |
/// | `auth.users` with neither email nor phone (an OAuth user whose provider gave none) | imported with its identities |
/// | `auth.users` with `deleted_at`, or `is_anonymous` | not imported (their rows elsewhere are then dangling, reported and skipped) |
/// | `auth.users` with `is_sso_user` | imported like the others (Colony has no SAML: they sign in by link, code or password); an address another account of the project has is that account's, so this one is skipped and reported |
/// | `auth.identities` | `identities` exactly: id (when a UUID), provider, `provider_id` (Apple's `sub`, so Sign in with Apple finds the same account; the row's old `id` when the project predates `provider_id`), `identity_data`, `created_at`, `updated_at`, `last_sign_in_at`; the provider listed in the account's `app_metadata.providers` when missing |
///
/// `user_registered` is announced last (`announce`), after the app's own tables: the domain
/// services then find the imported profiles in place and keep them.
public enum SupabaseAuthImport {
    /// Imports the accounts, then their identities. Returns every account of this import that
    /// Colony has (imported now or by an earlier run, and not deleted since).
    public static func importAccounts(_ job: ServiceImport, from source: SourceDatabase) async throws -> ImportedAccounts {
        let users = UserStore(logger: job.logger)
        let app = job.app
        let accounts = try await job.importRows("auth.users", from: source.rows("auth", "users", orderBy: "created_at NULLS FIRST, id"),
                                                id: { try $0.uuid("id").lowercased }) { row, writer in
            if row.has("deleted_at") { return .notImported("deleted in Supabase") }
            if try row.bool("is_anonymous", default: false) { return .notImported("anonymous") }
            var record: ImportedUser
            do {
                record = try UserImportParser.user(from: row.values.mapValues(Self.text), line: 0, requireAddress: false)
            } catch let failure as UserImportParser.Failure {
                throw RowProblem(failure.description.replacingOccurrences(of: "row 0: ", with: ""))
            }
            if try await users.find(id: record.id, app: app, on: writer.connection) != nil {
                return .imported(target: "existing")  // imported before by other means: kept as it is
            }
            if let scheme = record.unusablePasswordScheme {
                writer.adjusted(Self.passwordReason(scheme: scheme))
            }
            let fitted = ImportedMetadata.fit(user: record.userMetadata, app: record.appMetadata)
            if !fitted.dropped.isEmpty {
                record.userMetadata = fitted.user
                record.appMetadata = fitted.app
                writer.adjusted("metadata over Colony's limits: its largest keys left out")
            }
            do {
                _ = try await users.insertImported(record, app: app, ownIdentity: false, on: writer.connection)
            } catch let error as APIError {
                // userAlreadyExists: the id, email or phone is another Colony account's.
                throw RowProblem(error.code == AuthErrors.userAlreadyExists.code ? "its id, email or phone already belongs to another Colony account" : error.message)
            }
            return .imported
        }
        let imported = try await present(accounts.keys.compactMap(UUID.init(uuidString:)), job: job)

        try await job.importRows("auth.identities", from: source.rows("auth", "identities", orderBy: "created_at NULLS FIRST, provider, provider_id"),
                                 id: { row in try Self.identityKey(row) }) { row, writer in
            let userID = try row.uuid("user_id")
            try imported.require(userID, "user_id")
            let provider = try row.string("provider")
            // Old projects keep the provider's id in `id` (before provider_id existed).
            let providerID = try row.optionalString("provider_id") ?? row.string("id")
            if let owner = try await users.findIdentity(provider: provider, providerID: providerID, app: app, on: writer.connection) {
                guard owner == userID else { throw RowProblem("\(provider) identity \(providerID) already belongs to Colony account \(owner.lowercased)") }
                return .imported(target: "existing")  // made by Colony since (a sign-in): kept as it is
            }
            // As the source has it: its id when a UUID, its data, its times.
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO identities (id, user_id, app, provider, provider_id, identity_data, last_sign_in_at, created_at, updated_at)
                VALUES (\((try? row.optionalUUID("id")) ?? UUID.timeOrdered()), \(userID), \(app.rawValue), \(provider), \(providerID),
                        \(try ImportJSON.text(try row.object("identity_data")))::jsonb, \(try row.optionalDate("last_sign_in_at")), \(createdAt),
                        \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: writer.logger)
            if provider != "email" && provider != "phone" {
                // The account lists its providers, as GoTrue's app_metadata does.
                try await writer.connection.query("""
                    UPDATE users SET raw_app_meta_data = jsonb_set(raw_app_meta_data, '{providers}',
                        coalesce(raw_app_meta_data->'providers', '[]'::jsonb) || to_jsonb(\(provider)::text))
                    WHERE id = \(userID) AND app = \(app.rawValue) AND NOT coalesce(raw_app_meta_data->'providers', '[]'::jsonb) ? \(provider)
                    """, logger: writer.logger)
            }
            return .imported
        }
        return imported
    }

    /// Publishes `user_registered` for each account this import created (not for one that was
    /// there before it), once: the services that keep profiles and projections learn of them.
    public static func announce(_ job: ServiceImport, phonePepper: String) async throws {
        let created = try await job.ledger("auth.users").filter { $0.value == nil }.keys.sorted()
        let users = UserStore(logger: job.logger)
        let app = job.app
        try await job.once("auth.users#announced", keys: created) { key, writer in
            guard let id = UUID(uuidString: key), let user = try await users.find(id: id, app: app, on: writer.connection) else { return }
            try await writer.publish(Accounts.registered(user, phonePepper: phonePepper))
        }
    }

    /// The report's reason for an account whose hash Colony cannot verify (one per scheme, so the summary counts each).
    static func passwordReason(scheme: String) -> String {
        "password hash is \(scheme), not bcrypt: imported without a password (signs in by link or code, then sets one)"
    }

    /// An identity's ledger key: its id, or provider and provider id in projects older than the id column.
    static func identityKey(_ row: SourceRow) throws(RowProblem) -> String {
        if let id = try? row.optionalUUID("id") { return id.lowercased }
        let provider = try row.string("provider")
        if let providerID = try row.optionalString("provider_id") { return "\(provider):\(providerID)" }
        return "\(provider):\(try row.string("id"))"
    }

    /// The accounts among `ids` that Colony has in this app.
    static func present(_ ids: [UUID], job: ServiceImport) async throws -> ImportedAccounts {
        let app = job.app
        return try await job.transaction { connection in
            var accounts: [UUID: ImportedAccount] = [:]
            let rows = try await connection.query("""
                SELECT id, email, phone, raw_user_meta_data::text, created_at FROM users WHERE app = \(app.rawValue) AND id = ANY(\(ids))
                """, logger: job.logger)
            for try await row in rows {
                let (id, email, phone, metadata, createdAt) = try row.read { c in
                    try (c.next(UUID.self), c.next(String?.self), c.next(String?.self), c.next(String.self), c.next(Date.self))
                }
                let data = (try? ColonyJSON.decoder().decode([String: JSONValue].self, from: Data(metadata.utf8))) ?? [:]
                accounts[id] = ImportedAccount(id: id, email: email, phone: phone.map { "+" + $0 }, userMetadata: data, createdAt: createdAt)
            }
            return ImportedAccounts(accounts)
        }
    }

    /// A column as the export parser reads it: text, JSON text for objects.
    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .null: nil
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): String(number)
        case .object, .array: (try? ColonyJSON.encoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
