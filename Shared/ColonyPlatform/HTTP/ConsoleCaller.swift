import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird

/// Who calls a service's admin route on behalf of the Colony Console: the console's credential
/// (`COLONY_CONSOLE_KEY`, `Authorization: Bearer <key>`), the operator acting
/// (`X-Colony-Operator`, their email, for the service's own logs and audit entries) and, where the
/// route acts inside one app, that app (`X-Colony-App`). The console checks the operator's rights
/// before it calls; a service trusts the credential, never the headers alone.
public struct ConsoleCaller: Sendable, Equatable {
    public static let operatorHeader = HTTPField.Name("X-Colony-Operator")!
    public static let appHeader = HTTPField.Name("X-Colony-App")!
    /// An operator's email as the console stores it: at most this many bytes.
    public static let maxOperatorBytes = 320

    public var operatorEmail: String
    public var app: App?

    public init(operatorEmail: String, app: App?) {
        self.operatorEmail = operatorEmail
        self.app = app
    }

    /// The caller when the request carries the console's credential; nil when it carries none
    /// (the route may then try its other credentials). A wrong credential, a missing or malformed
    /// operator, or an unknown app is refused.
    public static func from(_ request: Request, key: InternalKey?) throws -> ConsoleCaller? {
        guard let header = request.headers[.authorization], let token = BearerToken.from(authorization: header),
              let key, key.matches(token)
        else { return nil }
        guard let operatorEmail = request.headers[operatorHeader], isOperatorEmail(operatorEmail) else {
            throw APIError.badRequest("X-Colony-Operator must name the operator acting (their email)", code: "operator_required")
        }
        var app: App? = nil
        if let name = request.headers[appHeader] {
            guard let named = App(rawValue: name) else {
                throw APIError.badRequest("X-Colony-App names no app", code: "unknown_app")
            }
            app = named
        }
        return ConsoleCaller(operatorEmail: operatorEmail.lowercased(), app: app)
    }

    /// Like `from`, for routes only the console may call: a 401 without its credential.
    public static func required(_ request: Request, key: InternalKey?) throws -> ConsoleCaller {
        guard let caller = try from(request, key: key) else {
            throw APIError.unauthorized("the console's credential is required", code: "invalid_console_credential")
        }
        return caller
    }

    /// The app a route that acts inside one app works in: 400 `app_required` without `X-Colony-App`.
    public func requiredApp() throws -> App {
        guard let app else { throw APIError.badRequest("X-Colony-App must name the app the console acts in", code: "app_required") }
        return app
    }

    /// A path parameter that must be a UUID (either case), else 400 `invalid_id`.
    public static func pathID(_ context: ColonyRequestContext, _ name: String, of what: String) throws -> UUID {
        guard let id = context.parameters.get(name).flatMap({ UUID(canonical: $0) }) else {
            throw APIError.badRequest("\(name) must be a \(what)'s id (a UUID)", code: "invalid_id")
        }
        return id
    }

    /// An address of printable ASCII with one `@`, within the length the console stores.
    static func isOperatorEmail(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxOperatorBytes, bytes.filter({ $0 == UInt8(ascii: "@") }).count == 1 else { return false }
        return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The headers the console sends with its credential.
    public static func headers(key: InternalKey, operatorEmail: String, app: App?) -> [(String, String)] {
        var headers = [("Authorization", key.authorization), (operatorHeader.rawName, operatorEmail)]
        if let app { headers.append((appHeader.rawName, app.rawValue)) }
        return headers
    }
}
