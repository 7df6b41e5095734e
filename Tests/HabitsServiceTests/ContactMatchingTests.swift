import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
import HabitsService
import Testing

/// HabitHive's contact matching is not a phone directory: the pepper stays on the server,
/// numbers are hashed there, an upload replaces the caller's set, and uploads and match reads
/// have per-user quotas.
@Suite("Habits: contact matching")
struct ContactMatchingTests {
    /// A habithive user with a phone, as auth announces it.
    func registered(_ habits: RunningService, phone: String, name: String) async throws -> RunningService.User {
        let user = try await habits.user()
        try await habits.publishAuthEvent(UserRegistered(userId: user.id, app: .habithive, email: nil, phone: phone,
                                                         phoneHash: PhoneHash.of(e164: phone, pepper: "test-pepper"),
                                                         userMetadata: ["display_name": .string(name)], createdAt: Date()), user: user.id)
        try await waitUntil { (try? await habits.api(user).getProfile().ok.body.json.displayName) == name }
        return user
    }

    @Test("the pepper is not served; hashes are not accepted (only numbers the server hashes); an upload replaces the set")
    func noDirectory() async throws {
        try await withRunningHabits { habits in
            let ada = try await registered(habits, phone: "+442071838750", name: "Ada")
            let bob = try await habits.user(timezone: "UTC")
            let bobs = habits.api(bob)
            // Raw: a route the document does not have (and must not).
            let pepper = try await habits.request(.GET, "/contacts/pepper", as: bob)
            #expect(pepper.status == 404 && pepper.code == "route_not_found" && !String(buffer: pepper.bytes).contains("test-pepper"))
            // The old way: a client hashing numbers itself. Refused (no phone in it). Raw: the typed
            // client cannot leave out the required phone.
            let hashed = try await habits.request(.POST, "/contacts", as: bob, json: ["contacts": [["hash": PhoneHash.of(e164: "+442071838750", pepper: "test-pepper")]]])
            #expect(hashed.status == 422)
            let first = try await bobs.uploadContacts(body: .json(.init(contacts: [.init(phone: "+442071838750")]))).ok.body.json
            #expect(first.matches.map { $0.userId.lowercased() } == [ada.id.lowercased])
            // The next upload replaces the set: Ada is no longer among Bob's contacts.
            let second = try await answer { try await bobs.uploadContacts(body: .json(.init(contacts: [.init(phone: "+442071838751")]))) }
            #expect(try second.status == 200 && (try second.output.ok.body.json.matches.isEmpty))
            #expect(try await bobs.listContactMatches().ok.body.json.matches.isEmpty)
            let stored = try await habits.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM contact_hashes WHERE user_id = \(bob.id)").collect()[0].decode(Int.self)
            }
            #expect(stored == 1)
        }
    }

    @Test("a full upload (2,000 numbers, each with a 200-character name: over the 256 KiB of other bodies) is read whole; one contact more is 422, not 413")
    func fullUpload() async throws {
        try await withRunningHabits { habits in
            let api = habits.api(try await habits.user())
            let name = String(repeating: "é", count: 200)
            func upload(_ count: Int) async throws -> Answer<HabitsOperations.UploadContacts.Output> {
                let contacts = (0..<count).map { Schemas.ContactsUpload.ContactsPayloadPayload(phone: "+1555\(String(format: "%07d", $0))", displayName: name) }
                return try await answer { try await api.uploadContacts(body: .json(.init(contacts: contacts))) }
            }
            let full = try await upload(2000)
            #expect(full.status == 200, "\(full.body)")
            let tooMany = try await upload(2001)
            #expect(tooMany.status == 422, "\(tooMany.body)")
        }
    }

    @Test("a bulk upload over the quota is refused (429, nothing stored); uploads per day and match reads are capped per user")
    func quotas() async throws {
        let settings = HabitsSettings(phonePepper: "test-pepper", contactsPerUpload: 2000, contactUploadQuota: Quota(3, perSeconds: 86_400),
                                      contactNumberQuota: Quota(5000, perSeconds: 86_400), contactMatchQuota: Quota(2, perSeconds: 3600))
        try await withRunningHabits(settings: settings) { habits in
            let scraper = try await habits.user()
            let api = habits.api(scraper)
            func upload(_ start: Int, _ count: Int) async throws -> Answer<HabitsOperations.UploadContacts.Output> {
                let contacts = (start..<start + count).map { Schemas.ContactsUpload.ContactsPayloadPayload(phone: "+1555\(String(format: "%07d", $0))") }
                return try await answer { try await api.uploadContacts(body: .json(.init(contacts: contacts))) }
            }
            // Over the per-upload limit: 422 before anything else.
            #expect(try await upload(0, 2001).status == 422)
            // 2000 + 2000 numbers fit the day's 5000; the next 2000 do not.
            #expect(try await upload(0, 2000).status == 200)
            #expect(try await upload(2000, 2000).status == 200)
            let bulk = try await upload(4000, 2000)
            #expect(try bulk.status == 429 && bulk.code == "contact_quota_exceeded" && (try bulk.output.tooManyRequests.headers.retryAfter) != nil, "\(bulk.body)")
            let stored = try await habits.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM contact_hashes WHERE user_id = \(scraper.id)").collect()[0].decode(Int.self)
            }
            #expect(stored == 2000, "the refused upload stored nothing (the set is still the second upload's)")
            // Uploads per day: the third small one fits, the fourth does not.
            #expect(try await upload(0, 1).status == 200)
            #expect(try await upload(1, 1).code == "contact_quota_exceeded")
            // Match reads.
            for _ in 0..<2 { #expect(try await answer { try await api.listContactMatches() }.status == 200) }
            #expect(try await answer { try await api.listContactMatches() }.status == 429)
        }
    }
}
