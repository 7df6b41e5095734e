import Foundation

// MyCirclee's rows in the seed's shape (`mycirclee.md`, its 14 tables): the circles service
// answers with them and its events carry them, with the circle id for authorization, so the
// realtime service can present them as changes of `posts`, `dm_messages`, `presence_states`, ….

public enum CircleRole: String, Codable, Sendable, CaseIterable {
    case owner
    case member
}

public enum PostType: String, Codable, Sendable, CaseIterable {
    case note
    case event
    case ask
    case poll
}

public enum AskUrgency: String, Codable, Sendable, CaseIterable {
    case low
    case medium
    case high
    case urgent
}

public enum RSVPStatus: String, Codable, Sendable, CaseIterable {
    case going
    case maybe
    case declined
}

public enum DMPrivacy: String, Codable, Sendable, CaseIterable {
    /// Anyone in a shared circle may DM me.
    case anyone
    /// Only people who accept DMs themselves (both must opt in).
    case reciprocal
    /// Nobody.
    case nobody
}

/// The seed's presence palette.
public enum PresenceStatus: String, Codable, Sendable, CaseIterable {
    case free
    case deepWork = "deep_work"
    case out
    case stillUp = "still_up"
    case asleep
}

/// `circles`.
public struct CircleRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdBy: UUID
    public var createdAt: Date

    public init(id: UUID, name: String, createdBy: UUID, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdBy = createdBy
        self.createdAt = createdAt
    }
}

/// `circle_members`.
public struct CircleMemberRow: Codable, Sendable, Equatable {
    public var circleId: UUID
    public var userId: UUID
    public var role: CircleRole
    public var joinedAt: Date

    public init(circleId: UUID, userId: UUID, role: CircleRole, joinedAt: Date) {
        self.circleId = circleId
        self.userId = userId
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// `posts` (the photo as its URL).
public struct PostRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var circleId: UUID
    public var authorId: UUID
    public var type: PostType
    public var body: String
    public var mood: String?
    public var category: String?
    public var urgency: AskUrgency?
    public var location: String?
    public var latitude: Double?
    public var longitude: Double?
    public var startsAt: Date?
    public var photoUrl: String?
    public var expiresAt: Date
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, circleId: UUID, authorId: UUID, type: PostType, body: String, mood: String?, category: String?, urgency: AskUrgency?,
                location: String?, latitude: Double?, longitude: Double?, startsAt: Date?, photoUrl: String?, expiresAt: Date, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.circleId = circleId
        self.authorId = authorId
        self.type = type
        self.body = body
        self.mood = mood
        self.category = category
        self.urgency = urgency
        self.location = location
        self.latitude = latitude
        self.longitude = longitude
        self.startsAt = startsAt
        self.photoUrl = photoUrl
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `dm_messages`.
public struct DMMessageRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var threadId: UUID
    public var senderId: UUID
    public var body: String
    public var replyToId: UUID?
    public var createdAt: Date
    public var readAt: Date?

    public init(id: UUID, threadId: UUID, senderId: UUID, body: String, replyToId: UUID?, createdAt: Date, readAt: Date?) {
        self.id = id
        self.threadId = threadId
        self.senderId = senderId
        self.body = body
        self.replyToId = replyToId
        self.createdAt = createdAt
        self.readAt = readAt
    }
}

/// `presence_states`.
public struct PresenceRow: Codable, Sendable, Equatable {
    public var userId: UUID
    public var circleId: UUID
    public var status: PresenceStatus
    public var updatedAt: Date

    public init(userId: UUID, circleId: UUID, status: PresenceStatus, updatedAt: Date) {
        self.userId = userId
        self.circleId = circleId
        self.status = status
        self.updatedAt = updatedAt
    }
}

/// `post_reactions`.
public struct PostReactionRow: Codable, Sendable, Equatable {
    public var postId: UUID
    public var userId: UUID
    public var emoji: String
    public var createdAt: Date

    public init(postId: UUID, userId: UUID, emoji: String, createdAt: Date) {
        self.postId = postId
        self.userId = userId
        self.emoji = emoji
        self.createdAt = createdAt
    }
}

/// `poll_votes` (with the poll's `post_id`, Colony's key of one vote per user and poll).
public struct PollVoteRow: Codable, Sendable, Equatable {
    public var optionId: UUID
    public var userId: UUID
    public var postId: UUID
    public var createdAt: Date

    public init(optionId: UUID, userId: UUID, postId: UUID, createdAt: Date) {
        self.optionId = optionId
        self.userId = userId
        self.postId = postId
        self.createdAt = createdAt
    }
}

/// `event_rsvps`.
public struct EventRSVPRow: Codable, Sendable, Equatable {
    public var postId: UUID
    public var userId: UUID
    public var status: RSVPStatus
    public var createdAt: Date

    public init(postId: UUID, userId: UUID, status: RSVPStatus, createdAt: Date) {
        self.postId = postId
        self.userId = userId
        self.status = status
        self.createdAt = createdAt
    }
}

/// `dm_reactions`.
public struct DMReactionRow: Codable, Sendable, Equatable {
    public var messageId: UUID
    public var userId: UUID
    public var emoji: String
    public var createdAt: Date

    public init(messageId: UUID, userId: UUID, emoji: String, createdAt: Date) {
        self.messageId = messageId
        self.userId = userId
        self.emoji = emoji
        self.createdAt = createdAt
    }
}

/// `dm_threads` (`user_a` < `user_b`).
public struct DMThreadRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var circleId: UUID
    public var userA: UUID
    public var userB: UUID
    public var lastMessageAt: Date?
    public var notifyA: Bool
    public var notifyB: Bool

    public init(id: UUID, circleId: UUID, userA: UUID, userB: UUID, lastMessageAt: Date?, notifyA: Bool, notifyB: Bool) {
        self.id = id
        self.circleId = circleId
        self.userA = userA
        self.userB = userB
        self.lastMessageAt = lastMessageAt
        self.notifyA = notifyA
        self.notifyB = notifyB
    }
}

/// The rows that went with a deleted circle or with a member who left it, for subscribers'
/// `DELETE`s: the bounded ones only (members, live posts and the marks on them, statuses, DM
/// threads). A thread's messages and reactions, unbounded history, go with the thread's row.
public struct CircleRemovedRows: Codable, Sendable, Equatable {
    public var members: [CircleMemberRow]
    public var posts: [PostRow]
    public var reactions: [PostReactionRow]
    public var votes: [PollVoteRow]
    public var rsvps: [EventRSVPRow]
    public var presence: [PresenceRow]
    public var threads: [DMThreadRow]

    public init(members: [CircleMemberRow] = [], posts: [PostRow] = [], reactions: [PostReactionRow] = [], votes: [PollVoteRow] = [],
                rsvps: [EventRSVPRow] = [], presence: [PresenceRow] = [], threads: [DMThreadRow] = []) {
        self.members = members
        self.posts = posts
        self.reactions = reactions
        self.votes = votes
        self.rsvps = rsvps
        self.presence = presence
        self.threads = threads
    }

    public var isEmpty: Bool {
        members.isEmpty && posts.isEmpty && reactions.isEmpty && votes.isEmpty && rsvps.isEmpty && presence.isEmpty && threads.isEmpty
    }
}
