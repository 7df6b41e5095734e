import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// SocialSpot: profiles and settings, location sharing, people within the radius, blocks.
struct Nearby: Sendable {
    let outbox: Outbox
    let storage: Storage
    let photos: StorageBucket
    let settings: NearbySettings
    let noise: LocationNoiseKey
    let logger: Logger
    var profiles: ProfileStore { ProfileStore(logger: logger) }
    var quotas: Quotas { Quotas(logger: logger) }
    var locations: LocationStore { LocationStore(logger: logger) }
    var blocks: BlockList { BlockList(logger: logger) }

    // MARK: views

    /// Under a per-upload key: a card seen once (say, before a block) leads to no later photo.
    func photoURL(_ profile: StoredProfile) -> String? {
        storage.pictureURL(photos, owner: profile.id, version: profile.photoVersion)
    }

    func age(_ profile: StoredProfile) -> Int? {
        profile.birthday.map { NearbyRules.age(birthday: $0, today: LocalDate.utcDay(of: Date())) }
    }

    func mine(_ profile: StoredProfile) -> MyProfile {
        MyProfile(id: profile.id.lowercased, name: profile.name, bio: profile.bio, school: profile.school, birthday: profile.birthday?.description, age: age(profile),
                  socialLinks: .init(profile.socialLinks), photoUrl: photoURL(profile), darkMode: profile.darkMode, satelliteMap: profile.satelliteMap,
                  shareLocation: profile.shareLocation, createdAt: profile.createdAt, updatedAt: profile.updatedAt)
    }

    func card(_ profile: StoredProfile) -> PublicProfile {
        PublicProfile(userId: profile.id, name: profile.name, age: age(profile), school: profile.school, bio: profile.bio,
                      socialLinks: profile.socialLinks, photoUrl: photoURL(profile))
    }

    func nearbyUser(_ row: NearbyRow) -> NearbyUser {
        let card = card(row.profile)
        let distance = NearbyRules.distance(meters: row.meters)
        return NearbyUser(userId: card.userId.lowercased, name: card.name, age: card.age, school: card.school, bio: card.bio, socialLinks: .init(card.socialLinks),
                          photoUrl: card.photoUrl, distanceFeet: distance.feet, distanceMiles: distance.miles, distanceText: distance.text,
                          position: .init(latitude: row.latitude, longitude: row.longitude))
    }

    // MARK: profile and settings

    func require(_ userID: UUID, on connection: PostgresConnection) async throws -> StoredProfile {
        guard let profile = try await profiles.ensure(userID, on: connection) else { throw NearbyErrors.accountDeleted }
        return profile
    }

    func get(_ userID: UUID, on connection: PostgresConnection) async throws -> MyProfile {
        mine(try await require(userID, on: connection))
    }

    struct ProfileEdit: Sendable {
        var name: String?
        var bio: String??
        var school: String??
        var birthday: LocalDate??
        var socialLinks: SocialLinks?
    }

    func edit(_ userID: UUID, _ edit: ProfileEdit, on connection: PostgresConnection) async throws -> MyProfile {
        var changes = ProfileStore.Changes()
        var errors = ValidationErrors()
        if let name = edit.name {
            errors.check(TextRules.fits(name, 1...NearbyRules.maxName), "name must be 1–\(NearbyRules.maxName) characters, not blank")
            changes.name = TextRules.trimmed(name)
        }
        if let bio = edit.bio {
            errors.check(TextRules.length(bio ?? "") <= NearbyRules.maxBio, "bio must be at most \(NearbyRules.maxBio) characters")
            changes.bio = .some(bio.map(TextRules.trimmed).flatMap { $0.isEmpty ? nil : $0 })
        }
        if let school = edit.school {
            errors.check(TextRules.length(school ?? "") <= NearbyRules.maxSchool, "school must be at most \(NearbyRules.maxSchool) characters")
            changes.school = .some(school.map(TextRules.trimmed).flatMap { $0.isEmpty ? nil : $0 })
        }
        try errors.throwIfAny()
        if case .some(.some(let birthday)) = edit.birthday { try NearbyRules.birthday(birthday, today: LocalDate.utcDay(of: Date())) }
        changes.birthday = edit.birthday
        changes.socialLinks = try edit.socialLinks.map(NearbyRules.socialLinks)
        return try await apply(userID, changes, on: connection)
    }

