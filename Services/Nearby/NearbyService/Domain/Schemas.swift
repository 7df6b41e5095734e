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
