import ColonyModels
import Foundation
import Hummingbird

/// A user as Supabase Auth returns it (`GET /user`, sign-in responses, admin endpoints).
public struct UserResource: ResponseCodable, Equatable, Sendable {
    /// Ids are lowercase strings, as Supabase Auth writes them.
    public var id: String
    public var aud: String
    public var role: String
    public var email: String
    public var emailConfirmedAt: Date?
    public var phone: String
    public var phoneConfirmedAt: Date?
    public var confirmedAt: Date?
    public var confirmationSentAt: Date?
    public var recoverySentAt: Date?
    public var emailChangeSentAt: Date?
    public var newEmail: String?
    public var newPhone: String?
    public var lastSignInAt: Date?
    public var bannedUntil: Date?
    public var appMetadata: [String: JSONValue]
    public var userMetadata: [String: JSONValue]
    public var identities: [IdentityResource]
    public var createdAt: Date
    public var updatedAt: Date
    public var isAnonymous: Bool
    /// Its MFA factors; left out when it has none, as GoTrue does.
    public var factors: [FactorResource]?
    /// When an operator invited the account (`POST /invite`, generate_link type invite).
    public var invitedAt: Date?

    public init(_ user: UserRecord) {
        id = user.id.uuidString.lowercased()
        aud = user.app.rawValue
        role = "authenticated"
        email = user.email ?? ""
        emailConfirmedAt = user.emailConfirmedAt
        phone = user.phone ?? ""
        phoneConfirmedAt = user.phoneConfirmedAt
        confirmedAt = user.emailConfirmedAt ?? user.phoneConfirmedAt
        confirmationSentAt = user.confirmationSentAt
        recoverySentAt = user.recoverySentAt
        emailChangeSentAt = user.emailChangeSentAt
        newEmail = user.newEmail
        newPhone = user.newPhone
        lastSignInAt = user.lastSignInAt
        bannedUntil = user.bannedUntil
        appMetadata = user.appMetadata
        userMetadata = user.userMetadata
        identities = user.identities.map(IdentityResource.init)
        createdAt = user.createdAt
        updatedAt = user.updatedAt
        isAnonymous = user.isAnonymous
        factors = user.factors.isEmpty ? nil : user.factors.map(FactorResource.init)
        invitedAt = user.invitedAt
    }
}

public struct IdentityResource: Codable, Sendable, Equatable {
    public var identityId: String
    public var id: String
    public var userId: String
    public var identityData: [String: JSONValue]
    public var provider: String
    public var lastSignInAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
    /// The address the provider gave, as GoTrue lists it (absent when it gave none).
    public var email: String?

    init(_ identity: IdentityRecord) {
        identityId = identity.id.uuidString.lowercased()
        id = identity.providerId
        userId = identity.userId.uuidString.lowercased()
        identityData = identity.identityData
        provider = identity.provider
        lastSignInAt = identity.lastSignInAt
        createdAt = identity.createdAt
        updatedAt = identity.updatedAt
        if case .string(let address)? = identity.identityData["email"], !address.isEmpty { email = address.lowercased() }
    }
}

/// A signed-in session as Supabase Auth returns it.
public struct SessionResponse: ResponseCodable, Equatable, Sendable {
    public var accessToken: String
    public var tokenType = "bearer"
    public var expiresIn: Int
    public var expiresAt: Int
    public var refreshToken: String
    public var user: UserResource
}

/// `POST /signup` answers with a session, or with the user alone when the address must be
/// confirmed first.
public enum SignUpResult: Sendable {
    case session(SessionResponse)
    case user(UserResource)
}

/// GoTrue's answer to the first of a secure email change's two confirmations (`msg`, `code`),
/// with the user's fields beside them: clients that decode the answer of `POST /verify` as a
/// session or a user (supabase-swift's `AuthResponse`, supabase_auth) get the user, whose
/// `new_email` is still pending.
struct SingleConfirmationResponse: ResponseEncodable {
    var user: UserResource

    enum Keys: String, CodingKey { case msg, code }

    func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Accounts.singleConfirmationMessage, forKey: .msg)
        try container.encode("200", forKey: .code)
    }
}

/// `GET /admin/users`.
struct UserListResponse: ResponseCodable {
    var users: [UserResource]
    var aud: String
}

/// Bodies that only acknowledge.
struct EmptyResponse: ResponseCodable {}

struct MessageIDResponse: ResponseCodable {
    var messageId: String
}
