import ColonyModels
import Foundation

// What the domain answers with: the document's own types (Generated/), under the names the
// domain uses, with initializers from the stores' rows and the shared models. Ids are lower
// case, times stay `Date` (`ColonyDateTranscoder` writes them), birthdays `YYYY-MM-DD`.

/// `profiles` as its owner sees it (private fields included).
typealias MyProfile = Components.Schemas.MyProfile
/// What fellow members see of a profile: never address, phone, email or birthday.
typealias PublicProfile = Components.Schemas.PublicProfile
/// A circle as one of its members sees it (with the caller's role).
typealias CircleView = Components.Schemas.Circle
typealias MemberView = Components.Schemas.Member
typealias InviteView = Components.Schemas.Invite
typealias AddRequestView = Components.Schemas.AddRequest
typealias PresenceView = Components.Schemas.Presence
/// A post with its author, reactions, poll, RSVPs and whether I kept it.
typealias PostView = Components.Schemas.Post
typealias FeedPage = Components.Schemas.FeedPage
typealias ThreadView = Components.Schemas.Thread
typealias DMMessageView = Components.Schemas.MessageWithReactions
typealias DMPage = Components.Schemas.MessagePage
/// A DM reaction set or removed.
typealias ReactionState = Components.Schemas.ReactionState

extension MyProfile {
    var publicProfile: PublicProfile {
        PublicProfile(userId: userId, displayName: displayName, handle: handle, bio: bio, dmPrivacy: dmPrivacy, isPro: isPro, fullName: fullName, location: location)
    }

    /// The profile's DM privacy as the rules (`DMPolicy`) take it.
    var privacy: DMPrivacy { DMPrivacy(rawValue: dmPrivacy.rawValue) ?? .anyone }
}

extension Components.Schemas.DMPrivacy {
    init(_ privacy: DMPrivacy) { self = Self(rawValue: privacy.rawValue) ?? .anyone }
}

extension Components.Schemas.CircleRole {
    init(_ role: CircleRole) { self = role == .owner ? .owner : .member }
}

extension PresenceView {
    init(_ row: PresenceRow) {
        self.init(userId: row.userId.lowercased, circleId: row.circleId.lowercased, status: Components.Schemas.PresenceStatus(rawValue: row.status.rawValue) ?? .free,
                  updatedAt: row.updatedAt)
    }
}

extension Components.Schemas.Message {
    init(_ row: DMMessageRow) {
        self.init(id: row.id.lowercased, threadId: row.threadId.lowercased, senderId: row.senderId.lowercased, body: row.body, replyToId: row.replyToId?.lowercased,
                  createdAt: row.createdAt, readAt: row.readAt)
    }
}

extension PostView {
    /// A card: the post (its photo URL made) and the viewer's aggregates.
    init(_ row: PostRow, _ aggregates: PostStore.Aggregates) {
        self.init(
            id: row.id.lowercased, circleId: row.circleId.lowercased, authorId: row.authorId.lowercased,
            author: .init(userId: row.authorId.lowercased, displayName: aggregates.authorName, handle: aggregates.authorHandle),
            _type: Components.Schemas.PostType(rawValue: row.type.rawValue) ?? .note, body: row.body, mood: row.mood, category: row.category,
            urgency: row.urgency.flatMap { Components.Schemas.AskUrgency(rawValue: $0.rawValue) }, location: row.location,
            latitude: row.latitude, longitude: row.longitude, startsAt: row.startsAt, photoUrl: row.photoUrl, expiresAt: row.expiresAt,
            createdAt: row.createdAt, updatedAt: row.updatedAt,
            reactions: aggregates.reactions.map { .init(emoji: $0.emoji, count: $0.count, reactedByMe: $0.mine) },
            pollOptions: aggregates.options?.map { .init(id: $0.id.lowercased, label: $0.label, votes: $0.votes, votedByMe: $0.mine) },
            rsvps: aggregates.rsvps.map { .init(going: $0.going, maybe: $0.maybe, declined: $0.declined, mine: $0.mine.flatMap(Components.Schemas.RSVPStatus.init(rawValue:))) },
            keptByMe: aggregates.kept)
    }
}

// A feed page is the app's busiest read: its fast path (`CirclesAPI.fastPaths`) writes it
// straight into bytes (see ColonyJSONWritable), byte for byte what the generated route's
// encoder writes for it (CirclesJSONTests and the fast-path twin test hold the two equal).
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
        json.key("user_id"); json.string(author.userId)
        json.raw("}")
        json.key("author_id"); json.string(authorId)
        json.key("body"); json.string(body)
        json.member("category", category) { $0.string($1) }
        json.key("circle_id"); json.string(circleId)
        json.key("created_at"); json.date(createdAt)
        json.key("expires_at"); json.date(expiresAt)
        json.key("id"); json.string(id)
        json.key("kept_by_me"); json.bool(keptByMe)
        try json.member("latitude", latitude) { try $0.double($1) }
        json.member("location", location) { $0.string($1) }
        try json.member("longitude", longitude) { try $0.double($1) }
        json.member("mood", mood) { $0.string($1) }
        json.member("photo_url", photoUrl) { $0.string($1) }
        json.member("poll_options", pollOptions) { json, options in
            json.array(options) { json, option in
                json.raw("{")
                json.key("id"); json.string(option.id)
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
        json.key("type"); json.string(_type.rawValue)
        json.key("updated_at"); json.date(updatedAt)
        json.member("urgency", urgency) { $0.string($1.rawValue) }
        json.raw("}")
    }
}
