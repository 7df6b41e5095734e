import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import Logging
import PostgresNIO

/// Random tokens and their stored hashes: a cookie or an invitation carries the token, the
/// database only its SHA-256, so a copy of the database signs nobody in.
public enum ConsoleTokens {
    public static func newToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Base64URL.encode(Array($0)) }
    }

    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// Who is asking, as a route knows them: a live, fully signed-in session's operator.
public struct SignedInOperator: Sendable {
    public var record: OperatorRecord
    public var session: OperatorSession
    public var ipAddress: String

    public var rights: OperatorRights { record.rights }
    public var email: String { record.email }
}

/// A refusal the operator sees on the page (never a 500): wrong input, no right, locked out.
public struct ConsoleRefusal: Error, Sendable, Equatable {
    public enum Kind: Sendable { case badInput, forbidden, notFound, tooMany, unavailable }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var status: Int {
        switch kind {
        case .badInput: 400
        case .forbidden: 403
        case .notFound: 404
        case .tooMany: 429
        case .unavailable: 502
        }
    }
}

/// Operators' accounts, invitations, sign-in with a password and a TOTP second factor, and
/// server-side sessions. Every step that succeeds or is refused is in the audit log.
public struct Operators: Sendable {
    let database: Database
    let outbox: Outbox
    let hasher: PasswordHasher
    let settings: ConsoleSettings
    let logger: Logger
    var operators: OperatorStore { OperatorStore(logger: logger) }
    var sessions: SessionStore { SessionStore(logger: logger) }
    var audit: AuditStore { AuditStore(logger: logger) }
    var sessionRules: SessionRules { SessionRules(idleTimeout: settings.idleTimeout, absoluteTimeout: settings.absoluteTimeout) }
    var lockoutRules: LockoutRules { LockoutRules(attempts: settings.lockoutAttempts, lockout: settings.lockout) }

    public static let refusedSignIn = "That address and password do not match an operator who may sign in now. After several tries, wait a quarter of an hour."

    public init(database: Database, outbox: Outbox, hasher: PasswordHasher, settings: ConsoleSettings, logger: Logger) {
        self.database = database
        self.outbox = outbox
        self.hasher = hasher
        self.settings = settings
        self.logger = logger
    }

    // MARK: The audit log

    /// Appends an entry (and its `operator_action` event) in its own transaction.
    /// `publishing`: further events the action makes (a moderator's), in the audit entry's transaction.
    public func record(_ actor: SignedInOperator?, email: String? = nil, action: String, app: App? = nil, target: String? = nil,
                       outcome: AuditEntry.Outcome, detail: String? = nil, ipAddress: String?,
                       publishing events: @Sendable (Outbox, PostgresConnection) async throws -> Void = { _, _ in }) async throws {
        try await database.transaction { connection in
            try await audit.append(operatorID: actor?.record.id, operatorEmail: actor?.email ?? email ?? "", role: actor?.rights.role, action: action, app: app,
                                   target: target, outcome: outcome, detail: detail, ipAddress: ipAddress ?? actor?.ipAddress, outbox: outbox, on: connection)
            try await events(outbox, connection)
        }
    }

    public func auditLog(_ filter: AuditFilter, limit: Int) async throws -> [AuditEntry] {
        try await database.withConnection { try await audit.list(filter, limit: limit, on: $0) }
    }

    // MARK: Invitations

    /// A new operator with an open invitation; the token (shown once, to whoever invited them)
    /// opens `/console/welcome?token=…`, where they set a password and their second factor.
    public func invite(email: String, rights: OperatorRights, invitedBy: String) async throws -> String {
        let address = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard Self.isAddress(address) else { throw ConsoleRefusal(.badInput, "That is not an email address.") }
        let token = ConsoleTokens.newToken()
        let expires = Date().addingTimeInterval(TimeInterval(settings.invitationLifetime.components.seconds))
        let inserted = try await database.transaction { connection in
            try await operators.insert(id: UUID(), email: address, rights: rights, invitationHash: ConsoleTokens.hash(token), invitationExpiresAt: expires,
                                       createdBy: invitedBy, on: connection)
        }
        guard inserted else { throw ConsoleRefusal(.badInput, "An operator with that address exists already.") }
        return token
    }