    /// Dark mode, satellite map, share location. Turning sharing off deletes my point at once
    /// and tells every client to drop me.
    func setSettings(_ userID: UUID, darkMode: Bool?, satelliteMap: Bool?, shareLocation: Bool?, on connection: PostgresConnection) async throws -> MyProfile {
        _ = try await require(userID, on: connection)
        guard let profile = try await profiles.update(userID, .init(darkMode: darkMode, satelliteMap: satelliteMap, shareLocation: shareLocation), on: connection) else {
            throw NearbyErrors.accountDeleted
        }
        if shareLocation == false { try await removeLocation(userID, reason: .sharingOff, on: connection) }
        return mine(profile)
    }

    func setPhoto(_ userID: UUID, image: ByteBuffer, contentType: String?, on connection: PostgresConnection) async throws -> MyProfile {
        let current = try await require(userID, on: connection)
        let version = try await storage.uploadPicture(image, contentType: contentType, to: photos, owner: userID, replacing: current.photoVersion)
        return try await apply(userID, .init(photoVersion: .some(version)), on: connection)
    }

    func removePhoto(_ userID: UUID, on connection: PostgresConnection) async throws -> MyProfile {
        let current = try await require(userID, on: connection)
        try await storage.removePicture(photos, owner: userID, version: current.photoVersion)
        return try await apply(userID, .init(photoVersion: .some(nil)), on: connection)
    }

    /// A moderator's removal of a reported card (`NearbyReportables`): bio, photo and social
    /// links cleared, as the user clears them (`removePhoto`, `edit`), with the same
    /// `profile_updated`. false when the account is gone.
    func clearCard(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let current = try await profiles.find(userID, on: connection) else { return false }
        try await storage.removePicture(photos, owner: userID, version: current.photoVersion)
        _ = try await apply(userID, .init(bio: .some(nil), socialLinks: SocialLinks(), photoVersion: .some(nil)), on: connection)
        return true
    }

    /// Saves profile changes and publishes the new public card.
    func apply(_ userID: UUID, _ changes: ProfileStore.Changes, on connection: PostgresConnection) async throws -> MyProfile {
        _ = try await require(userID, on: connection)
        guard let profile = try await profiles.update(userID, changes, on: connection) else { throw NearbyErrors.accountDeleted }
        try await publish(ProfileUpdated(profile: card(profile), visibleTo: try await watchers(userID, on: connection)), user: userID, on: connection)
        return mine(profile)
    }

    // MARK: location

