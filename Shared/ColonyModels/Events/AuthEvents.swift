import Foundation

// Auth's events: every domain service creates, updates and erases its own profile from these.

extension EventType {
    public static let userRegistered: EventType = "user_registered"
    public static let userUpdated: EventType = "user_updated"
    public static let userDeleted: EventType = "user_deleted"
}

/// A new account in one app. `phoneHash` is hex SHA-256 of (server pepper ‖ E.164 phone), for
/// HabitHive's contact matching; nil for accounts without a phone.
public struct UserRegistered: EventPayload {
    public static let eventType = EventType.userRegistered
    public static let source = ColonyService.auth

    public var userId: UUID
    public var app: App
    public var email: String?
    public var phone: String?
    public var phoneHash: String?
    public var userMetadata: [String: JSONValue]
    public var createdAt: Date

    public init(userId: UUID, app: App, email: String?, phone: String?, phoneHash: String?, userMetadata: [String: JSONValue], createdAt: Date) {
        self.userId = userId
        self.app = app
        self.email = email
        self.phone = phone
        self.phoneHash = phoneHash
        self.userMetadata = userMetadata
        self.createdAt = createdAt
    }
}

/// Email, phone or metadata changed.
public struct UserUpdated: EventPayload {
    public static let eventType = EventType.userUpdated
    public static let source = ColonyService.auth

    public var userId: UUID
    public var app: App
    public var email: String?
    public var phone: String?
    public var phoneHash: String?
    public var userMetadata: [String: JSONValue]
    public var updatedAt: Date

    public init(userId: UUID, app: App, email: String?, phone: String?, phoneHash: String?, userMetadata: [String: JSONValue], updatedAt: Date) {
        self.userId = userId
        self.app = app
        self.email = email
        self.phone = phone
        self.phoneHash = phoneHash
        self.userMetadata = userMetadata
        self.updatedAt = updatedAt
    }
}

/// The account is gone: every service erases the user's data.
public struct UserDeleted: EventPayload {
    public static let eventType = EventType.userDeleted
    public static let source = ColonyService.auth

    public var userId: UUID
    public var app: App
    public var deletedAt: Date

    public init(userId: UUID, app: App, deletedAt: Date) {
        self.userId = userId
        self.app = app
        self.deletedAt = deletedAt
    }
}

/// Reading sign-up metadata (`user_metadata`) the way every service does.
public enum SignUpMetadata {
    /// The name the user gave at sign-up, trimmed and cut to `maxLength`. Colony's event decoder
    /// camel-cases nested keys, so both spellings of each key count.
    public static func displayName(_ metadata: [String: JSONValue], maxLength: Int) -> String? {
        for key in ["display_name", "displayName", "full_name", "fullName", "name"] {
            if case .string(let value) = metadata[key] {
                let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty { return String(trimmed.prefix(maxLength)) }
            }
        }
        return nil
    }
}

extension EventType {
    public static let userExportRequested: EventType = "user_export_requested"
}

/// The user (or an operator for them) asked for a copy of their data: every service that holds
/// some writes its part of export `exportId` to the exports bucket, as it erases on `user_deleted`.
public struct UserExportRequested: EventPayload {
    public static let eventType = EventType.userExportRequested
    public static let source = ColonyService.auth

    public var exportId: UUID
    public var userId: UUID
    public var app: App
    public var requestedAt: Date

    public init(exportId: UUID, userId: UUID, app: App, requestedAt: Date) {
        self.exportId = exportId
        self.userId = userId
        self.app = app
        self.requestedAt = requestedAt
    }
}

extension EventType {
    public static let userSuspended: EventType = "user_suspended"
    public static let userReinstated: EventType = "user_reinstated"
}

/// An operator suspended (banned) the account until `until`: its sessions are gone, every service
/// refuses its access tokens (they learn of it from auth's `SuspendedAccountsRoute` within a poll)
/// and notifications sends it no pushes until then.
public struct UserSuspended: EventPayload {
    public static let eventType = EventType.userSuspended
    public static let source = ColonyService.auth

    public var userId: UUID
    public var app: App
    public var until: Date
    public var suspendedAt: Date

    public init(userId: UUID, app: App, until: Date, suspendedAt: Date) {
        self.userId = userId
        self.app = app
        self.until = until
        self.suspendedAt = suspendedAt
    }
}

/// An operator lifted the account's suspension before its end.
public struct UserReinstated: EventPayload {
    public static let eventType = EventType.userReinstated
    public static let source = ColonyService.auth

    public var userId: UUID
    public var app: App
    public var reinstatedAt: Date

    public init(userId: UUID, app: App, reinstatedAt: Date) {
        self.userId = userId
        self.app = app
        self.reinstatedAt = reinstatedAt
    }
}
