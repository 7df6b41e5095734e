import ColonyModels
import ColonyPlatform
import PostgresNIO

/// Auth's events for unify accounts (`AccountEvents`): create or refresh the `user` row, erase the account.
struct AuthEventHandler: Sendable {
    let users: Users
    let groups: Groups

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        try await AccountEvents(app: .unify, updates: true) { [users] account, connection in
            try await users.registered(account.id, email: account.email, metadata: account.metadata, on: connection)
        } erased: { [users, groups] userID, connection in
            try await users.erase(userID, groups: groups, on: connection)
        }.handle(event, on: connection)
    }
}
