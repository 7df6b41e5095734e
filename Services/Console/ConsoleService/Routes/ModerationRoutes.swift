import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// The moderation queue (reports of all apps, oldest first), one reported object's page, and a
/// moderator's decision on it (dismiss, remove, warn, suspend).
struct ModerationRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("moderation", use: web.page(queue))
        group.get("moderation/:app/:type/:id", use: web.page(object))
        group.post("moderation/:app/:type/:id/:action", use: web.page(act))
    }

    @Sendable func queue(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let (items, unanswered) = try await web.moderation.queue(by: actor)
        let now = Date()
        var values = web.layout(actor, title: "Moderation", section: "moderation")
        values["items"] = items.map { entry -> [String: Any] in
            let item = entry.item
            return ["app": entry.app.rawValue, "object_type": item.objectType, "object_id": item.objectId.lowercased, "open": item.openReports,
                    "categories": item.categories.map { "\($0.category.rawValue) ×\($0.count)" }.joined(separator: ", "),
                    "first_reported_at": ISO8601.format(item.firstReportedAt), "waiting": Self.age(now.timeIntervalSince(item.firstReportedAt)),
                    "overdue": now.timeIntervalSince(item.firstReportedAt) > 86_400]
        }
        values["none"] = items.isEmpty
        values["unanswered"] = unanswered.map(\.rawValue).joined(separator: ", ")
        if let done = request.uri.queryParameters.get("done"), let action = ModerationAction(rawValue: done) { values["done"] = Self.doneText(action) }
        return web.pages.render("moderation", values)
    }

    @Sendable func object(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let (app, type, id) = try Self.target(context)
        guard let review = try await web.moderation.review(app: app, objectType: type, id: id, by: actor) else {
            throw ConsoleRefusal(.notFound, "This \(type) has no report.")
        }
        let hideOwner = review.anonymous && !actor.rights.allows(.viewAnonymousAuthors, on: app)
        var values = web.layout(actor, title: "Reported \(type)", section: "moderation")
        values["app"] = app.rawValue
        values["object_type"] = type
        values["object_id"] = id.lowercased
        values["content"] = review.content ?? ""
        values["gone"] = review.content == nil
        values["anonymous"] = review.anonymous
        values["owner_hidden"] = hideOwner
        values["owner_id"] = hideOwner ? "" : review.reportedUserId.lowercased
        values["owner_link"] = !hideOwner && actor.rights.allows(.viewUsers, on: app)
        values["reports"] = review.reports.map { report -> [String: Any] in
            ["category": report.category.rawValue, "words": report.words ?? "", "status": report.status, "open": report.status == "open",
             "created_at": ISO8601.format(report.createdAt), "resolved_by": report.resolvedBy ?? ""]
        }
        let open = review.reports.filter { $0.status == "open" }.count
        values["open"] = open
        values["can_act"] = open > 0
        values["history"] = review.history.reports.sorted { $0.key < $1.key }.map { ["status": $0.key, "count": $0.value] as [String: Any] }
        values["reported_objects"] = review.history.reportedObjects
        values["durations"] = UserAdministration.banDurations.map { ["value": $0.value, "label": $0.label] }
        return web.pages.render("moderation-object", values)
    }

    @Sendable func act(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let form = try await web.form(request, context, session: actor.session)
        let (app, type, id) = try Self.target(context)
        guard let action = context.parameters.get("action").flatMap(ModerationAction.init(rawValue:)) else { throw ConsoleRefusal(.notFound, "No such action.") }
        _ = try await web.moderation.act(action, app: app, objectType: type, id: id, banDuration: form["duration"], by: actor)
        return ConsolePages.redirect("/console/moderation?done=\(action.rawValue)")
    }

    static func target(_ context: ColonyRequestContext) throws -> (App, String, UUID) {
        guard let app = context.parameters.get("app").flatMap(App.init(rawValue:)),
              let type = context.parameters.get("type"), type.utf8.count <= 32, type.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }),
              let id = context.parameters.get("id").flatMap({ UUID(canonical: $0) })
        else { throw ConsoleRefusal(.notFound, "No such report.") }
        return (app, type, id)
    }

    static func doneText(_ action: ModerationAction) -> String {
        switch action {
        case .dismiss: "Dismissed: the reporters are told it was found within the rules."
        case .remove: "Removed: the content is deleted and the reporters are told."
        case .warn: "Warned: the owner is told in the app, and the reporters that action was taken."
        case .suspend: "Suspended: the account is banned and the reporters are told that action was taken."
        }
    }

    /// How long a report has waited, as a person reads it.
    static func age(_ seconds: TimeInterval) -> String {
        let minutes = Int(max(0, seconds) / 60)
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes / 1440) days"
    }
}
