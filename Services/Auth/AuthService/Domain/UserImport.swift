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
                    case .object, .array: return (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
                    }
                }
            }
        } else {
            rows = try csvRows(trimmed)
        }
        return try rows.enumerated().map { index, row in try user(from: row, line: index + 1) }
    }

    static func user(from row: [String: String?], line: Int) throws -> ImportedUser {
        func field(_ name: String) -> String? {
            guard let value = row[name] ?? nil, !value.isEmpty, value.uppercased() != "NULL" else { return nil }
            return value
        }
        guard let idText = field("id"), let id = UUID(uuidString: idText) else {
            throw Failure(description: "row \(line): id is missing or not a UUID")
        }
        func date(_ name: String) throws -> Date? {
            guard let text = field(name) else { return nil }
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
        guard email != nil || phone != nil else { throw Failure(description: "row \(line): neither email nor phone") }
        let password = field("encrypted_password")
        if let password, !password.hasPrefix("$2") { throw Failure(description: "row \(line): encrypted_password is not a bcrypt hash") }
        return ImportedUser(
            id: id, email: email, phone: phone, encryptedPassword: password,
            emailConfirmedAt: try date("email_confirmed_at"), phoneConfirmedAt: try date("phone_confirmed_at"),
            appMetadata: try metadata("raw_app_meta_data"), userMetadata: try metadata("raw_user_meta_data"),
            createdAt: try date("created_at"), lastSignInAt: try date("last_sign_in_at"), bannedUntil: try date("banned_until")
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
    /// passwords; each becomes `user_registered`. Accounts whose id or address already exists,
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
    /// own email or phone identity. Throws 422 when its metadata is over `MetadataLimits`, and
    /// `userAlreadyExists` when the id or an address is taken in the app.
    func insertImported(_ record: ImportedUser, app: App, on connection: PostgresConnection) async throws -> UserRecord {
        let now = Date()
        let provider = record.email != nil ? "email" : "phone"
        var appMetadata = record.appMetadata
        if appMetadata["provider"] == nil { appMetadata["provider"] = .string(provider) }
        if appMetadata["providers"] == nil { appMetadata["providers"] = .array([.string(provider)]) }
        try MetadataLimits.check(user: record.userMetadata, app: appMetadata)
        var user = UserRecord(id: record.id, app: app, email: record.email, phone: record.phone, encryptedPassword: record.encryptedPassword,
                              emailConfirmedAt: record.emailConfirmedAt, phoneConfirmedAt: record.phoneConfirmedAt,
                              appMetadata: appMetadata, userMetadata: record.userMetadata, lastSignInAt: record.lastSignInAt,
                              createdAt: record.createdAt ?? now, updatedAt: now)
        user.bannedUntil = record.bannedUntil
        try await insert(user, on: connection)
        try await addOwnIdentity(for: user, provider: provider, on: connection)
        return user
    }
}
