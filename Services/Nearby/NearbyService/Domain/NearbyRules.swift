import ColonyModels
import ColonyPlatform
import Foundation

/// Input rules and the arithmetic of distances and rounded positions, as plain functions the
/// tests reach without HTTP.
enum NearbyRules {
    static let metersPerFoot = 0.3048
    static let feetPerMile = 5280.0

    /// A reported position: finite numbers, latitude −90…90, longitude −180…180.
    static func coordinates(latitude: Double, longitude: Double, accuracy: Double?) throws {
        var errors = ValidationErrors()
        errors.check(latitude.isFinite && (-90...90).contains(latitude), "latitude must be a number between -90 and 90")
        errors.check(longitude.isFinite && (-180...180).contains(longitude), "longitude must be a number between -180 and 180")
        if let accuracy { errors.check(accuracy.isFinite && accuracy >= 0 && accuracy <= 100_000, "accuracy must be a number of meters between 0 and 100000") }
        try errors.throwIfAny()
    }

    /// The grid positions are rounded to for others' maps: about 50 feet.
    static let gridMeters = 50 * metersPerFoot
    static let metersPerDegreeLatitude = 111_320.0

    /// The position snapped to a grid of `gridMeters` (east–west cells widen towards the poles,
    /// so they stay that wide on the ground); 0 keeps it (to 1e-6°).
    static func approximate(latitude: Double, longitude: Double, gridMeters: Double = gridMeters) -> ApproximatePosition {
        guard gridMeters > 0 else {
            return ApproximatePosition(latitude: (latitude * 1e6).rounded() / 1e6, longitude: (longitude * 1e6).rounded() / 1e6)
        }
        let latitudeStep = gridMeters / metersPerDegreeLatitude
        let roundedLatitude = min(90, max(-90, (latitude / latitudeStep).rounded() * latitudeStep))
        let longitudeStep = min(360, latitudeStep / max(cos(roundedLatitude * .pi / 180), 1e-6))
        var roundedLongitude = (longitude / longitudeStep).rounded() * longitudeStep
        if roundedLongitude > 180 { roundedLongitude -= 360 }
        if roundedLongitude < -180 { roundedLongitude += 360 }
        return ApproximatePosition(latitude: (roundedLatitude * 1e6).rounded() / 1e6, longitude: (roundedLongitude * 1e6).rounded() / 1e6)
    }

    /// The point `north` and `east` meters from a position (small distances, flat-earth).
    static func moved(latitude: Double, longitude: Double, north: Double, east: Double) -> (latitude: Double, longitude: Double) {
        var newLatitude = latitude + north / metersPerDegreeLatitude
        var newLongitude = longitude + east / (metersPerDegreeLatitude * max(cos(latitude * .pi / 180), 1e-6))
        if newLatitude > 90 { newLatitude = 180 - newLatitude; newLongitude += 180 }
        if newLatitude < -90 { newLatitude = -180 - newLatitude; newLongitude += 180 }
        newLongitude = (newLongitude + 180).truncatingRemainder(dividingBy: 360)
        if newLongitude < 0 { newLongitude += 360 }
        return (newLatitude, newLongitude - 180)
    }

    /// A fresh report farther from the previous one than this speed allows (plus 200 m for GPS
    /// jitter and a phone's first fix) is a spoofed jump.
    static func plausibleMove(meters: Double, seconds: Double, maxSpeed: Double) -> Bool {
        meters <= maxSpeed * max(0, seconds) + 200
    }

    /// Distance as the card shows it: feet (to 10 ft) under a tenth of a mile, else miles (to
    /// 0.1). Rounded, so repeated queries cannot pin a position down.
    struct Distance: Codable, Sendable, Equatable {
        var feet: Int
        var miles: Double
        var text: String
    }

    static func distance(meters: Double) -> Distance {
        let feet = meters / metersPerFoot
        let roundedFeet = max(10, Int((feet / 10).rounded()) * 10)
        let miles = (feet / feetPerMile * 10).rounded() / 10
        let text = feet < feetPerMile / 10 ? "\(roundedFeet) ft" : String(format: "%.1f mi", miles)
        return Distance(feet: roundedFeet, miles: miles, text: text)
    }

