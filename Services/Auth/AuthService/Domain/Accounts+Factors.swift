import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import PostgresNIO

/// MFA settings shared by every app (GoTrue's `GOTRUE_MFA_*`); whether an app offers TOTP and
/// phone factors is its own (`mfa_totp_enabled`, `mfa_phone_enabled`).
public struct MFASettings: Sendable, Equatable {
    /// A TOTP challenge must be verified within this long (GoTrue: 300 s). A phone challenge
    /// lives as long as its SMS says (`smsCodeLifetimeSeconds`).
    public var challengeLifetimeSeconds = 300
    /// An unverified factor nobody challenges is dropped after this long (GoTrue: 300 s).
    public var unverifiedFactorLifetimeSeconds = 300
    /// Factors per user, verified or not, and verified ones (GoTrue: 10 and 10).
    public var maxEnrolledFactors = 10
    public var maxVerifiedFactors = 10

    public init() {}

    /// `COLONY_AUTH_MFA_CHALLENGE_SECONDS`, `COLONY_AUTH_MFA_FACTOR_EXPIRY_SECONDS`,
    /// `COLONY_AUTH_MFA_MAX_FACTORS`, `COLONY_AUTH_MFA_MAX_VERIFIED_FACTORS`.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> MFASettings {
        var settings = MFASettings()
        settings.challengeLifetimeSeconds = try environment.int("COLONY_AUTH_MFA_CHALLENGE_SECONDS", default: 300, range: 30...3600)
        settings.unverifiedFactorLifetimeSeconds = try environment.int("COLONY_AUTH_MFA_FACTOR_EXPIRY_SECONDS", default: 300, range: 60...86_400)
        settings.maxEnrolledFactors = try environment.int("COLONY_AUTH_MFA_MAX_FACTORS", default: 10, range: 1...100)
        settings.maxVerifiedFactors = try environment.int("COLONY_AUTH_MFA_MAX_VERIFIED_FACTORS", default: 10, range: 1...100)
        return settings
    }
}

/// GoTrue's MFA errors (`mfa_*`, `insufficient_aal`, `too_many_enrolled_mfa_factors`).
enum FactorErrors {
    static let notFound = APIError(.notFound, code: "mfa_factor_not_found", message: "Factor not found")
    static let challengeNotFound = APIError(.unprocessableContent, code: "mfa_factor_not_found", message: "MFA factor with the provided challenge ID not found")
    static let ipMismatch = APIError(.unprocessableContent, code: "mfa_ip_address_mismatch", message: "Challenge and verify IP addresses mismatch.")
    static let tooMany = APIError(.unprocessableContent, code: "too_many_enrolled_mfa_factors", message: "Maximum number of verified factors reached, unenroll to continue")
    static let aal2ToEnroll = APIError(.forbidden, code: "insufficient_aal", message: "AAL2 required to enroll a new factor")
    static let aal2ToUnenroll = APIError(.unprocessableContent, code: "insufficient_aal", message: "AAL2 required to unenroll verified factor")
    static let verifiedPhoneExists = APIError(.unprocessableContent, code: "mfa_verified_factor_exists", message: "A verified phone factor already exists, unenroll the existing factor to continue")
    static let totpEnrollDisabled = APIError(.unprocessableContent, code: "mfa_totp_enroll_not_enabled", message: "MFA enroll is disabled for TOTP")
    static let phoneEnrollDisabled = APIError(.unprocessableContent, code: "mfa_phone_enroll_not_enabled", message: "MFA enroll is disabled for Phone")
    static let totpVerifyDisabled = APIError(.unprocessableContent, code: "mfa_totp_verify_not_enabled", message: "MFA verification is disabled for TOTP")
    static let phoneVerifyDisabled = APIError(.unprocessableContent, code: "mfa_phone_verify_not_enabled", message: "MFA verification is disabled for Phone")
    static let wrongTOTP = APIError(.unprocessableContent, code: "mfa_verification_failed", message: "Invalid TOTP code entered")
    static let wrongPhoneCode = APIError(.unprocessableContent, code: "mfa_verification_failed", message: "Invalid MFA Phone code entered")
    static let sessionRequired = APIError(.unauthorized, code: "bad_jwt", message: "invalid JWT: a session is required to use factors", headers: [.wwwAuthenticate: "Bearer"])

