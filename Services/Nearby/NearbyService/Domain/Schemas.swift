import ColonyModels
import Foundation

// What the domain answers with: the document's own types (Generated/), under the names the
// domain uses. The shared models (cards and positions in events) become them here.

/// My own profile, with everything (birthday and settings included).
typealias MyProfile = Components.Schemas.MyProfile
/// A card in the nearby list: the public profile, the rounded distance, and the shown position.
typealias NearbyUser = Components.Schemas.NearbyUser
/// Whether I am sharing with a fresh position (when not, the list is empty: the seed's rule).
typealias NearbyList = Components.Schemas.NearbyList
typealias LocationReport = Components.Schemas.LocationReport
typealias BlockEntry = Components.Schemas.Block

extension Components.Schemas.SocialLinks {
    init(_ links: SocialLinks) {
        self.init(instagram: links.instagram, snapchat: links.snapchat, tiktok: links.tiktok, linkedin: links.linkedin,
                  youtube: links.youtube, x: links.x, other: links.other)
    }
}

extension Components.Schemas.ApproximatePosition {
    init(_ position: ApproximatePosition) {
        self.init(latitude: position.latitude, longitude: position.longitude)
    }
}

// The nearby list is the app's busiest read and the heaviest answer of any service: written
// straight into bytes (ColonyJSONWritable) by its fast path (`NearbyAPI+ListFastPath.swift`), byte
// for byte what the generated route's encoder writes for it, keys in byte order and absent
// optionals left out (NearbyJSONTests holds the writers to ColonyJSON's encoder,
// NearbyFastPathTests the fast path's answers to the generated route's).
extension Components.Schemas.NearbyList: ColonyJSONWritable {
    var jsonCapacity: Int { 64 + users.count * 640 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("radius_feet"); json.int(radiusFeet)
        json.key("sharing"); json.bool(sharing)
        json.key("users"); try json.array(users) { try $1.writeJSON(to: &$0) }
        json.raw("}")
    }
}

extension Components.Schemas.NearbyUser: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.member("age", age) { $0.int($1) }
        json.member("bio", bio) { $0.string($1) }
        json.key("distance_feet"); json.int(distanceFeet)
        json.key("distance_miles"); try json.double(distanceMiles)
        json.key("distance_text"); json.string(distanceText)
        json.key("name"); json.string(name)
        json.member("photo_url", photoUrl) { $0.string($1) }
        json.key("position"); try position.writeJSON(to: &json)
        json.member("school", school) { $0.string($1) }
        json.key("social_links"); socialLinks.writeJSON(to: &json)
        json.key("user_id"); json.string(userId)
        json.raw("}")
    }
}

extension Components.Schemas.ApproximatePosition: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("latitude"); try json.double(latitude)
        json.key("longitude"); try json.double(longitude)
        json.raw("}")
    }
}

extension Components.Schemas.SocialLinks: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.member("instagram", instagram) { $0.string($1) }
        json.member("linkedin", linkedin) { $0.string($1) }
        json.member("other", other) { $0.string($1) }
        json.member("snapchat", snapchat) { $0.string($1) }
        json.member("tiktok", tiktok) { $0.string($1) }
        json.member("x", x) { $0.string($1) }
        json.member("youtube", youtube) { $0.string($1) }
        json.raw("}")
    }
}
