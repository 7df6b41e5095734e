import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What this service keeps of other services' events beside memberships: names for push texts
/// and MyCirclee's event posts (for RSVP alerts and Live Activities).
struct ProjectionStore: Sendable {
    let logger: Logger

    /// Applies `event` to the names and event posts.
    func apply(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        switch event.type {
        case .circleCreated:
            let circle = try event.decode(CircleCreated.self).payload.circle
            try await setName(.circle, circle.id, circle.name, on: connection)
        case .circleMemberJoined:
            let payload = try event.decode(CircleMemberJoined.self).payload
            try await setName(.circle, payload.member.circleId, payload.circleName, on: connection)
        case .circleMemberImported:
            let payload = try event.decode(CircleMemberImported.self).payload
            try await setName(.circle, payload.member.circleId, payload.circleName, on: connection)
        case .groupMemberImported:
            let payload = try event.decode(GroupMemberImported.self).payload
            try await setName(.group, payload.member.groupId, payload.groupName, on: connection)
        case .projectImported:
            let payload = try event.decode(ProjectImported.self).payload
            try await setName(.project, payload.projectId, payload.title, on: connection)
        case .circleUpdated:
            let circle = try event.decode(CircleUpdated.self).payload.circle
            try await setName(.circle, circle.id, circle.name, on: connection)
        case .circleDeleted:
            let circle = try event.decode(CircleDeleted.self).payload.circle
            try await removeName(.circle, circle.id, on: connection)
            try await connection.query("UPDATE event_posts SET ended_pushed = true WHERE circle_id = \(circle.id)", logger: logger)
        case .groupCreated:
            let group = try event.decode(GroupCreated.self).payload.group
            try await setName(.group, group.id, group.name, on: connection)
        case .groupUpdated:
            let group = try event.decode(GroupUpdated.self).payload.group
            try await setName(.group, group.id, group.name, on: connection)
        case .groupDeleted:
            try await removeName(.group, try event.decode(GroupDeleted.self).payload.group.id, on: connection)
        case .projectCreated:
            let project = try event.decode(ProjectCreated.self).payload.project
            try await setName(.project, project.id, project.title, on: connection)
        case .projectUpdated:
            let project = try event.decode(ProjectUpdated.self).payload.project
            try await setName(.project, project.id, project.title, on: connection)
        case .projectDeleted:
            try await removeName(.project, try event.decode(ProjectDeleted.self).payload.project.id, on: connection)
        case .postCreated, .postUpdated, .eventPostImported:
            guard let post = try event.type == .eventPostImported ? event.decode(EventPostImported.self).payload.post : Triggers.post(of: event),
                  post.type == .event else { return }
            try await connection.query("""
                INSERT INTO event_posts (post_id, circle_id, author_id, title, location, starts_at)
                VALUES (\(post.id), \(post.circleId), \(post.authorId), \(post.body), \(post.location), \(post.startsAt))
                ON CONFLICT (post_id) DO UPDATE SET title = EXCLUDED.title, location = EXCLUDED.location, starts_at = EXCLUDED.starts_at,
                    started_pushed = event_posts.started_pushed AND event_posts.starts_at IS NOT DISTINCT FROM EXCLUDED.starts_at
                """, logger: logger)
        case .postDeleted, .postExpired:
            // The Live Activity's end push is planned from the row first (the handler's order).
            guard let post = try Triggers.post(of: event) else { return }
            try await connection.query("UPDATE event_posts SET ended_pushed = true WHERE post_id = \(post.id)", logger: logger)
        case .eventRsvped:
            let payload = try event.decode(EventRsvped.self).payload
            guard let counts = payload.counts else { return }
            try await connection.query("""
                UPDATE event_posts SET going = \(counts.going), maybe = \(counts.maybe), declined = \(counts.declined) WHERE post_id = \(payload.postId)
                """, logger: logger)
        default:
            break
        }
    }

