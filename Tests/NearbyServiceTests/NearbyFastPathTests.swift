import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NearbyAPI
import NIOCore
import OpenAPIRuntime
import Testing

/// The nearby list's fast path (`NearbyAPI.fastPaths`) against the generated route it stands in
/// for: the same requests, good and bad, to the service and to a twin with fast paths off, on the
/// same data, answer the same status, `Content-Type` and bytes.
@Suite("Nearby: the fast path of the nearby list")
struct NearbyFastPathTests {
    @Test("GET /nearby/v1/nearby answers byte for byte as the generated route")
    func listMatchesGeneratedRoute() async throws {
        // Exact positions: the privacy offset is drawn afresh per answer, which two routes would not share.
        try await withRunningNearby(settings: .exact) { nearby in
            let origin = (40.7128, -74.006)
            let me = try await nearby.user(name: "Me", at: origin)
            let hidden = try await nearby.user(name: "Hidden", sharing: false)
            let away = try await nearby.user(name: "Away", at: (41.0, -74.5))
            // Every kind of card: full profiles with text that needs escaping, a photo, bare ones, at
            // distances from a few feet to the edge of the largest radius.
            var placed: [RunningService.User] = []
            for (index, feet) in [3.0, 40, 120, 499, 700, 2_500, 5_000].enumerated() {
                let person = try await nearby.user(name: "Person \(index) \"quoted\" / é 🚀 \u{2028}", at: try await nearby.point(from: origin, feet: feet, azimuth: Double(index) * 47))
                if index.isMultiple(of: 2) {
                    _ = try await nearby.api(person).updateProfile(body: .json(.init(
                        bio: "line one\nline \"two\" \\ tab\t", school: "School / \(index)", birthday: "199\(index)-02-2\(index)",
                        socialLinks: .init(instagram: "@person.\(index)", linkedin: "person-\(index)", x: "https://x.com/p\(index)?a=1&b=2")))).ok
                }
                placed.append(person)
            }
            let people = placed
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 32)
            _ = try await nearby.api(people[1]).setProfilePhoto(body: .png(HTTPBody(png))).ok

            let first = try await nearby.service.request(.GET, "/nearby", as: me)
            #expect(first.status == 200 && (first.body["users"]?.arrayValue?.count ?? 0) >= 4, "\(first.body)")
            let paths = [
                "/nearby", "/nearby?radius_feet=5280", "/nearby?radius_feet=1", "/nearby?limit=1", "/nearby?limit=500&radius_feet=5000",
                "/nearby?radius_feet=0", "/nearby?radius_feet=5281", "/nearby?radius_feet=-5", "/nearby?limit=0", "/nearby?limit=501",
                "/nearby?limit=abc", "/nearby?radius_feet=500.0", "/nearby?limit=", "/nearby?radius_feet=%2B5", "/nearby?limit=1e2",
                // What the fast path leaves to the generated route: a bare or empty query item, a repeated or encoded value, an unknown one.
                "/nearby?limit", "/nearby?limit=5&&radius_feet=600", "/nearby?limit=5&limit=6", "/nearby?limit=%35", "/nearby?utm=x&limit=3",
            ]
            try await nearby.withTwin(settings: .exact, configure: { $0.fastPaths = .off }) { generated in
                var compared = 0
                for (user, label) in [(me, "me"), (hidden, "not sharing"), (away, "far away"), (people[0], "nearest")] {
                    for path in paths {
                        let difference = try await nearby.service.differenceFromGenerated(.GET, path, as: user, body: nil, contentType: nil, generated: generated)
                        #expect(difference == nil, "\(label): \(difference ?? "")")
                        compared += 1
                    }
                }
                for headers in [[], [("Accept", "application/json")], [("Accept", "*/*")], [("Accept", "text/html")], [("Accept", "application/json, text/plain")]] as [[(String, String)]] {
                    for user in [me, nil] as [RunningService.User?] {
                        let difference = try await nearby.service.differenceFromGenerated(.GET, "/nearby?limit=3", as: user, body: nil, contentType: nil,
                                                                                             headers: headers, generated: generated)
                        #expect(difference == nil, "\(headers): \(difference ?? "")")
                    }
                }
                #expect(compared == 4 * paths.count)
            }
        }
    }
}
