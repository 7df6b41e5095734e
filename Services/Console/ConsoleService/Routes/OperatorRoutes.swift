import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Operators, for owners: who may use the console, with which role on which apps. A new
/// operator gets an invitation link, shown once to the owner who made it.
struct OperatorRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("operators", use: web.page(list))
        group.post("operators", use: web.page(invite))
        group.post("operators/:id/:action", use: web.page(act))
    }

    func owner(_ request: Request, _ context: ColonyRequestContext) async throws -> SignedInOperator {
        let actor = try await web.signedIn(request, context)
        guard actor.rights.allows(.manageOperators) else {
            try await web.operators.record(actor, action: "manage_operators", outcome: .refused, detail: "no right", ipAddress: nil)
            throw ConsoleRefusal(.forbidden, "Only owners manage operators.")
        }
        return actor
    }

    @Sendable func list(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await owner(request, context)
        return try await page(actor, invited: nil)
    }

    func page(_ actor: SignedInOperator, invited: (email: String, link: String)?, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        var values = web.layout(actor, title: "Operators", section: "operators")
        values["operators"] = try await web.operators.all().map { record -> [String: Any] in
            [
                "id": record.id.lowercased, "email": record.email, "role": record.role.title,
                "apps": record.rights.apps.isEmpty ? "all apps" : record.rights.apps.map(\.rawValue).joined(separator: ", "),
                "status": record.disabledAt != nil ? "disabled" : record.passwordHash == nil ? "invited" : record.totpConfirmedAt == nil ? "setting up" : "active",
                "disabled": record.disabledAt != nil,
                "last_sign_in_at": record.lastSignInAt.map(ISO8601.format) ?? "",
                "is_self": record.id == actor.record.id,
            ]
        }
        values["roles"] = OperatorRole.allCases.map { ["value": $0.rawValue, "label": $0.title] }
        values["apps"] = App.allCases.map { ["value": $0.rawValue] }
        if let invited {
            values["invited_email"] = invited.email
            values["invited_link"] = invited.link
        }
        if let error { values["error"] = error }
        return web.pages.render("operators", values, status: status)
    }

    @Sendable func invite(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await owner(request, context)
        let form = try await web.form(request, context, session: actor.session)
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard let role = form["role"].flatMap(OperatorRole.init(rawValue:)) else {
            return try await page(actor, invited: nil, error: "Pick a role.", status: .badRequest)
        }
        let apps = Self.apps(form)
        do {
            let token = try await web.operators.invite(email: email, rights: OperatorRights(role: role, apps: apps), invitedBy: actor.email)
            try await web.operators.record(actor, action: "add_operator", target: email, outcome: .ok, detail: "\(role.rawValue) \(apps.map(\.rawValue))", ipAddress: nil)
            return try await page(actor, invited: (email, "/console/welcome?token=\(token)"))
        } catch let refusal as ConsoleRefusal {
            try await web.operators.record(actor, action: "add_operator", target: email, outcome: .refused, detail: refusal.message, ipAddress: nil)
            return try await page(actor, invited: nil, error: refusal.message, status: HTTPResponse.Status(code: refusal.status))
        }
    }

    @Sendable func act(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await owner(request, context)
        let form = try await web.form(request, context, session: actor.session)
        guard let id = context.parameters.get("id").flatMap({ UUID(canonical: $0) }), let target = try await web.operators.find(id: id) else {
            throw ConsoleRefusal(.notFound, "No such operator.")
        }
        guard target.id != actor.record.id else { throw ConsoleRefusal(.badInput, "Ask another owner to change your own account.") }
        switch context.parameters.get("action") {
        case "disable":
            try await web.operators.setDisabled(id: id, true)
            try await web.operators.record(actor, action: "disable_operator", target: target.email, outcome: .ok, ipAddress: nil)
        case "enable":
            try await web.operators.setDisabled(id: id, false)
            try await web.operators.record(actor, action: "enable_operator", target: target.email, outcome: .ok, ipAddress: nil)
        case "rights":
            guard let role = form["role"].flatMap(OperatorRole.init(rawValue:)) else { throw ConsoleRefusal(.badInput, "Pick a role.") }
            let rights = OperatorRights(role: role, apps: Self.apps(form))
            try await web.operators.setRights(id: id, rights: rights)
            try await web.operators.record(actor, action: "change_operator_rights", target: target.email, outcome: .ok,
                                           detail: "\(role.rawValue) \(rights.apps.map(\.rawValue))", ipAddress: nil)
        case "reinvite":
            let token = try await web.operators.reinvite(id: id)
            try await web.operators.record(actor, action: "reinvite_operator", target: target.email, outcome: .ok, ipAddress: nil)
            return try await page(actor, invited: (target.email, "/console/welcome?token=\(token)"))
        default:
            throw ConsoleRefusal(.notFound, "No such action.")
        }
        return ConsolePages.redirect("/console/operators")
    }

    /// The apps ticked in a form (`app_<name>=on`); none ticked: every app.
    static func apps(_ form: FormBody) -> [App] {
        App.allCases.filter { form["app_\($0.rawValue)"] == "on" }
    }
}