    /// Whole years from `birthday` to `today` (both calendar dates).
    static func age(birthday: LocalDate, today: LocalDate) -> Int {
        var years = today.year - birthday.year
        if (today.month, today.day) < (birthday.month, birthday.day) { years -= 1 }
        return years
    }

    static let maxName = 50
    static let maxBio = 300
    static let maxSchool = 100
    static let minimumAge = 13

    static func birthday(_ birthday: LocalDate, today: LocalDate) throws {
        guard birthday.year >= 1900, birthday <= today, age(birthday: birthday, today: today) >= minimumAge else {
            throw APIError.unprocessable("birthday must be a real date at least \(minimumAge) years ago")
        }
    }

    // MARK: social links

    enum Platform: String, CaseIterable {
        case instagram, snapchat, tiktok, linkedin, youtube, x, other

        /// Hosts a URL for this platform may point at.
        var hosts: [String] {
            switch self {
            case .instagram: ["instagram.com"]
            case .snapchat: ["snapchat.com"]
            case .tiktok: ["tiktok.com"]
            case .linkedin: ["linkedin.com"]
            case .youtube: ["youtube.com", "youtu.be"]
            case .x: ["x.com", "twitter.com"]
            case .other: []
            }
        }

        /// What a bare handle may look like (the platforms' own rules), nil when only URLs count.
        var handlePattern: String? {
            switch self {
            case .instagram: #"@?[A-Za-z0-9._]{1,30}"#
            case .snapchat: #"@?[A-Za-z][A-Za-z0-9._-]{2,14}"#
            case .tiktok: #"@?[A-Za-z0-9._]{2,24}"#
            case .linkedin: #"[A-Za-z0-9-]{3,100}"#
            case .youtube: #"@[A-Za-z0-9._-]{3,30}"#
            case .x: #"@?[A-Za-z0-9_]{1,15}"#
            case .other: nil
            }
        }

        /// An https URL on one of the platform's hosts (subdomains and any letter case allowed;
        /// any host for `other`), with an optional port, path, query and fragment of printable
        /// ASCII.
        var urlPattern: String {
            let host = hosts.isEmpty ? #"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"#
                : #"(?:[A-Za-z0-9-]+\.)*(?:"# + hosts.map(Self.caseless).joined(separator: "|") + ")"
            return #"https://"# + host + #"(?::[0-9]{1,5})?(?:[/?#][!-~]*)?"#
        }

        /// A link as sent: blank (removes it), or a handle or URL with whitespace around it. The
        /// OpenAPI document states this same pattern.
        var linkPattern: String {
            let link = (handlePattern.map { [$0] } ?? []) + [urlPattern]
            return "[\(TextRules.whitespace)]*(?:(?:" + link.joined(separator: "|") + ")[\(TextRules.whitespace)]*)?"
        }

        static func caseless(_ host: String) -> String {
            host.map { $0.isLetter ? "[\($0.lowercased())\($0.uppercased())]" : $0 == "." ? #"\."# : String($0) }.joined()
        }
    }

    static let maxLink = 200

    /// A link checked and trimmed: at most 200 characters as sent, and `linkPattern`. Blank
    /// means "remove".
    static func socialLink(_ value: String, platform: Platform) throws -> String? {
        guard TextRules.length(value) <= maxLink, TextRules.matches(value, platform.linkPattern) else {
            let expected = platform == .other ? "an https URL" : "a \(platform.rawValue) handle or an https URL on \(platform.hosts.joined(separator: " or "))"
            throw APIError.unprocessable("social_links.\(platform.rawValue) must be \(expected), at most \(maxLink) characters")
        }
        let trimmed = TextRules.trimmed(value)
        return trimmed.isEmpty ? nil : trimmed
    }

    static func socialLinks(_ links: SocialLinks) throws -> SocialLinks {
        SocialLinks(
            instagram: try links.instagram.flatMap { try socialLink($0, platform: .instagram) },
            snapchat: try links.snapchat.flatMap { try socialLink($0, platform: .snapchat) },
            tiktok: try links.tiktok.flatMap { try socialLink($0, platform: .tiktok) },
            linkedin: try links.linkedin.flatMap { try socialLink($0, platform: .linkedin) },
            youtube: try links.youtube.flatMap { try socialLink($0, platform: .youtube) },
            x: try links.x.flatMap { try socialLink($0, platform: .x) },
            other: try links.other.flatMap { try socialLink($0, platform: .other) }
        )
    }
}
