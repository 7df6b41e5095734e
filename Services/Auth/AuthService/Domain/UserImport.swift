import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// One account from a Supabase `auth.users` export (JSON array of rows, or CSV with a header).
public struct ImportedUser: Sendable, Equatable {
    public var id: UUID
    public var email: String?
    public var phone: String?
    public var encryptedPassword: String?
    public var emailConfirmedAt: Date?
    public var phoneConfirmedAt: Date?
    public var appMetadata: [String: JSONValue]
    public var userMetadata: [String: JSONValue]
    public var createdAt: Date?
    public var lastSignInAt: Date?
    public var bannedUntil: Date? = nil
    /// The scheme of a password hash Colony cannot verify (GoTrue also keeps argon2 and Firebase
    /// scrypt hashes of users it imported): the account comes over without a password and signs
    /// in by link or code, then sets one. nil when the hash is bcrypt or there is none.
    public var unusablePasswordScheme: String? = nil
}

/// What Colony does with an `encrypted_password` as GoTrue stores it.
public enum ImportedPasswordHash: Equatable, Sendable {
    /// None (`''` or NULL: an OAuth, phone or passwordless account).
    case none
    /// bcrypt (`$2a$`, `$2b$`, `$2y$`): kept, the old password signs in.
    case bcrypt(String)
    /// Another scheme GoTrue verifies and Colony does not: left out, named for the report.
    case unusable(scheme: String)

    public init(_ text: String?) {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { self = .none; return }
        if text.hasPrefix("$2a$") || text.hasPrefix("$2b$") || text.hasPrefix("$2y$") {
            self = .bcrypt(text)
        } else if text.hasPrefix("$argon2") {
            // `$argon2id$v=19$m=…,t=…,p=…$salt$hash` (also argon2i, argon2d).
            let variant = text.dropFirst().prefix { $0 != "$" }
            self = .unusable(scheme: variant.isEmpty ? "argon2" : String(variant))
        } else if text.hasPrefix("$fbscrypt$") {
            self = .unusable(scheme: "firebase-scrypt")
        } else {
            self = .unusable(scheme: "unknown")
        }
    }
}

