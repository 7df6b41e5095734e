import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HTTPTypes
import Testing
@testable import NearbyService

/// SocialSpot cannot be used to locate a person: the trilateration attack performed against the
/// running service, the rate limits and the speed check, and how moves change who sees whom.
@Suite("Nearby: locating someone", .serialized)
struct NearbyPrivacyTests {
    /// Meters east and north of `origin` (small distances).
    static func local(_ point: (Double, Double), from origin: (Double, Double)) -> (x: Double, y: Double) {
        ((point.1 - origin.1) * 111_320 * cos(origin.0 * .pi / 180), (point.0 - origin.0) * 111_320)
    }

    /// The point whose distances to the anchors best fit the measured ones (Gauss–Newton on the
    /// plane, from `start`): the attacker's estimate.
    static func trilaterate(_ samples: [(x: Double, y: Double, distance: Double)], start: (x: Double, y: Double)) -> (x: Double, y: Double) {
        var (x, y) = start
        for _ in 0..<100 {
            var (a11, a12, a22, b1, b2) = (0.0, 0.0, 0.0, 0.0, 0.0)
            for sample in samples {
                let dx = x - sample.x, dy = y - sample.y
                let range = max(hypot(dx, dy), 0.01)
                let (jx, jy) = (dx / range, dy / range)
                let residual = range - sample.distance
                a11 += jx * jx; a12 += jx * jy; a22 += jy * jy
                b1 += jx * residual; b2 += jy * residual
            }
            let determinant = a11 * a22 - a12 * a12
            guard abs(determinant) > 1e-9 else { break }
            x -= (a22 * b1 - a12 * b2) / determinant
            y -= (a11 * b2 - a12 * b1) / determinant
        }
        return (x, y)
    }

    /// The procedure: the attacker reports 60 spoofed positions around where the target
    /// appears and, after each, reads the target's card and its `distance_feet`; then solves for
    /// the point that fits all 60 distances. Returns how far that ends from the target, in feet.
    func trilaterationError(_ nearby: RunningNearby, target truth: (Double, Double)) async throws -> Double {
        let target = try await nearby.user(name: "Target", at: truth)
        let attacker = try await nearby.user(name: "Attacker", at: try await nearby.point(from: truth, feet: 300, azimuth: 200))
        let attackers = nearby.api(attacker)
        let first = try await attackers.getNearbyUser(path: .init(userId: target.id.lowercased)).ok.body.json
        let shown = (first.position.latitude, first.position.longitude)
        var samples: [(x: Double, y: Double, distance: Double)] = []
        var generator = SystemRandomNumberGenerator()
        while samples.count < 60 {
            let spoofed = NearbyRules.moved(latitude: shown.0, longitude: shown.1,
                                            north: Double.random(in: -120...120, using: &generator), east: Double.random(in: -120...120, using: &generator))
            try await nearby.move(attacker, to: (spoofed.latitude, spoofed.longitude))
            let card = try await answer { try await attackers.getNearbyUser(path: .init(userId: target.id.lowercased)) }
            guard card.status == 200, let feet = try? Double(card.output.ok.body.json.distanceFeet) else { continue }
            let anchor = Self.local((spoofed.latitude, spoofed.longitude), from: truth)
            samples.append((anchor.x, anchor.y, feet * NearbyRules.metersPerFoot))
        }
        let estimate = Self.trilaterate(samples, start: Self.local(shown, from: truth))
        return hypot(estimate.x, estimate.y) / NearbyRules.metersPerFoot
    }

    @Test("trilateration from 60 spoofed reports and queries ends farther than 50 ft from the person (with exact positions it ends within a few feet)")
    func trilateration() async throws {
        let truth = (40.748_44, -73.985_66)
        // The control: distances from exact positions (what the service did before), the same procedure.
        try await withRunningNearby(settings: .exact) { nearby in
            let error = try await trilaterationError(nearby, target: truth)
            print("trilateration with exact positions: estimate \(Int(error.rounded())) ft from the person")
            #expect(error < 10, "the procedure itself works: \(error) ft")
        }
        // As deployed (rate limits and the speed check lifted, so all 60 samples arrive at once).
        try await withRunningNearby(settings: .unlimited) { nearby in
            let error = try await trilaterationError(nearby, target: truth)
            print("trilateration against the offset, snapped positions: estimate \(Int(error.rounded())) ft from the person")
            #expect(error > 50, "the estimate ends \(error) ft from the person")
        }
    }

