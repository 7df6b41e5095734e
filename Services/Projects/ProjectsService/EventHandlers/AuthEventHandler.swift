import ColonyModels
import ColonyPlatform
import PostgresNIO

/// Auth's events for ibelieveinyou accounts (`AccountEvents`): create the builder and karma (the
/// seed's sign-up trigger), erase the account.
struct AuthEventHandler: Sendable {
    let builders: Builders
    let projects: Projects

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        try await AccountEvents(app: .ibelieveinyou, updates: false) { [builders] account, connection in
            try await builders.registered(account.id, email: account.email, metadata: account.metadata, on: connection)
        } erased: { [builders, projects] userID, connection in
            try await builders.erase(userID, projects: projects, on: connection)
        }.handle(event, on: connection)
    }
}
