import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What HabitHive's users may report (`POST /habits/v1/reports`, `ReportDesk` does the rest):
///
/// - `hive`: a hive the caller is in (the membership every hive route checks). Removed: deleted as
///   its owner deletes it (`Hives.delete`: its days, feed and invites go, `hive_deleted` tells
///   the members, realtime and notifications).
/// - `profile`: a person who is in a hive with the caller (`object_id` their user id), whose
///   name and avatar the caller sees in its member list; anyone may "see" their own (so reporting
///   oneself is `own_content`, not 404). Removed: the name reset to the default a new account gets
///   ("Bee " and six characters of the id) and the avatar cleared, as the person could do
///   themselves (`PATCH /habits/v1/profile`, which publishes no event: readers load names
///   from the profile).
struct HabitsReportables: ReportableContent {
    let hives: Hives

    static let hive = "hive"
    static let profile = "profile"

    var objectTypes: [String] { [Self.hive, Self.profile] }

    var store: HiveStore { hives.store }
    var profiles: ProfileStore { hives.profiles }

    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.hive:
            return try await store.findForMember(id, userID: viewer, on: connection).map(Self.object)
        case Self.profile:
            if id != viewer { guard try await store.shareAHive(viewer, id, on: connection) else { return nil } }
            return try await current(objectType, id, on: connection)
        default:
            return nil
        }
    }

    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.hive:
            return try await connection.query("SELECT \(unescaped: HiveRow.columns) FROM hives WHERE id = \(id)", logger: hives.logger)
                .collect().first.map(HiveRow.init(row:)).map(Self.object)
        case Self.profile:
            return try await profiles.find(id, on: connection).map(Self.object)
        default:
            return nil
        }
    }

    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        switch objectType {
        case Self.hive:
            // Locked as the owner's delete locks it (a log racing it waits, then finds no hive).
            guard let hive = try await store.lock(id, on: connection) else { return false }
            try await hives.delete(hive, reason: .removed, on: connection)
            return true
        case Self.profile:
            let reset = ProfileStore.Changes(displayName: ProfileStore.defaultName(for: id), avatarUrl: .some(nil))
            return try await profiles.update(id, reset, on: connection) != nil
        default:
            return false
        }
    }

    static func object(_ hive: HiveRow) -> ReportedObject {
        ReportedObject(ownerId: hive.ownerId, content: hive.name)
    }

    static func object(_ profile: ProfileRow) -> ReportedObject {
        ReportedObject(ownerId: profile.id, content: profile.displayName + (profile.avatarUrl.map { "\navatar: \($0)" } ?? ""))
    }
}
