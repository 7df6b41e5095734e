import Foundation

// The circles service's events (topic `colony.circles`), keyed by circle id so one circle's
// story stays in order; each carries the circle id for authorization and the row clients need.
// DM events also name the thread's two parties (only they may see it).

extension EventType {
    public static let circleCreated: EventType = "circle_created"
    public static let circleMemberJoined: EventType = "circle_member_joined"
    public static let circleMemberLeft: EventType = "circle_member_left"
    public static let circleDeleted: EventType = "circle_deleted"
    public static let postCreated: EventType = "post_created"
    public static let postUpdated: EventType = "post_updated"
    public static let postDeleted: EventType = "post_deleted"
    public static let postExpired: EventType = "post_expired"
    public static let postReacted: EventType = "post_reacted"
    public static let pollVoted: EventType = "poll_voted"
    public static let eventRsvped: EventType = "event_rsvped"
    public static let dmSent: EventType = "dm_sent"
    public static let dmRead: EventType = "dm_read"
    public static let dmDeleted: EventType = "dm_deleted"
    public static let presenceChanged: EventType = "presence_changed"
    public static let circleUpdated: EventType = "circle_updated"
    public static let circleMemberUpdated: EventType = "circle_member_updated"
    public static let dmReacted: EventType = "dm_reacted"
}

public struct CircleCreated: EventPayload {
    public static let eventType = EventType.circleCreated
    public static let source = ColonyService.circles
    public var circle: CircleRow
    public var owner: CircleMemberRow
    public init(circle: CircleRow, owner: CircleMemberRow) {
        self.circle = circle
        self.owner = owner
    }
}

/// How someone joined: an invite code, an accepted add request.
public struct CircleMemberJoined: EventPayload {
    public static let eventType = EventType.circleMemberJoined
    public static let source = ColonyService.circles
    public var member: CircleMemberRow
    public var circleName: String
    public var via: String
    public init(member: CircleMemberRow, circleName: String, via: String) {
        self.member = member
        self.circleName = circleName
        self.via = via
    }
}

public enum CircleLeaveReason: String, Codable, Sendable {
    case left
    case removed
    case circleDeleted = "circle_deleted"
    case accountDeleted = "account_deleted"
}

public struct CircleMemberLeft: EventPayload {
    public static let eventType = EventType.circleMemberLeft
    public static let source = ColonyService.circles
    public var member: CircleMemberRow
    public var reason: CircleLeaveReason
    /// What left the circle with the member (an erased account's posts, marks, status and DM
    /// threads there; a leaving member's status). Absent in events before it was added.
    public var removed: CircleRemovedRows?
    public init(member: CircleMemberRow, reason: CircleLeaveReason, removed: CircleRemovedRows? = nil) {
        self.member = member
        self.reason = reason
        self.removed = removed
    }
}

/// A member's row changed: the circle passed to them (`role` owner) when its owner left.
public struct CircleMemberUpdated: EventPayload {
    public static let eventType = EventType.circleMemberUpdated
    public static let source = ColonyService.circles
    public var member: CircleMemberRow
    public var previous: CircleMemberRow
    public init(member: CircleMemberRow, previous: CircleMemberRow) {
        self.member = member
        self.previous = previous
    }
}

/// The owner renamed the circle.
public struct CircleUpdated: EventPayload {
    public static let eventType = EventType.circleUpdated
    public static let source = ColonyService.circles
    public var circle: CircleRow
    public var previous: CircleRow
    public var memberIds: [UUID]
    public init(circle: CircleRow, previous: CircleRow, memberIds: [UUID]) {
        self.circle = circle
        self.previous = previous
        self.memberIds = memberIds
    }
}

