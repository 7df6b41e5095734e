import ColonyModels
import Foundation
import Hummingbird
import Logging

/// The console's moderation routes on every domain service that takes reports
/// (`ServiceDefinition.reports`), beside the pipeline routes under `/internal/v1/console/`: the
/// queue of reported objects, one object's reports with the object as it is now, and a
/// moderator's action on them. Only the console's credential (`ConsoleCaller`), which checks the
/// operator's rights first; never routed by the gateway or the Ingress. Documented by
/// `pipeline-admin.openapi.json`.
public enum ModerationAdminRoutes {
    public static let reportsPath = "\(PipelineAdminRoutes.prefix)/reports"

    public static func objectPath(_ objectType: String, _ id: UUID) -> String { "\(reportsPath)/\(objectType)/\(id.lowercased)" }

    /// `GET /internal/v1/console/reports`: objects with open reports, the oldest report first.
    public struct Queue: Codable, Sendable, Equatable {
        public var service: String
        public var app: App
        public var items: [ReportDesk.QueueItem]
    }

    /// `POST .../reports/{object_type}/{object_id}/resolve`'s body.
    public struct ResolveRequest: Codable, Sendable, Equatable {
        public var action: ModerationAction

        public init(action: ModerationAction) {
            self.action = action
        }
    }

    static func add(to router: Router<ColonyRequestContext>, service: ColonyService, key: InternalKey?, database: Database, desk: ReportDesk) {
        router.get(RouterPath(reportsPath)) { request, context -> Response in
            _ = try ConsoleCaller.required(request, key: key)
            let limit = try RouteSupport.limit(request, default: 100, range: 1...500)
            let items = try await PipelineAdminRoutes.reading {
                try await database.withConnection { connection in try await desk.queue(limit: limit, on: connection) }
            }
            return try RouteSupport.json(Queue(service: service.rawValue, app: desk.app, items: items), status: .ok)
        }
        router.get(RouterPath("\(reportsPath)/{object_type}/{object_id}")) { request, context -> Response in
            _ = try ConsoleCaller.required(request, key: key)
            let (type, id) = try object(context, desk: desk)
            let review = try await PipelineAdminRoutes.reading {
                try await database.withConnection { connection in try await desk.review(type, id, on: connection) }
            }
            guard let review else { throw APIError.notFound("no report of this \(type)", code: "report_not_found") }
            return try RouteSupport.json(review, status: .ok)
        }
        router.post(RouterPath("\(reportsPath)/{object_type}/{object_id}/resolve")) { request, context -> Response in
            let caller = try ConsoleCaller.required(request, key: key)
            let (type, id) = try object(context, desk: desk)
            let body = try RouteSupport.decode(ResolveRequest.self, try await RouteSupport.collect(request, context))
            let resolution = try await PipelineAdminRoutes.reading {
                try await database.transaction { connection in
                    try await desk.resolve(type, id, action: body.action, by: caller.operatorEmail, on: connection)
                }
            }
            context.logger.notice("reports resolved by an operator through the console", metadata: [
                "operator": "\(caller.operatorEmail)", "object_type": "\(type)", "object_id": "\(id.lowercased)", "action": "\(body.action.rawValue)",
            ])
            return try RouteSupport.json(resolution, status: .ok)
        }
    }

    static func object(_ context: ColonyRequestContext, desk: ReportDesk) throws -> (String, UUID) {
        guard let type = context.parameters.get("object_type"), desk.content.objectTypes.contains(type) else {
            throw APIError.notFound("this service takes no reports of that type", code: "report_not_found")
        }
        return (type, try ConsoleCaller.pathID(context, "object_id", of: type))
    }
}
