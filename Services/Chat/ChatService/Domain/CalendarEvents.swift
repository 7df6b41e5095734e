import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Calendar events: personal ones (no group; only their creator sees them) and group ones
/// (members see them and create them; the creator, admins and the owner change them).
struct CalendarEvents: Sendable {
    let outbox: Outbox
    let logger: Logger
    var store: CalendarEventStore { CalendarEventStore(logger: logger) }

    static let maxRange: TimeInterval = 400 * 86400
    static let maxResults = 1000

    func create(_ draft: ChatRules.EventDraft, groupID: UUID?, userID: UUID, users: Users, on connection: PostgresConnection) async throws -> CalendarEventRow {
        let draft = try ChatRules.event(draft)
        _ = try await users.require(userID, on: connection)
        if let groupID, try await GroupStore(logger: logger).member(groupID, userID: userID, on: connection) == nil { throw ChatErrors.groupNotFound }
        let event = try await store.insert(CalendarEventRow(id: .timeOrdered(), title: draft.title, details: draft.details, startsAt: draft.startsAt, endsAt: draft.endsAt,
                                                            groupId: groupID, createdBy: userID, createdAt: Date(), updatedAt: Date()), on: connection)
        try await publish(CalendarEventCreated(event: event), event: event, actor: userID, withheldFrom: try await blockers(of: event, on: connection), on: connection)
        return event
    }

    func get(_ id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> CalendarEventRow {
        guard let (event, _) = try await store.visible(id, to: userID, hidingBlocked: true, on: connection) else { throw ChatErrors.eventNotFound }
        return event
    }

    /// Events overlapping [from, to): mine and my groups' (or one group's), but those created by
    /// users I blocked.
    func list(from: Date, to: Date, groupID: UUID?, userID: UUID, on connection: PostgresConnection) async throws -> [CalendarEventRow] {
        guard to > from else { throw ChatErrors.validation("to must be after from") }
        guard to.timeIntervalSince(from) <= Self.maxRange else { throw ChatErrors.validation("a range spans at most 400 days") }
        if let groupID, try await GroupStore(logger: logger).member(groupID, userID: userID, on: connection) == nil { throw ChatErrors.groupNotFound }
        return try await store.list(userID: userID, groupID: groupID, from: from, to: to, limit: Self.maxResults, hidingBlocked: true, on: connection)
    }

    func update(_ id: UUID, userID: UUID, change: (inout ChatRules.EventDraft) -> Void, on connection: PostgresConnection) async throws -> CalendarEventRow {
        var event = try await manageable(id, userID: userID, on: connection)
        let previous = event
        var draft = ChatRules.EventDraft(title: event.title, details: event.details, startsAt: event.startsAt, endsAt: event.endsAt)
        let stored = (draft.startsAt, draft.endsAt)
        change(&draft)
        // Both times sent the wrong way round break the rules; one sent against the other's
        // stored value conflicts with the event.
        if draft.endsAt < draft.startsAt, draft.startsAt == stored.0 || draft.endsAt == stored.1 { throw ChatErrors.endsBeforeStarts }
        draft = try ChatRules.event(draft)
        (event.title, event.details, event.startsAt, event.endsAt) = (draft.title, draft.details, draft.startsAt, draft.endsAt)
        let updated = try await store.update(event, on: connection)
        try await publish(CalendarEventUpdated(event: updated, previous: previous), event: updated, actor: userID,
                          withheldFrom: try await blockers(of: updated, on: connection), on: connection)
        return updated
    }

    func delete(_ id: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let event = try await manageable(id, userID: userID, on: connection)
        try await store.delete(id, on: connection)
        try await publishDeleted(event, actor: userID, on: connection)
    }

    /// The event if I may change it: 404 when I cannot see it, 403 when I see it but may not.
    /// An admin who blocked its creator may still change or delete it (moderation, not a read).
    func manageable(_ id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> CalendarEventRow {
        guard let (event, role) = try await store.visible(id, to: userID, lock: true, on: connection) else { throw ChatErrors.eventNotFound }
        if let role { try GroupPolicy.require(role, .manageEvent(createdByMe: event.createdBy == userID)) }
        return event
    }

    func publishDeleted(_ event: CalendarEventRow, actor: UUID, on connection: PostgresConnection) async throws {
        try await publish(CalendarEventDeleted(event: event), event: event, actor: actor, on: connection)
    }

    /// The group's members who blocked the event's creator: those its creation and changes are
    /// withheld from, as their lists leave it out. A personal event has no other audience.
    func blockers(of event: CalendarEventRow, on connection: PostgresConnection) async throws -> [UUID] {
        guard let groupID = event.groupId else { return [] }
        return try await GroupStore(logger: logger).blockers(of: event.createdBy, amongMembersOf: groupID, on: connection)
    }

    /// Group events are keyed by group (in order with its membership); personal ones by creator.
    func publish<Payload: EventPayload>(_ payload: Payload, event: CalendarEventRow, actor: UUID, withheldFrom: [UUID]? = nil, on connection: PostgresConnection) async throws {
        let key = (event.groupId ?? event.createdBy).uuidString.lowercased()
        try await outbox.publish(EventEnvelope(app: .unify, aggregateId: key, actor: actor, withheldFrom: withheldFrom, payload: payload), on: connection, logger: logger)
    }
}
