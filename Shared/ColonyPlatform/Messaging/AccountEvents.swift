import ColonyModels
import Foundation
import PostgresNIO

/// Auth's account events as a domain service takes them, the same in each: only its own app's
/// accounts; a sign-up (and an update, where the service keeps what one changes) creates or
/// refreshes the service's row; an erasure takes the account's lock first, so that a first
/// request racing it cannot bring the account back. The service passes in its own part. Runs
/// inside the inbox transaction, so a redelivery changes nothing.
public struct AccountEvents: Sendable {
    /// What a sign-up or an update says of the account.
    public struct Account: Sendable {
        public var id: UUID
        public var email: String?
        public var phone: String?
        public var phoneHash: String?
        public var metadata: [String: JSONValue]
    }

    public var app: App
    /// Whether an update goes to `registered` too (false: it changes nothing the service keeps).
    public var updates: Bool
    public var registered: @Sendable (Account, PostgresConnection) async throws -> Void
    public var erased: @Sendable (UUID, PostgresConnection) async throws -> Void

    public init(app: App, updates: Bool,
                registered: @escaping @Sendable (Account, PostgresConnection) async throws -> Void,
                erased: @escaping @Sendable (UUID, PostgresConnection) async throws -> Void) {
        self.app = app
        self.updates = updates
        self.registered = registered
        self.erased = erased
    }

    public func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == app else { return }
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await registered(Account(id: payload.userId, email: payload.email, phone: payload.phone, phoneHash: payload.phoneHash, metadata: payload.userMetadata), connection)
        case .userUpdated where updates:
            let payload = try event.decode(UserUpdated.self).payload
            try await registered(Account(id: payload.userId, email: payload.email, phone: payload.phone, phoneHash: payload.phoneHash, metadata: payload.userMetadata), connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            try await AccountLock.lockForErasure(userID, on: connection)
            try await erased(userID, connection)
        default:
            break
        }
    }
}