public enum UserImportParser {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads JSON when the text starts with `[`, CSV otherwise.
    public static func parse(_ text: String) throws -> [ImportedUser] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let rows: [[String: String?]]
        if trimmed.hasPrefix("[") {
            let objects = try JSONDecoder().decode([[String: JSONValue]].self, from: Data(trimmed.utf8))
            rows = objects.map { object in
                object.mapValues { value -> String? in
                    switch value {
                    case .null: return nil
                    case .string(let text): return text
                    case .bool(let flag): return flag ? "true" : "false"
                    case .number(let number): return String(number)
                    case .object, .array: return (try? ColonyJSON.encode(value)).map { String(decoding: $0, as: UTF8.self) }
                    }
                }
            }
        } else {
            rows = try csvRows(trimmed)
        }
        return try rows.enumerated().map { index, row in try user(from: row, line: index + 1) }
    }

    /// One row. `requireAddress: false` (a Supabase project, whose identities come with it) takes
    /// an account with neither email nor phone (an OAuth user whose provider gave no address).
    static func user(from row: [String: String?], line: Int, requireAddress: Bool = true) throws -> ImportedUser {
        func field(_ name: String) -> String? {
            guard let value = row[name] ?? nil, !value.isEmpty, value.uppercased() != "NULL" else { return nil }
            return value
        }
        guard let idText = field("id"), let id = UUID(uuidString: idText) else {
            throw Failure(description: "row \(line): id is missing or not a UUID")
        }
        func date(_ name: String) throws -> Date? {
            guard let text = field(name) else { return nil }
            // A ban "for ever" as Postgres writes it.
            if text == "infinity" { return .distantFuture }
            if text == "-infinity" { return .distantPast }
            guard let date = parseTimestamp(text) else { throw Failure(description: "row \(line): \(name) \"\(text)\" is not a timestamp") }
            return date
        }
        func metadata(_ name: String) throws -> [String: JSONValue] {
            guard let text = field(name) else { return [:] }
            do { return try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) } catch {
                throw Failure(description: "row \(line): \(name) is not a JSON object")
            }
        }
        let email = try field("email").map { raw -> String in
            guard let email = Credentials.normalizedEmail(raw) else { throw Failure(description: "row \(line): email \"\(raw)\" is invalid") }
            return email
        }
        let phone = try field("phone").map { raw -> String in
            guard let phone = Credentials.normalizedPhone(raw) else { throw Failure(description: "row \(line): phone \"\(raw)\" is invalid") }
            return phone
        }
        if requireAddress, email == nil, phone == nil { throw Failure(description: "row \(line): neither email nor phone") }
        var password: String?, unusable: String?
        switch ImportedPasswordHash(field("encrypted_password")) {
        case .none: break
        case .bcrypt(let hash): password = hash
        case .unusable(let scheme): unusable = scheme
        }
        // GoTrue before July 2021 had `confirmed_at` where `email_confirmed_at` is now (a later
        // migration renamed it and made `confirmed_at` the generated least of the two): an
        // export without the column reads the old one.
        let emailConfirmedAt = row.keys.contains("email_confirmed_at") ? try date("email_confirmed_at") : try date("confirmed_at")
        return ImportedUser(
            id: id, email: email, phone: phone, encryptedPassword: password,
            emailConfirmedAt: email == nil ? nil : emailConfirmedAt, phoneConfirmedAt: phone == nil ? nil : try date("phone_confirmed_at"),
            appMetadata: try metadata("raw_app_meta_data"), userMetadata: try metadata("raw_user_meta_data"),
            createdAt: try date("created_at"), lastSignInAt: try date("last_sign_in_at"), bannedUntil: try date("banned_until"),
            unusablePasswordScheme: unusable
        )
    }

    /// Postgres' text form (`2024-01-02 03:04:05.123456+00`) or ISO 8601.
    static func parseTimestamp(_ text: String) -> Date? {
        var normalized = text.replacingOccurrences(of: " ", with: "T")
        if normalized.hasSuffix("+00") { normalized += ":00" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: normalized) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: normalized) { return date }
        // More than millisecond precision: drop the extra digits.
        if let dot = normalized.firstIndex(of: "."), let zone = normalized[dot...].firstIndex(where: { $0 == "+" || $0 == "-" || $0 == "Z" }) {
            let fraction = normalized[normalized.index(after: dot)..<zone].prefix(3)
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: String(normalized[..<dot]) + "." + fraction + String(normalized[zone...]))
        }
        return nil
    }

    /// RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines.
    static func csvRows(_ text: String) throws -> [[String: String?]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(text).makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let character = pending { pending = nil; return character }
            return iterator.next()
        }
        while let character = next() {
            if quoted {
                if character == "\"" {
                    if let following = next() {
                        if following == "\"" { field.append("\"") } else { quoted = false; pending = following }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else {
                switch character {
                case "\"": quoted = true
                case ",": record.append(field); field = ""
                case "\n", "\r\n":
                    record.append(field); field = ""
                    records.append(record); record = []
                case "\r": break
                default: field.append(character)
                }
            }
        }
        if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
        guard let header = records.first else { return [] }
        return records.dropFirst().filter { $0 != [""] }.map { values in
            var row: [String: String?] = [:]
            for (index, name) in header.enumerated() { row[name.trimmingCharacters(in: .whitespaces)] = index < values.count ? values[index] : nil }
            return row
        }
    }
}

extension Accounts {
    /// Imports accounts with their ids and bcrypt hashes, so users sign in with their old
    /// passwords (an account with another hash comes over without one: it signs in by link or
    /// code, or recovers); each becomes `user_registered`. Accounts whose id or address already exists,
    /// or whose metadata is over `MetadataLimits`, are skipped. Their addresses count as
    /// unproven (nobody here saw them proven), their passwords as their own.
    public func importUsers(_ imported: [ImportedUser], into app: App) async throws -> (imported: Int, skipped: [String]) {
        var count = 0
        var skipped: [String] = []
        for record in imported {
            do {
                try await database.transaction { connection in
                    if try await users.find(id: record.id, app: app, on: connection) != nil { throw AuthErrors.userAlreadyExists }
                    let user = try await users.insertImported(record, app: app, on: connection)
                    try await publishRegistered(user, on: connection)
                }
                count += 1
            } catch let error as APIError {
                skipped.append("\(record.id.uuidString.lowercased()) (\(record.email ?? record.phone ?? "")): \(error.message)")
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                skipped.append("\(record.id.uuidString.lowercased()): id already taken")
            }
        }
        return (count, skipped)
    }
}

extension UserStore {
    /// Stores an imported account as it was (id, bcrypt hash, confirmations, metadata), with its
    /// own email or phone identity unless `ownIdentity` is false (a Supabase project's identities
    /// come over exactly as it has them). Throws 422 when its metadata is over `MetadataLimits`,
    /// and `userAlreadyExists` when the id or an address is taken in the app.
    func insertImported(_ record: ImportedUser, app: App, ownIdentity: Bool = true, on connection: PostgresConnection) async throws -> UserRecord {
        let now = Date()
        let provider = record.email != nil ? "email" : "phone"
        var appMetadata = record.appMetadata
        if ownIdentity, appMetadata["provider"] == nil { appMetadata["provider"] = .string(provider) }
        if ownIdentity, appMetadata["providers"] == nil { appMetadata["providers"] = .array([.string(provider)]) }
        try MetadataLimits.check(user: record.userMetadata, app: appMetadata)
        var user = UserRecord(id: record.id, app: app, email: record.email, phone: record.phone, encryptedPassword: record.encryptedPassword,
                              emailConfirmedAt: record.emailConfirmedAt, phoneConfirmedAt: record.phoneConfirmedAt,
                              appMetadata: appMetadata, userMetadata: record.userMetadata, lastSignInAt: record.lastSignInAt,
                              createdAt: record.createdAt ?? now, updatedAt: now)
        user.bannedUntil = record.bannedUntil
        try await insert(user, on: connection)
        if ownIdentity, record.email != nil || record.phone != nil { try await addOwnIdentity(for: user, provider: provider, on: connection) }
        return user
    }
}

/// Metadata over `MetadataLimits` made to fit rather than the account (and all it owns) left out:
/// its largest (or, when too deep, deepest) keys go first, the user's before the app's, never
/// the app's `provider`/`providers`.
public enum ImportedMetadata {
    public static func fit(user: [String: JSONValue], app: [String: JSONValue]) -> (user: [String: JSONValue], app: [String: JSONValue], dropped: [String]) {
        var user = user, app = app, dropped: [String] = []
        func size(_ value: JSONValue) -> Int { (try? ColonyJSON.encode(value).count) ?? Int.max / 2 }
        while (try? MetadataLimits.check(user: user, app: app)) == nil {
            let tooDeep = max(MetadataLimits.depth(of: .object(user)), MetadataLimits.depth(of: .object(app))) > MetadataLimits.maximumDepth
            func worst(_ object: [String: JSONValue]) -> String? {
                object.keys.filter { !["provider", "providers"].contains($0) }
                    .max { a, b in tooDeep ? MetadataLimits.depth(of: object[a] ?? .null) < MetadataLimits.depth(of: object[b] ?? .null) : size(object[a] ?? .null) < size(object[b] ?? .null) }
            }
            if let key = worst(user) {
                user[key] = nil
                dropped.append("user_metadata.\(key)")
            } else if let key = worst(app) {
                app[key] = nil
                dropped.append("app_metadata.\(key)")
            } else {
                break
            }
        }
        return (user, app, dropped)
    }
}
