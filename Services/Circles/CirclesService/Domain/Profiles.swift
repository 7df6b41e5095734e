import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// MyCirclee profiles: made from auth's events (or the first request), edited by their owner.
struct Profiles: Sendable {
    let logger: Logger
    var store: ProfileStore { ProfileStore(logger: logger) }

    /// The caller's profile, created if the registration event is late; 401 once deleted.
    func require(_ userID: UUID, email: String? = nil, on connection: PostgresConnection) async throws -> MyProfile {
        guard let profile = try await store.ensure(userID, email: email, on: connection) else { throw CirclesErrors.accountDeleted }
        return profile
    }

    struct Edit: Sendable {
        var displayName: String?
        var handle: String?
        var bio: String??
        var dmPrivacy: DMPrivacy?
        var fullName: String??
        var location: String??
        var address: String??
        var phone: String??
        var birthday: LocalDate??
    }

    /// The admin route: sets a member's Pro flag (the app's servers, after a purchase).
    func setPro(_ userID: UUID, isPro: Bool, on connection: PostgresConnection) async throws -> MyProfile {
        guard let profile = try await store.setPro(userID, isPro: isPro, on: connection) else { throw CirclesErrors.userNotFound }
        return profile
    }

    /// The name a moderator's reset gives a profile.
    static let neutralName = "Member"

    /// A moderator removes a reported profile: what its owner wrote that other members see is
    /// reset as the owner could reset it themselves: the display name to "Member", the handle to
    /// a fresh one from it and the id, bio, full name and location cleared (the private fields,
    /// the DM setting and Pro stay). Circles publishes no event for profile edits. false when
    /// the account is gone.
    func reset(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        var handle = CirclesRules.suggestedHandle(from: Self.neutralName, userID: userID)
        if try await store.handleTaken(handle, by: userID, on: connection) {
            handle = "member_" + String(userID.uuidString.lowercased().filter { $0 != "-" }.prefix(22))
        }
        let changes = ProfileStore.Changes(displayName: Self.neutralName, handle: handle, bio: .some(nil), fullName: .some(nil), location: .some(nil))
        return try await store.update(userID, changes, on: connection) != nil
    }

    func edit(_ userID: UUID, _ edit: Edit, on connection: PostgresConnection) async throws -> MyProfile {
        var changes = ProfileStore.Changes()
        var errors = ValidationErrors()
        func text(_ value: String??, _ field: String, max: Int) -> String?? {
            guard let value else { return nil }
            errors.check(TextRules.length(value ?? "") <= max, "\(field) must be at most \(max) characters")
            return .some(value.map(TextRules.trimmed).flatMap { $0.isEmpty ? nil : $0 })
        }
        if let name = edit.displayName {
            errors.check(TextRules.fits(name, 1...60), "display_name must be 1–60 characters, not blank")
            changes.displayName = TextRules.trimmed(name)
        }
        changes.bio = text(edit.bio, "bio", max: 300)
        changes.fullName = text(edit.fullName, "full_name", max: 100)
        changes.location = text(edit.location, "location", max: 100)
        changes.address = text(edit.address, "address", max: 300)
        changes.phone = text(edit.phone, "phone", max: 32)
        changes.dmPrivacy = edit.dmPrivacy
        if case .some(.some(let birthday)) = edit.birthday {
            errors.check(birthday.year >= 1900 && birthday <= LocalDate.utcDay(of: Date()), "birthday must be a past date")
        }
        changes.birthday = edit.birthday
        try errors.throwIfAny()
        if let handle = edit.handle {
            let handle = try CirclesRules.handle(handle)
            guard try await !store.handleTaken(handle, by: userID, on: connection) else { throw CirclesErrors.handleTaken }
            changes.handle = handle
        }
        _ = try await require(userID, on: connection)
        guard let profile = try await store.update(userID, changes, on: connection) else { throw CirclesErrors.accountDeleted }
        return profile
    }
}