    /// A fresh invitation for an operator who lost their password or device: both are set up again.
    public func reinvite(id: UUID) async throws -> String {
        let token = ConsoleTokens.newToken()
        let expires = Date().addingTimeInterval(TimeInterval(settings.invitationLifetime.components.seconds))
        try await database.transaction { connection in
            guard try await operators.lock(id: id, on: connection) != nil else { throw ConsoleRefusal(.notFound, "No such operator.") }
            try await operators.reinvite(id: id, invitationHash: ConsoleTokens.hash(token), invitationExpiresAt: expires, on: connection)
            try await sessions.endAll(operatorID: id, on: connection)
        }
        return token
    }

    /// Whether `token` is an open invitation (the page asks for a password only then).
    public func invitation(_ token: String) async throws -> OperatorRecord? {
        let record = try await database.transaction { try await operators.find(invitationHash: ConsoleTokens.hash(token), on: $0) }
        guard let record, let expires = record.invitationExpiresAt, expires > Date(), record.disabledAt == nil else { return nil }
        return record
    }

    /// Takes an invitation: the password is set and a session starts at the enrolment of the second factor.
    public func acceptInvitation(token: String, password: String, ipAddress: String, userAgent: String?) async throws -> (token: String, record: OperatorRecord) {
        if let problem = PasswordRules.problem(password) { throw ConsoleRefusal(.badInput, problem) }
        let hash = try await hasher.hash(password)
        let sessionToken = ConsoleTokens.newToken()
        let record = try await database.transaction { connection -> OperatorRecord in
            guard let record = try await operators.find(invitationHash: ConsoleTokens.hash(token), on: connection),
                  let expires = record.invitationExpiresAt, expires > Date(), record.disabledAt == nil
            else { throw ConsoleRefusal(.badInput, "This invitation is used or has expired: ask an owner for a new one.") }
            try await operators.acceptInvitation(id: record.id, passwordHash: hash, on: connection)
            try await sessions.insert(tokenHash: ConsoleTokens.hash(sessionToken), operatorID: record.id, stage: .enrolling, csrfToken: ConsoleTokens.newToken(),
                                      ipAddress: ipAddress, userAgent: userAgent, on: connection)
            try await audit.append(operatorID: record.id, operatorEmail: record.email, role: record.role, action: "accept_invitation", app: nil, target: nil,
                                   outcome: .ok, detail: nil, ipAddress: ipAddress, outbox: outbox, on: connection)
            return record
        }
        return (sessionToken, record)
    }

    // MARK: Signing in

    /// The first step: address and password. A session at `password` (or `enrolling` for an
    /// operator without a confirmed second factor) on success. An unknown address costs the same
    /// time as a wrong password, and both get the same answer.
    public func signIn(email: String, password: String, ipAddress: String, userAgent: String?) async throws -> (token: String, stage: OperatorSession.Stage) {
        try await checkAddressQuota(ipAddress)
        let address = email.trimmingCharacters(in: .whitespaces).lowercased()
        let found = Self.isAddress(address) ? try await database.withConnection { try await operators.find(email: address, on: $0) } : nil
        guard let record = found, let hash = record.passwordHash, record.disabledAt == nil else {
            try await hasher.dummyVerify(password)
            try await record(nil, email: String(address.prefix(320)), action: "sign_in", outcome: .refused, detail: "unknown address or no password", ipAddress: ipAddress)
            throw ConsoleRefusal(.forbidden, Self.refusedSignIn)
        }
        if lockoutRules.isLocked(until: record.lockedUntil, now: Date()) {
            try await hasher.dummyVerify(password)
            try await self.record(nil, email: record.email, action: "sign_in", outcome: .refused, detail: "locked", ipAddress: ipAddress)
            throw ConsoleRefusal(.forbidden, Self.refusedSignIn)
        }
        guard try await hasher.verify(password, hash: hash) else {
            try await fail(record.id, email: record.email, action: "sign_in", ipAddress: ipAddress)
            throw ConsoleRefusal(.forbidden, Self.refusedSignIn)
        }
        let token = ConsoleTokens.newToken()
        let stage: OperatorSession.Stage = record.totpConfirmedAt == nil ? .enrolling : .password
        try await database.transaction { connection in
            try await sessions.insert(tokenHash: ConsoleTokens.hash(token), operatorID: record.id, stage: stage, csrfToken: ConsoleTokens.newToken(),
                                      ipAddress: ipAddress, userAgent: userAgent, on: connection)
        }
        return (token, stage)
    }

