import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Users: search across the apps the operator works on, a user's page, and the actions on them.
struct UserRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("users", use: web.page(search))
        group.get("users/:app/:id", use: web.page(user))
        group.post("users/:app/:id/:action", use: web.page(act))
    }

    @Sendable func search(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let query = request.uri.queryParameters.get("q") ?? ""
        let found = try await web.users.search(query, by: actor)
        let personal = actor.rights.allows(.viewPersonalData)
        var values = web.layout(actor, title: "Users", section: "users")
        values["query"] = query
        values["searched"] = !query.trimmingCharacters(in: .whitespaces).isEmpty
        values["results"] = found.map { app, user in Self.summary(user, app: app, personal: personal) }
        values["none"] = found.isEmpty
        return web.pages.render("users", values)
    }

    @Sendable func user(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let (app, id) = try Self.target(context)
        guard let (user, sessions) = try await web.users.user(id, app: app, by: actor) else {
            throw ConsoleRefusal(.notFound, "\(app.rawValue) has no such user.")
        }
        let rights = actor.rights
        let personal = rights.allows(.viewPersonalData)
        var values = web.layout(actor, title: user.displayName ?? "User", section: "users")
        values["user"] = Self.summary(user, app: app, personal: personal)
        values["user_app"] = app.rawValue
        values["user_id"] = id.lowercased
        values["identities"] = (user.identities ?? []).map {
            ["provider": $0.provider, "created_at": Self.time($0.createdAt), "last_sign_in_at": Self.time($0.lastSignInAt), "signed_in": $0.lastSignInAt != nil] as [String: Any]
        }
        values["factors"] = (user.factors ?? []).map { ["id": $0.id, "type": $0.factorType, "status": $0.status, "name": $0.friendlyName ?? "", "created_at": Self.time($0.createdAt)] }
        values["sessions"] = sessions.map { session in
            ["created_at": Self.time(session.createdAt), "last_used_at": Self.time(session.refreshedAt ?? session.updatedAt), "user_agent": session.userAgent ?? "",
             "ip": personal ? session.ip ?? "" : "hidden", "aal": session.aal ?? ""] as [String: Any]
        }
        values["metadata"] = personal ? ConsolePages.prettyJSON(user.userMetadata ?? [:]) : ""
        values["show_metadata"] = personal
        values["can_ban"] = rights.allows(.banUsers, on: app)
        values["can_sign_out"] = rights.allows(.signOutUsers, on: app)
        values["can_send_links"] = rights.allows(.sendUserLinks, on: app) && personal
        values["can_remove_factors"] = rights.allows(.removeFactors, on: app)
        values["can_delete"] = rights.allows(.deleteUsers, on: app)
        values["can_request_export"] = rights.allows(.requestExports, on: app)
        values["ban_durations"] = UserAdministration.banDurations.map { ["value": $0.value, "label": $0.label] }
        if let done = request.uri.queryParameters.get("done"), let action = UserAdministration.Action(rawValue: done) {
            values["done"] = Self.doneMessage(action)
        } else if request.uri.queryParameters.get("done") == "test_push" {
            values["done"] = "A test push is queued; its delivery shows under Push devices (reload to see APNs' answer)."
        }
        // What the services hold of them and their pushes, asked at once; either may be unavailable alone.
        async let holdings = web.users.holdings(of: id, app: app, by: actor)
        async let pushes = Self.outcome { try await web.push.user(id, app: app, by: actor) }
        values["holdings"] = try await holdings.map { answer -> [String: Any] in
            [
                "service": answer.service.rawValue, "answered": answer.holdings != nil, "problem": answer.problem ?? "",
                "counts": (answer.holdings ?? []).map { ["name": $0.name.replacingOccurrences(of: "_", with: " "), "count": $0.count] as [String: Any] },
            ]
        }
        switch await pushes {
        case .success(let pushes):
            values["push_answered"] = true
            values["devices"] = PushRoutes.devices(pushes.devices, app: app, user: id, canTest: rights.allows(.sendTestPush, on: app), back: "user")
            values["has_devices"] = !pushes.devices.isEmpty
            values["deliveries"] = pushes.deliveries.map(PushRoutes.delivery)
            values["has_deliveries"] = !pushes.deliveries.isEmpty
        case .failure(let error):
            values["push_problem"] = (error as? ConsoleRefusal)?.message ?? "notifications did not answer"
        }
        return web.pages.render("user", values)
    }

    @Sendable func act(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let form = try await web.form(request, context, session: actor.session)
        let (app, id) = try Self.target(context)
        guard let action = context.parameters.get("action").flatMap(Self.action) else { throw ConsoleRefusal(.notFound, "No such action.") }
        var argument: String? = nil
        switch action {
        case .ban: argument = form["duration"]
        case .removeFactor: argument = form["factor"]
        case .delete:
            // The normal erasure, after the operator typed the address (or the id for a user without one).
            guard let user = try await web.users.user(id, app: app, by: actor)?.user else { throw ConsoleRefusal(.notFound, "\(app.rawValue) has no such user.") }
            let expected = (user.email?.isEmpty == false ? user.email : nil) ?? user.id
            guard (form["confirm"] ?? "").trimmingCharacters(in: .whitespaces).lowercased() == expected.lowercased() else {
                throw ConsoleRefusal(.badInput, "Type the user's address exactly to delete the account.")
            }
        default: break
        }
        try await web.users.perform(action, on: id, app: app, argument: argument, by: actor)
        if action == .delete { return ConsolePages.redirect("/console/users?deleted=1") }
        return ConsolePages.redirect("/console/users/\(app.rawValue)/\(id.lowercased)?done=\(action.rawValue)")
    }

    static func action(_ segment: String) -> UserAdministration.Action? {
        switch segment {
        case "ban": .ban
        case "unban": .unban
        case "sign-out": .signOut
        case "send-recovery": .sendRecovery
        case "resend-confirmation": .resendConfirmation
        case "remove-factor": .removeFactor
        case "delete": .delete
        case "export": .requestExport
        default: nil
        }
    }

    static func doneMessage(_ action: UserAdministration.Action) -> String {
        switch action {
        case .ban: "Banned."
        case .unban: "The ban is lifted."
        case .signOut: "Signed out on every device."
        case .sendRecovery: "A recovery link is on its way."
        case .resendConfirmation: "The confirmation is sent again."
        case .removeFactor: "The factor is removed."
        case .delete: "Deleted."
        case .requestExport: "Their data is being gathered from every service; the link goes to their own address."
        }
    }

    static func target(_ context: ColonyRequestContext) throws -> (App, UUID) {
        guard let app = context.parameters.get("app").flatMap(App.init(rawValue:)),
              let id = context.parameters.get("id").flatMap({ UUID(canonical: $0) })
        else { throw ConsoleRefusal(.notFound, "No such user.") }
        return (app, id)
    }

    static func summary(_ user: AdminUser, app: App, personal: Bool) -> [String: Any] {
        [
            "app": app.rawValue,
            "id": user.id,
            "name": user.displayName ?? "",
            // Mustache renders a section for any string, even an empty one: a flag says whether there is a name.
            "has_name": user.displayName != nil,
            "email": personal ? user.email ?? "" : (user.email?.isEmpty == false ? "hidden" : ""),
            "phone": personal ? user.phone ?? "" : (user.phone?.isEmpty == false ? "hidden" : ""),
            "created_at": time(user.createdAt),
            "last_sign_in_at": time(user.lastSignInAt),
            "confirmed": user.emailConfirmedAt != nil || user.phoneConfirmedAt != nil,
            "banned": user.isBanned,
            "banned_until": time(user.bannedUntil),
            "anonymous": user.isAnonymous ?? false,
        ]
    }

    /// What `body` answered or threw, for a part of a page that may fail alone.
    static func outcome<Value: Sendable>(_ body: @Sendable () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        return ISO8601.format(date)
    }

}
