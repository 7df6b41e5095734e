import ColonyModels
import ColonyPlatform
import Foundation
import OpenAPIRuntime

// Messages and calendar events.
extension ChatAPI {
    /// The history page, the reference of its fast path (`ChatAPI+HistoryFastPath.swift`), which
    /// calls this same method; `COLONY_FAST_PATHS=off` serves it through the generated route.
    func listMessages(_ input: Operations.ListMessages.Input) async throws -> Operations.ListMessages.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let limit = input.query.limit ?? 50
        guard (1...HistorySQL.maxPage).contains(limit) else { throw APIError.unprocessable("limit must be between 1 and \(HistorySQL.maxPage)") }
        let (before, after) = (input.query.before, input.query.after)
        guard before == nil || after == nil else { throw ChatErrors.validation("use before or after, not both") }
        let page: Messages.PageRequest = before.map { .before($0) } ?? after.map { .after($0) } ?? .latest
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await messages.history(id, page: page, limit: limit, userID: caller.id, on: connection)
        })))
    }

    func sendTextMessage(_ input: Operations.SendTextMessage.Input) async throws -> Operations.SendTextMessage.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        guard case .json(let text) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.sendText(id, content: text.content, userID: caller.id, on: connection)
        })))
    }

    func sendVoiceMessage(_ input: Operations.SendVoiceMessage.Input) async throws -> Operations.SendVoiceMessage.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let (audio, contentType): (HTTPBody, String) = switch input.body {
        case .audioMp4(let body): (body, "audio/mp4")
        case .audioMpeg(let body): (body, "audio/mpeg")
        case .audioAac(let body): (body, "audio/aac")
        case .audioWav(let body): (body, "audio/wav")
        case .audioOgg(let body): (body, "audio/ogg")
        case .audioWebm(let body): (body, "audio/webm")
        }
        let bytes = try await Self.buffer(audio)
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.sendVoice(id, audio: bytes, contentType: contentType, duration: input.query.duration, content: input.query.content,
                                         userID: caller.id, on: connection)
        })))
    }

    func editMessage(_ input: Operations.EditMessage.Input) async throws -> Operations.EditMessage.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let message = try Self.id(input.path.messageId, ChatErrors.messageNotFound)
        guard case .json(let text) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.edit(id, messageID: message, content: text.content, userID: caller.id, on: connection)
        })))
    }

    func deleteMessage(_ input: Operations.DeleteMessage.Input) async throws -> Operations.DeleteMessage.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let message = try Self.id(input.path.messageId, ChatErrors.messageNotFound)
        try await database.callerWrite { caller, connection in try await messages.delete(id, messageID: message, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    // MARK: calendar events

    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        let group = try input.query.groupId.map { text in
            guard let id = UUID(canonical: text) else { throw APIError.unprocessable("group_id must be a UUID") }
            return id
        }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await events.list(from: input.query.from, to: input.query.to, groupID: group, userID: caller.id, on: connection).map(Schemas.CalendarEvent.init)
        })))
    }

    func createEvent(_ input: Operations.CreateEvent.Input) async throws -> Operations.CreateEvent.Output {
        guard case .json(let create) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let group = try create.groupId.map { try Self.bodyID($0, "group_id") }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            Schemas.CalendarEvent(try await events.create(.init(title: create.title, details: create.details, startsAt: create.startsAt, endsAt: create.endsAt),
                                                          groupID: group, userID: caller.id, users: users, on: connection))
        })))
    }

    func getEvent(_ input: Operations.GetEvent.Input) async throws -> Operations.GetEvent.Output {
        let id = try Self.id(input.path.eventId, ChatErrors.eventNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            Schemas.CalendarEvent(try await events.get(id, userID: caller.id, on: connection))
        })))
    }

    func updateEvent(_ input: Operations.UpdateEvent.Input) async throws -> Operations.UpdateEvent.Output {
        let id = try Self.id(input.path.eventId, ChatErrors.eventNotFound)
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Present and null clears the details; absent leaves them. The others: null leaves them too.
        let details = RequestBodyNulls.field(patch.details, "details")
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            Schemas.CalendarEvent(try await events.update(id, userID: caller.id, change: { draft in
                if let title = patch.title { draft.title = title }
                if let details { draft.details = details }
                if let startsAt = patch.startsAt { draft.startsAt = startsAt }
                if let endsAt = patch.endsAt { draft.endsAt = endsAt }
            }, on: connection))
        })))
    }

    func deleteEvent(_ input: Operations.DeleteEvent.Input) async throws -> Operations.DeleteEvent.Output {
        let id = try Self.id(input.path.eventId, ChatErrors.eventNotFound)
        try await database.callerWrite { caller, connection in try await events.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }
}