    /// The second step: a code from the operator's authenticator, good once.
    public func verifyCode(session: OperatorSession, code: String, ipAddress: String) async throws {
        try await checkAddressQuota(ipAddress)
        guard session.stage == .password else { throw ConsoleRefusal(.badInput, "Sign in with your password first.") }
        let outcome = try await database.transaction { connection -> (email: String, ok: Bool, locked: Bool) in
            guard let record = try await operators.lock(id: session.operatorID, on: connection), record.disabledAt == nil,
                  let secret = record.totpSecret, record.totpConfirmedAt != nil, let totp = TOTP(base32Secret: secret)
            else { throw ConsoleRefusal(.forbidden, Self.refusedSignIn) }
            if lockoutRules.isLocked(until: record.lockedUntil, now: Date()) { return (record.email, false, true) }
            guard let step = totp.verify(Self.digits(code), at: Date(), after: record.totpLastStep) else { return (record.email, false, false) }
            try await operators.signedIn(id: record.id, step: step, on: connection)
            try await sessions.setStage(tokenHash: session.tokenHash, stage: .full, on: connection)
            try await audit.append(operatorID: record.id, operatorEmail: record.email, role: record.role, action: "sign_in", app: nil, target: nil,
                                   outcome: .ok, detail: nil, ipAddress: ipAddress, outbox: outbox, on: connection)
            return (record.email, true, false)
        }
        guard outcome.ok else {
            if outcome.locked {
                try await record(nil, email: outcome.email, action: "sign_in_code", outcome: .refused, detail: "locked", ipAddress: ipAddress)
            } else {
                try await fail(session.operatorID, email: outcome.email, action: "sign_in_code", ipAddress: ipAddress)
            }
            throw ConsoleRefusal(.forbidden, "That code is not right (or was used already). After several tries, wait a quarter of an hour.")
        }
    }

    /// The secret an enrolling operator scans: a new one the first time, the same one until confirmed.
    public func enrolment(session: OperatorSession) async throws -> (secret: String, uri: String) {
        guard session.stage == .enrolling else { throw ConsoleRefusal(.badInput, "Your second factor is set up already.") }
        return try await database.transaction { connection in
            guard let record = try await operators.lock(id: session.operatorID, on: connection), record.totpConfirmedAt == nil else {
                throw ConsoleRefusal(.badInput, "Your second factor is set up already.")
            }
            let secret: String
            if let pending = record.totpSecret {
                secret = pending
            } else {
                secret = Base32.encode(TOTP.newSecret())
                try await operators.setPendingSecret(id: record.id, secret: secret, on: connection)
            }
            let uri = TOTP(base32Secret: secret)?.uri(issuer: "Colony Console", accountName: record.email) ?? ""
            return (secret, uri)
        }
    }

    /// Confirms the enrolment with a first code; the session is then signed in.
    public func confirmEnrolment(session: OperatorSession, code: String, ipAddress: String) async throws {
        try await checkAddressQuota(ipAddress)
        guard session.stage == .enrolling else { throw ConsoleRefusal(.badInput, "Your second factor is set up already.") }
        let confirmed = try await database.transaction { connection -> (email: String, ok: Bool) in
            guard let record = try await operators.lock(id: session.operatorID, on: connection), record.disabledAt == nil,
                  let secret = record.totpSecret, let totp = TOTP(base32Secret: secret)
            else { throw ConsoleRefusal(.badInput, "Scan the code first.") }
            guard let step = totp.verify(Self.digits(code), at: Date(), after: record.totpLastStep) else { return (record.email, false) }
            try await operators.confirmTOTP(id: record.id, step: step, on: connection)
            try await operators.signedIn(id: record.id, step: step, on: connection)
            try await sessions.setStage(tokenHash: session.tokenHash, stage: .full, on: connection)
            try await audit.append(operatorID: record.id, operatorEmail: record.email, role: record.role, action: "enroll_totp", app: nil, target: nil,
                                   outcome: .ok, detail: nil, ipAddress: ipAddress, outbox: outbox, on: connection)
            return (record.email, true)
        }
        guard confirmed.ok else {
            try await fail(session.operatorID, email: confirmed.email, action: "enroll_totp", ipAddress: ipAddress)
            throw ConsoleRefusal(.forbidden, "That code is not right: check your device's clock and try the next one.")
        }
    }