public struct CircleDeleted: EventPayload {
    public static let eventType = EventType.circleDeleted
    public static let source = ColonyService.circles
    public var circle: CircleRow
    public var memberIds: [UUID]
    /// The rows that went with it (members, live posts, statuses, DM threads).
    public var removed: CircleRemovedRows?
    public init(circle: CircleRow, memberIds: [UUID], removed: CircleRemovedRows? = nil) {
        self.circle = circle
        self.memberIds = memberIds
        self.removed = removed
    }
}

// `post_created`, `post_updated`, `post_deleted` and `post_expired` carry the post row.
public struct PostCreated: EventPayload {
    public static let eventType = EventType.postCreated
    public static let source = ColonyService.circles
    public var post: PostRow
    /// Poll options, for a poll.
    public var pollOptions: [String]
    public init(post: PostRow, pollOptions: [String]) {
        self.post = post
        self.pollOptions = pollOptions
    }
}

/// `previous` is the row before the change (absent in events before it was added).
public struct PostUpdated: EventPayload {
    public static let eventType = EventType.postUpdated
    public static let source = ColonyService.circles
    public var post: PostRow
    public var previous: PostRow?
    public init(post: PostRow, previous: PostRow? = nil) {
        self.post = post
        self.previous = previous
    }
}

public struct PostDeleted: EventPayload {
    public static let eventType = EventType.postDeleted
    public static let source = ColonyService.circles
    public var post: PostRow
    public init(post: PostRow) {
        self.post = post
    }
}

public struct PostExpired: EventPayload {
    public static let eventType = EventType.postExpired
    public static let source = ColonyService.circles
    public var post: PostRow
    public init(post: PostRow) {
        self.post = post
    }
}

/// A reaction toggled on (`operation` INSERT) or off (DELETE): `post_reactions`.
public struct PostReacted: EventPayload {
    public static let eventType = EventType.postReacted
    public static let source = ColonyService.circles
    public var operation: RowOperation
    public var circleId: UUID
    public var postId: UUID
    public var userId: UUID
    public var emoji: String
    /// The reaction row's `created_at` (absent in events before it was added).
    public var createdAt: Date?
    public init(operation: RowOperation, circleId: UUID, postId: UUID, userId: UUID, emoji: String, createdAt: Date? = nil) {
        self.operation = operation
        self.circleId = circleId
        self.postId = postId
        self.userId = userId
        self.emoji = emoji
        self.createdAt = createdAt
    }
}

/// A poll vote cast, changed or withdrawn (`optionId` nil): `poll_votes`. `vote` and
/// `previous` are the row after and before (cast: no previous; withdrawn: no vote).
public struct PollVoted: EventPayload {
    public static let eventType = EventType.pollVoted
    public static let source = ColonyService.circles
    public var circleId: UUID
    public var postId: UUID
    public var userId: UUID
    public var optionId: UUID?
    public var vote: PollVoteRow?
    public var previous: PollVoteRow?
    public init(circleId: UUID, postId: UUID, userId: UUID, optionId: UUID?, vote: PollVoteRow? = nil, previous: PollVoteRow? = nil) {
        self.circleId = circleId
        self.postId = postId
        self.userId = userId
        self.optionId = optionId
        self.vote = vote
        self.previous = previous
    }
}

/// An RSVP set, changed or withdrawn (`status` nil): `event_rsvps`. It names the event's author
/// (whose event got the answer) and the counts after it (Live Activities show them).
public struct EventRsvped: EventPayload {
    public static let eventType = EventType.eventRsvped
    public static let source = ColonyService.circles
    public var circleId: UUID
    public var postId: UUID
    public var userId: UUID
    public var status: RSVPStatus?
    public var authorId: UUID?
    public var counts: RSVPCounts?
    /// The `event_rsvps` row after and before (set: no previous; withdrawn: no rsvp).
    public var rsvp: EventRSVPRow?
    public var previous: EventRSVPRow?
    public init(circleId: UUID, postId: UUID, userId: UUID, status: RSVPStatus?, authorId: UUID? = nil, counts: RSVPCounts? = nil,
                rsvp: EventRSVPRow? = nil, previous: EventRSVPRow? = nil) {
        self.circleId = circleId
        self.postId = postId
        self.userId = userId
        self.status = status
        self.authorId = authorId
        self.counts = counts
        self.rsvp = rsvp
        self.previous = previous
    }
}

