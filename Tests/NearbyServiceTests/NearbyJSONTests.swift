import ColonyModels
import ColonyTesting
import Foundation
import Testing
@testable import NearbyService

/// The nearby list's types, as the service has them (generated from its document).
private typealias List = Components.Schemas.NearbyList
private typealias User = Components.Schemas.NearbyUser

@Suite("Nearby: hand-written JSON")
struct NearbyJSONTests {
    @Test("a nearby list (the document's types) is written byte for byte as ColonyJSON's encoder writes it")
    func nearbyList() throws {
        let tricky = writerSampleText
        let everything = User(userId: UUID().lowercased, name: tricky, age: 27, school: "TU \"Berlin\"", bio: tricky,
                              socialLinks: .init(instagram: "@a.b", snapchat: "snap-1", tiktok: "@t_t", linkedin: "in-x", youtube: "@yt", x: "https://x.com/a?b=c&d=\"e\"", other: "https://o.example/"),
                              photoUrl: "https://files.example/storage/v1/object/public/profile-photos/a/b", distanceFeet: 480, distanceMiles: 480.0 / 5280,
                              distanceText: "480 ft", position: .init(latitude: 52.520008, longitude: 13.404954))
        let bare = User(userId: UUID().lowercased, name: "", age: nil, school: nil, bio: nil, socialLinks: .init(), photoUrl: nil, distanceFeet: 0,
                        distanceMiles: 0, distanceText: "nearby", position: .init(latitude: -0.000001, longitude: 179.99999999999997))
        let whole = User(userId: UUID().lowercased, name: "Whole", age: 0, school: nil, bio: "", socialLinks: .init(x: "@x"), photoUrl: nil, distanceFeet: 5280,
                         distanceMiles: 1, distanceText: "1 mi", position: .init(latitude: 1e-7, longitude: -1e21))
        let lists = [
            List(sharing: false, radiusFeet: 500, users: []),
            List(sharing: true, radiusFeet: 5280, users: [everything, bare, whole]),
        ]
        for list in lists {
            let difference = try writerDifference(list)
            #expect(difference == nil, "\(difference ?? "")")
        }
        for user in [everything, bare, whole] {
            #expect(try writerDifference(user) == nil)
        }
    }

    @Test("a distance or position that is not a number fails as the encoder fails")
    func notANumber() {
        for (miles, latitude) in [(Double.nan, 1.0), (1.0, Double.infinity)] {
            let broken = List(sharing: true, radiusFeet: 500, users: [User(userId: UUID().lowercased, name: "A", socialLinks: .init(), distanceFeet: 1,
                                                                          distanceMiles: miles, distanceText: "1 ft", position: .init(latitude: latitude, longitude: 0))])
            #expect(throws: (any Error).self) { try ColonyJSON.encode(broken) }
            #expect(throws: (any Error).self) { try ColonyJSON.encoder().encode(broken) }
        }
    }
}
