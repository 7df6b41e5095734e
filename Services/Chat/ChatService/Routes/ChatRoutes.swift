import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The chat REST API under `/chat/v1` (described by `ChatOpenAPI`). Handlers decode, call the
/// domain on a pooled connection (reads) or in one transaction (writes), and encode. Uploads
/// (pictures, voice) are raw bodies with their `Content-Type`.
struct ChatRoutes: Sendable {
    let support: RouteSupport
    let users: Users
    let groups: Groups
    let messages: Messages
    let events: CalendarEvents
    let uploadLimit: Int
    /// Adding members by email: each address asked counts against the caller's budget.
    let lookups: MemberLookupBudget

    static let prefix = "/chat/v1"
    typealias R = RouteSupport

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)
        let support = self.support
        let lookups = self.lookups

        // Me
        routes.on(.get, "me") { _, context in
            let email = context.user?.email
            return try await support.read(context) { user, connection in users.view(try await users.require(user, email: email, on: connection)) }
        }
        routes.on(.patch, "me") { request, context in
            try await support.write(request, context) { body, user, connection in
                try await users.rename(user, displayName: try R.decode(ProfilePatch.self, body).displayName, on: connection)
            }
        }
        routes.on(.put, "me/avatar") { request, context in
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await users.setAvatar(user, image: body, contentType: type, on: connection)
            }
        }
        routes.on(.delete, "me/avatar") { request, context in
            try await support.write(request, context) { _, user, connection in try await users.removeAvatar(user, on: connection) }
        }
        routes.on(.get, "users/{user_id}") { _, context in
            let id = try R.uuid(context, "user_id", ChatErrors.userNotFound)
            return try await support.read(context) { user, connection in try await users.profile(id, viewer: user, on: connection) }
        }

        // Groups
        routes.on(.get, "groups") { _, context in
            try await support.read(context) { user, connection in try await groups.list(userID: user, on: connection) }
        }
        routes.on(.post, "groups") { request, context in
            try await support.write(request, context, status: .created) { body, user, connection in
                let create = try R.decode(CreateGroup.self, body)
                try await lookups.spend(try ChatRules.emails(create.memberEmails ?? []).count, user: user)
                return try await groups.create(name: create.name, memberEmails: create.memberEmails ?? [], userID: user, on: connection)
            }
        }
        routes.on(.get, "groups/unread") { _, context in
            try await support.read(context) { user, connection in try await groups.unreadCounts(userID: user, on: connection) }
        }
        routes.on(.get, "groups/{group_id}") { _, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.read(context) { user, connection in try await groups.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "groups/{group_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await groups.rename(id, name: try R.decode(RenameGroup.self, body).name, userID: user, on: connection)
            }
        }
        routes.on(.delete, "groups/{group_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await groups.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.put, "groups/{group_id}/picture") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await groups.setPicture(id, image: body, contentType: type, userID: user, on: connection)
            }
        }
        routes.on(.delete, "groups/{group_id}/picture") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context) { _, user, connection in try await groups.removePicture(id, userID: user, on: connection) }
        }
        routes.on(.post, "groups/{group_id}/read") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await groups.markRead(id, at: try R.decode(MarkRead.self, body, emptyAs: MarkRead()).at, userID: user, on: connection)
            }
        }
        routes.on(.post, "groups/{group_id}/leave") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context, status: .noContent) { body, user, connection in
                try await groups.leave(id, successor: try R.decode(Leave.self, body, emptyAs: Leave()).successorId, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.post, "groups/{group_id}/transfer") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await groups.transferOwnership(id, to: try R.decode(Transfer.self, body).newOwnerId, userID: user, on: connection)
            }
        }

        // Members
        routes.on(.get, "groups/{group_id}/members") { _, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.read(context) { user, connection in try await groups.members(id, userID: user, on: connection) }
        }
        routes.on(.post, "groups/{group_id}/members") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context) { body, user, connection in
                let emails = try R.decode(AddMembers.self, body).emails
                try await lookups.spend(try ChatRules.emails(emails).count, user: user)
                return try await groups.addMembers(id, emails: emails, userID: user, on: connection)
            }
        }
        routes.on(.patch, "groups/{group_id}/members/{user_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let member = try R.uuid(context, "user_id", ChatErrors.memberNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await groups.setRole(id, member: member, role: try R.decode(SetRole.self, body).role, userID: user, on: connection)
            }
        }
        routes.on(.delete, "groups/{group_id}/members/{user_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let member = try R.uuid(context, "user_id", ChatErrors.memberNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await groups.removeMember(id, member: member, userID: user, on: connection)
                return R.Empty()
            }
        }

        // Messages
        routes.on(.get, "groups/{group_id}/messages") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let limit = try R.limit(request, default: 50, range: 1...HistorySQL.maxPage)
            let before = request.uri.queryParameters["before"].map(String.init), after = request.uri.queryParameters["after"].map(String.init)
            guard before == nil || after == nil else { throw ChatErrors.validation("use before or after, not both") }
            let page: Messages.PageRequest = before.map { .before($0) } ?? after.map { .after($0) } ?? .latest
            return try await support.read(context) { user, connection in try await messages.history(id, page: page, limit: limit, userID: user, on: connection) }
        }
        routes.on(.post, "groups/{group_id}/messages") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            return try await support.write(request, context, status: .created) { body, user, connection in
                try await messages.sendText(id, content: try R.decode(SendText.self, body).content, userID: user, on: connection)
            }
        }
        routes.on(.post, "groups/{group_id}/messages/voice") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let type = request.headers[.contentType]
            let duration = try R.query(request, "duration", "duration must be a number of seconds") { Double($0) }
            let caption = request.uri.queryParameters["content"].map(String.init)
            return try await support.write(request, context, status: .created, limit: uploadLimit) { body, user, connection in
                try await messages.sendVoice(id, audio: body, contentType: type, duration: duration, content: caption, userID: user, on: connection)
            }
        }
        routes.on(.patch, "groups/{group_id}/messages/{message_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let message = try R.uuid(context, "message_id", ChatErrors.messageNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await messages.edit(id, messageID: message, content: try R.decode(SendText.self, body).content, userID: user, on: connection)
            }
        }
        routes.on(.delete, "groups/{group_id}/messages/{message_id}") { request, context in
            let id = try R.uuid(context, "group_id", ChatErrors.groupNotFound)
            let message = try R.uuid(context, "message_id", ChatErrors.messageNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await messages.delete(id, messageID: message, userID: user, on: connection)
                return R.Empty()
            }
        }

        // Calendar events
        routes.on(.get, "events") { request, context in
            let (from, to) = try Self.range(request)
            let group = try R.query(request, "group_id", "group_id must be a UUID") { UUID(uuidString: $0) }
            return try await support.read(context) { user, connection in try await events.list(from: from, to: to, groupID: group, userID: user, on: connection) }
        }
        routes.on(.post, "events") { request, context in
            try await support.write(request, context, status: .created) { body, user, connection in
                let create = try R.decode(CreateEvent.self, body)
                return try await events.create(.init(title: create.title, details: create.details, startsAt: create.startsAt, endsAt: create.endsAt),
                                               groupID: create.groupId, userID: user, users: users, on: connection)
            }
        }
        routes.on(.get, "events/{event_id}") { _, context in
            let id = try R.uuid(context, "event_id", ChatErrors.eventNotFound)
            return try await support.read(context) { user, connection in try await events.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "events/{event_id}") { request, context in
            let id = try R.uuid(context, "event_id", ChatErrors.eventNotFound)
            return try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(EventPatch.self, body)
                return try await events.update(id, userID: user, change: patch.apply, on: connection)
            }
        }
        routes.on(.delete, "events/{event_id}") { request, context in
            let id = try R.uuid(context, "event_id", ChatErrors.eventNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await events.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
    }

    /// `from` and `to` (ISO 8601), both required.
    static func range(_ request: Request) throws -> (Date, Date) {
        let from = try R.query(request, "from", "from must be an ISO 8601 time") { ISO8601.parse($0) }
        let to = try R.query(request, "to", "to must be an ISO 8601 time") { ISO8601.parse($0) }
        guard let from, let to else { throw ChatErrors.validation("from and to are required (ISO 8601 times)") }
        return (from, to)
    }

    // MARK: bodies

    struct ProfilePatch: Decodable { var displayName: String }
    struct CreateGroup: Decodable {
        var name: String
        var memberEmails: [String]?
    }
    struct RenameGroup: Decodable { var name: String }
    struct MarkRead: Decodable { var at: Date? }
    struct Leave: Decodable { var successorId: UUID? }
    struct Transfer: Decodable { var newOwnerId: UUID }
    struct AddMembers: Decodable { var emails: [String] }
    struct SetRole: Decodable { var role: GroupRole }
    struct SendText: Decodable { var content: String }

    struct CreateEvent: Decodable {
        var title: String
        var details: String?
        var startsAt: Date
        var endsAt: Date
        var groupId: UUID?
    }

    struct EventPatch: Decodable {
        var title: String?
        var details: String??
        var startsAt: Date?
        var endsAt: Date?

        enum CodingKeys: String, CodingKey { case title, details, startsAt, endsAt }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            // Present and null clears the details; absent leaves them.
            details = container.contains(.details) ? .some(try container.decodeIfPresent(String.self, forKey: .details)) : nil
            startsAt = try container.decodeIfPresent(Date.self, forKey: .startsAt)
            endsAt = try container.decodeIfPresent(Date.self, forKey: .endsAt)
        }

        func apply(to draft: inout ChatRules.EventDraft) {
            if let title { draft.title = title }
            if let details { draft.details = details }
            if let startsAt { draft.startsAt = startsAt }
            if let endsAt { draft.endsAt = endsAt }
        }
    }
}
