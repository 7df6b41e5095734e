import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NearbyService
import Testing
@testable import RealtimeService

@Suite("Realtime: SocialSpot as the app subscribes", .serialized)
struct RealtimeSocialSpotTests {
    @Test("the official Python client subscribed as SocialSpot's app (locations and profiles, *) sees INSERT, UPDATE and DELETE as people share, move in and out of range, edit their card, stop sharing and expire")
    func conformance() async throws {
        // Locations expire after 30 s (checked every second); the speed check is lifted, since the
        // script moves people a kilometre at a time.
        let settings = NearbySettings(locationTTLSeconds: 30, jobInterval: .seconds(1), maxPhotoBytes: 64 << 10, maxSpeedMetersPerSecond: 1_000_000)
        try await withRealtimeAndNearby(settings: settings) { realtime, nearby in
            var environment: [String: String?] = [
                "COLONY_REALTIME_URL": "\(realtime.base)/realtime/v1",
                "COLONY_API_KEY": try await realtime.tokens.apiKey(app: .socialspot),
                "COLONY_NEARBY_URL": nearby.apiURL,
            ]
            for name in ["A", "B", "C"] {
                let user = try await nearby.user()
                _ = try await nearby.nearbyAPI(as: user).updateProfile(body: .json(.init(name: "User \(name)"))).ok
                environment["COLONY_USER_\(name)"] = user.id.lowercased
                environment["COLONY_TOKEN_\(name)"] = user.token
            }
            let (status, output) = try await PythonClient.run([PythonClient.path("Tests/RealtimeClientTests/socialspot_conformance.py")], environment: environment)
            #expect(status == 0, "SocialSpot conformance failed:\n\(output)")
        }
    }
}
