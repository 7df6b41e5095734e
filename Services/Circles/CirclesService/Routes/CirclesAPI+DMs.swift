import ColonyModels
import ColonyPlatform
import Foundation

// Direct messages between two members of a circle.
extension CirclesAPI {
    func listThreads(_ input: Operations.ListThreads.Input) async throws -> Operations.ListThreads.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await messages.threads(userID: caller.id, on: connection) })))
    }

    func openThread(_ input: Operations.OpenThread.Input) async throws -> Operations.OpenThread.Output {
        let id = try Self.circleID(input.path.circleId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let other = try Self.bodyID(json.userId, "user_id")
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.open(circleID: id, with: other, userID: caller.id, on: connection)
        })))
    }

    func setThreadNotify(_ input: Operations.SetThreadNotify.Input) async throws -> Operations.SetThreadNotify.Output {
        let id = try Self.threadID(input.path.threadId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let notify = json.notify
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.setNotify(id, notify: notify, userID: caller.id, on: connection)
        })))
    }

    func listMessages(_ input: Operations.ListMessages.Input) async throws -> Operations.ListMessages.Output {
        let id = try Self.threadID(input.path.threadId)
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...200)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await messages.messages(id, before: input.query.before, limit: limit, userID: caller.id, on: connection)
        })))
    }

    func sendMessage(_ input: Operations.SendMessage.Input) async throws -> Operations.SendMessage.Output {
        let id = try Self.threadID(input.path.threadId)
        guard case .json(let message) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let replyTo = try message.replyToId.map { try Self.bodyID($0, "reply_to_id") }
        return .created(.init(body: .json(Components.Schemas.Message(try await database.callerWrite { caller, connection in
            try await messages.send(id, body: message.body, replyTo: replyTo, userID: caller.id, on: connection)
        }))))
    }

    func markThreadRead(_ input: Operations.MarkThreadRead.Input) async throws -> Operations.MarkThreadRead.Output {
        let id = try Self.threadID(input.path.threadId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await messages.markRead(id, userID: caller.id, on: connection) })))
    }

    // Reactions are set (PUT) and unset (DELETE), never toggled: a retried request changes nothing.

    func addMessageReaction(_ input: Operations.AddMessageReaction.Input) async throws -> Operations.AddMessageReaction.Output {
        .ok(.init(body: .json(try await react(input.path.threadId, input.path.messageId, input.path.emoji, on: true))))
    }

    func removeMessageReaction(_ input: Operations.RemoveMessageReaction.Input) async throws -> Operations.RemoveMessageReaction.Output {
        .ok(.init(body: .json(try await react(input.path.threadId, input.path.messageId, input.path.emoji, on: false))))
    }

    private func react(_ thread: String, _ message: String, _ emoji: String, on: Bool) async throws -> ReactionState {
        let id = try Self.threadID(thread)
        guard let messageID = UUID(canonical: message) else { throw CirclesErrors.messageNotFound }
        return try await database.callerWrite { caller, connection in
            try await messages.react(id, messageID: messageID, emoji: emoji, on: on, userID: caller.id, on: connection)
        }
    }
}