    static func nameConflict(_ name: String) -> APIError {
        APIError(.unprocessableContent, code: "mfa_factor_name_conflict", message: "A factor with the friendly name \"\(name)\" for this user already exists")
    }

    static func challengeExpired(_ id: UUID) -> APIError {
        APIError(.unprocessableContent, code: "mfa_challenge_expired", message: "MFA challenge \(id.uuidString.lowercased()) has expired, verify against another challenge or create a new challenge.")
    }

    static func overVerifyBudget(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: "over_request_rate_limit", message: "Too many wrong MFA codes; try again in \(max(1, retryAfter)) seconds",
                 headers: [.retryAfter: "\(max(1, retryAfter))"])
    }
}

/// The rules of enrolling a factor, over the user's current factors: plain, so tests reach them
/// without HTTP.
enum FactorRules {
    static let maxNameLength = 255
    static let maxIssuerLength = 255

    /// Why a new factor named `name` may not be enrolled (nil: it may).
    static func enrollmentRefusal(existing: [FactorRecord], name: String, sessionAAL: String, settings: MFASettings) -> APIError? {
        if !name.isEmpty, existing.contains(where: { $0.friendlyName == name }) { return FactorErrors.nameConflict(name) }
        let verified = existing.filter(\.isVerified).count
        if existing.count >= settings.maxEnrolledFactors || verified >= settings.maxVerifiedFactors { return FactorErrors.tooMany }
        // A second factor is added from a session that proved the first one.
        if verified > 0, sessionAAL != "aal2" { return FactorErrors.aal2ToEnroll }
        return nil
    }

    /// The `amr` method of a verification with a factor of this kind (GoTrue's names).
    static func amrMethod(_ kind: FactorRecord.Kind) -> String {
        switch kind {
        case .totp: "totp"
        case .phone: "mfa/phone"
        }
    }
}

/// `POST /factors`'s answer: the TOTP secret, its URI and QR code, or the phone number.
struct EnrolledFactorResponse: ResponseEncodable {
    struct TOTPDetails: Encodable {
        var qrCode: String
        var secret: String
        var uri: String
    }

    var id: String
    var type: String
    var friendlyName: String
    var totp: TOTPDetails?
    var phone: String?
}

/// A factor as GoTrue writes it in `GET /user`'s `factors` and the admin factor endpoints.
public struct FactorResource: Codable, Sendable, Equatable {
    public var id: String
    public var friendlyName: String
    public var factorType: String
    public var status: String
    public var phone: String?
    public var lastChallengedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    init(_ factor: FactorRecord) {
        id = factor.id.uuidString.lowercased()
        friendlyName = factor.friendlyName
        factorType = factor.factorType
        status = factor.status
        phone = factor.phone.map { "+" + $0 }
        lastChallengedAt = factor.lastChallengedAt
        createdAt = factor.createdAt
        updatedAt = factor.updatedAt
    }
}

struct ChallengeResponse: ResponseEncodable {
    var id: String
    var type: String
    var expiresAt: Int
}

struct FactorIDResponse: ResponseEncodable {
    var id: String
}

extension Accounts {
    var factors: FactorStore { FactorStore(logger: logger) }

    public struct EnrollRequest: Sendable {
        public var factorType: String?
        public var friendlyName: String?
        public var issuer: String?
        public var phone: String?
        public init(factorType: String?, friendlyName: String?, issuer: String?, phone: String?) {
            self.factorType = factorType
            self.friendlyName = friendlyName
            self.issuer = issuer
            self.phone = phone
        }
    }

    // MARK: enroll

