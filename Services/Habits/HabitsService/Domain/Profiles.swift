import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The user's profile and contacts, and what auth's events do to them.
struct Profiles: Sendable {
    let outbox: Outbox
    let contacts: ContactMatching
    let logger: Logger
    var store: ProfileStore { ProfileStore(logger: logger) }
    var contactStore: ContactStore { ContactStore(logger: logger) }

    func get(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow {
        try await store.require(userID, on: connection)
    }

    /// The seed's `user_local_date`: the caller's day at `at` (default now) by their clock.
    typealias LocalDay = Components.Schemas.LocalDay

    func localDate(_ userID: UUID, at: Date?, now: Date = Date(), on connection: PostgresConnection) async throws -> LocalDay {
        let profile = try await get(userID, on: connection)
        let instant = ISO8601.wholeMilliseconds(at ?? now)
        return LocalDay(date: profile.clock.localDay(at: instant).description, at: instant, timezone: profile.timezone, dayStartHour: profile.dayStartHour)
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

    /// Replaces the user's contacts with the numbers they send (E.164, hashed here with the
    /// server's pepper) and returns the habithive users among them. Uploads, the numbers in them
    /// and match reads have per-user quotas: the service is no phone directory.
    func uploadContacts(_ uploaded: [ContactMatching.Number], userID: UUID, on connection: PostgresConnection) async throws -> [ContactStore.Match] {
        let hashed = try contacts.validate(uploaded)
        _ = try await get(userID, on: connection)
        try await contacts.chargeUpload(numbers: hashed.count, userID: userID, logger: logger, on: connection)
        try await contactStore.replace(hashed.map { ContactStore.Contact(hash: $0.hash, displayName: $0.displayName) }, userID: userID, on: connection)
        let phones = Dictionary(hashed.map { ($0.hash, $0.phone) }, uniquingKeysWith: { first, _ in first })
        return try await contactStore.matches(userID: userID, on: connection).map { match in
            var match = match
            match.phone = phones[match.contactHash]
            return match
        }
    }

    func matches(userID: UUID, on connection: PostgresConnection) async throws -> [ContactStore.Match] {
        _ = try await get(userID, on: connection)
        try await contacts.chargeMatches(userID: userID, logger: logger, on: connection)
        return try await contactStore.matches(userID: userID, on: connection)
    }

    func deleteContacts(userID: UUID, on connection: PostgresConnection) async throws {
        try await contactStore.deleteAll(userID: userID, on: connection)
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
