import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import PostgresNIO

/// SocialSpot's Supabase tables into the nearby schema, ids kept. The seed names its data but
/// gives no DDL, so the shape read is the one its features describe (README, "Moving an app
/// from Supabase"):
///
/// | Supabase (`public`) | Colony (`nearby`) |
/// |---|---|
/// | `profiles` (`id`, `name`, `bio`, `school`, `birthday`, the links `instagram` … `other` or a `social_links` object, `avatar_url`, `dark_mode`, `satellite_map`, `share_location`) | `profiles`: name ≤ 50, bio ≤ 300, school ≤ 100 characters (longer ones cut there, reported), links in each platform's format (a link that is not is left out and reported), the photo's file copied to `profile-photos` as `{user_id}` |
/// | `locations` (`user_id`, `latitude` and `longitude`, or a PostGIS `location`; `accuracy`; `updated_at`) | `locations` as a `geography` point; a location older than `COLONY_NEARBY_LOCATION_TTL_SECONDS`, or of someone not sharing, is not imported |
/// | `blocks` (`blocker_id`, `blocked_id`), when the project has it | the platform's `user_blocks` (`BlockList`; a block already made here stays) |
public enum SupabaseNearbyImport {
    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts, settings: NearbySettings, storage: Storage) async throws {
        let logger = job.logger
        let photos = settings.photos
        let noise = LocationNoiseKey()
        let profiles = ProfileStore(logger: logger)
        var sharing = Set<UUID>()

        try await job.importRows("public.profiles", from: source.rows("public", "profiles", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("id")
            try accounts.require(userID, "id")
            // Texts over the service's limits are cut there (reported), not the profile left out.
            let name = writer.fit(try row.text("name") ?? row.text("display_name"), "name", max: NearbyRules.maxName) ?? ""
            let bio = writer.fit(try row.optionalString("bio"), "bio", max: NearbyRules.maxBio)
            let school = writer.fit(try row.optionalString("school"), "school", max: NearbyRules.maxSchool)
            let links = try Self.socialLinks(row, writer: writer)
            let shares = try row.bool("share_location", default: false)
            if shares { sharing.insert(userID) }
            let photo = try await writer.copyFile(try row.optionalString("avatar_url") ?? row.optionalString("photo_url"), defaultBucket: photos.name,
                                                  into: photos, key: userID.lowercased)
            try await writer.connection.query("""
                INSERT INTO profiles (id, name, bio, school, birthday, social_links, photo_version, dark_mode, satellite_map, share_location, created_at, updated_at)
                SELECT \(userID), \(name), \(bio), \(school), \(try row.optionalLocalDate("birthday")), \(try ImportJSON.text(links))::jsonb,
                       \(photo?.version), \(try row.bool("dark_mode", default: false)), \(try row.bool("satellite_map", default: false)), \(shares),
                       \(try row.optionalDate("created_at") ?? job.now), \(try row.optionalDate("updated_at") ?? job.now)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, bio = EXCLUDED.bio, school = EXCLUDED.school, birthday = EXCLUDED.birthday,
                    social_links = EXCLUDED.social_links, photo_version = EXCLUDED.photo_version, dark_mode = EXCLUDED.dark_mode,
                    satellite_map = EXCLUDED.satellite_map, share_location = EXCLUDED.share_location, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                """, logger: logger)
            return .imported
        }
        try await job.once("profiles#ensured", keys: accounts.all.map(\.id.lowercased)) { key, writer in
            guard let account = UUID(uuidString: key).flatMap({ accounts.byID[$0] }) else { return }
            try await profiles.upsertFromAuth(account.id, name: SignUpMetadata.displayName(account.userMetadata, maxLength: NearbyRules.maxName), on: writer.connection)
        }

        // A location lives only while its user shares and reports: stale ones are gone, as the job would make them.
        let freshSince = job.now.addingTimeInterval(-Double(settings.locationTTLSeconds))
        try await job.importRows("public.locations", from: source.rows("public", "locations", orderBy: "user_id"), id: { try $0.uuid("user_id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id")
            guard let updatedAt = try row.optionalDate("updated_at"), updatedAt > freshSince else { return .notImported("expired") }
            try accounts.require(userID, "user_id")
            // (Profiles of an earlier run are in Colony already.)
            if !sharing.contains(userID) {
                guard try await writer.connection.query("SELECT 1 FROM profiles WHERE id = \(userID) AND share_location", logger: logger).collect().count == 1 else {
                    return .notImported("not sharing")
                }
            }
            let (latitude, longitude) = try Self.position(row)
            let accuracy = try row.optionalDouble("accuracy") ?? row.optionalDouble("accuracy_m")
            do { try NearbyRules.coordinates(latitude: latitude, longitude: longitude, accuracy: accuracy) } catch { throw RowProblem("\(error)") }
            // What others see is the shown position (the deployment's offset, snapped), as for a report.
            let privacy = LocationPrivacy(offsetFeet: settings.offsetFeet, gridFeet: settings.gridFeet,
                                          key: try await noise.key(on: writer.connection, logger: logger))
            let shown = privacy.shown(user: userID, latitude: latitude, longitude: longitude)
            try await writer.connection.query("""
                INSERT INTO locations (user_id, position, shown, accuracy_m, updated_at)
                VALUES (\(userID), ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography,
                        ST_SetSRID(ST_MakePoint(\(shown.longitude), \(shown.latitude)), 4326)::geography, \(accuracy), \(updatedAt))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.blocks", from: source.rows("public", "blocks", orderBy: "blocker_id, blocked_id"),
                                 id: { "\(try $0.uuid("blocker_id").lowercased)|\(try $0.uuid("blocked_id").lowercased)" }) { row, writer in
            let blocker = try row.uuid("blocker_id")
            try accounts.require(blocker, "blocker_id")
            // Into the platform's table, which has no key to `profiles`: a blocker whose account was
            // deleted here (no profile) brings no block, as the old table's foreign key refused it.
            guard try await !writer.connection.query("SELECT 1 FROM profiles WHERE id = \(blocker)", logger: logger).collect().isEmpty else {
                return .notImported("the blocker's account was deleted")
            }
            try await writer.connection.query("""
                INSERT INTO user_blocks (blocker_id, blocked_id, created_at)
                VALUES (\(blocker), \(try row.uuid("blocked_id")), \(try row.optionalDate("created_at") ?? job.now))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            return .imported
        }
    }

    /// The links from per-platform columns (`instagram`, …, `x` or `twitter`, `other`) or a
    /// `social_links` object; one that is not in its platform's format is left out and reported.
    static func socialLinks(_ row: SourceRow, writer: RowWriter) throws -> SocialLinks {
        let object = try row.object("social_links")
        var links = SocialLinks()
        for platform in NearbyRules.Platform.allCases {
            let names = platform == .x ? ["x", "twitter"] : [platform.rawValue]
            guard let raw = try names.lazy.compactMap({ name in try row.text(name) ?? object[name]?.stringValue }).first else { continue }
            let link: String?
            do { link = try NearbyRules.socialLink(raw, platform: platform) } catch {
                writer.service.report.incomplete(writer.table, id: writer.sourceID, reason: "social link \(platform.rawValue) \"\(raw.prefix(60))\" left out: not in the platform's format")
                continue
            }
            switch platform {
            case .instagram: links.instagram = link
            case .snapchat: links.snapchat = link
            case .tiktok: links.tiktok = link
            case .linkedin: links.linkedin = link
            case .youtube: links.youtube = link
            case .x: links.x = link
            case .other: links.other = link
            }
        }
        return links
    }

    /// `latitude`/`longitude` columns, or a PostGIS point as `to_jsonb` writes it (hex EWKB).
    static func position(_ row: SourceRow) throws(RowProblem) -> (latitude: Double, longitude: Double) {
        if let latitude = try row.optionalDouble("latitude"), let longitude = try row.optionalDouble("longitude") { return (latitude, longitude) }
        for column in ["location", "position", "geog", "point"] {
            if let hex = try row.optionalString(column) {
                guard let point = EWKBPoint(hex: hex) else { throw RowProblem("\(column) is not a point") }
                return (point.latitude, point.longitude)
            }
        }
        throw RowProblem("no latitude/longitude or location")
    }
}

/// A PostGIS point in (extended) well-known binary, hex-encoded: byte order, type (with the
/// SRID flag), optional SRID, then x (longitude) and y (latitude).
struct EWKBPoint: Equatable {
    var longitude: Double
    var latitude: Double

    init?(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        guard bytes.count >= 21, bytes[0] <= 1 else { return nil }
        let little = bytes[0] == 1
        func uint32(_ offset: Int) -> UInt32 {
            let slice = bytes[offset..<offset + 4]
            return slice.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (little ? 8 * $1.offset : 8 * (3 - $1.offset)) }
        }
        func double(_ offset: Int) -> Double {
            let slice = Array(bytes[offset..<offset + 8])
            let bits = slice.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (little ? 8 * $1.offset : 8 * (7 - $1.offset)) }
            return Double(bitPattern: bits)
        }
        let type = uint32(1)
        guard type & 0xFF == 1 else { return nil }  // a point
        let start = type & 0x2000_0000 != 0 ? 9 : 5
        guard bytes.count >= start + 16 else { return nil }
        longitude = double(start)
        latitude = double(start + 8)
    }
}
