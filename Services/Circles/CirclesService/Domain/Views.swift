import ColonyModels
import Foundation

// What the API answers with: the seed's rows, joined the way the app shows them.

/// `profiles` as its owner sees it (private fields included).
struct MyProfile: Codable, Sendable {
    var userId: UUID
    var displayName: String
    var handle: String
    var bio: String?
    var dmPrivacy: DMPrivacy
    var isPro: Bool
    var fullName: String?
    var location: String?
    var address: String?
    var email: String?
    var phone: String?
    var birthday: LocalDate?
    var createdAt: Date
    var updatedAt: Date
}

/// What fellow members see of a profile: never address, phone, email or birthday.
struct PublicProfile: Codable, Sendable {
    var userId: UUID
    var displayName: String
    var handle: String
    var bio: String?
    var dmPrivacy: DMPrivacy
    var isPro: Bool
    var fullName: String?
    var location: String?
}

struct CircleView: Codable, Sendable {
    var id: UUID
    var name: String
    var createdBy: UUID
    var createdAt: Date
    var role: CircleRole
    var memberCount: Int
}

struct MemberView: Codable, Sendable {
    var circleId: UUID
    var role: CircleRole
    var joinedAt: Date
    var profile: PublicProfile
}

struct InviteView: Codable, Sendable {
    var code: String
    var circleId: UUID
    var expiresAt: Date
}

struct AddRequestView: Codable, Sendable {
    var id: UUID
    var circleId: UUID
    var circleName: String
    var fromUserId: UUID
    var toUserId: UUID
    var toHandle: String
    var status: String
    /// The owner approved it (it still waits for the invitee's acceptance).
    var ownerApproved: Bool
    var createdAt: Date
}

/// A post with its author, reactions, poll, RSVPs and whether I kept it.
struct PostView: Codable, Sendable {
    struct Author: Codable, Sendable {
        var userId: UUID
        var displayName: String
        var handle: String
    }

    struct Reaction: Codable, Sendable {
        var emoji: String
        var count: Int
        var reactedByMe: Bool
    }

    struct PollOption: Codable, Sendable {
        var id: UUID
        var label: String
        var votes: Int
        var votedByMe: Bool
    }

    struct RSVPs: Codable, Sendable {
        var going: Int
        var maybe: Int
        var declined: Int
        var mine: RSVPStatus?
    }

    var id: UUID
    var circleId: UUID
    var authorId: UUID
    var author: Author
    var type: PostType
    var body: String
    var mood: String?
    var category: String?
    var urgency: AskUrgency?
    var location: String?
    var latitude: Double?
    var longitude: Double?
    var startsAt: Date?
    var photoUrl: String?
    var expiresAt: Date
    var createdAt: Date
    var updatedAt: Date
    var reactions: [Reaction]
    var pollOptions: [PollOption]?
    var rsvps: RSVPs?
    var keptByMe: Bool
}

struct FeedPage: Codable, Sendable {
    var posts: [PostView]
    /// Pass as `before` for the next (older) page; absent on the last page.
    var nextCursor: String?
}

struct ThreadView: Codable, Sendable {
    var id: UUID
    var circleId: UUID
    var otherUser: PublicProfile
    var lastMessage: DMMessageRow?
    var lastMessageAt: Date?
    var unreadCount: Int
    /// Whether I get pushes for this thread.
    var notify: Bool
}

struct DMMessageView: Codable, Sendable {
    struct Reaction: Codable, Sendable {
        var emoji: String
        var userId: UUID
    }

    var id: UUID
    var threadId: UUID
    var senderId: UUID
    var body: String
    var replyToId: UUID?
    var createdAt: Date
    var readAt: Date?
    var reactions: [Reaction]
}

struct DMPage: Codable, Sendable {
    var messages: [DMMessageView]
    var nextCursor: String?
}

/// A DM reaction set or removed.
struct ReactionState: Codable, Sendable {
    var messageId: UUID
    var emoji: String
    /// Whether the reaction is in place now.
    var active: Bool
}
