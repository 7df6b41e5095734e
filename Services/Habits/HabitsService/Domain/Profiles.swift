import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The user's profile and contacts, and what auth's events do to them.
struct Profiles: Sendable {
    let outbox: Outbox
    let phonePepper: String
    let logger: Logger
    var store: ProfileStore { ProfileStore(logger: logger) }
    var contacts: ContactStore { ContactStore(logger: logger) }

    func get(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow {
        try await store.require(userID, on: connection)
    }

    func update(_ userID: UUID, _ changes: ProfileStore.Changes, on connection: PostgresConnection) async throws -> ProfileRow {
        var changes = changes
        var errors = ValidationErrors()
        if let name = changes.displayName {
            changes.displayName = TextRules.trimmed(name)
            errors.check(TextRules.fits(name, 1...60), "display_name must be 1–60 characters, not blank")
        }
        if let timezone = changes.timezone { errors.check(UserClock.isValidTimeZone(timezone), "timezone must be an IANA time zone such as Europe/Berlin") }
        if let hour = changes.dayStartHour { errors.check((0...23).contains(hour), "day_start_hour must be between 0 and 23") }
        if let theme = changes.theme { errors.check(HabitRules.themes.contains(theme), "theme must be honey, mint or night") }
        if case .some(.some(let url)) = changes.avatarUrl {
            errors.check(TextRules.length(url) <= 2048 && (url.hasPrefix("https://") || url.hasPrefix("http://")), "avatar_url must be an http(s) URL")
        }
        try errors.throwIfAny()
        _ = try await get(userID, on: connection)
        guard let profile = try await store.update(userID, changes, on: connection) else { throw HabitsErrors.profileGone }
        return profile
    }

    // MARK: contacts

    struct PepperInfo: Codable, Sendable {
        var pepper: String
        var algorithm: String
    }

    /// What clients hash contacts with: lowercase hex SHA-256 of pepper ‖ E.164 number, the
    /// same hash auth computes for each account's phone.
    var pepper: PepperInfo { PepperInfo(pepper: phonePepper, algorithm: "hex(sha256(pepper || e164))") }

    static let maxContactsPerUpload = 5000

    func uploadContacts(_ uploaded: [ContactStore.Contact], userID: UUID, on connection: PostgresConnection) async throws -> [ContactStore.Match] {
        var errors = ValidationErrors()
        errors.check(uploaded.count <= Self.maxContactsPerUpload, "at most \(Self.maxContactsPerUpload) contacts per upload")
        errors.check(uploaded.allSatisfy { Self.isHash($0.hash) }, "each hash is 64 lowercase hex characters")
        errors.check(uploaded.allSatisfy { TextRules.length($0.displayName ?? "") <= 200 }, "display_name is at most 200 characters")
        try errors.throwIfAny()
        _ = try await get(userID, on: connection)
        // One row per hash (the last name wins), so the upsert never meets a hash twice.
        var unique: [String: ContactStore.Contact] = [:]
        for contact in uploaded { unique[contact.hash] = contact }
        try await contacts.upsert(Array(unique.values), userID: userID, on: connection)
        return try await contacts.matches(userID: userID, on: connection)
    }

    func matches(userID: UUID, on connection: PostgresConnection) async throws -> [ContactStore.Match] {
        _ = try await get(userID, on: connection)
        return try await contacts.matches(userID: userID, on: connection)
    }

    func deleteContacts(userID: UUID, on connection: PostgresConnection) async throws {
        try await contacts.deleteAll(userID: userID, on: connection)
    }

    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    // MARK: auth's events

    /// The name a new user takes from sign-up metadata.
    static func displayName(from metadata: [String: JSONValue]) -> String? {
        SignUpMetadata.displayName(metadata, maxLength: 60)
    }

    func registered(_ userID: UUID, metadata: [String: JSONValue], phoneHash: String?, on connection: PostgresConnection) async throws {
        try await store.upsertFromAuth(userID, displayName: Self.displayName(from: metadata), phoneHash: phoneHash, on: connection)
    }

    /// Erases the account: hives it owns are deleted (their members are told), it leaves the
    /// others (their members are told), then the profile goes with everything it wrote.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        let hives = Hives(outbox: outbox, logger: logger)
        for hive in try await hives.store.owned(by: userID, on: connection) {
            try await hives.delete(hive, reason: .accountDeleted, on: connection)
        }
        for hive in try await hives.store.joined(by: userID, on: connection) {
            try await hives.removeMember(hive, userID: userID, reason: .accountDeleted, now: Date(), on: connection)
        }
        try await store.erase(userID, on: connection)
    }
}
