import ColonyImport
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// A Supabase project's `auth.users` and `auth.identities` into one app's user pool.
///
/// | Supabase | Colony (`auth`) |
/// |---|---|
/// | `auth.users` | `users`: id, email, phone, `encrypted_password` (bcrypt, so old passwords sign in), confirmations, metadata, `banned_until`, `created_at`, `last_sign_in_at` kept; the addresses count as unproven (see the security model); with the account's own email or phone identity |
/// | `auth.users` with `deleted_at`, or `is_anonymous` | not imported (their rows elsewhere are then dangling, reported and skipped) |
/// | `auth.identities` | `identities`: provider and `provider_id` kept (Apple's `sub`, so Sign in with Apple finds the same account), `identity_data` merged |
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
            let record: ImportedUser
            do {
                record = try UserImportParser.user(from: row.values.mapValues(Self.text), line: 0)
            } catch let failure as UserImportParser.Failure {
                throw RowProblem(failure.description.replacingOccurrences(of: "row 0: ", with: ""))
            }
            if try await users.find(id: record.id, app: app, on: writer.connection) != nil {
                return .imported(target: "existing")  // imported before by other means: kept as it is
            }
            do {
                _ = try await users.insertImported(record, app: app, on: writer.connection)
            } catch let error as APIError {
                // userAlreadyExists: the id, email or phone is another Colony account's.
                throw RowProblem(error.code == AuthErrors.userAlreadyExists.code ? "its id, email or phone already belongs to another Colony account" : error.message)
            }
            return .imported
        }
        let imported = try await present(accounts.keys.compactMap(UUID.init(uuidString:)), job: job)

        try await job.importRows("auth.identities", from: source.rows("auth", "identities", orderBy: "created_at NULLS FIRST, provider, provider_id"),
                                 id: { row in try row.optionalUUID("id")?.lowercased ?? "\(try row.string("provider")):\(try row.string("provider_id"))" }) { row, writer in
            let userID = try row.uuid("user_id")
            try imported.require(userID, "user_id")
            let provider = try row.string("provider")
            // Old projects keep the provider's id in `id` (before provider_id existed).
            let providerID = try row.optionalString("provider_id") ?? row.string("id")
            if let owner = try await users.findIdentity(provider: provider, providerID: providerID, app: app, on: writer.connection), owner != userID {
                throw RowProblem("\(provider) identity \(providerID) already belongs to Colony account \(owner.lowercased)")
            }
            let data = try row.object("identity_data")
            try await users.upsertIdentity(userID: userID, app: app, provider: provider, providerID: providerID, data: data, signedIn: false, on: writer.connection)
            if let lastSignIn = try row.optionalDate("last_sign_in_at") {
                try await writer.connection.query("""
                    UPDATE identities SET last_sign_in_at = greatest(last_sign_in_at, \(lastSignIn)), created_at = least(created_at, \(try row.optionalDate("created_at") ?? Date()))
                    WHERE app = \(app.rawValue) AND provider = \(provider) AND provider_id = \(providerID)
                    """, logger: writer.logger)
            }
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

    /// The accounts among `ids` that Colony has in this app.
    static func present(_ ids: [UUID], job: ServiceImport) async throws -> ImportedAccounts {
        let app = job.app
        return try await job.transaction { connection in
            var accounts: [UUID: ImportedAccount] = [:]
            let rows = try await connection.query("""
                SELECT id, email, phone, raw_user_meta_data::text, created_at FROM users WHERE app = \(app.rawValue) AND id = ANY(\(ids))
                """, logger: job.logger)
            for try await (id, email, phone, metadata, createdAt) in rows.decode((UUID, String?, String?, String, Date).self) {
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