    /// Stores my position (sharing must be on) and what others see of it, and publishes that
    /// with how it changed who sees whom. Reports are rate-limited, and one farther from my
    /// last fresh point than anyone could have travelled is refused (a spoofed jump).
    func report(_ userID: UUID, latitude: Double, longitude: Double, accuracy: Double?, on connection: PostgresConnection) async throws -> LocationReport {
        try NearbyRules.coordinates(latitude: latitude, longitude: longitude, accuracy: accuracy)
        let profile = try await require(userID, on: connection)
        guard profile.shareLocation else { throw NearbyErrors.sharingOff }
        try await quotas.check("report|\(userID.lowercased)", settings.reportQuota, message: "too many location reports, try again later", on: connection)
        if let last = try await locations.lastMove(userID, to: latitude, longitude, ttlSeconds: settings.locationTTLSeconds, on: connection),
           !NearbyRules.plausibleMove(meters: last.meters, seconds: last.seconds, maxSpeed: settings.maxSpeedMetersPerSecond) {
            throw NearbyErrors.implausibleJump
        }
        let watchersBefore = Set(try await watchers(userID, on: connection))
        let visibleBefore = Set(try await visible(to: userID, on: connection).map(\.userId))
        let privacy = LocationPrivacy(offsetFeet: settings.offsetFeet, gridFeet: settings.gridFeet, key: try await noise.key(on: connection, logger: logger))
        let position = privacy.shown(user: userID, latitude: latitude, longitude: longitude)
        guard let updatedAt = try await locations.report(userID, latitude: latitude, longitude: longitude, accuracy: accuracy, shown: position, on: connection) else {
            throw NearbyErrors.sharingOff
        }
        let watchersNow = try await watchers(userID, on: connection)
        let visibleNow = try await visible(to: userID, on: connection)
        try await publish(LocationUpdated(
            userId: userID, position: position, updatedAt: updatedAt, visibleTo: watchersNow,
            newlyVisibleTo: watchersNow.filter { !watchersBefore.contains($0) },
            hiddenFrom: watchersBefore.subtracting(watchersNow).sorted { $0.lowercased < $1.lowercased },
            appeared: visibleNow.filter { !visibleBefore.contains($0.userId) },
            disappeared: visibleBefore.subtracting(visibleNow.map(\.userId)).sorted { $0.lowercased < $1.lowercased }
        ), user: userID, on: connection)
        return LocationReport(updatedAt: updatedAt, position: .init(position))
    }

    /// Deletes my point; those who could see me are told to drop me.
    func removeLocation(_ userID: UUID, reason: LocationRemovalReason, on connection: PostgresConnection) async throws {
        let watchers = try await watchers(userID, on: connection)
        if try await locations.remove(userID, on: connection) {
            try await publish(LocationRemoved(userId: userID, reason: reason, visibleTo: watchers), user: userID, on: connection)
        }
    }

    /// Who sees me at the default radius right now.
    func watchers(_ userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await locations.watchers(of: userID, radiusMeters: Double(settings.radiusFeet) * NearbyRules.metersPerFoot, ttlSeconds: settings.locationTTLSeconds, on: connection)
    }

    /// Whom I see at the default radius right now, as I am shown them.
    func visible(to userID: UUID, on connection: PostgresConnection) async throws -> [LocationRow] {
        try await locations.visible(to: userID, radiusMeters: Double(settings.radiusFeet) * NearbyRules.metersPerFoot, ttlSeconds: settings.locationTTLSeconds, on: connection)
    }

    /// People within `radiusFeet` (the default when nil; capped), nearest first. Queries per
    /// viewer are rate-limited.
    func nearby(_ userID: UUID, radiusFeet: Int?, limit: Int, on connection: PostgresConnection) async throws -> NearbyList {
        let radius = radiusFeet ?? settings.radiusFeet
        guard (1...settings.maxRadiusFeet).contains(radius) else { throw APIError.unprocessable("radius_feet must be between 1 and \(settings.maxRadiusFeet)") }
        let me = try await require(userID, on: connection)
        try await checkQueryQuota(userID, on: connection)
        let rows = try await locations.nearby(userID, radiusMeters: Double(radius) * NearbyRules.metersPerFoot, ttlSeconds: settings.locationTTLSeconds,
                                             limit: limit, on: connection)
        // Anyone in the list means my point is fresh and shared; only an empty list needs a look.
        var sharing = true
        if rows.isEmpty { sharing = try await hasFreshLocation(userID, on: connection) && me.shareLocation }
        return NearbyList(sharing: sharing, radiusFeet: radius, users: rows.map(nearbyUser))
    }

    func checkQueryQuota(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await quotas.check("query|\(userID.lowercased)", settings.queryQuota, message: "too many nearby queries, try again later", on: connection)
    }

