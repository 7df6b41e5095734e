import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Supabase Auth's admin endpoints, for an app's service-role key only.
struct AdminRoutes {
    let accounts: Accounts
    let keyRing: KeyRing

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("admin/users", use: list)
        group.post("admin/users", use: create)
        group.get("admin/users/:id", use: get)
        group.put("admin/users/:id", use: update)
        group.delete("admin/users/:id", use: delete)
        group.post("invite", use: invite)
        group.post("admin/generate_link", use: generateLink)
        group.get("admin/audit", use: auditLog)
    }

    /// `GET /admin/audit`: the app's audit log, newest first, GoTrue's `query`, `page`,
    /// `per_page`, `Link` and `X-Total-Count`.
    @Sendable func auditLog(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
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
        let app = try await serviceRoleApp(request)
        let body = try await context.requestDecoder.decode(InviteBody.self, from: request, context: context)
        let user = try await accounts.invite(app: app, email: body.email, data: body.data ?? [:], redirectTo: request.uri.queryParameters["redirect_to"].map(String.init),
                                             acceptLanguage: request.headers[.acceptLanguage])
        return try json(user, request, context)
    }

    /// `POST /admin/generate_link`: the link and code, returned rather than mailed. `redirect_to`
    /// from the body, else the query (where the clients put it).
    @Sendable func generateLink(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        let body = try await context.requestDecoder.decode(GenerateLinkBody.self, from: request, context: context)
        let redirectTo = body.redirectTo.flatMap { $0.isEmpty ? nil : $0 } ?? request.uri.queryParameters["redirect_to"].map(String.init)
        let link = try await accounts.generateLink(app: app, type: body.type, email: body.email, newEmail: body.newEmail, password: body.password, data: body.data, redirectTo: redirectTo)
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

    @Sendable func list(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        let query = request.uri.queryParameters
        // At most Int.max / 1000: the offset `(page - 1) * perPage` must not overflow (a trap);
        // pages that far out are empty anyway.
        let page = min(Int.max / 1000, max(1, query["page"].flatMap { Int(String($0)) } ?? 1))
        let perPage = min(1000, max(1, query["per_page"].flatMap { Int(String($0)) } ?? 50))
        let (users, total) = try await accounts.adminList(app: app, page: page, perPage: perPage)
        var response = try json(UserListResponse(users: users, aud: app.rawValue), request, context)
        response.headers[HTTPField.Name("X-Total-Count")!] = "\(total)"
        return response
    }

    @Sendable func create(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        let body = try await context.requestDecoder.decode(UserAttributesBody.self, from: request, context: context)
        return try json(try await accounts.adminCreate(app: app, attributes: body.attributes), request, context)
    }

    @Sendable func get(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        return try json(UserResource(try await accounts.user(app: app, id: try userID(context))), request, context)
    }

    @Sendable func update(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        let id = try userID(context)
        let body = try await context.requestDecoder.decode(UserAttributesBody.self, from: request, context: context)
        return try json(try await accounts.adminUpdate(app: app, id: id, attributes: body.attributes), request, context)
    }

    @Sendable func delete(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let app = try await serviceRoleApp(request)
        try await accounts.deleteUser(app: app, id: try userID(context))
        return try json(EmptyResponse(), request, context)
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
