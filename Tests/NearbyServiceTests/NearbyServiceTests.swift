import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import OpenAPIRuntime
import NIOHTTP1
import Testing
@testable import NearbyService

/// The nearby service from the outside: real Postgres with PostGIS, real broker, socialspot tokens.
@Suite("Nearby service")
struct NearbyServiceTests {
    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningNearby { running in
            let user = try await running.service.user()
            #expect(try await running.service.openAPIProblems(NearbyService.openAPIDocument, as: user) == [])
        }
    }

    @Test("a first request racing auth's registration gets the profile auth's event created, not 401 account_deleted")
    func firstRequestRacingRegistration() async throws {
        try await withRunningNearby { running in
            try await running.service.withDatabase { database in
                let userID = UUID()
                let store = ProfileStore(logger: TestEnvironment.logger)
                // The event's insert holds the row uncommitted while the request's statement starts:
                // the request waits on the conflict, and only then does the event's transaction commit.
                try await database.withDedicatedConnection { event in
                    try await event.query("BEGIN", logger: TestEnvironment.logger)
                    try await event.query("INSERT INTO profiles (id, name) VALUES (\(userID), 'From auth')", logger: TestEnvironment.logger)
                    try await withThrowingTaskGroup(of: StoredProfile?.self) { group in
                        group.addTask {
                            try await database.withDedicatedConnection { request in try await store.ensure(userID, on: request) }
                        }
                        // Committed only once the request's insert waits for it (a lock wait on the row).
                        do {
                            try await waitUntil(timeout: .seconds(60)) {
                                let waiting = try await database.query("""
                                    SELECT count(*)::int FROM pg_stat_activity
                                    WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO profiles (id%'
                                    """).collect()
                                return try waiting.first?.decode(Int.self) == 1
                            }
                        } catch {
                            // Let the waiting request go, or the group would wait for it forever.
                            try await event.query("ROLLBACK", logger: TestEnvironment.logger)
                            throw error
                        }
                        try await event.query("COMMIT", logger: TestEnvironment.logger)
                        let profile = try await group.next() ?? nil
                        #expect(profile?.name == "From auth", "the request got \(String(describing: profile))")
                    }
                }
            }
        }
    }

    /// Boundary cases at 499 ft (in) and 501 ft (out) around an origin, along several bearings.
    func boundaries(_ nearby: RunningNearby, origin: (Double, Double), azimuths: [Double]) async throws {
        let me = try await nearby.user(name: "Me", at: origin)
        var expectedIn: [String] = []
        for (index, azimuth) in azimuths.enumerated() {
            let inside = try await nearby.point(from: origin, feet: 499, azimuth: azimuth)
            let outside = try await nearby.point(from: origin, feet: 501, azimuth: azimuth)
            _ = try await nearby.user(name: "in\(index)", at: inside)
            _ = try await nearby.user(name: "out\(index)", at: outside)
            expectedIn.append("in\(index)")
        }
        let seen = try await nearby.names(seenBy: me)
        #expect(Set(seen) == Set(expectedIn), "origin \(origin): \(seen)")
        for user in try await nearby.list(seenBy: me).users {
            #expect(user.distanceFeet == 500, "499 ft rounds to 500 ft on the card: \(user)")
            #expect(user.distanceText == "500 ft")
        }
    }

    @Test("499 ft is in and 501 ft is out: mid-latitudes, across the antimeridian, near both poles (positions shown exactly, as only a test may)")
    func boundaryDistances() async throws {
        try await withRunningNearby(settings: .exact) { nearby in
            try await boundaries(nearby, origin: (40.7128, -74.0060), azimuths: [0, 90, 225])
        }
        try await withRunningNearby(settings: .exact) { nearby in
            try await boundaries(nearby, origin: (0.0, 179.9997), azimuths: [90, 270])
            try await boundaries(nearby, origin: (-16.5, -179.9998), azimuths: [270, 45])
        }
        try await withRunningNearby(settings: .exact) { nearby in
            try await boundaries(nearby, origin: (89.9996, 10), azimuths: [0, 180])
            try await boundaries(nearby, origin: (-89.9997, -120), azimuths: [180, 90])
        }
    }

    @Test("turning sharing off removes me from others' results at once, and I see nobody")
    func sharingOff() async throws {
        try await withRunningNearby { nearby in
            let origin = (37.7749, -122.4194)
            let alice = try await nearby.user(name: "Alice", at: origin)
            let bob = try await nearby.user(name: "Bob", at: try await nearby.point(from: origin, feet: 100, azimuth: 10))
            #expect(try await nearby.names(seenBy: alice) == ["Bob"])
            #expect(try await nearby.names(seenBy: bob) == ["Alice"])

            let off = try await nearby.api(bob).updateSettings(body: .json(.init(shareLocation: false))).ok.body.json
            #expect(off.shareLocation == false)
            #expect(try await nearby.names(seenBy: alice).isEmpty)
            let bobsView = try await nearby.list(seenBy: bob)
            #expect(bobsView.sharing == false && bobsView.users.isEmpty)
            let report = try await answer { try await nearby.api(bob).reportLocation(body: .json(.init(latitude: 37.7749, longitude: -122.4194))) }
            #expect(report.status == 409 && report.code == "sharing_off")
            #expect(try await answer { try await nearby.api(alice).getNearbyUser(path: .init(userId: bob.id.lowercased)) }.status == 404)

            let events = try await nearby.service.events(of: .nearby) { events in events.contains { $0.type == .locationRemoved } }
            let removed = try #require(events.first { $0.type == .locationRemoved }).decode(LocationRemoved.self).payload
            #expect(removed.userId == bob.id && removed.reason == .sharingOff && removed.visibleTo == [alice.id], "only those in range hear of it")
        }
    }

    @Test("a location older than the TTL counts for nothing, and the job deletes it with an event")
    func locationTTL() async throws {
        try await withRunningNearby(settings: NearbySettings(locationTTLSeconds: 60, jobInterval: .seconds(1), maxPhotoBytes: 64 << 10)) { nearby in
            let origin = (51.5074, -0.1278)
            let alice = try await nearby.user(name: "Alice", at: origin)
            let bob = try await nearby.user(name: "Bob", at: try await nearby.point(from: origin, feet: 200, azimuth: 90))
            #expect(try await nearby.names(seenBy: alice) == ["Bob"])
            // Bob last reported 61 s ago: older than the TTL.
            _ = try await nearby.service.withDatabase { database in
                try await database.query("UPDATE locations SET updated_at = now() - interval '61 seconds' WHERE user_id = \(bob.id)")
            }
            #expect(try await nearby.names(seenBy: alice).isEmpty, "Bob's point is stale")
            let events = try await nearby.service.events(of: .nearby) { events in
                events.contains { (try? $0.decode(LocationRemoved.self).payload.userId) == bob.id }
            }
            let removed = try #require(events.compactMap { try? $0.decode(LocationRemoved.self).payload }.first { $0.userId == bob.id })
            #expect(removed.reason == .expired)
            let rows = try await nearby.service.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM locations WHERE user_id = \(bob.id)").collect()[0].decode(Int.self)
            }
            #expect(rows == 0)
        }
    }

    @Test("nobody learns another's precise coordinates: not in answers, not in events")
    func noPreciseCoordinates() async throws {
        try await withRunningNearby { nearby in
            let precise = (48.8583701, 2.2944813)
            let viewer = try await nearby.user(name: "Viewer", at: (48.8584, 2.2945))
            let hidden = try await nearby.user(name: "Hidden", at: precise)
            // Raw: the answers' bytes are what is checked.
            let list = try await nearby.service.request(.GET, "/nearby", as: viewer)
            let card = try #require(list.body["users"]?.arrayValue?.first)
            let text = String(buffer: list.bytes)
            #expect(!text.contains("48.8583701") && !text.contains("2.2944813") && !text.contains("48.85837") && !text.contains("2.29448"))
            let latitude = try #require(card["position"]?["latitude"]?.doubleValue), longitude = try #require(card["position"]?["longitude"]?.doubleValue)
            #expect(latitude != precise.0 && longitude != precise.1)
            // The offset (100–150 ft), give or take half a 50 ft cell.
            let feet = hypot((latitude - precise.0) * 111_320, (longitude - precise.1) * 111_320 * cos(precise.0 * .pi / 180)) / 0.3048
            #expect((100 - 36...150 + 36).contains(feet), "shown \(feet) ft from the reported position")
            let single = try await nearby.service.request(.GET, "/users/\(hidden.id)", as: viewer)
            #expect(single.status == 200 && !String(buffer: single.bytes).contains("48.8583701"))
            let mine = try await nearby.service.request(.PUT, "/location", as: hidden, json: ["latitude": precise.0, "longitude": precise.1])
            #expect(!String(buffer: mine.bytes).contains("48.8583701"))

            let events = try await nearby.service.events(of: .nearby) { events in events.filter { $0.type == .locationUpdated }.count >= 3 }
            for event in events {
                let raw = String(decoding: event.bytes, as: UTF8.self)
                #expect(!raw.contains("48.8583701") && !raw.contains("2.2944813"), "\(raw)")
            }
        }
    }

    @Test("a block hides the pair from each other, both ways, until lifted")
    func blocking() async throws {
        try await withRunningNearby { nearby in
            let origin = (35.6762, 139.6503)
            let alice = try await nearby.user(name: "Alice", at: origin)
            let bob = try await nearby.user(name: "Bob", at: try await nearby.point(from: origin, feet: 50, azimuth: 0))
            let carol = try await nearby.user(name: "Carol", at: try await nearby.point(from: origin, feet: 80, azimuth: 90))
            #expect(Set(try await nearby.names(seenBy: alice)) == ["Bob", "Carol"])
            let alices = nearby.api(alice)
            let blocked = try await alices.blockUser(body: .json(.init(userId: bob.id.lowercased))).created.body.json
            #expect(blocked.count == 1)
            #expect(try await nearby.names(seenBy: alice) == ["Carol"])
            #expect(try await nearby.names(seenBy: bob) == ["Carol"], "the blocked side cannot see the blocker either")
            // Moves are announced only to those who may see them: Carol, not Alice.
            try await nearby.move(bob, to: try await nearby.point(from: origin, feet: 55, azimuth: 0))
            let events = try await nearby.service.events(of: .nearby) { events in
                events.compactMap { try? $0.decode(LocationUpdated.self).payload }.filter { $0.userId == bob.id }.count >= 2
            }
            let lastMove = try #require(events.compactMap { try? $0.decode(LocationUpdated.self).payload }.last { $0.userId == bob.id })
            #expect(lastMove.visibleTo == [carol.id])
            #expect(try await answer { try await nearby.api(bob).getNearbyUser(path: .init(userId: alice.id.lowercased)) }.status == 404)
            let selfBlock = try await answer { try await alices.blockUser(body: .json(.init(userId: alice.id.lowercased))) }
            #expect(selfBlock.status == 409 && selfBlock.code == "cannot_block_self")
            #expect(try await answer { try await alices.unblockUser(path: .init(userId: bob.id.lowercased)) }.status == 204)
            #expect(Set(try await nearby.names(seenBy: bob)) == ["Alice", "Carol"])
            #expect(try await alices.listBlocks().ok.body.json.isEmpty)
        }
    }

    @Test("bad coordinates (NaN, infinite, out of range, missing) get 422 and write nothing")
    func badCoordinates() async throws {
        try await withRunningNearby { nearby in
            let user = try await nearby.user(name: "Pat")
            // Raw: bodies the typed client cannot send (NaN, Infinity, a string, a missing field).
            for body in [#"{"latitude": NaN, "longitude": 0}"#, #"{"latitude": 0, "longitude": Infinity}"#, #"{"latitude": 90.0001, "longitude": 0}"#,
                         #"{"latitude": -91, "longitude": 0}"#, #"{"latitude": 0, "longitude": 180.5}"#, #"{"latitude": 0, "longitude": -181}"#,
                         #"{"latitude": 10, "longitude": 10, "accuracy": -1}"#, #"{"latitude": 10}"#, #"{"latitude": "north", "longitude": 1}"#] {
                let reply = try await nearby.service.request(.PUT, "/location", as: user, raw: body)
                #expect(reply.status == 422, "\(body): \(reply.status) \(reply.body)")
            }
            let rows = try await nearby.service.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM locations").collect()[0].decode(Int.self)
            }
            #expect(rows == 0)
            #expect(try await answer { try await nearby.api(user).listNearby(query: .init(radiusFeet: 0)) }.status == 422)
            #expect(try await answer { try await nearby.api(user).listNearby(query: .init(radiusFeet: 999_999)) }.status == 422)
        }
    }

    @Test("profile: public card with age (never the birthday), validated social links, photo")
    func profile() async throws {
        try await withRunningNearby { nearby in
            let origin = (52.52, 13.405)
            let me = try await nearby.user(name: "Me", at: origin)
            let other = try await nearby.user(name: "Other", at: try await nearby.point(from: origin, feet: 30, azimuth: 0))
            let others = nearby.api(other), mine = nearby.api(me)
            let edited = try await others.updateProfile(body: .json(.init(
                bio: "Coffee and climbing", school: "TU Berlin", birthday: "2000-02-29",
                socialLinks: .init(instagram: "@other.climbs", linkedin: "other-person", x: "https://x.com/other", other: "https://other.example")
            ))).ok.body.json
            #expect(edited.birthday == "2000-02-29", "the owner sees the birthday")
            // Raw: that the answer has no birthday at all is what is checked.
            let card = try await nearby.service.request(.GET, "/users/\(other.id)", as: me)
            #expect(card.status == 200 && card.body["birthday"] == nil && card.body["age"]?.intValue ?? 0 >= 26)
            #expect(card.body["school"]?.stringValue == "TU Berlin" && card.body["social_links"]?["instagram"]?.stringValue == "@other.climbs")

            let badLinks: [Schemas.SocialLinksUpdate] = [.init(instagram: "https://evil.example/x"), .init(x: "way_too_long_handle_for_x"),
                                                         .init(other: "javascript:alert(1)"), .init(snapchat: "1abc")]
            for links in badLinks {
                let bad = try await answer { try await others.updateProfile(body: .json(.init(socialLinks: links))) }
                #expect(bad.status == 422, "\(links): \(bad.body)")
            }
            let young = try await answer { try await others.updateProfile(body: .json(.init(birthday: LocalDate.utcDay(of: Date()).adding(days: -365).description))) }
            #expect(young.status == 422)
            // Raw: null clears, which the typed client cannot send (it leaves nil out).
            let cleared = try await nearby.service.request(.PATCH, "/profile", as: other, json: ["bio": NSNull()])
            #expect(cleared.status == 200 && cleared.body["bio"] == nil && cleared.body["school"]?.stringValue == "TU Berlin")

            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 32)
            let photo = try await others.setProfilePhoto(body: .png(HTTPBody(png))).ok.body.json
            let url = try #require(photo.photoUrl)
            // Raw: storage's URLs are not in the document.
            #expect(try await nearby.service.request(.GET, url, as: nil).status == 200)
            // Someone who saw the card, then was blocked, keeps that URL: it dies with the next photo,
            // and the new one cannot be found from the user's id.
            #expect(try await answer { try await others.blockUser(body: .json(.init(userId: me.id.lowercased))) }.status == 201)
            let newPhoto = try await others.setProfilePhoto(body: .png(HTTPBody(png))).ok.body.json
            let newURL = try #require(newPhoto.photoUrl)
            #expect(newURL != url)
            #expect(try await nearby.service.request(.GET, newURL, as: nil).status == 200)
            #expect(try await nearby.service.request(.GET, url, as: me).status == 404, "the old picture key after a change")
            let byID = "\(nearby.service.base)/storage/v1/object/public/profile-photos/\(other.id.uuidString.lowercased())"
            #expect(try await nearby.service.request(.GET, byID, as: me).status == 404)
            #expect(try await answer { try await others.unblockUser(path: .init(userId: me.id.lowercased)) }.status == 204)
            // Raw: a GIF, a type the document (and so the typed client) does not offer.
            let wrong = try await nearby.service.request(.PUT, "/profile/photo", as: other, bytes: ByteBuffer(string: "GIF89a....."), contentType: "image/gif")
            #expect(wrong.status == 422)
            let big = png + [UInt8](repeating: 0, count: 70 << 10)
            #expect(try await answer { try await others.setProfilePhoto(body: .png(HTTPBody(big))) }.status == 422)

            let settings = try await mine.updateSettings(body: .json(.init(darkMode: true, satelliteMap: true))).ok.body.json
            #expect(settings.darkMode && settings.satelliteMap && settings.shareLocation)
        }
    }

    @Test("user_deleted erases the profile, its location (others drop it) and its photo")
    func accountDeleted() async throws {
        try await withRunningNearby { nearby in
            let origin = (-33.8688, 151.2093)
            let viewer = try await nearby.user(name: "Viewer", at: origin)
            let gone = try await nearby.user(name: "Gone", at: try await nearby.point(from: origin, feet: 60, azimuth: 45))
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]
            _ = try await nearby.api(gone).setProfilePhoto(body: .png(HTTPBody(png))).ok
            #expect(try await nearby.names(seenBy: viewer) == ["Gone"])
            try await nearby.service.publishAuthEvent(UserDeleted(userId: gone.id, app: .socialspot, deletedAt: Date()), user: gone.id)
            try await waitUntil { try await answer { try await nearby.api(gone).getProfile() }.status == 401 }
            #expect(try await nearby.names(seenBy: viewer).isEmpty)
            let files = FileManager.default.enumerator(atPath: nearby.storageRoot)?.allObjects.compactMap { $0 as? String } ?? []
            #expect(!files.contains { $0.contains(gone.id.uuidString.lowercased()) }, "\(files)")
            let events = try await nearby.service.events(of: .nearby) { events in events.contains { $0.type == .locationRemoved } }
            #expect(try events.first { $0.type == .locationRemoved }?.decode(LocationRemoved.self).payload.reason == .accountDeleted)
        }
    }
}

