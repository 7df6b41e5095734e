import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Ephemeral posts (note, event, ask, poll) that live 24 hours, with reactions, poll votes,
/// RSVPs and kept marks. Only members of the post's circle see or touch a post.
struct Posts: Sendable {
    let outbox: Outbox
    let media: PostMedia
    let logger: Logger
    var store: PostStore { PostStore(logger: logger) }
    var circles: Circles { Circles(outbox: outbox, media: media, logger: logger) }

    func row(_ post: PostStore.Stored) -> PostRow {
        var row = post.row
        row.photoUrl = media.url(post)
        return row
    }

    func view(_ post: PostStore.Stored, _ aggregates: PostStore.Aggregates) -> PostView {
        PostView(row(post), aggregates)
    }

    /// A live post in one of my circles, by someone I have not blocked; 404 otherwise.
    func visible(_ postID: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> PostStore.Stored {
        guard let post = try await store.visible(postID, to: userID, hidingBlocked: true, lock: lock, on: connection) else { throw CirclesErrors.postNotFound }
        return post
    }

    func detail(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        _ = try await visible(postID, userID: userID, on: connection)
        guard let (post, aggregates) = try await store.detail(postID, viewer: userID, on: connection) else { throw CirclesErrors.postNotFound }
        return view(post, aggregates)
    }

    func create(_ draft: CirclesRules.PostDraft, circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let draft = try CirclesRules.post(draft)
        // The insert checks the membership; the card is read back without a second visibility
        // check (the post is live, and its author a member, in this very transaction).
        guard let post = try await store.insert(draft, circleID: circleID, authorID: userID, lifetime: CirclesRules.postLifetime, on: connection) else {
            throw CirclesErrors.circleNotFound
        }
        try await circles.publishActivity(PostCreated(post: row(post), pollOptions: draft.pollOptions), circle: circleID, actor: userID, on: connection)
        guard let (card, aggregates) = try await store.detail(post.row.id, viewer: userID, on: connection) else { throw CirclesErrors.postNotFound }
        return view(card, aggregates)
    }

    func feed(_ circleID: UUID, before: String?, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> FeedPage {
        let cursor = try before.map { text in
            guard let cursor = KeysetCursor(text) else { throw CirclesErrors.validation("before must be a cursor from an earlier page") }
            return cursor
        }
        guard let rows = try await store.feed(circleID, viewer: userID, before: cursor, limit: limit, on: connection) else { throw CirclesErrors.circleNotFound }
        let page = rows.prefix(limit)
        return FeedPage(posts: page.map { view($0.0, $0.1) }, nextCursor: rows.count > limit ? page.last?.2.text : nil)
    }

    /// A change to a post as sent: absent leaves a field; null (`.some(nil)`) clears the optional ones.
    struct Edit: Sendable {
        var body: String?
        var mood: String??
        var category: String??
        var urgency: AskUrgency?
        var location: String??
        var latitude: Double??
        var longitude: Double??
        var startsAt: Date?

        /// A place is changed whole: both coordinates, both null, or neither.
        func validate() throws {
            let together = switch (latitude, longitude) {
            case (nil, nil): true
            case (.some(let latitude), .some(let longitude)): (latitude == nil) == (longitude == nil)
            default: false
            }
            guard together else { throw CirclesErrors.validation("latitude and longitude change together: send both, both null, or neither") }
        }

        func apply(to draft: inout CirclesRules.PostDraft) {
            if let body { draft.body = body }
            if let mood { draft.mood = mood }
            if let category { draft.category = category }
            if let urgency { draft.urgency = urgency }
            if let location { draft.location = location }
            if let latitude { draft.latitude = latitude }
            if let longitude { draft.longitude = longitude }
            if let startsAt { draft.startsAt = startsAt }
        }
    }

    /// The author edits a post's text and details; its type and options stay.
    func edit(_ postID: UUID, userID: UUID, _ edit: Edit, on connection: PostgresConnection) async throws -> PostView {
        try edit.validate()
        return try await self.edit(postID, userID: userID, change: edit.apply, on: connection)
    }

    func edit(_ postID: UUID, userID: UUID, change: (inout CirclesRules.PostDraft) -> Void, on connection: PostgresConnection) async throws -> PostView {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.authorId == userID else { throw CirclesErrors.authorOnly }
        var draft = CirclesRules.PostDraft(type: post.row.type, body: post.row.body, mood: post.row.mood, category: post.row.category, urgency: post.row.urgency,
                                           location: post.row.location, latitude: post.row.latitude, longitude: post.row.longitude, startsAt: post.row.startsAt,
                                           pollOptions: [])
        let before = draft
        change(&draft)
        // A start time or an urgency for a post of another type conflicts with the post, not the rules.
        if draft.startsAt != before.startsAt, draft.type != .event { throw CirclesErrors.notAnEvent }
        if draft.urgency != before.urgency, draft.type != .ask { throw CirclesErrors.notAnAsk }
        var checked = draft
        if draft.type == .poll { checked.pollOptions = ["a", "b"] }  // options are not edited; satisfy the count rule
        checked = try CirclesRules.post(checked)
        checked.pollOptions = []
        let updated = try await store.update(postID, checked, on: connection)
        try await circles.publishActivity(PostUpdated(post: row(updated), previous: row(post)), circle: updated.row.circleId, actor: userID, on: connection)
        return try await detail(postID, userID: userID, on: connection)
    }

    func delete(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.authorId == userID else { throw CirclesErrors.authorOnly }
        try await erase(post, actor: userID, on: connection)
    }

    /// A moderator removes a reported post: deleted as its author's delete does it (the same
    /// `post_deleted`, with no actor). false when it was gone (deleted, or expired) already.
    func remove(_ postID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let post = try await store.live(postID, lock: true, on: connection) else { return false }
        try await erase(post, actor: nil, on: connection)
        return true
    }

    /// Deletes a locked post (its reactions, votes, RSVPs and kept marks cascade), publishes
    /// `post_deleted` and removes its photo.
    private func erase(_ post: PostStore.Stored, actor: UUID?, on connection: PostgresConnection) async throws {
        try await store.delete(post.row.id, on: connection)
        try await circles.publish(PostDeleted(post: row(post)), circle: post.row.circleId, actor: actor, on: connection)
        if post.photoVersion != nil { try await media.remove(circleID: post.row.circleId, postID: post.row.id) }
    }

    func setPhoto(_ postID: UUID, image: ByteBuffer, contentType: String?, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.authorId == userID else { throw CirclesErrors.authorOnly }
        let stored = try await media.upload(image, contentType: contentType, circleID: post.row.circleId, postID: postID)
        let updated = try await store.setPhoto(postID, version: stored.version, on: connection)
        try await circles.publishActivity(PostUpdated(post: row(updated), previous: row(post)), circle: post.row.circleId, actor: userID, on: connection)
        return try await detail(postID, userID: userID, on: connection)
    }

    func removePhoto(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.authorId == userID else { throw CirclesErrors.authorOnly }
        let updated = try await store.setPhoto(postID, version: nil, on: connection)
        try await media.remove(circleID: post.row.circleId, postID: postID)
        try await circles.publishActivity(PostUpdated(post: row(updated), previous: row(post)), circle: post.row.circleId, actor: userID, on: connection)
        return try await detail(postID, userID: userID, on: connection)
    }

    // MARK: marks: set and unset, so a retried request never undoes itself

    /// Adds (`on`) or removes my reaction; only a real change is published. The card after.
    func react(_ postID: UUID, emoji: String, on: Bool, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let emoji = try CirclesRules.emoji(emoji)
        let post = try await visible(postID, userID: userID, on: connection)
        let changed = on ? try await store.addReaction(postID, userID: userID, emoji: emoji, on: connection)
                         : try await store.removeReaction(postID, userID: userID, emoji: emoji, on: connection)
        if let changed {
            try await circles.publishActivity(PostReacted(operation: on ? .insert : .delete, circleId: post.row.circleId, postId: postID, userId: userID, emoji: emoji,
                                                  createdAt: changed.createdAt), circle: post.row.circleId, actor: userID, on: connection)
        }
        return try await detail(postID, userID: userID, on: connection)
    }

    /// Casts or moves my vote to `optionID`, or withdraws it (nil). The post row is locked, so
    /// one poll's votes take turns and each event says exactly what changed.
    func vote(_ postID: UUID, optionID: UUID?, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.type == .poll else { throw CirclesErrors.notAPoll }
        if let optionID, try await !store.optionExists(optionID, postID: postID, on: connection) { throw CirclesErrors.optionNotFound }
        let previous = try await store.vote(postID, userID: userID, on: connection)
        let now = try await Self.settle(previous, to: optionID, value: \.optionId,
                                        set: { try await store.setVote(postID, optionID: $0, userID: userID, on: connection) },
                                        remove: { try await store.removeVote(postID, userID: userID, on: connection) })
        if now != previous {
            try await circles.publishActivity(PollVoted(circleId: post.row.circleId, postId: postID, userId: userID, optionId: now?.optionId, vote: now, previous: previous),
                                      circle: post.row.circleId, actor: userID, on: connection)
        }
        return try await detail(postID, userID: userID, on: connection)
    }

    /// Sets or changes my RSVP, or withdraws it (nil). The post row is locked so that RSVPs to
    /// one event take turns: each event's counts are exact.
    func rsvp(_ postID: UUID, status: RSVPStatus?, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        let post = try await visible(postID, userID: userID, lock: true, on: connection)
        guard post.row.type == .event else { throw CirclesErrors.notAnEvent }
        let previous = try await store.rsvp(postID, userID: userID, on: connection)
        let now = try await Self.settle(previous, to: status, value: \.status,
                                        set: { try await store.setRSVP(postID, userID: userID, status: $0, on: connection) },
                                        remove: { try await store.removeRSVP(postID, userID: userID, on: connection) })
        if now != previous {
            let counts = try await store.rsvpCounts(postID, on: connection)
            try await circles.publishActivity(EventRsvped(circleId: post.row.circleId, postId: postID, userId: userID, status: now?.status, authorId: post.row.authorId,
                                                  counts: counts, rsvp: now, previous: previous),
                                      circle: post.row.circleId, actor: userID, on: connection)
        }
        return try await detail(postID, userID: userID, on: connection)
    }

    /// A mark of which a user has one per post (a vote, an RSVP) set to `wanted`, or removed
    /// (nil); nothing is written when it is so already. The row now.
    static func settle<Row: Equatable, Value: Equatable>(_ previous: Row?, to wanted: Value?, value: (Row) -> Value,
                                                         set: (Value) async throws -> Row, remove: () async throws -> Row?) async throws -> Row? {
        guard let wanted else {
            if previous != nil { _ = try await remove() }
            return nil
        }
        if let previous, value(previous) == wanted { return previous }
        return try await set(wanted)
    }

    func keep(_ postID: UUID, keep: Bool, userID: UUID, on connection: PostgresConnection) async throws -> PostView {
        _ = try await visible(postID, userID: userID, on: connection)
        if keep { try await store.keep(postID, userID: userID, on: connection) } else { try await store.unkeep(postID, userID: userID, on: connection) }
        return try await detail(postID, userID: userID, on: connection)
    }

    func kept(userID: UUID, on connection: PostgresConnection) async throws -> [PostView] {
        try await store.kept(by: userID, on: connection).map { view($0.0, $0.1) }
    }

    /// The expiry job: deletes expired posts for real (reactions, votes, RSVPs and kept marks
    /// cascade; photos are removed) in batches, one `post_expired` each.
    func expire(database: Database) async throws -> Int {
        var total = 0
        while true {
            let expired = try await database.transaction { connection in
                let posts = try await store.deleteExpired(limit: 500, on: connection)
                for post in posts {
                    try await circles.publish(PostExpired(post: row(post)), circle: post.row.circleId, actor: nil, on: connection)
                    if post.photoVersion != nil { try await media.remove(circleID: post.row.circleId, postID: post.row.id) }
                }
                return posts.count
            }
            total += expired
            if expired < 500 { return total }
        }
    }
}
