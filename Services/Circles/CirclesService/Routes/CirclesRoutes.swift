import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The circles REST API under `/circles/v1` (described by `CirclesOpenAPI`). Handlers decode,
/// call the domain on a pooled connection (reads) or in one transaction (writes), and encode.
struct CirclesRoutes: Sendable {
    let support: RouteSupport
    let profiles: Profiles
    let circles: Circles
    let posts: Posts
    let messages: DirectMessages
    let presence: Presence
    let uploadLimit: Int

    static let prefix = "/circles/v1"
    typealias R = RouteSupport

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)
        let (support, profiles, circles, posts, messages, presence) = (self.support, self.profiles, self.circles, self.posts, self.messages, self.presence)
        @Sendable func circleID(_ context: ColonyRequestContext) throws -> UUID { try R.uuid(context, "circle_id", CirclesErrors.circleNotFound) }
        @Sendable func postID(_ context: ColonyRequestContext) throws -> UUID { try R.uuid(context, "post_id", CirclesErrors.postNotFound) }
        @Sendable func threadID(_ context: ColonyRequestContext) throws -> UUID { try R.uuid(context, "thread_id", CirclesErrors.threadNotFound) }

        // Profile
        routes.on(.get, "profile") { _, context in
            let email = context.user?.email
            return try await support.read(context) { user, connection in try await profiles.require(user, email: email, on: connection) }
        }
        routes.on(.patch, "profile") { request, context in
            try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(ProfilePatch.self, body)
                return try await profiles.edit(user, .init(displayName: patch.displayName, handle: patch.handle, bio: patch.bio, dmPrivacy: patch.dmPrivacy,
                                                           fullName: patch.fullName, location: patch.location, address: patch.address, phone: patch.phone,
                                                           birthday: patch.birthday), on: connection)
            }
        }

        // Circles and membership
        routes.on(.get, "circles") { _, context in
            try await support.read(context) { user, connection in try await circles.list(userID: user, on: connection) }
        }
        routes.on(.post, "circles") { request, context in
            try await support.write(request, context, status: .created) { body, user, connection in
                try await circles.create(name: try R.decode(NameBody.self, body).name, userID: user, on: connection)
            }
        }
        routes.on(.get, "circles/{circle_id}") { _, context in
            let id = try circleID(context)
            return try await support.read(context) { user, connection in try await circles.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "circles/{circle_id}") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context) { body, user, connection in
                try await circles.rename(id, name: try R.decode(NameBody.self, body).name, userID: user, on: connection)
            }
        }
        routes.on(.delete, "circles/{circle_id}") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await circles.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.get, "circles/{circle_id}/members") { _, context in
            let id = try circleID(context)
            return try await support.read(context) { user, connection in try await circles.members(id, userID: user, on: connection) }
        }
        routes.on(.delete, "circles/{circle_id}/members/{user_id}") { request, context in
            let id = try circleID(context)
            let member = try R.uuid(context, "user_id", CirclesErrors.memberNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await circles.removeMember(id, member: member, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.post, "circles/{circle_id}/leave") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await circles.leave(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.post, "circles/{circle_id}/invites") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context, status: .created) { _, user, connection in try await circles.invite(id, userID: user, on: connection) }
        }
        routes.on(.post, "invites/claim") { request, context in
            try await support.write(request, context) { body, user, connection in
                try await circles.claim(code: try R.decode(CodeBody.self, body).code, userID: user, on: connection)
            }
        }
        routes.on(.post, "circles/{circle_id}/add-requests") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context, status: .created) { body, user, connection in
                try await circles.requestAdd(id, handle: try R.decode(HandleBody.self, body).handle, userID: user, on: connection)
            }
        }
        routes.on(.get, "add-requests") { _, context in
            try await support.read(context) { user, connection in try await circles.pendingRequests(userID: user, on: connection) }
        }
        for answer in [Circles.Answer.accept, .decline, .approve] {
            routes.on(.post, "add-requests/{request_id}/\(answer.rawValue)") { request, context in
                let id = try R.uuid(context, "request_id", CirclesErrors.requestNotFound)
                return try await support.write(request, context) { _, user, connection in try await circles.answer(id, answer, userID: user, on: connection) }
            }
        }

        // Presence
        routes.on(.get, "circles/{circle_id}/presence") { _, context in
            let id = try circleID(context)
            return try await support.read(context) { user, connection in try await presence.list(id, userID: user, on: connection) }
        }
        routes.on(.put, "circles/{circle_id}/presence") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context) { body, user, connection in
                try await presence.set(id, status: try R.decode(PresenceBody.self, body).status, userID: user, on: connection)
            }
        }

        // Posts
        routes.on(.get, "circles/{circle_id}/posts") { request, context in
            let id = try circleID(context)
            let limit = try R.limit(request, default: 20, range: 1...FeedSQL.maxPage)
            let before = request.uri.queryParameters["before"].map(String.init)
            return try await support.read(context) { user, connection in try await posts.feed(id, before: before, limit: limit, userID: user, on: connection) }
        }
        routes.on(.post, "circles/{circle_id}/posts") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context, status: .created) { body, user, connection in
                try await posts.create(try R.decode(PostBody.self, body).draft, circleID: id, userID: user, on: connection)
            }
        }
        routes.on(.get, "posts/kept") { _, context in
            try await support.read(context) { user, connection in try await posts.kept(userID: user, on: connection) }
        }
        routes.on(.get, "posts/{post_id}") { _, context in
            let id = try postID(context)
            return try await support.read(context) { user, connection in try await posts.detail(id, userID: user, on: connection) }
        }
        routes.on(.patch, "posts/{post_id}") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(PostPatch.self, body)
                try patch.validate()
                return try await posts.edit(id, userID: user, change: patch.apply, on: connection)
            }
        }
        routes.on(.delete, "posts/{post_id}") { request, context in
            let id = try postID(context)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await posts.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.put, "posts/{post_id}/photo") { request, context in
            let id = try postID(context)
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await posts.setPhoto(id, image: body, contentType: type, userID: user, on: connection)
            }
        }
        routes.on(.delete, "posts/{post_id}/photo") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { _, user, connection in try await posts.removePhoto(id, userID: user, on: connection) }
        }
        // Marks are set (PUT) and unset (DELETE), never toggled: a retried request changes nothing.
        for (method, on) in [(HTTPRequest.Method.put, true), (.delete, false)] {
            routes.on(method, "posts/{post_id}/reactions/{emoji}") { request, context in
                let id = try postID(context)
                let emoji = try Self.emoji(context)
                return try await support.write(request, context) { _, user, connection in try await posts.react(id, emoji: emoji, on: on, userID: user, on: connection) }
            }
            routes.on(method, "dms/{thread_id}/messages/{message_id}/reactions/{emoji}") { request, context in
                let id = try threadID(context)
                let message = try R.uuid(context, "message_id", CirclesErrors.messageNotFound)
                let emoji = try Self.emoji(context)
                return try await support.write(request, context) { _, user, connection in
                    try await messages.react(id, messageID: message, emoji: emoji, on: on, userID: user, on: connection)
                }
            }
        }
        routes.on(.put, "posts/{post_id}/vote") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { body, user, connection in
                try await posts.vote(id, optionID: try R.decode(VoteBody.self, body).optionId, userID: user, on: connection)
            }
        }
        routes.on(.delete, "posts/{post_id}/vote") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { _, user, connection in try await posts.vote(id, optionID: nil, userID: user, on: connection) }
        }
        routes.on(.put, "posts/{post_id}/rsvp") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { body, user, connection in
                try await posts.rsvp(id, status: try R.decode(RSVPBody.self, body).status, userID: user, on: connection)
            }
        }
        routes.on(.delete, "posts/{post_id}/rsvp") { request, context in
            let id = try postID(context)
            return try await support.write(request, context) { _, user, connection in try await posts.rsvp(id, status: nil, userID: user, on: connection) }
        }
        for (method, keep) in [(HTTPRequest.Method.put, true), (.delete, false)] {
            routes.on(method, "posts/{post_id}/keep") { request, context in
                let id = try postID(context)
                return try await support.write(request, context) { _, user, connection in try await posts.keep(id, keep: keep, userID: user, on: connection) }
            }
        }

        // DMs
        routes.on(.get, "dms") { _, context in
            try await support.read(context) { user, connection in try await messages.threads(userID: user, on: connection) }
        }
        routes.on(.post, "circles/{circle_id}/dms") { request, context in
            let id = try circleID(context)
            return try await support.write(request, context) { body, user, connection in
                try await messages.open(circleID: id, with: try R.decode(OpenThread.self, body).userId, userID: user, on: connection)
            }
        }
        routes.on(.patch, "dms/{thread_id}") { request, context in
            let id = try threadID(context)
            return try await support.write(request, context) { body, user, connection in
                try await messages.setNotify(id, notify: try R.decode(NotifyBody.self, body).notify, userID: user, on: connection)
            }
        }
        routes.on(.get, "dms/{thread_id}/messages") { request, context in
            let id = try threadID(context)
            let limit = try R.limit(request, default: 50, range: 1...200)
            let before = request.uri.queryParameters["before"].map(String.init)
            return try await support.read(context) { user, connection in try await messages.messages(id, before: before, limit: limit, userID: user, on: connection) }
        }
        routes.on(.post, "dms/{thread_id}/messages") { request, context in
            let id = try threadID(context)
            return try await support.write(request, context, status: .created) { body, user, connection in
                let message = try R.decode(DMBody.self, body)
                return try await messages.send(id, body: message.body, replyTo: message.replyToId, userID: user, on: connection)
            }
        }
        routes.on(.post, "dms/{thread_id}/read") { request, context in
            let id = try threadID(context)
            return try await support.write(request, context) { _, user, connection in try await messages.markRead(id, userID: user, on: connection) }
        }

        // Admin: the app's servers set a member's Pro flag with the app's service-role key.
        let admin = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)), prefix: Self.prefix, catalog: catalog)
        admin.on(.put, "admin/profiles/{user_id}/pro") { request, context in
            _ = try await tokenMiddleware.requireServiceKey(request)
            let id = try R.uuid(context, "user_id", CirclesErrors.userNotFound)
            let body = try await RouteSupport.collect(request, context)
            let isPro = try R.decode(ProBody.self, body).isPro
            return try RouteSupport.json(try await support.database.transaction { connection in try await profiles.setPro(id, isPro: isPro, on: connection) }, status: .ok)
        }
    }

    /// An emoji path segment, percent-decoded (clients encode it in the URL).
    static func emoji(_ context: ColonyRequestContext) throws -> String {
        guard let raw = context.parameters.get("emoji"), let emoji = raw.removingPercentEncoding else {
            throw CirclesErrors.validation("emoji must be a percent-encoded emoji")
        }
        return emoji
    }

    // MARK: bodies

    struct NameBody: Decodable { var name: String }
    struct CodeBody: Decodable { var code: String }
    struct HandleBody: Decodable { var handle: String }
    struct PresenceBody: Decodable { var status: PresenceStatus }
    struct ProBody: Decodable { var isPro: Bool }
    struct VoteBody: Decodable { var optionId: UUID }
    struct RSVPBody: Decodable { var status: RSVPStatus }
    struct OpenThread: Decodable { var userId: UUID }
    struct NotifyBody: Decodable { var notify: Bool }
    struct DMBody: Decodable {
        var body: String
        var replyToId: UUID?
    }

    struct PostBody: Decodable {
        var type: PostType
        var body: String
        var mood: String?
        var category: String?
        var urgency: AskUrgency?
        var location: String?
        var latitude: Double?
        var longitude: Double?
        var startsAt: Date?
        var pollOptions: [String]?

        var draft: CirclesRules.PostDraft {
            .init(type: type, body: body, mood: mood, category: category, urgency: urgency, location: location, latitude: latitude, longitude: longitude,
                  startsAt: startsAt, pollOptions: pollOptions ?? [])
        }
    }

    /// Absent leaves a field; null clears the optional ones.
    struct PostPatch: Decodable {
        var body: String?
        var mood: String??
        var category: String??
        var urgency: AskUrgency?
        var location: String??
        var latitude: Double??
        var longitude: Double??
        var startsAt: Date?

        enum CodingKeys: String, CodingKey { case body, mood, category, urgency, location, latitude, longitude, startsAt }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func optional<T: Decodable>(_ key: CodingKeys) throws -> T?? { c.contains(key) ? .some(try c.decodeIfPresent(T.self, forKey: key)) : nil }
            body = try c.decodeIfPresent(String.self, forKey: .body)
            mood = try optional(.mood)
            category = try optional(.category)
            urgency = try c.decodeIfPresent(AskUrgency.self, forKey: .urgency)
            location = try optional(.location)
            latitude = try optional(.latitude)
            longitude = try optional(.longitude)
            startsAt = try c.decodeIfPresent(Date.self, forKey: .startsAt)
        }

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

    struct ProfilePatch: Decodable {
        var displayName: String?
        var handle: String?
        var bio: String??
        var dmPrivacy: DMPrivacy?
        var fullName: String??
        var location: String??
        var address: String??
        var phone: String??
        var birthday: LocalDate??

        enum CodingKeys: String, CodingKey { case displayName, handle, bio, dmPrivacy, fullName, location, address, phone, birthday }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func optional<T: Decodable>(_ key: CodingKeys) throws -> T?? { c.contains(key) ? .some(try c.decodeIfPresent(T.self, forKey: key)) : nil }
            displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
            handle = try c.decodeIfPresent(String.self, forKey: .handle)
            bio = try optional(.bio)
            dmPrivacy = try c.decodeIfPresent(DMPrivacy.self, forKey: .dmPrivacy)
            fullName = try optional(.fullName)
            location = try optional(.location)
            address = try optional(.address)
            phone = try optional(.phone)
            birthday = try optional(.birthday)
        }
    }
}