    /// `POST /factors`: a new unverified factor. A TOTP factor's secret (from the CSPRNG) goes
    /// back once, with its `otpauth://` URI and that URI as an SVG QR code; a phone factor is
    /// verified by a challenge's SMS.
    func enrollFactor(app: App, caller: AuthenticatedCaller, request: EnrollRequest) async throws -> EnrolledFactorResponse {
        guard let sessionID = caller.sessionID else { throw FactorErrors.sessionRequired }
        let appSettings = settings.app(app)
        guard let kind = request.factorType.flatMap(FactorRecord.Kind.init(rawValue:)) else {
            throw AuthErrors.badRequest("factor_type needs to be totp or phone")
        }
        switch kind {
        case .totp: guard appSettings.mfaTotpEnabled else { throw FactorErrors.totpEnrollDisabled }
        case .phone: guard appSettings.mfaPhoneEnabled else { throw FactorErrors.phoneEnrollDisabled }
        }
        let name = (request.friendlyName ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= FactorRules.maxNameLength, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthErrors.badRequest("friendly_name must be at most \(FactorRules.maxNameLength) characters, without control characters")
        }
        var phone: String?
        if kind == .phone {
            guard let raw = request.phone, !raw.isEmpty else { throw AuthErrors.badRequest("Phone number required to enroll Phone factor") }
            guard let normalized = Credentials.normalizedPhone(raw) else { throw AuthErrors.badRequest("Invalid phone number format (E.164 required)") }
            phone = normalized
        }
        let issuer = (request.issuer.flatMap { $0.isEmpty ? nil : $0 } ?? appSettings.displayName)
        guard issuer.count <= FactorRules.maxIssuerLength, !issuer.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthErrors.badRequest("issuer must be at most \(FactorRules.maxIssuerLength) characters, without control characters")
        }
        let mfa = settings.mfa
        return try await database.transaction { connection in
            // The account's row is the lock: enrollments of one user take turns.
            guard let user = try await users.find(id: caller.userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            guard let aal = try await factors.sessionAAL(id: sessionID, userID: user.id, on: connection) else { throw AuthErrors.sessionNotFound }
            try await factors.deleteExpiredUnverified(userID: user.id, lifetimeSeconds: mfa.unverifiedFactorLifetimeSeconds, on: connection)
            if let phone {
                let same = user.factors.filter { $0.kind == .phone && $0.phone == phone }
                if same.contains(where: \.isVerified) { throw FactorErrors.verifiedPhoneExists }
                // An unfinished enrollment of the same number is replaced.
                if !same.isEmpty { try await factors.deletePhoneFactors(userID: user.id, phone: phone, status: "unverified", on: connection) }
            }
            let existing = try await factors.list(userID: user.id, on: connection)
            if let refusal = FactorRules.enrollmentRefusal(existing: existing, name: name, sessionAAL: aal, settings: mfa) { throw refusal }
            let now = Date()
            let factor = FactorRecord(id: UUID(), factorType: kind.rawValue, status: "unverified", friendlyName: name, phone: phone, lastChallengedAt: nil, createdAt: now, updatedAt: now)
            try await audit(.factorInProgress, actor: .user(user), traits: Self.factorAuditTraits(factor), app: app, on: connection)
            switch kind {
            case .totp:
                guard let totp = TOTP(secret: TOTP.newSecret()) else { throw AuthErrors.senderFailed }
                let account = user.email ?? user.phone.map { "+" + $0 } ?? user.id.uuidString.lowercased()
                let uri = totp.uri(issuer: issuer, accountName: account)
                let svg: String
                do {
                    svg = try QRCode.svg(uri)
                } catch {
                    throw APIError(.internalServerError, code: "unexpected_failure", message: "Error generating QR Code")
                }
                try await factors.insert(factor, userID: user.id, app: app, secret: totp.base32Secret, on: connection)
                // The SVG itself, as GoTrue answers: clients prepend `data:image/svg+xml;utf-8,`.
                return EnrolledFactorResponse(id: factor.id.uuidString.lowercased(), type: kind.rawValue, friendlyName: name,
                                              totp: .init(qrCode: svg, secret: totp.base32Secret, uri: uri))
            case .phone:
                try await factors.insert(factor, userID: user.id, app: app, secret: nil, on: connection)
                return EnrolledFactorResponse(id: factor.id.uuidString.lowercased(), type: kind.rawValue, friendlyName: name, phone: phone.map { "+" + $0 })
            }
        }
    }

    // MARK: challenge

