import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore

/// The console's pages, rendered on the server from `Templates/*.mustache` (HTML-escaped by
/// default), with the headers every page carries: no script at all, no framing, nothing cached.
public struct ConsolePages: Sendable {
    let library: MustacheLibrary
    let stylesheet: ByteBuffer

    public init() throws {
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil),
              let css = Bundle.module.url(forResource: "Static", withExtension: nil)?.appendingPathComponent("console.css")
        else { throw ConsoleRefusal(.unavailable, "the console's templates are missing from its bundle") }
        var library = MustacheLibrary()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".mustache") {
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            try library.register(source, named: String(name.dropLast(".mustache".count)))
        }
        self.library = library
        self.stylesheet = ByteBuffer(bytes: Array(try Data(contentsOf: css)))
    }

    /// The Content-Security-Policy of every console answer: styles from the console only, images
    /// from it or inline (the QR code), forms posting to it, no script, no framing.
    public static let contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    public static func secure(_ response: inout Response) {
        response.headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the console's own forms.
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        response.headers[.cacheControl] = "no-store"
        response.headers[HTTPField.Name("Pragma")!] = "no-cache"
    }

    public func render(_ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(values, withTemplate: template) ?? "<!doctype html><title>Colony Console</title><p>The page could not be drawn."
        var response = Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        Self.secure(&response)
        return response
    }

    /// A JSON value as a page shows it (metadata, a dead letter's event): indented, keys sorted.
    public static func prettyJSON(_ value: some Encodable) -> String {
        let encoder = ColonyJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    public func css() -> Response {
        var response = Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: ResponseBody(byteBuffer: stylesheet))
        Self.secure(&response)
        response.headers[.cacheControl] = "public, max-age=3600"
        return response
    }

    public static func redirect(_ location: String, cookies: [String] = []) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
        secure(&response)
        return response
    }
}

/// An `application/x-www-form-urlencoded` body: the first value of each name.
public struct FormBody: Sendable {
    public var fields: [String: String]

    public init(_ fields: [String: String]) {
        self.fields = fields
    }

    public static let maxBytes = 64 << 10

    public init(parsing buffer: ByteBuffer) {
        var fields: [String: String] = [:]
        let text = String(buffer: buffer)
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap({ Self.decode($0) }) else { continue }
            let value = parts.count > 1 ? Self.decode(parts[1]) ?? "" : ""
            if fields[name] == nil { fields[name] = value }
        }
        self.fields = fields
    }

    public subscript(_ name: String) -> String? { fields[name] }

    static func decode(_ part: Substring) -> String? {
        part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    public static func read(_ request: Request, _ context: ColonyRequestContext) async throws -> FormBody {
        let buffer = try await request.body.collect(upTo: maxBytes)
        return FormBody(parsing: buffer)
    }
}

/// The console's cookies: the session (`colony_console`) and, before there is one, the token
/// that ties a sign-in form to the browser that loaded it (`colony_console_form`).
public struct ConsoleCookies: Sendable {
    public static let session = "colony_console"
    public static let form = "colony_console_form"

    let secure: Bool
    let maxAge: Int