    @Test("reports are rate-limited and implausible jumps refused; queries per viewer and lookups per viewer and person are capped")
    func limits() async throws {
        let settings = NearbySettings(maxPhotoBytes: 64 << 10, reportQuota: Quota(5, perSeconds: 3600), queryQuota: Quota(8, perSeconds: 3600),
                                      targetQuota: Quota(3, perSeconds: 3600))
        // Quotas count in fixed windows aligned to the clock (`Quotas`): a CI run whose reports
        // straddled a minute's end saw the last one counted afresh. The counted requests start well
        // inside an hour's window.
        let intoHour = Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 3600)
        if intoHour > 3300 { try await Task.sleep(for: .seconds(3601 - intoHour)) }
        try await withRunningNearby(settings: settings) { nearby in
            let origin = (47.6062, -122.3321)
            let me = try await nearby.user(name: "Me", at: origin)  // report 1
            let other = try await nearby.user(name: "Other", at: try await nearby.point(from: origin, feet: 100, azimuth: 30))
            // 5 km a second later: nobody travels that fast.
            let far = try await nearby.point(from: origin, feet: 16_400, azimuth: 90)
            let mine = nearby.api(me)
            func report(_ position: (Double, Double)) async throws -> Answer<ClientOperations.ReportLocation.Output> {
                try await answer { try await mine.reportLocation(body: .json(.init(latitude: position.0, longitude: position.1))) }
            }
            let jump = try await report(far)
            #expect(jump.status == 409 && jump.code == "implausible_location", "\(jump.body)")
            // A short walk (within the GPS allowance) is fine; then the quota runs out.
            for feet in [60.0, 120, 180, 240] {
                #expect(try await report(try await nearby.point(from: origin, feet: feet, azimuth: 0)).status == 200)
            }
            let over = try await report(origin)
            #expect(over.status == 429 && over.code == "rate_limited" && Int(over.headers[.retryAfter] ?? "") ?? 0 >= 1, "\(over.body)")

            // Lookups of one person: 3 an hour; the list and the cards share 8 an hour.
            let card = { try await answer { try await mine.getNearbyUser(path: .init(userId: other.id.lowercased)) } }
            for _ in 0..<3 { #expect(try await card().status == 200) }
            #expect(try await card().status == 429)
            for _ in 0..<4 { #expect(try await answer { try await mine.listNearby() }.status == 200) }
            let capped = try await answer { try await mine.listNearby() }
            #expect(capped.status == 429 && capped.code == "rate_limited")
            #expect(try await answer { try await nearby.api(other).listNearby() }.status == 200, "another viewer has quota of their own")
        }
    }

    @Test("moves change who sees whom: leaving range hides both (hidden_from, disappeared), coming back shows both, a new sharer gets who is around")
    func visibilityTransitions() async throws {
        try await withRunningNearby(settings: .unlimited) { nearby in
            let origin = (59.3293, 18.0686)
            let alice = try await nearby.user(name: "Alice", at: origin)
            let bob = try await nearby.user(name: "Bob", at: try await nearby.point(from: origin, feet: 100, azimuth: 0))
            try await nearby.move(bob, to: try await nearby.point(from: origin, feet: 3000, azimuth: 0))  // out of range
            try await nearby.move(bob, to: try await nearby.point(from: origin, feet: 150, azimuth: 0))   // back
            let carol = try await nearby.user(name: "Carol", at: try await nearby.point(from: origin, feet: 120, azimuth: 90))
            // Events are keyed by user, so each user's arrive in order (partitions may interleave).
            let events = try await nearby.service.events(of: .nearby) { events in
                let updates = events.compactMap { try? $0.decode(LocationUpdated.self).payload }
                return updates.contains { $0.userId == carol.id } && updates.filter { $0.userId == bob.id }.count >= 3
            }
            let updates = events.compactMap { try? $0.decode(LocationUpdated.self).payload }
            let bobs = updates.filter { $0.userId == bob.id }
            try #require(bobs.count == 3)
            #expect(bobs[0].newlyVisibleTo == [alice.id] && bobs[0].appeared?.map(\.userId) == [alice.id], "Bob starts sharing: Alice sees him, he sees Alice")
            #expect(bobs[1].visibleTo.isEmpty && bobs[1].hiddenFrom == [alice.id] && bobs[1].disappeared == [alice.id], "out of range, both ways")
            #expect(bobs[2].newlyVisibleTo == [alice.id] && bobs[2].appeared?.map(\.userId) == [alice.id], "back in range, both ways")
            let carols = try #require(updates.last { $0.userId == carol.id })
            #expect(Set(carols.appeared?.map(\.userId) ?? []) == [alice.id, bob.id] && Set(carols.newlyVisibleTo ?? []) == [alice.id, bob.id])
            for row in carols.appeared ?? [] {
                let raw = String(decoding: try ColonyJSON.encoder().encode(row), as: UTF8.self)
                #expect(raw.contains("\"user_id\"") && raw.contains("\"updated_at\""))
            }
        }
    }
}
