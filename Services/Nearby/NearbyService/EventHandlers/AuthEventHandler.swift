import ColonyModels
import ColonyPlatform
import PostgresNIO

/// Auth's events for socialspot accounts (`AccountEvents`): create the profile, erase the account.
struct AuthEventHandler: Sendable {
    let nearby: Nearby

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        try await AccountEvents(app: .socialspot, updates: false) { [nearby] account, connection in
            try await nearby.registered(account.id, metadata: account.metadata, on: connection)
        } erased: { [nearby] userID, connection in
            try await nearby.erase(userID, on: connection)
        }.handle(event, on: connection)
    }
}