    /// `POST /factors/{id}/challenge`: a challenge to verify within its lifetime from the same
    /// address; for a phone factor, its code by SMS under the sender's budgets.
    func challengeFactor(app: App, caller: AuthenticatedCaller, factorID: UUID, channel: String?, client: ClientInfo) async throws -> ChallengeResponse {
        try ipLimiter.check("mfa:ip:\(client.ip)", rule: settings.rateLimits.mfaVerifyPerIP)
        if let channel, !channel.isEmpty, channel != "sms" {
            throw AuthErrors.badRequest("Invalid channel: only sms is offered")
        }
        let appSettings = settings.app(app)
        var outgoing: OutgoingMessage?
        let response: ChallengeResponse = try await database.transaction { connection in
            guard let found = try await factors.find(id: factorID, userID: caller.userID, on: connection), let kind = found.factor.kind else { throw FactorErrors.notFound }
            let now = Date()
            var challenge = ChallengeRecord(id: UUID(), factorID: factorID, ip: client.ip, codeHash: nil,
                                            expiresAt: now.addingTimeInterval(TimeInterval(settings.mfa.challengeLifetimeSeconds)), verifiedAt: nil)
            switch kind {
            case .totp:
                guard appSettings.mfaTotpEnabled else { throw FactorErrors.totpVerifyDisabled }
            case .phone:
                guard appSettings.mfaPhoneEnabled else { throw FactorErrors.phoneVerifyDisabled }
                guard let phone = found.factor.phone,
                      let user = try await users.find(id: caller.userID, app: app, on: connection) else { throw FactorErrors.notFound }
                try await spend(channel: .sms, app: app, recipient: phone)
                let code = Secrets.numericCode()
                challenge.codeHash = Secrets.codeHash(code, recipient: challenge.id.uuidString)
                challenge.expiresAt = now.addingTimeInterval(TimeInterval(settings.smsCodeLifetimeSeconds))
                outgoing = try compose(.phoneOTP, channel: .sms, user: user, to: "+" + phone, kind: "mfa", code: code, link: nil, acceptLanguage: client.acceptLanguage, now: now)
            }
            try await factors.insertChallenge(challenge, on: connection)
            if let user = try await users.find(id: caller.userID, app: app, on: connection) {
                var traits = Self.factorAuditTraits(found.factor)
                traits["challenge_id"] = .string(challenge.id.uuidString.lowercased())
                try await audit(.challengeCreated, actor: .user(user), traits: traits, ip: client.ip, app: app, on: connection)
            }
            return ChallengeResponse(id: challenge.id.uuidString.lowercased(), type: kind.rawValue, expiresAt: Int(challenge.expiresAt.timeIntervalSince1970.rounded(.down)))
        }
        if let outgoing { try await deliver(outgoing) }
        return response
    }

    // MARK: verify

