import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Supabase Auth's admin endpoints and Colony's additions for the console (a user's sessions,
/// signing them out, sending them a link, the app's import runs), for an app's service-role key
/// or the console's credential acting in one app for an operator (`adminCaller`).
struct AdminRoutes {
    let accounts: Accounts
    let keyRing: KeyRing
    /// `COLONY_CONSOLE_KEY`; nil: the console is refused, as any other bearer that is no
    /// service-role key.
    var consoleKey: InternalKey? = nil

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("admin/users", use: list)
        group.post("admin/users", use: create)
        group.get("admin/users/:id", use: get)
        group.put("admin/users/:id", use: update)
        group.delete("admin/users/:id", use: delete)
        group.get("admin/users/:id/sessions", use: sessions)
        group.post("admin/users/:id/logout", use: logout)
        group.post("admin/users/:id/export", use: requestExport)
        group.post("admin/users/:id/recover", use: recover)
        group.post("admin/users/:id/resend", use: resend)
        group.post("invite", use: invite)
        group.post("admin/generate_link", use: generateLink)
        group.get("admin/audit", use: auditLog)
        group.get("admin/imports", use: imports)
    }

    /// Who calls an admin route: the app it acts in, and who the audit entries of its action name.
    struct Caller: Sendable {
        var app: App
        /// The operator or the service role.
        var actor: AuditActor
        /// The console's operator; nil for an app's service-role key.
        var operatorActor: AuditActor?
    }

    /// The console's credential with its operator and app (`X-Colony-App` required: 400
    /// `app_required`), else an app's service-role key; anything else is refused as before
    /// (401 without a bearer or key, 403 for one that is neither).
    func adminCaller(_ request: Request) async throws -> Caller {
        if let console = try ConsoleCaller.from(request, key: consoleKey) {
            let app = try console.requiredApp()
            let actor = AuditActor.operator(console.operatorEmail)
            return Caller(app: app, actor: actor, operatorActor: actor)
        }
        return Caller(app: try await serviceRoleApp(request), actor: .serviceRole, operatorActor: nil)
    }

    /// `GET /admin/audit`: the app's audit log, newest first, GoTrue's `query`, `page`,
    /// `per_page`, `Link` and `X-Total-Count`.
    @Sendable func auditLog(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await adminCaller(request).app
        let parameters = request.uri.queryParameters
        let query = try AuditQuery.parse(parameters["query"].map(String.init))
        let page = try AuditPage.parse(page: parameters["page"].map(String.init), perPage: parameters["per_page"].map(String.init))
        let (entries, total) = try await accounts.auditLog(app: app, query: query, page: page)
        var response = try json(entries, request, context)
        let items = parameters.map { (String($0.key), String($0.value)) }
        response.headers[HTTPField.Name("Link")!] = page.linkHeader(path: request.uri.path, query: items, total: total)
        response.headers[HTTPField.Name("X-Total-Count")!] = "\(total)"
        return response
    }

    /// Colony's `GET /admin/imports[?per_page=]`: `{"imports": [...]}`, the app's `colony-admin
    /// import supabase` runs as the import recorded them, newest first (the console's Imports page).
    @Sendable func imports(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await adminCaller(request).app
        let perPage = try ImportRunPage.size(request.uri.queryParameters["per_page"].map(String.init))
        return try json(ImportRunList(imports: try await accounts.importRuns(app: app, limit: perPage)), request, context)
    }

    struct InviteBody: Decodable {
        var email: String?
        var data: [String: JSONValue]?
    }

    struct GenerateLinkBody: Decodable {
        var type: String?
        var email: String?
        var newEmail: String?
        var password: String?
        var data: [String: JSONValue]?
        var redirectTo: String?
    }

    /// `POST /invite`: the new (or unconfirmed) account, its invitation mailed.
    @Sendable func invite(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        let body = try await context.requestDecoder.decode(InviteBody.self, from: request, context: context)
        let user = try await accounts.invite(app: caller.app, email: body.email, data: body.data ?? [:], redirectTo: request.uri.queryParameters["redirect_to"].map(String.init),
                                             acceptLanguage: request.headers[.acceptLanguage], actor: caller.actor)
        return try json(user, request, context)
    }

    /// `POST /admin/generate_link`: the link and code, returned rather than mailed. `redirect_to`
    /// from the body, else the query (where the clients put it).
    @Sendable func generateLink(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        let body = try await context.requestDecoder.decode(GenerateLinkBody.self, from: request, context: context)
        let redirectTo = body.redirectTo.flatMap { $0.isEmpty ? nil : $0 } ?? request.uri.queryParameters["redirect_to"].map(String.init)
        let link = try await accounts.generateLink(app: caller.app, type: body.type, email: body.email, newEmail: body.newEmail, password: body.password, data: body.data,
                                                   redirectTo: redirectTo, actor: caller.actor)
        return try json(link, request, context)
    }

    struct UserAttributesBody: Decodable {
        var email: String?
        var phone: String?
        var password: String?
        var emailConfirm: Bool?
        var phoneConfirm: Bool?
        var userMetadata: [String: JSONValue]?
        var appMetadata: [String: JSONValue]?
        var banDuration: String?

        var attributes: Accounts.AdminUserAttributes {
            var attributes = Accounts.AdminUserAttributes()
            attributes.email = email
            attributes.phone = phone
            attributes.password = password
            attributes.emailConfirm = emailConfirm
            attributes.phoneConfirm = phoneConfirm
            attributes.userMetadata = userMetadata
            attributes.appMetadata = appMetadata
            attributes.banDuration = banDuration
            return attributes
        }
    }

    /// `GET /admin/users`: a page of the app's accounts, oldest first; with `filter`, of what the
    /// search matches (`UserSearch`: at most 1000, which `X-Total-Count` then counts).
    @Sendable func list(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await adminCaller(request).app
        let query = request.uri.queryParameters
        // At most Int.max / 1000: the offset `(page - 1) * perPage` must not overflow (a trap);
        // pages that far out are empty anyway.
        let page = min(Int.max / 1000, max(1, query["page"].flatMap { Int(String($0)) } ?? 1))
        let perPage = min(1000, max(1, query["per_page"].flatMap { Int(String($0)) } ?? 50))
        let (users, total) = if let search = try UserSearch.parse(query["filter"].map(String.init)) {
            try await accounts.adminSearch(app: app, search: search, page: page, perPage: perPage)
        } else {
            try await accounts.adminList(app: app, page: page, perPage: perPage)
        }
        var response = try json(UserListResponse(users: users, aud: app.rawValue), request, context)
        response.headers[HTTPField.Name("X-Total-Count")!] = "\(total)"
        return response
    }

    @Sendable func create(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        let body = try await context.requestDecoder.decode(UserAttributesBody.self, from: request, context: context)
        return try json(try await accounts.adminCreate(app: caller.app, attributes: body.attributes, actor: caller.actor), request, context)
    }

    @Sendable func get(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await adminCaller(request).app
        return try json(UserResource(try await accounts.user(app: app, id: try userID(context))), request, context)
    }

    @Sendable func update(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        let id = try userID(context)
        let body = try await context.requestDecoder.decode(UserAttributesBody.self, from: request, context: context)
        return try json(try await accounts.adminUpdate(app: caller.app, id: id, attributes: body.attributes, actor: caller.actor), request, context)
    }

    @Sendable func delete(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        try await accounts.deleteUser(app: caller.app, id: try userID(context), actor: caller.actor)
        return try json(EmptyResponse(), request, context)
    }

    /// Colony's `GET /admin/users/{id}/sessions`: `{"sessions": [...]}`, newest first.
    @Sendable func sessions(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await adminCaller(request).app
        return try json(AdminSessionList(sessions: try await accounts.adminSessions(app: app, userID: try userID(context))), request, context)
    }

    /// Colony's `POST /admin/users/{id}/logout`: signed out everywhere, 204.
    @Sendable func logout(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        try await accounts.adminLogout(app: caller.app, userID: try userID(context), actor: caller.actor)
        return Response(status: .noContent)
    }

    /// Colony's `POST /admin/users/{id}/export`: a subject access request, for the console only (a
    /// named operator asks; the audit entry carries their address): the same export the user asks for
    /// with `POST /user/export`, its link sent to the user's own address. 202 with the export.
    @Sendable func requestExport(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        guard let operatorActor = caller.operatorActor else {
            throw APIError.forbidden("a subject access request is made by a named operator, through the console", code: "operator_required")
        }
        let export = try await accounts.requestExport(app: caller.app, userID: try userID(context), requestedBy: operatorActor.username,
                                                      client: ClientInfo(ip: context.clientAddress, userAgent: request.headers[.userAgent]))
        var response = try json(export, request, context)
        response.status = .accepted
        return response
    }

    /// Colony's `POST /admin/users/{id}/recover[?redirect_to=]`: the recovery mail (or, for a
    /// phone, the sign-in code) sent now, 204.
    @Sendable func recover(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        try await accounts.adminRecover(app: caller.app, userID: try userID(context), actor: caller.actor,
                                        redirectTo: request.uri.queryParameters["redirect_to"].map(String.init))
        return Response(status: .noContent)
    }

    /// Colony's `POST /admin/users/{id}/resend[?redirect_to=]`: the sign-up's confirmation again, 204.
    @Sendable func resend(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let caller = try await adminCaller(request)
        try await accounts.adminResend(app: caller.app, userID: try userID(context), actor: caller.actor,
                                       redirectTo: request.uri.queryParameters["redirect_to"].map(String.init))
        return Response(status: .noContent)
    }

    /// The app of the service-role key presented as bearer token (or, failing that, apikey).
    func serviceRoleApp(_ request: Request) async throws -> App {
        var presented: [String] = []
        if let header = request.headers[.authorization], let token = BearerToken.from(authorization: header) { presented.append(token) }
        if let key = request.headers[.apiKey] { presented.append(key) }
        guard !presented.isEmpty else { throw AuthErrors.noAuthorization }
        for key in presented {
            if let record = try await keyRing.apiKey(key), record.role == .serviceRole { return record.app }
        }
        throw AuthErrors.notAdmin
    }

    func userID(_ context: ColonyRequestContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            throw AuthErrors.userNotFound
        }
        return id
    }
}
