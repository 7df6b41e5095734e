import ColonyModels
import ColonyPlatform
import Foundation

/// The console's moderation routes (`ModerationAdminRoutes`) on a running service, called as the
/// console calls them: with `key`, the service's `COLONY_CONSOLE_KEY` (`configure: { $0.consoleKey = key }`).
public struct ModerationCalls: Sendable {
    public let service: RunningService
    public let key: InternalKey
    public var operatorEmail = "moderator@colony.test"

    public init(service: RunningService, key: InternalKey) {
        self.service = service
        self.key = key
    }

    var headers: [(String, String)] { ConsoleCaller.headers(key: key, operatorEmail: operatorEmail, app: service.app) }

    /// Objects with open reports, the oldest first.
    public func queue() async throws -> [ReportDesk.QueueItem] {
        let reply = try await service.request(.GET, "\(service.base)\(ModerationAdminRoutes.reportsPath)", as: nil, headers: headers)
        guard reply.status == 200 else { throw Failure(reply: reply) }
        return try ColonyJSON.decoder().decode(ModerationAdminRoutes.Queue.self, from: Data(buffer: reply.bytes)).items
    }

    /// One object's reports with the object as it is now; nil when it has none.
    public func review(_ objectType: String, _ id: UUID) async throws -> ReportDesk.ObjectReview? {
        let reply = try await service.request(.GET, "\(service.base)\(ModerationAdminRoutes.objectPath(objectType, id))", as: nil, headers: headers)
        if reply.status == 404 { return nil }
        guard reply.status == 200 else { throw Failure(reply: reply) }
        return try ColonyJSON.decoder().decode(ReportDesk.ObjectReview.self, from: Data(buffer: reply.bytes))
    }

    /// A moderator's action on the object's open reports.
    public func resolve(_ objectType: String, _ id: UUID, _ action: ModerationAction) async throws -> ReportDesk.Resolution {
        let reply = try await service.request(.POST, "\(service.base)\(ModerationAdminRoutes.objectPath(objectType, id))/resolve", as: nil,
                                              json: ["action": action.rawValue], headers: headers)
        guard reply.status == 200 else { throw Failure(reply: reply) }
        return try ColonyJSON.decoder().decode(ReportDesk.Resolution.self, from: Data(buffer: reply.bytes))
    }

    /// How a decision was refused, as "<status> <code>" ("answered 200" when it was not).
    public func refusal(_ objectType: String, _ id: UUID, _ action: ModerationAction) async throws -> String {
        do {
            _ = try await resolve(objectType, id, action)
            return "answered 200"
        } catch let failure as Failure {
            return "\(failure.reply.status) \(failure.reply.code ?? "")"
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var reply: RunningService.Reply
        public var description: String { "answered \(reply.status): \(reply.body)" }
    }
}