/// An event post's RSVPs by status.
public struct RSVPCounts: Codable, Sendable, Equatable {
    public var going: Int
    public var maybe: Int
    public var declined: Int
    public init(going: Int, maybe: Int, declined: Int) {
        self.going = going
        self.maybe = maybe
        self.declined = declined
    }
}

public struct DMSent: EventPayload {
    public static let eventType = EventType.dmSent
    public static let source = ColonyService.circles
    public var circleId: UUID
    public var message: DMMessageRow
    /// The thread's two parties: only they may see it.
    public var participantIds: [UUID]
    public var recipientId: UUID
    /// Whether the recipient wants pushes for this thread.
    public var notifyRecipient: Bool
    public init(circleId: UUID, message: DMMessageRow, participantIds: [UUID], recipientId: UUID, notifyRecipient: Bool) {
        self.circleId = circleId
        self.message = message
        self.participantIds = participantIds
        self.recipientId = recipientId
        self.notifyRecipient = notifyRecipient
    }
}

/// A DM removed from its thread by a moderator (`dm_messages` DELETE), for the thread's two parties only.
public struct DMDeleted: EventPayload {
    public static let eventType = EventType.dmDeleted
    public static let source = ColonyService.circles
    public var circleId: UUID
    public var threadId: UUID
    /// The message's row as it was.
    public var message: DMMessageRow
    public var participantIds: [UUID]
    public init(circleId: UUID, threadId: UUID, message: DMMessageRow, participantIds: [UUID]) {
        self.circleId = circleId
        self.threadId = threadId
        self.message = message
        self.participantIds = participantIds
    }
}

public struct DMRead: EventPayload {
    public static let eventType = EventType.dmRead
    public static let source = ColonyService.circles
    public var circleId: UUID
    public var threadId: UUID
    public var readerId: UUID
    public var participantIds: [UUID]
    public var readAt: Date
    public var messageIds: [UUID]
    /// The messages' whole rows after the read (absent in events before it was added).
    public var messages: [DMMessageRow]?
    public init(circleId: UUID, threadId: UUID, readerId: UUID, participantIds: [UUID], readAt: Date, messageIds: [UUID], messages: [DMMessageRow]? = nil) {
        self.circleId = circleId
        self.threadId = threadId
        self.readerId = readerId
        self.participantIds = participantIds
        self.readAt = readAt
        self.messageIds = messageIds
        self.messages = messages
    }
}

/// A reaction on a DM set (`operation` INSERT) or removed (DELETE): `dm_reactions`, for the
/// thread's two parties only.
public struct DMReacted: EventPayload {
    public static let eventType = EventType.dmReacted
    public static let source = ColonyService.circles
    public var operation: RowOperation
    public var circleId: UUID
    public var threadId: UUID
    public var reaction: DMReactionRow
    public var participantIds: [UUID]
    public init(operation: RowOperation, circleId: UUID, threadId: UUID, reaction: DMReactionRow, participantIds: [UUID]) {
        self.operation = operation
        self.circleId = circleId
        self.threadId = threadId
        self.reaction = reaction
        self.participantIds = participantIds
    }
}

/// A status set for the first time in a circle (`operation` INSERT) or changed (UPDATE, with
/// `previous`). Events before `operation` was added are updates.
public struct PresenceChanged: EventPayload {
    public static let eventType = EventType.presenceChanged
    public static let source = ColonyService.circles
    public var presence: PresenceRow
    public var operation: RowOperation?
    public var previous: PresenceRow?
    public init(presence: PresenceRow, operation: RowOperation? = nil, previous: PresenceRow? = nil) {
        self.presence = presence
        self.operation = operation
        self.previous = previous
    }
}
