import ColonyModels
import Foundation

/// An account of the app as the import left it in Colony's auth.
public struct ImportedAccount: Sendable, Equatable {
    public var id: UUID
    public var email: String?
    /// E.164 with its `+`.
    public var phone: String?
    public var userMetadata: [String: JSONValue]
    public var createdAt: Date

    public init(id: UUID, email: String?, phone: String?, userMetadata: [String: JSONValue], createdAt: Date) {
        self.id = id
        self.email = email
        self.phone = phone
        self.userMetadata = userMetadata
        self.createdAt = createdAt
    }
}

/// The accounts the app's rows may refer to: those of the source's `auth.users` that Colony's
/// auth has (imported now or earlier, not deleted since). A row naming anyone else (a user
/// deleted in Supabase, one whose account was skipped) is dangling: reported and skipped.
public struct ImportedAccounts: Sendable {
    public let byID: [UUID: ImportedAccount]

    public init(_ byID: [UUID: ImportedAccount]) {
        self.byID = byID
    }

    public func contains(_ id: UUID) -> Bool { byID[id] != nil }

    /// Throws when `id` (from `column`) is not an imported account.
    public func require(_ id: UUID, _ column: String) throws(RowProblem) {
        guard byID[id] != nil else { throw RowProblem("\(column) \(id.lowercased) is not an imported account (deleted in Supabase, or its account was skipped)") }
    }

    public var all: [ImportedAccount] { byID.values.sorted { $0.createdAt < $1.createdAt || ($0.createdAt == $1.createdAt && $0.id.uuidString < $1.id.uuidString) } }
}
