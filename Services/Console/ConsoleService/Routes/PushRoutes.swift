import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// Push: an app's delivery log (filtered by status), a user's devices and deliveries, and a test
/// push to one of their devices (also on the user's page), through notifications (`PushSupport`).
struct PushRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("push", use: web.page(log))
        group.post("push/:app/:id/:device/test", use: web.page(test))
    }

    @Sendable func log(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let apps = actor.rights.visibleApps.filter { actor.rights.allows(.viewUsers, on: $0) }
        guard let first = apps.first else { throw ConsoleRefusal(.forbidden, "Your role does not show users' pushes.") }
        let parameters = request.uri.queryParameters
        let app = parameters.get("app").flatMap(App.init(rawValue:)) ?? first
        guard apps.contains(app) else { throw ConsoleRefusal(.forbidden, "You do not work on \(app.rawValue).") }
        let status = parameters.get("status").flatMap { $0.isEmpty ? nil : $0 }
        let userText = (parameters.get("user") ?? "").trimmingCharacters(in: .whitespaces)
        var values = web.layout(actor, title: "Push", section: "push")
        values["apps"] = apps.map { ["value": $0.rawValue, "selected": $0 == app] as [String: Any] }
        values["app"] = app.rawValue
        values["statuses"] = PushAdmin.statuses.map { ["value": $0, "selected": $0 == status] as [String: Any] }
        values["user_query"] = userText
        if !userText.isEmpty {
            guard let user = UUID(canonical: userText) else { throw ConsoleRefusal(.badInput, "A user is looked up here by their id; find it on the Users page.") }
            let pushes = try await web.push.user(user, app: app, by: actor)
            values["showing_user"] = true
            values["user_id"] = user.lowercased
            values["devices"] = Self.devices(pushes.devices, app: app, user: user, canTest: actor.rights.allows(.sendTestPush, on: app), back: "push")
            values["has_devices"] = !pushes.devices.isEmpty
            values["deliveries"] = pushes.deliveries.map(Self.delivery)
            if request.uri.queryParameters.get("done") == "test" { values["done"] = "A test push is queued; its delivery shows below (reload to see APNs' answer)." }
        } else {
            values["deliveries"] = try await web.push.log(app: app, status: status, by: actor).map(Self.delivery)
        }
        values["has_deliveries"] = (values["deliveries"] as? [[String: Any]])?.isEmpty == false
        return web.pages.render("push", values)
    }

    @Sendable func test(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let form = try await web.form(request, context, session: actor.session)
        let (app, user) = try UserRoutes.target(context)
        guard let device = context.parameters.get("device").flatMap({ UUID(canonical: $0) }) else { throw ConsoleRefusal(.notFound, "No such device.") }
        _ = try await web.push.sendTest(user: user, device: device, app: app, by: actor)
        if form["back"] == "user" { return ConsolePages.redirect("/console/users/\(app.rawValue)/\(user.lowercased)?done=test_push") }
        return ConsolePages.redirect("/console/push?app=\(app.rawValue)&user=\(user.lowercased)&done=test")
    }

    /// A user's devices as the pages list them, each with its test push form where allowed.
    static func devices(_ devices: [PushAdmin.Device], app: App, user: UUID, canTest: Bool, back: String) -> [[String: Any]] {
        devices.map { device in
            [
                "id": device.id.lowercased, "kind": device.kind == "live_activity" ? "Live Activity" : "app install",
                "platform": device.platform ?? "", "environment": device.environment, "app_version": device.appVersion ?? "",
                "locale": device.locale ?? "", "token_suffix": device.tokenSuffix, "created_at": ISO8601.format(device.createdAt),
                "updated_at": ISO8601.format(device.updatedAt), "last_push_at": device.lastPushAt.map(ISO8601.format) ?? "never",
                "last_push_status": device.lastPushStatus ?? "", "can_test": canTest && device.kind == "device",
                "app": app.rawValue, "user": user.lowercased, "back": back,
            ] as [String: Any]
        }
    }

    static func delivery(_ delivery: PushAdmin.Delivery) -> [String: Any] {
        [
            "id": delivery.id.lowercased, "user": delivery.userId.lowercased, "app": delivery.app, "kind": delivery.kind, "push_type": delivery.pushType,
            "status": delivery.status, "bad": delivery.status == "failed", "attempts": delivery.attempts,
            "answer": [delivery.lastStatus.map { "\($0)" }, delivery.lastReason].compactMap { $0 }.joined(separator: " "),
            "token_suffix": delivery.tokenSuffix, "created_at": ISO8601.format(delivery.createdAt),
            "sent_at": delivery.sentAt.map(ISO8601.format) ?? "", "held_until": delivery.heldUntil.map(ISO8601.format) ?? "",
            // Mustache renders a section for any string, even an empty one: a flag says whether it was held.
            "has_held": delivery.heldUntil != nil,
        ]
    }
}