    /// The session a cookie names, if it is still live and its operator may still sign in.
    public func session(token: String) async throws -> (OperatorRecord, OperatorSession)? {
        let hash = ConsoleTokens.hash(token)
        return try await database.withConnection { connection -> (OperatorRecord, OperatorSession)? in
            guard let session = try await sessions.find(tokenHash: hash, on: connection),
                  sessionRules.isLive(createdAt: session.createdAt, lastSeenAt: session.lastSeenAt, endedAt: session.endedAt, now: Date()),
                  let record = try await operators.find(id: session.operatorID, on: connection), record.disabledAt == nil
            else { return nil }
            try await sessions.touch(tokenHash: hash, on: connection)
            return (record, session)
        }
    }

    public func signOut(_ session: OperatorSession) async throws {
        try await database.withConnection { try await sessions.end(tokenHash: session.tokenHash, on: $0) }
    }

    // MARK: Managing operators (owners)

    public func all() async throws -> [OperatorRecord] {
        try await database.withConnection { try await operators.all(on: $0) }
    }

    public func setRights(id: UUID, rights: OperatorRights) async throws {
        try await database.transaction { connection in
            guard try await operators.lock(id: id, on: connection) != nil else { throw ConsoleRefusal(.notFound, "No such operator.") }
            try await operators.setRights(id: id, rights: rights, on: connection)
            try await sessions.endAll(operatorID: id, on: connection)
        }
    }

    public func setDisabled(id: UUID, _ disabled: Bool) async throws {
        try await database.transaction { connection in
            guard try await operators.lock(id: id, on: connection) != nil else { throw ConsoleRefusal(.notFound, "No such operator.") }
            try await operators.setDisabled(id: id, disabled, on: connection)
            if disabled { try await sessions.endAll(operatorID: id, on: connection) }
        }
    }

    public func find(id: UUID) async throws -> OperatorRecord? {
        try await database.withConnection { try await operators.find(id: id, on: $0) }
    }

    // MARK: Helpers

    /// Counts a failed password or code; enough in a row lock the operator.
    func fail(_ id: UUID, email: String, action: String, ipAddress: String) async throws {
        try await database.transaction { connection in
            guard let record = try await operators.lock(id: id, on: connection) else { return }
            let failures = record.failedAttempts + 1
            let lockedUntil = lockoutRules.lockedUntil(failures: failures, now: Date())
            try await operators.recordFailure(id: id, failures: lockedUntil == nil ? failures : 0, lockedUntil: lockedUntil, on: connection)
            try await audit.append(operatorID: id, operatorEmail: email, role: record.role, action: action, app: nil, target: nil, outcome: .refused,
                                   detail: lockedUntil == nil ? "wrong" : "wrong; locked", ipAddress: ipAddress, outbox: outbox, on: connection)
        }
    }

    /// Password and code attempts per client address, whichever operator they name.
    func checkAddressQuota(_ ipAddress: String) async throws {
        let over = try await database.withConnection { connection in
            try await Quotas(logger: logger).hit("sign_in|\(ipAddress)", settings.signInQuota, on: connection)
        }
        if over != nil { throw ConsoleRefusal(.tooMany, "Too many sign-in attempts from your address: wait a quarter of an hour.") }
    }

    static func digits(_ code: String) -> String {
        String(code.filter { $0 != " " && $0 != "-" }.prefix(16))
    }

    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return text.utf8.count <= 320 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}