@Suite("Nearby: rules without HTTP")
struct NearbyRulesTests {
    @Test("rounded positions stay within half a 50 ft cell and wrap at the antimeridian")
    func rounding() {
        for (latitude, longitude) in [(40.7128, -74.006), (0.0, 179.99999), (89.99999, 45.0), (-60.1, -179.99995)] {
            let rounded = NearbyRules.approximate(latitude: latitude, longitude: longitude)
            #expect((-90...90).contains(rounded.latitude) && (-180...180).contains(rounded.longitude))
            #expect(abs(rounded.latitude - latitude) * 111_320 <= 7.7)
        }
    }

    @Test("distances: feet to 10 ft under a tenth of a mile, then miles")
    func distances() {
        #expect(NearbyRules.distance(meters: 152.1).text == "500 ft")
        #expect(NearbyRules.distance(meters: 1).feet == 10)
        #expect(NearbyRules.distance(meters: 1609.344).text == "1.0 mi")
    }

    @Test("ages and coordinates")
    func ages() throws {
        let today = LocalDate(year: 2026, month: 2, day: 28)!
        #expect(NearbyRules.age(birthday: LocalDate(year: 2000, month: 2, day: 29)!, today: today) == 25)
        #expect(NearbyRules.age(birthday: LocalDate(year: 2000, month: 2, day: 28)!, today: today) == 26)
        #expect(throws: ValidationErrors.self) { try NearbyRules.coordinates(latitude: .nan, longitude: 0, accuracy: nil) }
        #expect(throws: ValidationErrors.self) { try NearbyRules.coordinates(latitude: 0, longitude: 180.0001, accuracy: nil) }
        try NearbyRules.coordinates(latitude: -90, longitude: 180, accuracy: 5)
    }