    public static func read(_ request: Request) -> [String: String] {
        var cookies: [String: String] = [:]
        for header in request.headers[values: .cookie] {
            for part in header.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                let name = pair[0].trimmingCharacters(in: .whitespaces)
                if cookies[name] == nil { cookies[name] = pair[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return cookies
    }

    func set(_ name: String, _ value: String, maxAge: Int? = nil) -> String {
        "\(name)=\(value); Path=/console; HttpOnly; SameSite=Strict; Max-Age=\(maxAge ?? self.maxAge)\(secure ? "; Secure" : "")"
    }

    func clear(_ name: String) -> String {
        "\(name)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0\(secure ? "; Secure" : "")"
    }
}

extension ConsoleRefusal {
    /// What a page says when a service or the database could not answer.
    static let unavailableNow = ConsoleRefusal(.unavailable, "Something the console needs did not answer. Nothing was changed; try again in a moment.")
}

/// Compares two texts in constant time (a CSRF token).
func sameToken(_ a: String, _ b: String) -> Bool {
    !a.isEmpty && a.utf8.count == b.utf8.count && ConstantTime.equal(a.utf8, b.utf8)
}

/// What every console route shares: pages, the domain, cookies, and the checks of who asks.
struct ConsoleWeb: Sendable {
    let pages: ConsolePages
    let operators: Operators
    let users: UserAdministration
    let push: PushSupport
    let imports: ImportHistory
    let moderation: Moderation
    let cookies: ConsoleCookies

    /// Thrown where a page needs a signed-in operator and there is none: the answer is the sign-in page.
    struct SignInFirst: Error {}

    /// Runs a page's handler; a refusal becomes a page saying why (with its status), anything
    /// else a page saying the console could not do it now (logged), never a bare 500.
    func page(_ handler: @escaping @Sendable (Request, ColonyRequestContext) async throws -> Response) -> @Sendable (Request, ColonyRequestContext) async throws -> Response {
        let pages = self.pages
        return { request, context in
            do {
                return try await handler(request, context)
            } catch is SignInFirst {
                return ConsolePages.redirect("/console/sign-in")
            } catch let refusal as ConsoleRefusal {
                return pages.render("error", ["title": "Not done", "message": refusal.message], status: HTTPResponse.Status(code: refusal.status))
            } catch {
                context.logger.error("console page failed", metadata: ["error": "\(error)"])
                return pages.render("error", ["title": "Not done", "message": ConsoleRefusal.unavailableNow.message], status: .serviceUnavailable)
            }
        }
    }

    /// The live session the request's cookie names, at whatever stage.
    func session(_ request: Request) async throws -> (OperatorRecord, OperatorSession)? {
        guard let token = ConsoleCookies.read(request)[ConsoleCookies.session], !token.isEmpty, token.utf8.count <= 128 else { return nil }
        return try await operators.session(token: token)
    }

    /// The signed-in operator (second factor passed), or `SignInFirst`.
    func signedIn(_ request: Request, _ context: ColonyRequestContext) async throws -> SignedInOperator {
        guard let (record, session) = try await session(request), session.stage == .full else { throw SignInFirst() }
        return SignedInOperator(record: record, session: session, ipAddress: context.clientAddress)
    }

    /// A signed-in operator's form: refused unless it carries the session's CSRF token and comes
    /// from the console's own pages.
    func form(_ request: Request, _ context: ColonyRequestContext, session: OperatorSession) async throws -> FormBody {
        try checkOrigin(request)
        let form = try await FormBody.read(request, context)
        guard sameToken(form["csrf"] ?? "", session.csrfToken) else {
            throw ConsoleRefusal(.forbidden, "This form has expired or did not come from the console: reload the page and try again.")
        }
        return form
    }

    /// A form sent before sign-in: it must carry the token its page set in the browser's cookie.
    func preSessionForm(_ request: Request, _ context: ColonyRequestContext) async throws -> FormBody {
        try checkOrigin(request)
        let form = try await FormBody.read(request, context)
        guard let cookie = ConsoleCookies.read(request)[ConsoleCookies.form], sameToken(form["form_token"] ?? "", cookie) else {
            throw ConsoleRefusal(.forbidden, "This form has expired or did not come from the console: reload the page and try again.")
        }
        return form
    }

    /// Browsers say where a form was sent from; another site's is refused (SameSite=Strict
    /// cookies and the CSRF token already keep it from acting: this says so early and plainly).
    func checkOrigin(_ request: Request) throws {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site == "cross-site" {
            throw ConsoleRefusal(.forbidden, "Forms come from the console's own pages only.")
        }
        if let origin = request.headers[.origin] {
            let host = request.headers[HTTPField.Name("X-Forwarded-Host")!] ?? request.head.authority ?? ""
            guard let url = URL(string: origin), let originHost = url.host else {
                throw ConsoleRefusal(.forbidden, "Forms come from the console's own pages only.")
            }
            let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
            guard originAuthority.lowercased() == host.lowercased() || originHost.lowercased() == host.lowercased() else {
                throw ConsoleRefusal(.forbidden, "Forms come from the console's own pages only.")
            }
        }
    }

    /// What every signed-in page's layout shows.
    func layout(_ actor: SignedInOperator, title: String, section: String) -> [String: Any] {
        [
            "title": title,
            "csrf": actor.session.csrfToken,
            "operator_email": actor.email,
            "operator_role": actor.rights.role.title,
            "operator_apps": actor.rights.apps.isEmpty ? "all apps" : actor.rights.apps.map(\.rawValue).joined(separator: ", "),
            "can_view_overview": actor.rights.allows(.viewOverview),
            "can_manage_operators": actor.rights.allows(.manageOperators),
            "can_view_audit": actor.rights.allows(.viewAuditLog),
            "can_view_pipeline": actor.rights.allows(.viewPipeline),
            "can_view_users": actor.rights.allows(.viewUsers),
            "can_moderate": actor.rights.allows(.moderateContent),
            "section_\(section)": true,
        ]
    }
}