    func names(_ keys: Set<NameKey>, on connection: PostgresConnection) async throws -> [NameKey: String] {
        guard !keys.isEmpty else { return [:] }
        let keys = Array(keys)
        var names: [NameKey: String] = [:]
        let rows = try await connection.query("""
            SELECT n.kind, n.id, n.name FROM names n
            JOIN unnest(\(keys.map(\.kind.rawValue))::text[], \(keys.map(\.id))::uuid[]) AS k(kind, id) ON n.kind = k.kind AND n.id = k.id
            """, logger: logger)
        for try await row in rows {
            var cells = RowCells(row)
            let kind: String = try cells.next()
            let id: UUID = try cells.next()
            let name: String = try cells.next()
            if let kind = NameKey.Kind(rawValue: kind) { names[NameKey(kind, id)] = name }
        }
        return names
    }

    /// An event post; with `upcomingOnly`, nil once it is over (ended or gone).
    func eventPost(_ postID: UUID, on connection: PostgresConnection) async throws -> EventPostInfo? {
        try await eventPostState(postID, on: connection)?.post
    }

    /// The event post and whether its end was pushed, read at once: two reads could see it missing,
    /// then (its `post_created` applied in between) present, and take a new event for an ended one.
    func eventPostState(_ postID: UUID, on connection: PostgresConnection) async throws -> (post: EventPostInfo, ended: Bool)? {
        try await connection.query("""
            SELECT \(unescaped: Self.eventPostColumns), ended_pushed FROM event_posts WHERE post_id = \(postID)
            """, logger: logger).collect().first.map { row in
            try row.read { c in (try Self.eventPost(cells: &c), try c.next(Bool.self)) }
        }
    }

    static let eventPostColumns = "post_id, circle_id, author_id, title, location, starts_at, going, maybe, declined"

    static func eventPost(row: PostgresRow) throws -> EventPostInfo {
        try row.read { c in try eventPost(cells: &c) }
    }

    static func eventPost(cells c: inout RowCells) throws -> EventPostInfo {
        EventPostInfo(postID: try c.next(), circleID: try c.next(), authorID: try c.next(), title: try c.next(), location: try c.next(), startsAt: try c.next(),
                      counts: RSVPCounts(going: try c.next(), maybe: try c.next(), declined: try c.next()))
    }

    /// Event posts with Live Activities whose start has come (`started`) or that began more than
    /// `endAfter` ago (`ended`), each returned once: the job pushes their countdown's end.
    func dueActivities(now: Date, endAfter: Duration, on connection: PostgresConnection) async throws -> (started: [EventPostInfo], ended: [EventPostInfo]) {
        let endCutoff = now.addingTimeInterval(-Double(endAfter.components.seconds))
        let ended = try await connection.query("""
            UPDATE event_posts SET ended_pushed = true, started_pushed = true
            WHERE NOT ended_pushed AND starts_at <= \(endCutoff) AND post_id IN (SELECT post_id FROM devices WHERE kind = 'live_activity')
            RETURNING \(unescaped: Self.eventPostColumns)
            """, logger: logger).collect().map(Self.eventPost(row:))
        let started = try await connection.query("""
            UPDATE event_posts SET started_pushed = true
            WHERE NOT started_pushed AND NOT ended_pushed AND starts_at <= \(now) AND post_id IN (SELECT post_id FROM devices WHERE kind = 'live_activity')
            RETURNING \(unescaped: Self.eventPostColumns)
            """, logger: logger).collect().map(Self.eventPost(row:))
        return (started, ended)
    }

    /// Event posts that are over and have no Live Activity left.
    func removeFinishedEventPosts(on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM event_posts e WHERE ended_pushed AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.post_id = e.post_id)
            """, logger: logger)
    }

    /// An erased account's event posts (their titles are its words); their Live Activity tokens
    /// go with the next countdown run.
    func eraseAuthor(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM event_posts WHERE author_id = \(user)", logger: logger)
    }

    private func setName(_ kind: NameKey.Kind, _ id: UUID, _ name: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO names (kind, id, name) VALUES (\(kind.rawValue), \(id), \(name)) ON CONFLICT (kind, id) DO UPDATE SET name = EXCLUDED.name
            """, logger: logger)
    }

    private func removeName(_ kind: NameKey.Kind, _ id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM names WHERE kind = \(kind.rawValue) AND id = \(id)", logger: logger)
    }
}