    @Test("social links: the handler's pattern is the document's, and it reads as the old rules did")
    func socialLinks() throws {
        let root = try JSONSerialization.jsonObject(with: Data(NearbyService.openAPIDocument.json.utf8)) as? [String: Any]
        let schemas = (root?["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let links = ((schemas?["SocialLinksUpdate"] as? [String: Any])?["properties"] as? [String: [String: Any]]) ?? [:]
        for platform in NearbyRules.Platform.allCases {
            #expect(links[platform.rawValue]?["pattern"] as? String == "^" + platform.linkPattern + "$", "\(platform)")
        }
        #expect(try NearbyRules.socialLink("  @ada.lovelace ", platform: .instagram) == "@ada.lovelace")
        #expect(try NearbyRules.socialLink("https://WWW.Instagram.com/ada?x=1", platform: .instagram) == "https://WWW.Instagram.com/ada?x=1")
        #expect(try NearbyRules.socialLink("https://youtu.be/abc", platform: .youtube) == "https://youtu.be/abc")
        #expect(try NearbyRules.socialLink(" \u{2003} ", platform: .x) == nil)
        #expect(try NearbyRules.socialLink("https://example.org/me", platform: .other) == "https://example.org/me")
        for (value, platform) in [("https://evil.com/instagram.com", NearbyRules.Platform.instagram), ("http://x.com/a", .x), ("@ada", .other),
                                  ("https://instagram.com.evil.org", .instagram), ("ab", .snapchat), (String(repeating: "a", count: 201), .other)] {
            #expect(throws: APIError.self, "\(value)") { try NearbyRules.socialLink(value, platform: platform) }
        }
    }
}
