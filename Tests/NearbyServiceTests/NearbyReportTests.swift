import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NearbyAPI
import NearbyService
import OpenAPIRuntime
import Testing

/// Reports from the outside: whose card a SocialSpot user may report (`NearbyReportables`: the
/// card `GET /nearby/v1/users/{user_id}` shows them now), and what the console's moderation
/// routes then do with it.
@Suite("Nearby reports")
struct NearbyReportTests {
    let key = InternalKey((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())

    /// The nearby service as `withRunningNearby` starts it (deployed privacy rules, rate limits and
    /// the speed check lifted: people walk away at once here), with the console's key.
    func withReportingNearby(_ body: @Sendable (RunningNearby, ModerationCalls) async throws -> Void) async throws {
        let settings = NearbySettings.unlimited
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-nearby-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let key = key
        try await withRunningService(.nearby, app: .socialspot, apiPrefix: "/nearby/v1", extensions: NearbyService.extensions, configure: {
            $0.maxUploadBytes = settings.maxUploadBytes
            $0.consoleKey = key
        }, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("nearby-tests-signing-key-0123456789abcdef".utf8))
            return NearbyService.definition(settings: settings, storage: storage)
        }) { service in
            try await body(RunningNearby(service: service, storageRoot: root), ModerationCalls(service: service, key: key))
        }
    }

    func report(_ api: NearbyAPI.Client, _ id: String, _ category: Schemas.ReportCreate.CategoryPayload = .harassment,
                words: String? = nil) async throws -> Answer<ClientOperations.CreateReport.Output> {
        try await answer { try await api.createReport(body: .json(.init(objectType: .profile, objectId: id, category: category, words: words))) }
    }


    func outboxCount(_ nearby: RunningNearby, type: String, key: String) async throws -> Int {
        try await nearby.service.withDatabase { database in
            try await database.query("SELECT count(*)::int8 FROM outbox WHERE event_type = \(type) AND event_key = \(key)").collect().first!.decode(Int.self)
        }
    }

    @Test("profile: only those who see the card now may report it (not the far, the blocked, the hidden, nor one who walked away); removed, bio, photo and links are cleared with profile_updated")
    func profiles() async throws {
        try await withReportingNearby { nearby, moderation in
            let origin = (40.7411, -73.9897)
            func near(_ feet: Double, _ azimuth: Double) async throws -> (Double, Double) { try await nearby.point(from: origin, feet: feet, azimuth: azimuth) }
            let rita = try await nearby.user(name: "Rita", at: origin)
            let ritas = nearby.api(rita)
            _ = try await ritas.updateProfile(body: .json(.init(bio: "DM me for bad things", school: "Hunter", socialLinks: .init(instagram: "@rita.bad", x: "https://x.com/ritabad")))).ok
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7, 7, 7]
            let photo = try #require(try await ritas.setProfilePhoto(body: .png(HTTPBody(png))).ok.body.json.photoUrl)
            let ann = try await nearby.user(name: "Ann", at: try await near(40, 90))
            let bob = try await nearby.user(name: "Bob", at: try await near(60, 180))
            let walker = try await nearby.user(name: "Walker", at: try await near(50, 270))
            let far = try await nearby.user(name: "Far", at: try await near(5 * 5280, 0))
            let hidden = try await nearby.user(name: "Hidden", sharing: false)
            let blocked = try await nearby.user(name: "Blocked", at: try await near(30, 0))
            let blocker = try await nearby.user(name: "Blocker", at: try await near(30, 45))
            _ = try await ritas.blockUser(body: .json(.init(userId: blocked.id.lowercased))).created
            _ = try await nearby.api(blocker).blockUser(body: .json(.init(userId: rita.id.lowercased))).created
            let target = rita.id.lowercased
            // Walker sees her, then walks away: what the card route shows now is the rule.
            #expect(try await answer { try await nearby.api(walker).getNearbyUser(path: .init(userId: target)) }.status == 200)
            try await nearby.move(walker, to: try await near(3 * 5280, 90))

            let filed = try await report(nearby.api(ann), target, .harassment, words: "offers drugs")
            #expect(filed.status == 201)
            let created = try filed.output.created.body.json
            #expect(created.status == .open && created.objectType == "profile" && created.objectId == target && created.words == "offers drugs")
            let again = try await report(nearby.api(ann), target)
            #expect(again.status == 409 && again.code == "already_reported")
            #expect(try await report(nearby.api(bob), target, .illegal).status == 201)
            // Whoever the card route answers 404 gets the same 404 here, and so does an id nobody has.
            for (name, viewer) in [("far", far), ("hidden", hidden), ("blocked", blocked), ("blocker", blocker), ("walker", walker)] {
                let card = try await answer { try await nearby.api(viewer).getNearbyUser(path: .init(userId: target)) }
                let refused = try await report(nearby.api(viewer), target)
                #expect(card.status == 404 && refused.status == 404 && refused.code == "not_found", "\(name): card \(card.status), report \(refused.status)")
            }
            #expect(try await report(nearby.api(ann), UUID().uuidString.lowercased()).status == 404)
            #expect(try await report(nearby.api(ann), "rita").status == 422)
            let own = try await report(ritas, target)
            #expect(own.status == 403 && own.code == "own_content")

            let item = try #require(try await moderation.queue().first { $0.objectId == rita.id })
            #expect(item.objectType == "profile" && item.reportedUserId == rita.id && item.openReports == 2)
            #expect(Set(item.categories.map(\.category)) == [.harassment, .illegal])
            let review = try #require(try await moderation.review("profile", rita.id))
            let content = try #require(review.content)
            for part in ["name: Rita", "bio: DM me for bad things", "school: Hunter", "instagram: @rita.bad", "x: https://x.com/ritabad", "photo: "] {
                #expect(content.contains(part), "\(part) in \(content)")
            }
            #expect(try await nearby.service.request(.GET, photo, as: nil).status == 200)
            let updatesBefore = try await outboxCount(nearby, type: "profile_updated", key: target)

            let resolution = try await moderation.resolve("profile", rita.id, .remove)
            #expect(resolution.removed && Set(resolution.reporterIds) == [ann.id, bob.id])
            // Cleared as she could clear them herself; her name, school and settings stay.
            let mine = try await ritas.getProfile().ok.body.json
            #expect(mine.bio == nil && mine.photoUrl == nil && mine.socialLinks == .init())
            #expect(mine.name == "Rita" && mine.school == "Hunter" && mine.shareLocation)
            let card = try await nearby.api(ann).getNearbyUser(path: .init(userId: target)).ok.body.json
            #expect(card.bio == nil && card.photoUrl == nil && card.socialLinks == .init() && card.name == "Rita")
            #expect(try await nearby.service.request(.GET, photo, as: nil).status == 404, "the photo is deleted")
            #expect(try await outboxCount(nearby, type: "profile_updated", key: target) == updatesBefore + 1)
            // The cleared card reaches those who see her (her first card, from the harness's name, had no bio nor school yet).
            let events = try await nearby.service.events(of: .nearby) { events in
                events.contains { $0.type == .profileUpdated && (try? $0.decode(ProfileUpdated.self).payload).map { $0.profile.userId == rita.id && $0.profile.bio == nil && $0.profile.school != nil } == true }
            }
            let cleared = try #require(events.compactMap { try? $0.decode(ProfileUpdated.self).payload }.last { $0.profile.userId == rita.id })
            #expect(cleared.profile.photoUrl == nil && cleared.profile.socialLinks == SocialLinks() && Set(cleared.visibleTo).isSuperset(of: [ann.id, bob.id]), "\(cleared)")
            #expect(try await moderation.review("profile", rita.id)?.content == "name: Rita\nschool: Hunter")
            #expect(try await moderation.refusal("profile", rita.id, .remove) == "404 no_open_reports")

            // Dismissed, a card stays as it is.
            _ = try await nearby.api(ann).updateProfile(body: .json(.init(bio: "Just coffee"))).ok
            #expect(try await report(ritas, ann.id.lowercased, .spam).status == 201)
            let dismissed = try await moderation.resolve("profile", ann.id, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [rita.id])
            #expect(try await nearby.api(ann).getProfile().ok.body.json.bio == "Just coffee")
            #expect(try await moderation.refusal("profile", ann.id, .dismiss) == "404 no_open_reports")
        }
    }
}
