import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NearbyAPI
import NIOCore
import OpenAPIRuntime
import Testing
@testable import NearbyService

/// Nearby's part of a user's data export (`user_export_requested`): every table of the schema is
/// exported or says why not, and the part holds the user's profile, position, blocks and photo,
/// and of the people around them nothing but the ids of those they blocked.
@Suite("Nearby export")
struct NearbyExportTests {
    @Test("the export plan covers every table and column of the migrated schema")
    func planMatchesSchema() async throws {
        try await withRunningNearby { nearby in
            let problems = try await exportPlanProblems(NearbyExport.plan(photos: NearbySettings().photos), database: nearby.service.database)
            #expect(problems == [])
            // The check sees the schema: a plan without tables has every one of them uncovered.
            let schema = nearby.service.database.schema
            let empty = ExportPlan(service: .nearby, about: "", tables: [], notExported: [:])
            #expect(try await exportPlanProblems(empty, database: nearby.service.database).contains("\(schema).locations is neither exported nor listed with a reason"))
        }
    }

    @Test("user_export_requested writes the user's profile, position, blocks, reports filed and photo; the blocked person by id only, blocks and reports of the user not at all")
    func partHoldsTheUsersData() async throws {
        try await withRunningNearby { nearby in
            let origin = (48.8566, 2.3522)
            let me = try await nearby.user(name: "Export Me", at: origin)
            let mine = nearby.api(me)
            _ = try await mine.updateProfile(body: .json(.init(bio: "Coffee", school: "Sorbonne", birthday: "1999-05-01", socialLinks: .init(instagram: "@export.me")))).ok
            _ = try await mine.updateSettings(body: .json(.init(darkMode: true))).ok
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 5, 5, 5]
            _ = try await mine.setProfilePhoto(body: .png(HTTPBody(png))).ok
            let other = try await nearby.user(name: "Zebulon Otherside", at: try await nearby.point(from: origin, feet: 40, azimuth: 90))
            _ = try await nearby.api(other).updateProfile(body: .json(.init(bio: "Zebulon's bio", school: "Secret School"))).ok
            // A report the user filed is theirs; one filed about the user is its reporter's.
            _ = try await mine.createReport(body: .json(.init(objectType: .profile, objectId: other.id.lowercased, category: .spam, words: "my own words"))).created
            let reporter = try await nearby.user(name: "Dana Reporter", at: try await nearby.point(from: origin, feet: 60, azimuth: 270))
            _ = try await nearby.api(reporter).createReport(body: .json(.init(objectType: .profile, objectId: me.id.lowercased, category: .harassment, words: "Dana's words"))).created
            _ = try await mine.blockUser(body: .json(.init(userId: other.id.lowercased))).created
            // A block of the user by someone else is that person's: it stays out.
            let blocker = try await nearby.user(name: "Carol Blocker", at: try await nearby.point(from: origin, feet: 80, azimuth: 180))
            _ = try await nearby.api(blocker).blockUser(body: .json(.init(userId: me.id.lowercased))).created

            let exportID = UUID()
            try await nearby.service.publishAuthEvent(UserExportRequested(exportId: exportID, userId: me.id, app: .socialspot, requestedAt: Date()), user: me.id)
            let backend = FileSystemStorageBackend(root: nearby.storageRoot)
            let bucket = UserExport.bucket.name
            let part = try await WrittenExportPart.read(backend, export: exportID, service: .nearby)
            let (manifest, prefix, text, data) = (part.manifest, part.prefix, part.text, part.data)
            #expect(manifest.service == .nearby && manifest.entries.count == 3, "\(manifest.entries)")
            let photoPath = try #require(manifest.entries.last)
            #expect(photoPath.hasPrefix("files/profile-photos/\(me.id.lowercased)/"), "a photo under its per-upload key")
            #expect(try await backend.get(bucket: bucket, key: "\(prefix)/\(photoPath)")?.body == ByteBuffer(bytes: png))

            #expect(data["user_id"]?.stringValue == me.id.lowercased && data["app"]?.stringValue == "socialspot")
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }
            let profile = try #require(rows("profile").first)
            #expect(profile["name"]?.stringValue == "Export Me" && profile["school"]?.stringValue == "Sorbonne" && profile["birthday"]?.stringValue == "1999-05-01")
            #expect(profile["social_links"]?["instagram"]?.stringValue == "@export.me" && profile["dark_mode"]?.boolValue == true)
            #expect(profile["photo"]?.stringValue.map { "files/profile-photos/\($0)" } == photoPath)
            let location = try #require(rows("location").first)
            #expect(rows("location").count == 1)
            #expect(abs((location["latitude"]?.doubleValue ?? 0) - origin.0) < 1e-9 && abs((location["longitude"]?.doubleValue ?? 0) - origin.1) < 1e-9)
            #expect(location["shown_latitude"]?.doubleValue != nil && location["updated_at"]?.stringValue != nil)
            #expect(rows("blocks").map { $0["blocked_id"]?.stringValue } == [other.id.lowercased])
            let filed = try #require(rows("reports_filed").first)
            #expect(rows("reports_filed").count == 1)
            #expect(filed["object_id"]?.stringValue == other.id.lowercased && filed["words"]?.stringValue == "my own words" && filed["status"]?.stringValue == "open")
            // Of the others: the blocked person's id only; nothing of the person who blocked the user,
            // nor of who reported them.
            for secret in ["Zebulon Otherside", "Zebulon's bio", "Secret School", "Carol Blocker", blocker.id.lowercased, "Dana", reporter.id.lowercased] {
                #expect(!text.contains(secret), "\(secret) is in the export")
            }
            #expect(part.readme.contains("## location"))
        }
    }
}

