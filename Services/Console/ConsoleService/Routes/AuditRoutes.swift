import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The audit log: every operator action and sign-in, newest first, filtered by operator,
/// action, app or target; the same rows as CSV.
struct AuditRoutes {
    let web: ConsoleWeb
    static let pageSize = 100
    static let csvLimit = 50_000

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("audit", use: web.page(list))
        group.get("audit.csv", use: web.page(csv))
    }

    func viewer(_ request: Request, _ context: ColonyRequestContext) async throws -> SignedInOperator {
        let actor = try await web.signedIn(request, context)
        guard actor.rights.allows(.viewAuditLog) else { throw ConsoleRefusal(.forbidden, "Your role does not show the audit log.") }
        return actor
    }

    static func filter(_ request: Request) throws -> AuditFilter {
        let parameters = request.uri.queryParameters
        func text(_ name: String) -> String? {
            guard let value = parameters.get(name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return String(value.prefix(320))
        }
        var filter = AuditFilter(operatorEmail: text("operator")?.lowercased(), action: text("action"), target: text("target"))
        if let app = text("app") {
            guard let known = App(rawValue: app) else { throw ConsoleRefusal(.badInput, "No such app.") }
            filter.app = known
        }
        if let before = text("before") {
            guard let id = Int64(before), id > 0 else { throw ConsoleRefusal(.badInput, "Not a page of the log.") }
            filter.before = id
        }
        return filter
    }

    @Sendable func list(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await viewer(request, context)
        let filter = try Self.filter(request)
        let entries = try await web.operators.auditLog(filter, limit: Self.pageSize)
        var values = web.layout(actor, title: "Audit log", section: "audit")
        values["entries"] = entries.map { entry -> [String: Any] in
            ["id": entry.id, "at": ISO8601.format(entry.at), "operator": entry.operatorEmail, "role": entry.role ?? "", "action": entry.action,
             "app": entry.app ?? "", "target": entry.target ?? "", "outcome": entry.outcome.rawValue, "refused": entry.outcome != .ok,
             "detail": entry.detail ?? "", "ip": entry.ipAddress ?? ""]
        }
        values["filter_operator"] = filter.operatorEmail ?? ""
        values["filter_action"] = filter.action ?? ""
        values["filter_target"] = filter.target ?? ""
        values["apps"] = App.allCases.map { ["value": $0.rawValue, "selected": filter.app == $0] }
        if entries.count == Self.pageSize, let last = entries.last {
            var items = URLComponents()
            items.queryItems = [("operator", filter.operatorEmail), ("action", filter.action), ("app", filter.app?.rawValue), ("target", filter.target)]
                .compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } } + [URLQueryItem(name: "before", value: "\(last.id)")]
            values["next"] = "/console/audit?\(items.percentEncodedQuery ?? "")"
        }
        var csv = URLComponents()
        csv.queryItems = [("operator", filter.operatorEmail), ("action", filter.action), ("app", filter.app?.rawValue), ("target", filter.target)]
            .compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        values["csv"] = "/console/audit.csv" + (csv.queryItems?.isEmpty == false ? "?\(csv.percentEncodedQuery ?? "")" : "")
        return web.pages.render("audit", values)
    }

    @Sendable func csv(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await viewer(request, context)
        let filter = try Self.filter(request)
        let entries = try await web.operators.auditLog(filter, limit: Self.csvLimit)
        try await web.operators.record(actor, action: "export_audit_log", outcome: .ok, detail: "\(entries.count) entries", ipAddress: nil)
        var text = "id,at,operator,role,action,app,target,outcome,detail,ip_address\r\n"
        for entry in entries {
            let fields = ["\(entry.id)", ISO8601.format(entry.at), entry.operatorEmail, entry.role ?? "", entry.action, entry.app ?? "", entry.target ?? "",
                          entry.outcome.rawValue, entry.detail ?? "", entry.ipAddress ?? ""]
            text += fields.map(Self.csvField).joined(separator: ",") + "\r\n"
        }
        var response = Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        ConsolePages.secure(&response)
        response.headers[.contentDisposition] = "attachment; filename=\"colony-console-audit.csv\""
        return response
    }

    /// RFC 4180 quoting; a field a spreadsheet would run as a formula gets a leading quote mark.
    static func csvField(_ value: String) -> String {
        var value = value
        if let first = value.first, "=+-@\t\r".contains(first) { value = "'" + value }
        guard value.contains(where: { ",\"\r\n".contains($0) }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
