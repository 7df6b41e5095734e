import Foundation

// SocialSpot's shapes (`socialspot.md`): what other users may see of someone nearby. Precise
// coordinates never leave the nearby service; positions are rounded to about 50 feet.

/// The social accounts a profile links (the seed's list); each a handle or a URL.
public struct SocialLinks: Codable, Sendable, Equatable {
    public var instagram: String?
    public var snapchat: String?
    public var tiktok: String?
    public var linkedin: String?
    public var youtube: String?
    public var x: String?
    public var other: String?

    public init(instagram: String? = nil, snapchat: String? = nil, tiktok: String? = nil, linkedin: String? = nil, youtube: String? = nil, x: String? = nil, other: String? = nil) {
        self.instagram = instagram
        self.snapchat = snapchat
        self.tiktok = tiktok
        self.linkedin = linkedin
        self.youtube = youtube
        self.x = x
        self.other = other
    }
}

/// A position rounded to a grid of about 50 feet, for drawing on a map.
public struct ApproximatePosition: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A row of SocialSpot's `locations` as another user sees it: the shown position (offset and
/// snapped), never the reported one.
public struct LocationRow: Codable, Sendable, Equatable {
    public var userId: UUID
    public var latitude: Double
    public var longitude: Double
    public var updatedAt: Date

    public init(userId: UUID, latitude: Double, longitude: Double, updatedAt: Date) {
        self.userId = userId
        self.latitude = latitude
        self.longitude = longitude
        self.updatedAt = updatedAt
    }
}

/// A user's public card: what the seed's nearby list and profile sheet show (age, never the
/// birthday).
public struct PublicProfile: Codable, Sendable, Equatable {
    public var userId: UUID
    public var name: String
    public var age: Int?
    public var school: String?
    public var bio: String?
    public var socialLinks: SocialLinks
    public var photoUrl: String?

    public init(userId: UUID, name: String, age: Int?, school: String?, bio: String?, socialLinks: SocialLinks, photoUrl: String?) {
        self.userId = userId
        self.name = name
        self.age = age
        self.school = school
        self.bio = bio
        self.socialLinks = socialLinks
        self.photoUrl = photoUrl
    }
}
