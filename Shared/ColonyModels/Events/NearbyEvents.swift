import Foundation

// The nearby service's events (topic `colony.nearby`), keyed by user id. They carry only what
// other users may see: a rounded position, never the precise one, and the public card; and
// `visibleTo`, the users who may see it (those within the radius who share, blocks excluded),
// so the realtime service tells nobody else.

extension EventType {
    public static let locationUpdated: EventType = "location_updated"
    public static let locationRemoved: EventType = "location_removed"
    public static let profileUpdated: EventType = "profile_updated"
}

/// A sharing user's position changed. Besides who sees the user now (`visibleTo`), it says
/// how the move changed who sees whom, so every client's map stays right: those who see the
/// user for the first time (`newlyVisibleTo`), those who no longer do (`hiddenFrom`), and, for
/// the user, who came into their range (`appeared`, with their shown rows) and who left it
/// (`disappeared`). The four are absent in events from before they existed.
public struct LocationUpdated: EventPayload {
    public static let eventType = EventType.locationUpdated
    public static let source = ColonyService.nearby

    public var userId: UUID
    public var position: ApproximatePosition
    public var updatedAt: Date
    public var visibleTo: [UUID]
    public var newlyVisibleTo: [UUID]?
    public var hiddenFrom: [UUID]?
    public var appeared: [LocationRow]?
    public var disappeared: [UUID]?

    public init(userId: UUID, position: ApproximatePosition, updatedAt: Date, visibleTo: [UUID], newlyVisibleTo: [UUID]? = nil, hiddenFrom: [UUID]? = nil,
                appeared: [LocationRow]? = nil, disappeared: [UUID]? = nil) {
        self.userId = userId
        self.position = position
        self.updatedAt = updatedAt
        self.visibleTo = visibleTo
        self.newlyVisibleTo = newlyVisibleTo
        self.hiddenFrom = hiddenFrom
        self.appeared = appeared
        self.disappeared = disappeared
    }
}

/// Why a user's location is gone: every client drops them at once.
public enum LocationRemovalReason: String, Codable, Sendable {
    case sharingOff = "sharing_off"
    case removed
    case expired
    case accountDeleted = "account_deleted"
}

public struct LocationRemoved: EventPayload {
    public static let eventType = EventType.locationRemoved
    public static let source = ColonyService.nearby

    public var userId: UUID
    public var reason: LocationRemovalReason
    /// Who could see the user until now (those in range of the point as it was).
    public var visibleTo: [UUID]

    public init(userId: UUID, reason: LocationRemovalReason, visibleTo: [UUID]) {
        self.userId = userId
        self.reason = reason
        self.visibleTo = visibleTo
    }
}

/// The public card changed (name, bio, school, links, photo, age).
public struct ProfileUpdated: EventPayload {
    public static let eventType = EventType.profileUpdated
    public static let source = ColonyService.nearby

    public var profile: PublicProfile
    public var visibleTo: [UUID]

    public init(profile: PublicProfile, visibleTo: [UUID]) {
        self.profile = profile
        self.visibleTo = visibleTo
    }
}