    /// `POST /factors/{id}/verify`: the challenge's code (TOTP within one step of now, never a
    /// step used before; or the texted code) raises the session to `aal2` with a new refresh
    /// token; the factor is verified, the user's sessions still at `aal1` end. Wrong codes count
    /// against the user's budget (`mfaFailuresPerUser`), every attempt against the address's.
    func verifyFactor(app: App, caller: AuthenticatedCaller, factorID: UUID, challengeID: String?, code: String?, client: ClientInfo, now: Date = Date()) async throws -> SessionResponse {
        try ipLimiter.check("mfa:ip:\(client.ip)", rule: settings.rateLimits.mfaVerifyPerIP)
        guard let sessionID = caller.sessionID else { throw FactorErrors.sessionRequired }
        guard let code, !code.isEmpty else { throw AuthErrors.badRequest("Code needs to be non-empty") }
        guard let challengeID = challengeID.flatMap(UUID.init(uuidString:)) else { throw AuthErrors.badRequest("challenge_id must be the id of a challenge") }
        let appSettings = settings.app(app)
        // Counted before the attempt, given back when it succeeds: concurrent guesses cannot all
        // slip under the budget.
        let failures = "mfa-fail:\(caller.userID.uuidString.lowercased())"
        if let retryAfter = try await limiter.hit(failures, rule: settings.rateLimits.mfaFailuresPerUser) {
            throw FactorErrors.overVerifyBudget(retryAfter: retryAfter)
        }
        enum Outcome: Sendable { case session(SessionResponse), failure(APIError) }
        let refreshToken = Secrets.opaqueToken()
        let outcome: Outcome = try await database.transaction { connection in
            guard let found = try await factors.find(id: factorID, userID: caller.userID, on: connection), let kind = found.factor.kind else { return .failure(FactorErrors.notFound) }
            switch kind {
            case .totp: guard appSettings.mfaTotpEnabled else { return .failure(FactorErrors.totpVerifyDisabled) }
            case .phone: guard appSettings.mfaPhoneEnabled else { return .failure(FactorErrors.phoneVerifyDisabled) }
            }
            guard let challenge = try await factors.findChallenge(id: challengeID, factorID: factorID, on: connection) else { return .failure(FactorErrors.challengeNotFound) }
            guard challenge.verifiedAt == nil, challenge.ip == client.ip else { return .failure(FactorErrors.ipMismatch) }
            guard challenge.expiresAt > now else { return .failure(FactorErrors.challengeExpired(challenge.id)) }
            var step: Int64?
            switch kind {
            case .totp:
                guard let secret = found.secret, let totp = TOTP(base32Secret: secret),
                      let matched = totp.verify(code, at: now, window: 1, after: found.lastTOTPStep) else { return .failure(FactorErrors.wrongTOTP) }
                step = matched
            case .phone:
                guard let expected = challenge.codeHash, ConstantTime.equal(Secrets.codeHash(code, recipient: challenge.id.uuidString), expected) else {
                    return .failure(FactorErrors.wrongPhoneCode)
                }
            }
            try await factors.markChallengeVerified(id: challenge.id, on: connection)
            try await factors.markVerified(id: factorID, totpStep: step, on: connection)
            guard let session = try await factors.upgrade(sessionID: sessionID, factorID: factorID, method: FactorRules.amrMethod(kind), at: now,
                                                          newTokenHash: Secrets.hash(refreshToken), on: connection) else { return .failure(AuthErrors.sessionNotFound) }
            try await factors.endSessionsBelowAAL2(userID: caller.userID, on: connection)
            try await factors.deleteUnverified(userID: caller.userID, type: kind.rawValue, on: connection)
            guard let user = try await users.find(id: caller.userID, app: app, on: connection), !user.isBanned else { return .failure(AuthErrors.userNotFound) }
            var traits = Self.factorAuditTraits(found.factor)
            traits["challenge_id"] = .string(challenge.id.uuidString.lowercased())
            try await audit(.verificationAttempted, actor: .user(user), traits: traits, ip: client.ip, app: app, on: connection)
            return .session(try await sessionResponse(user: user, session: session, refreshToken: refreshToken))
        }
        switch outcome {
        case .session(let response):
            try await limiter.release(failures, rule: settings.rateLimits.mfaFailuresPerUser)
            return response
        case .failure(let error):
            throw error
        }
    }

    // MARK: unenroll

    /// `DELETE /factors/{id}`: an unverified factor from any session, a verified one only from an
    /// `aal2` session. Sessions that reached `aal2` with it go back to `aal1`.
    func unenrollFactor(app: App, caller: AuthenticatedCaller, factorID: UUID) async throws -> FactorIDResponse {
        guard let sessionID = caller.sessionID else { throw FactorErrors.sessionRequired }
        return try await database.transaction { connection in
            guard let found = try await factors.find(id: factorID, userID: caller.userID, on: connection) else { throw FactorErrors.notFound }
            guard let aal = try await factors.sessionAAL(id: sessionID, userID: caller.userID, on: connection) else { throw AuthErrors.sessionNotFound }
            if found.factor.isVerified, aal != "aal2" { throw FactorErrors.aal2ToUnenroll }
            try await removeFactor(found.factor, on: connection)
            if let user = try await users.find(id: caller.userID, app: app, on: connection) {
                try await audit(.factorUnenrolled, actor: .user(user), traits: Self.factorAuditTraits(found.factor), app: app, on: connection)
            }
            return FactorIDResponse(id: factorID.uuidString.lowercased())
        }
    }

    // MARK: operators

