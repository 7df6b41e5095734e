import ColonyModels
import ColonyPlatform
import PostgresNIO

/// Auth's events for habithive accounts (`AccountEvents`): create the profile, refresh the phone
/// hash, erase the account.
struct AuthEventHandler: Sendable {
    let profiles: Profiles

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        try await AccountEvents(app: .habithive, updates: true) { [profiles] account, connection in
            try await profiles.registered(account.id, metadata: account.metadata, phoneHash: account.phoneHash, on: connection)
        } erased: { [profiles] userID, connection in
            try await profiles.erase(userID, on: connection)
        }.handle(event, on: connection)
    }
}
