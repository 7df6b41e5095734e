import AsyncHTTPClient
import ColonyModels
import ColonyTesting
import Foundation
import Hummingbird
import NIOHTTP1
import PostgresNIO
import Testing

@testable import ColonyPlatform

/// The console's holdings route every service gets from `ServiceHost`: how many rows of each kind
/// (`ConsoleHolding`) the service holds of one user, and who may ask.
@Suite("Holdings admin route for the console")
struct HoldingsAdminRoutesTests {
    static let operatorEmail = "ops@colony.test"
    let consoleKey = InternalKey(PipelineAdminRoutesTests.randomKey())

    var console: [(String, String)] { ConsoleCaller.headers(key: consoleKey, operatorEmail: Self.operatorEmail, app: nil) }

    /// A tiny service whose users own `things` and leave `marks` on others' things.
    func thingsDefinition(holdings: Bool = true) -> ServiceDefinition {
        ServiceDefinition(
            migrations: [Migration(version: 1, name: "things", sql: """
                CREATE TABLE things (id int PRIMARY KEY, owner uuid NOT NULL);
                CREATE TABLE marks (thing int NOT NULL, author uuid NOT NULL);
                CREATE INDEX things_owner ON things (owner);
                CREATE INDEX marks_author ON marks (author);
                """)],
            consoleHoldings: holdings ? [
                ConsoleHolding(name: "things", sql: "SELECT id FROM things WHERE owner = $1 ORDER BY id"),
                ConsoleHolding(name: "marks", sql: "SELECT thing FROM marks WHERE author = $1"),
            ] : [],
            addRoutes: { _, _ in }
        )
    }

    func holdings(_ service: RunningService, _ user: String, headers: [(String, String)]? = nil, as caller: RunningService.User? = nil) async throws -> RunningService.Reply {
        try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.prefix)/users/\(user)/holdings", as: caller, headers: headers ?? console)
    }

    @Test("each kind is counted for the user asked about, in the service's order; someone else's rows are not; an id that is no user's counts zeros")
    func counts() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey },
                                     definition: { _ in thingsDefinition() }) { service in
            let alice = UUID(), bob = UUID()
            try await service.withDatabase { database in
                for id in 1...3 { try await database.query("INSERT INTO things (id, owner) VALUES (\(id), \(alice))") }
                try await database.query("INSERT INTO things (id, owner) VALUES (4, \(bob))")
                for thing in [4, 4, 1] { try await database.query("INSERT INTO marks (thing, author) VALUES (\(thing), \(bob))") }
            }
            let reply = try await holdings(service, alice.lowercased)
            #expect(reply.status == 200, "\(reply.body)")
            let answer = try ColonyJSON.decoder().decode(HoldingsAdminRoutes.Holdings.self, from: Data(buffer: reply.bytes))
            #expect(answer == HoldingsAdminRoutes.Holdings(service: "habits", userId: alice, holdings: [.init(name: "things", count: 3), .init(name: "marks", count: 0)]))
            #expect(reply.body["user_id"] == .string(alice.lowercased), "documented as user_id, lower case: \(reply.body)")

            // Upper case is the same id; the console's app header is taken and changes nothing.
            let upper = try await holdings(service, bob.uuidString.uppercased(), headers: ConsoleCaller.headers(key: consoleKey, operatorEmail: Self.operatorEmail, app: .habithive))
            let bobs = try ColonyJSON.decoder().decode(HoldingsAdminRoutes.Holdings.self, from: Data(buffer: upper.bytes))
            #expect(bobs.holdings.map(\.count) == [1, 3] && bobs.userId == bob)

            let nobody = try ColonyJSON.decoder().decode(HoldingsAdminRoutes.Holdings.self, from: Data(buffer: try await holdings(service, UUID().lowercased).bytes))
            #expect(nobody.holdings.map(\.count) == [0, 0])
        }
    }

    @Test("only the console's credential is taken; a path id that is not a UUID is 400 (never 500); a service that holds nothing answers an empty list")
    func refusals() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey },
                                     definition: { _ in thingsDefinition() }) { service in
            let user = try await service.user()
            let operatorHeader = [("X-Colony-Operator", Self.operatorEmail)]
            for (what, headers, caller) in [
                ("no credential", operatorHeader, nil),
                ("a user's token", operatorHeader, user),
                ("a wrong console key", ConsoleCaller.headers(key: InternalKey(PipelineAdminRoutesTests.randomKey()), operatorEmail: Self.operatorEmail, app: nil), nil),
            ] as [(String, [(String, String)], RunningService.User?)] {
                let reply = try await holdings(service, user.id.lowercased, headers: headers, as: caller)
                #expect(reply.status == 401 && reply.code == "invalid_console_credential", "\(what): \(reply.status) \(reply.body)")
            }
            let noOperator = try await holdings(service, user.id.lowercased, headers: [("Authorization", consoleKey.authorization)])
            #expect(noOperator.status == 400 && noOperator.code == "operator_required")
            for id in ["1", "not-a-uuid", "00000000-0000-0000-0000-00000000000g", "%20", String(repeating: "a", count: 300), "\(UUID().lowercased)x"] {
                let reply = try await holdings(service, id)
                #expect(reply.status == 400 && reply.code == "invalid_id", "id \(id): \(reply.status) \(reply.body)")
            }
        }
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey },
                                     definition: { _ in thingsDefinition(holdings: false) }) { service in
            let reply = try await holdings(service, UUID().lowercased)
            #expect(reply.status == 200 && reply.body["holdings"] == .array([]), "\(reply.body)")
        }
    }
}
