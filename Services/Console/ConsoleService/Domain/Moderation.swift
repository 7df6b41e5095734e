import ColonyModels
import ColonyPlatform
import Foundation
import Logging

/// The moderation queue of all five apps: each app's service keeps its reports
/// (`ReportDesk`); the console asks them, oldest report first, and acts through them. Every action
/// is checked against the operator's rights on the object's app, written to the audit log and
/// published (`content_removed`, `user_warned`, one `report_resolved` per reporter) in one
/// transaction; a suspension is auth's ban (its own audit entry and `user_suspended`).
public struct Moderation: Sendable {
    /// The domain services, by the app whose reports each keeps.
    let services: [App: PipelineClient]
    let users: UserAdministration
    let operators: Operators
    let logger: Logger

    public init(services: [ColonyService: PipelineClient], users: UserAdministration, operators: Operators, logger: Logger) {
        var byApp: [App: PipelineClient] = [:]
        for app in App.allCases { byApp[app] = services[app.domainService] }
        self.services = byApp
        self.users = users
        self.operators = operators
        self.logger = logger
    }

    /// One reported object in the queue, with the app it is in.
    public struct Item: Sendable {
        public var app: App
        public var item: ReportDesk.QueueItem
    }

    /// The queue of every app the operator moderates, oldest report first; the apps whose
    /// service did not answer, by name.
    public func queue(by actor: SignedInOperator) async throws -> (items: [Item], unanswered: [App]) {
        guard actor.rights.allows(.moderateContent) else { throw ConsoleRefusal(.forbidden, "Your role does not moderate content.") }
        let apps = actor.rights.visibleApps
        return await withTaskGroup(of: (App, [ReportDesk.QueueItem]?).self) { group in
            for app in apps {
                group.addTask {
                    guard let client = services[app] else { return (app, nil) }
                    do {
                        return (app, try await client.reportQueue(operatorEmail: actor.email).items)
                    } catch {
                        logger.warning("a service did not list its reports", metadata: ["app": "\(app.rawValue)", "error": "\(error)"])
                        return (app, nil)
                    }
                }
            }
            var items: [Item] = [], unanswered: [App] = []
            for await (app, answer) in group {
                if let answer { items += answer.map { Item(app: app, item: $0) } } else { unanswered.append(app) }
            }
            items.sort { ($0.item.firstReportedAt, $0.item.objectId.uuidString) < ($1.item.firstReportedAt, $1.item.objectId.uuidString) }
            return (items, unanswered.sorted { $0.rawValue < $1.rawValue })
        }
    }

    /// One object's reports, the object as it is now and its owner's history; nil when none.
    public func review(app: App, objectType: String, id: UUID, by actor: SignedInOperator) async throws -> ReportDesk.ObjectReview? {
        guard actor.rights.allows(.moderateContent, on: app) else { throw ConsoleRefusal(.forbidden, "You do not moderate \(app.rawValue).") }
        guard let client = services[app] else { throw ConsoleRefusal(.unavailable, "The console is not told where \(app.rawValue)'s service is (COLONY_CONSOLE_SERVICE_URLS).") }
        return try await client.reportReview(objectType, id, operatorEmail: actor.email)
    }

    /// A moderator's decision on an object's open reports. `banDuration` (a `UserAdministration.banDurations` value) for `suspend`.
    public func act(_ action: ModerationAction, app: App, objectType: String, id: UUID, banDuration: String?, by actor: SignedInOperator) async throws -> ReportDesk.Resolution {
        let auditAction = "moderate_\(action.rawValue)"
        let target = "\(objectType):\(id.lowercased)"
        guard actor.rights.allows(.moderateContent, on: app) else {
            try await operators.record(actor, action: auditAction, app: app, target: target, outcome: .refused, detail: "no right", ipAddress: nil)
            throw ConsoleRefusal(.forbidden, "Your role may not moderate \(app.rawValue).")
        }
        guard let client = services[app] else { throw ConsoleRefusal(.unavailable, "The console is not told where \(app.rawValue)'s service is (COLONY_CONSOLE_SERVICE_URLS).") }
        if action == .suspend {
            guard let duration = banDuration, UserAdministration.banDurations.contains(where: { $0.value == duration }) else {
                throw ConsoleRefusal(.badInput, "Pick how long the suspension lasts.")
            }
            // The owner is the service's to say; auth bans them first, so a failed ban leaves the reports open.
            guard let review = try await client.reportReview(objectType, id, operatorEmail: actor.email) else {
                throw ConsoleRefusal(.notFound, "This \(objectType) has no report.")
            }
            try await users.perform(.ban, on: review.reportedUserId, app: app, argument: duration, by: actor)
        }
        let resolution: ReportDesk.Resolution
        do {
            resolution = try await client.resolveReports(objectType, id, action: action, operatorEmail: actor.email)
        } catch let failure as ConsoleHTTP.Failure {
            try await operators.record(actor, action: auditAction, app: app, target: target, outcome: .failed, detail: failure.description, ipAddress: nil)
            if failure.status == 404 { throw ConsoleRefusal(.notFound, "This \(objectType) has no open report: another moderator may have acted on it.") }
            throw ConsoleRefusal(.unavailable, "\(app.domainService.rawValue) could not do it now (\(failure.status)); nothing was changed.")
        }
        let now = Date()
        let detail = "\(resolution.reporterIds.count) report(s): \(resolution.categories.map(\.rawValue).joined(separator: ", "))\(action == .remove && !resolution.removed ? "; already gone" : "")"
        try await operators.record(actor, action: auditAction, app: app, target: target, outcome: .ok, detail: detail, ipAddress: nil) { outbox, connection in
            let owner = resolution.reportedUserId.lowercased
            switch action {
            case .remove where resolution.removed:
                try await outbox.publish(EventEnvelope(app: app, aggregateId: owner, actor: actor.record.id, payload: ContentRemoved(
                    app: app, objectType: objectType, objectId: id, ownerId: resolution.reportedUserId, categories: resolution.categories, removedAt: now)), on: connection, logger: logger)
            case .warn:
                try await outbox.publish(EventEnvelope(app: app, aggregateId: owner, actor: actor.record.id, payload: UserWarned(
                    userId: resolution.reportedUserId, app: app, objectType: objectType, objectId: id, categories: resolution.categories, warnedAt: now)), on: connection, logger: logger)
            default:
                break
            }
            for reporter in resolution.reporterIds {
                try await outbox.publish(EventEnvelope(app: app, aggregateId: reporter.lowercased, actor: actor.record.id, payload: ReportResolved(
                    reporterId: reporter, app: app, objectType: objectType, objectId: id, outcome: action.reportStatus, resolvedAt: now)), on: connection, logger: logger)
            }
        }
        return resolution
    }
}