    /// One nearby person's card, under the same rules as the list (else 404). Lookups per viewer,
    /// and per viewer and person, are rate-limited.
    func user(_ other: UUID, viewer userID: UUID, on connection: PostgresConnection) async throws -> NearbyUser {
        _ = try await require(userID, on: connection)
        try await checkQueryQuota(userID, on: connection)
        try await quotas.check("target|\(userID.lowercased)|\(other.lowercased)", settings.targetQuota,
                               message: "too many lookups of this person, try again later", on: connection)
        guard let row = try await visibleCard(other, viewer: userID, on: connection) else { throw NearbyErrors.userNotFound }
        return nearbyUser(row)
    }

    /// The person's card if the viewer sees it now (`user`'s rule, what reports check too): both
    /// share a fresh position within the default radius, and neither blocks the other.
    func visibleCard(_ other: UUID, viewer userID: UUID, on connection: PostgresConnection) async throws -> NearbyRow? {
        try await locations.nearby(userID, radiusMeters: Double(settings.radiusFeet) * NearbyRules.metersPerFoot, ttlSeconds: settings.locationTTLSeconds,
                                   limit: 1, only: other, on: connection).first
    }

    func hasFreshLocation(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            SELECT 1 FROM locations WHERE user_id = \(userID) AND updated_at > now() - make_interval(secs => \(Double(settings.locationTTLSeconds)))
            """, logger: logger).collect().isEmpty
    }

    /// The TTL job: deletes stale points in batches, one `location_removed` each.
    func expireLocations(database: Database) async throws -> Int {
        var total = 0
        while true {
            let expired = try await database.transaction { connection in
                let users = try await locations.stale(ttlSeconds: settings.locationTTLSeconds, limit: 1000, on: connection)
                for user in users { try await removeLocation(user, reason: .expired, on: connection) }
                return users.count
            }
            total += expired
            if expired < 1000 { return total }
        }
    }

    // MARK: blocks

    // The platform's `user_blocks` (`BlockList`); SocialSpot's meaning is in the reads
    // (`LocationStore`): a block hides the pair from each other both ways.

    /// Blocks `other` (409 `block_limit` past `BlockList.limit`). Answers the caller's list.
    func block(_ other: UUID, by userID: UUID, on connection: PostgresConnection) async throws -> [BlockEntry] {
        guard other != userID else { throw BlockList.cannotBlockSelf }
        _ = try await require(userID, on: connection)
        return try await blocks.block(other, by: userID, on: connection).map(Self.entry)
    }

    func unblock(_ other: UUID, by userID: UUID, on connection: PostgresConnection) async throws {
        _ = try await require(userID, on: connection)
        try await blocks.unblock(other, by: userID, on: connection)
    }

    func blocked(by userID: UUID, on connection: PostgresConnection) async throws -> [BlockEntry] {
        _ = try await require(userID, on: connection)
        return try await blocks.list(by: userID, on: connection).map(Self.entry)
    }

    static func entry(_ block: BlockedUser) -> BlockEntry {
        BlockEntry(userId: block.userId.lowercased, createdAt: block.createdAt)
    }

    // MARK: auth's events

    func registered(_ userID: UUID, metadata: [String: JSONValue], on connection: PostgresConnection) async throws {
        try await profiles.upsertFromAuth(userID, name: SignUpMetadata.displayName(metadata, maxLength: NearbyRules.maxName), on: connection)
    }

    /// Erases the account with its location (clients drop it), blocks and photo.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        let version = try await connection.query("SELECT photo_version FROM profiles WHERE id = \(userID)", logger: logger).firstValue(Int64?.self)
        try await removeLocation(userID, reason: .accountDeleted, on: connection)
        try await profiles.erase(userID, on: connection)
        try await storage.removePicture(photos, owner: userID, version: version ?? nil)
    }

    func publish<Payload: EventPayload>(_ payload: Payload, user: UUID, on connection: PostgresConnection) async throws {
        try await outbox.publish(EventEnvelope(app: .socialspot, aggregateId: user.uuidString.lowercased(), actor: user, payload: payload), on: connection, logger: logger)
    }
}
