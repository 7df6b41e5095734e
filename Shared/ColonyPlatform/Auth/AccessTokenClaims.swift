import ColonyModels
import Foundation
import JWTKit

/// The claims of a Colony access token: Supabase Auth's, plus `iss` and `aud` = the app.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var sub: SubjectClaim
    public var aud: AudienceClaim
    public var iss: IssuerClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var role: String
    public var sessionId: String?
    public var email: String?
    public var phone: String?
    public var appMetadata: [String: JSONValue]?
    public var userMetadata: [String: JSONValue]?
    public var aal: String?
    public var amr: [JSONValue]?
    public var isAnonymous: Bool?
    /// Colony's claim (GoTrue has none): whether the user had a verified MFA factor when the
    /// token was issued, so that services can apply an app's `require_aal2` (`AppAccessPolicy`)
    /// without reading auth's tables. Auth writes it on every token; absent reads as false.
    public var colonyMfaEnrolled: Bool?

    enum CodingKeys: String, CodingKey {
        case sub, aud, iss, exp, iat, role, email, phone, aal, amr
        case sessionId = "session_id"
        case appMetadata = "app_metadata"
        case userMetadata = "user_metadata"
        case isAnonymous = "is_anonymous"
        case colonyMfaEnrolled = "colony_mfa_enrolled"
    }

    public init(sub: String, aud: String, iss: String, exp: Date, iat: Date = Date(), role: String = "authenticated", sessionId: String? = nil, email: String? = nil, phone: String? = nil, appMetadata: [String: JSONValue]? = nil, userMetadata: [String: JSONValue]? = nil, aal: String? = "aal1", amr: [JSONValue]? = nil, isAnonymous: Bool? = false, colonyMfaEnrolled: Bool? = nil) {
        self.sub = SubjectClaim(value: sub)
        self.aud = AudienceClaim(value: aud)
        self.iss = IssuerClaim(value: iss)
        self.exp = ExpirationClaim(value: exp)
        self.iat = IssuedAtClaim(value: iat)
        self.role = role
        self.sessionId = sessionId
        self.email = email
        self.phone = phone
        self.appMetadata = appMetadata
        self.userMetadata = userMetadata
        self.aal = aal
        self.amr = amr
        self.isAnonymous = isAnonymous
        self.colonyMfaEnrolled = colonyMfaEnrolled
    }

    /// Signature is checked by the key collection; this checks the time. Issuer and audience
    /// depend on the verifier's configuration and are checked there.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// The verified caller, as handlers see it.
public struct AuthenticatedUser: Sendable, Equatable {
    public var id: UUID
    public var role: String
    /// The app the token was issued for (its audience).
    public var app: App
    public var sessionID: String?
    public var email: String?
    public var phone: String?
    /// The token's `user_metadata` (the sign-up's name, read by `SignUpProfile`).
    public var userMetadata: [String: JSONValue] = [:]
    /// The token's `aal`: `aal2` once the session passed an MFA challenge.
    public var aal: String = "aal1"

    public init(id: UUID, role: String, app: App, sessionID: String? = nil, email: String? = nil, phone: String? = nil) {
        self.id = id
        self.role = role
        self.app = app
        self.sessionID = sessionID
        self.email = email
        self.phone = phone
    }
}

/// The claims of an app's API key, shaped like Supabase's anon and service-role keys: `role`,
/// the app as `ref`, `iss`, `iat`, `exp` (auth issues them; `colony-auth keys` prints them).
public struct APIKeyClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var role: String
    public var ref: String
    public var iat: IssuedAtClaim?
    public var exp: ExpirationClaim

    public init(iss: String, role: String, ref: String, iat: Date = Date(), exp: Date) {
        self.iss = IssuerClaim(value: iss)
        self.role = role
        self.ref = ref
        self.iat = IssuedAtClaim(value: iat)
        self.exp = ExpirationClaim(value: exp)
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// A verified API key: which app's pool it belongs to, and its role.
public struct APIKeyIdentity: Sendable, Equatable {
    public enum Role: String, Sendable { case anon, serviceRole = "service_role" }
    public var app: App
    public var role: Role

    public init(app: App, role: Role) {
        self.app = app
        self.role = role
    }
}
