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

// A feed page is the app's busiest read: written straight into bytes (see ColonyJSONWritable),
// byte for byte what ColonyJSON's encoder writes for it (CirclesJSONTests holds the two equal).
extension FeedPage: ColonyJSONWritable {
    var jsonCapacity: Int { 128 + posts.count * 1024 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.member("next_cursor", nextCursor) { $0.string($1) }
        json.key("posts"); try json.array(posts) { try $1.writeJSON(to: &$0) }
        json.raw("}")
    }
}

extension PostView: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("author"); json.raw("{")
        json.key("display_name"); json.string(author.displayName)
        json.key("handle"); json.string(author.handle)
        json.key("user_id"); json.uuid(author.userId)
        json.raw("}")
        json.key("author_id"); json.uuid(authorId)
        json.key("body"); json.string(body)
        json.member("category", category) { $0.string($1) }
        json.key("circle_id"); json.uuid(circleId)
        json.key("created_at"); json.date(createdAt)
        json.key("expires_at"); json.date(expiresAt)
        json.key("id"); json.uuid(id)
        json.key("kept_by_me"); json.bool(keptByMe)
        try json.member("latitude", latitude) { try $0.double($1) }
        json.member("location", location) { $0.string($1) }
        try json.member("longitude", longitude) { try $0.double($1) }
        json.member("mood", mood) { $0.string($1) }
        json.member("photo_url", photoUrl) { $0.string($1) }
        json.member("poll_options", pollOptions) { json, options in
            json.array(options) { json, option in
                json.raw("{")
                json.key("id"); json.uuid(option.id)
                json.key("label"); json.string(option.label)
                json.key("voted_by_me"); json.bool(option.votedByMe)
                json.key("votes"); json.int(option.votes)
                json.raw("}")
            }
        }
        json.key("reactions")
        json.array(reactions) { json, reaction in
            json.raw("{")
            json.key("count"); json.int(reaction.count)
            json.key("emoji"); json.string(reaction.emoji)
            json.key("reacted_by_me"); json.bool(reaction.reactedByMe)
            json.raw("}")
        }
        json.member("rsvps", rsvps) { json, rsvps in
            json.raw("{")
            json.key("declined"); json.int(rsvps.declined)
            json.key("going"); json.int(rsvps.going)
            json.key("maybe"); json.int(rsvps.maybe)
            json.member("mine", rsvps.mine) { $0.string($1.rawValue) }
            json.raw("}")
        }
        json.member("starts_at", startsAt) { $0.date($1) }
        json.key("type"); json.string(type.rawValue)
        json.key("updated_at"); json.date(updatedAt)
        json.member("urgency", urgency) { $0.string($1.rawValue) }
        json.raw("}")
    }
}