    /// `GET /admin/users/{id}/factors`.
    func adminFactors(app: App, userID: UUID) async throws -> [FactorResource] {
        let account = try await user(app: app, id: userID)
        return account.factors.map(FactorResource.init)
    }

    /// `DELETE /admin/users/{id}/factors/{factor_id}`: an operator's recovery for a user who lost
    /// their authenticator. Answers with the deleted factor, as GoTrue does. `operatorActor`: the
    /// console's operator, whom the audit log names; nil (the service-role key) names the owner.
    func adminDeleteFactor(app: App, userID: UUID, factorID: UUID, operatorActor: AuditActor? = nil) async throws -> FactorResource {
        try await database.transaction { connection in
            guard let user = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            guard let found = try await factors.find(id: factorID, userID: userID, on: connection) else { throw FactorErrors.notFound }
            try await removeFactor(found.factor, on: connection)
            // GoTrue records the factor's owner as the actor of a service-role key's deletion; an
            // operator's entry names the account in its traits.
            var traits = Self.factorAuditTraits(found.factor)
            if operatorActor != nil { traits.merge(auditTraits(of: user)) { factor, _ in factor } }
            try await audit(.factorDeleted, actor: operatorActor ?? .user(user), traits: traits, app: app, on: connection)
            logger.notice("MFA factor deleted by an operator", metadata: ["user_id": "\(userID.uuidString.lowercased())", "factor_id": "\(factorID.uuidString.lowercased())"])
            return FactorResource(found.factor)
        }
    }

    /// `PUT /admin/users/{id}/factors/{factor_id}`: an operator renames a factor, or corrects a phone
    /// factor's number (GoTrue's adminUserUpdateFactor; empty fields change nothing; the number of a
    /// TOTP factor is ignored). Answers with the factor as it is now.
    func adminUpdateFactor(app: App, userID: UUID, factorID: UUID, friendlyName: String?, phone: String?, actor: AuditActor = .serviceRole) async throws -> FactorResource {
        let name = (friendlyName ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= FactorRules.maxNameLength, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthErrors.badRequest("friendly_name must be at most \(FactorRules.maxNameLength) characters, without control characters")
        }
        var number: String?
        if let phone, !phone.isEmpty {
            guard let normalized = Credentials.normalizedPhone(phone) else {
                throw APIError(.badRequest, code: "validation_failed", message: "Invalid phone number format (E.164 required)")
            }
            number = normalized
        }
        return try await database.transaction { connection in
            guard try await users.find(id: userID, app: app, on: connection, forUpdate: true) != nil else { throw AuthErrors.userNotFound }
            guard var factor = try await factors.find(id: factorID, userID: userID, on: connection)?.factor else { throw FactorErrors.notFound }
            if !name.isEmpty, name != factor.friendlyName {
                let others = try await factors.list(userID: userID, on: connection)
                if others.contains(where: { $0.id != factorID && $0.friendlyName == name }) { throw FactorErrors.nameConflict(name) }
                factor.friendlyName = name
            }
            if let number, factor.kind == .phone { factor.phone = number }
            factor.updatedAt = Date()
            try await factors.update(factor, on: connection)
            var traits = Self.factorAuditTraits(factor)
            traits["user_id"] = .string(userID.uuidString.lowercased())
            try await audit(.factorUpdated, actor: actor, traits: traits, app: app, on: connection)
            logger.notice("MFA factor updated by an operator", metadata: ["user_id": "\(userID.uuidString.lowercased())", "factor_id": "\(factorID.uuidString.lowercased())"])
            return FactorResource(factor)
        }
    }

    /// A factor's audit traits: which factor, never its secret or codes.
    static func factorAuditTraits(_ factor: FactorRecord) -> [String: JSONValue] {
        ["factor_id": .string(factor.id.uuidString.lowercased()), "factor_type": .string(factor.factorType), "factor_status": .string(factor.status)]
    }

    private func removeFactor(_ factor: FactorRecord, on connection: PostgresConnection) async throws {
        if let kind = factor.kind {
            try await factors.downgradeSessions(factorID: factor.id, method: FactorRules.amrMethod(kind), on: connection)
        }
        try await factors.delete(id: factor.id, on: connection)
    }

}
