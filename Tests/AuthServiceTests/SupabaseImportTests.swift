import AuthService
import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Testing

/// `colony-admin import supabase`'s accounts step and the import engine, against a scratch
/// database shaped like a Supabase project (Tests/EndToEnd/supabase/platform.sql and GoTrue's migrations).
@Suite("Importing a Supabase project: accounts, identities, the ledger")
struct SupabaseImportTests {
    @Test("accounts keep their ids and passwords, Apple identities their sub (Sign in with Apple finds the account); a deleted user's identity is skipped; a second run writes nothing")
    func accountsAndAppleIdentities() async throws {
        try await AppleStandIn.run { apple in
            try await withRunningAuth(appleKeysURL: apple.keysURL) { auth in
                try await withSupabaseSource { source in
                    let user = UUID(), deleted = UUID(), sub = "001999.\(UUID().uuidString.lowercased().prefix(12)).0420"
                    let email = "imported-\(UUID().uuidString.prefix(8).lowercased())@example.com"
                    try await source.execute("""
                        INSERT INTO auth.users (id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
                        VALUES ('\(user)', 'authenticated', 'authenticated', '\(email)', crypt('old-password-1', gen_salt('bf', 4)), now(),
                                '{"provider": "email", "providers": ["email", "apple"]}', '{"full_name": "Imported Person"}', now() - interval '90 days', now());
                        INSERT INTO auth.users (id, email, encrypted_password, raw_user_meta_data, created_at, deleted_at)
                        VALUES ('\(deleted)', 'gone-\(deleted)@example.com', '', '{}', now(), now());
                        INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
                        VALUES ('\(user)', '\(user)', '{"sub": "\(user)", "email": "\(email)"}', 'email', now(), now()),
                               ('\(sub)', '\(user)', '{"sub": "\(sub)", "email": "\(email)", "email_verified": true}', 'apple', now(), now()),
                               ('\(deleted)', '\(deleted)', '{"sub": "\(deleted)"}', 'email', now(), now());
                        """)
                    let first = try await importAccounts(from: source, into: auth)
                    #expect(first.tables.map { [$0.name, "\($0.read)", "\($0.imported)", "\($0.notImportedCount)", "\($0.skipped.count)"] } == [
                        ["auth.users", "2", "1", "1", "0"], ["auth.identities", "3", "2", "0", "1"],
                    ])
                    #expect(first.tables.last?.skipped.first?.id == (try await source.identityID(of: deleted)))

                    let signedIn = try await auth.signIn(app: .socialspot, email: email, password: "old-password-1")
                    #expect(signedIn.status == 200)
                    #expect((signedIn.json["user"] as? [String: Any])?["id"] as? String == user.uuidString.lowercased())
                    let viaApple = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: [
                        "provider": "apple", "id_token": try await apple.idToken(audience: "com.socialspot.app", subject: sub, email: email, nonce: "n-import"), "nonce": "n-import",
                    ])
                    #expect(viaApple.status == 200)
                    #expect((viaApple.json["user"] as? [String: Any])?["id"] as? String == user.uuidString.lowercased())

                    let second = try await importAccounts(from: source, into: auth)
                    #expect(second.tables.map(\.imported) == [0, 0])
                    #expect(second.tables.map(\.already) == [1, 2])
                }
            }
        }
    }

    @Test("an import stopped by a failure resumes where it stopped: nothing written twice, nothing lost; a dry run writes nothing")
    func resumesAfterFailure() async throws {
        let things = Migration(version: 1, name: "things", sql: "CREATE TABLE things (id int PRIMARY KEY, name text NOT NULL CHECK (name <> 'bad'));")
        try await withTestDatabase(migrations: [things]) { database in
            try await withSupabaseSource { source in
                try await source.execute("""
                    CREATE TABLE public.things (id int PRIMARY KEY, name text NOT NULL);
                    INSERT INTO public.things SELECT n, CASE WHEN n = 42 THEN 'bad' ELSE 'thing ' || n END FROM generate_series(1, 1200) AS n;
                    """)
                struct Crash: Error {}
                @Sendable func run(dryRun: Bool = false, crashAt: Int? = nil) async throws -> ImportReport {
                    try await withImportTarget(dryRun: dryRun) { target in
                        let job = try await target.service(.auth, schema: database.schema, role: database.configuration.user)
                        try await job.importRows("public.things", from: source.database.rows("public", "things", orderBy: "id"), id: { String(try $0.int("id")) }) { row, writer in
                            let id = try row.int("id")
                            if id == crashAt { throw Crash() }  // the process dies here: the page in flight rolls back
                            try await writer.connection.query("INSERT INTO things (id, name) VALUES (\(id), \(try row.string("name")))", logger: writer.logger)
                            return .imported
                        }
                    }
                }
                func stored() async throws -> Int {
                    try await database.query("SELECT count(*)::int FROM things").collect().first!.decode(Int.self)
                }

                let dry = try await run(dryRun: true)
                #expect(dry.tables.first?.imported == 1199 && dry.tables.first?.skipped.map(\.id) == ["42"])
                #expect(try await stored() == 0)

                await #expect(throws: Crash.self) { _ = try await run(crashAt: 700) }
                #expect(try await stored() == 499)  // the first page (500 rows, one refused by the check) committed; the second not

                let resumed = try await run()
                #expect(resumed.tables.first.map { [$0.read, $0.imported, $0.already] } == [1200, 700, 499])
                #expect(resumed.tables.first?.skipped.map(\.id) == ["42"])
                #expect(try await stored() == 1199)
                let again = try await run()
                #expect(again.tables.first.map { [$0.imported, $0.already] } == [0, 1199])
                #expect(try await stored() == 1199)
            }
        }
    }

    func importAccounts(from source: ScratchSource, into auth: RunningAuth) async throws -> ImportReport {
        try await withImportTarget(app: .socialspot) { target in
            let job = try await target.service(.auth, schema: auth.database.schema, role: auth.database.user)
            _ = try await SupabaseAuthImport.importAccounts(job, from: source.database)
            try await SupabaseAuthImport.announce(job, phonePepper: "test-pepper")
        }
    }
}

/// A scratch database shaped like a Supabase project (platform.sql, then GoTrue's own migrations), and its snapshot reader.
struct ScratchSource: Sendable {
    let name: String
    let admin: PostgresConnection
    let database: SourceDatabase

    func execute(_ script: String) async throws {
        try await admin.execute(script: script, logger: TestEnvironment.logger)
    }

    func identityID(of user: UUID) async throws -> String {
        try await admin.query("SELECT id::text FROM auth.identities WHERE user_id = \(user)", logger: TestEnvironment.logger).collect().first!.decode(String.self)
    }
}

func withSupabaseSource(_ body: (ScratchSource) async throws -> Void) async throws {
    let environment = try TestEnvironment.current()
    let name = uniqueName("supabase")
    // Every connection is closed whether the body passed or threw: one dropped unclosed traps in a
    // debug build, which would end the whole test run, not just this test.
    try await withAdminConnection(database: environment.postgresDatabase) { postgres in
        try await postgres.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: TestEnvironment.logger)
        do {
            try await withAdminConnection(database: name) { admin in
                let platform = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("EndToEnd/supabase/platform.sql")
                try await admin.execute(script: try String(contentsOf: platform, encoding: .utf8), logger: TestEnvironment.logger)
                try await GoTrueMigrations.apply(on: admin)
                let location = try SourceDatabase.Location(url: "postgres://\(environment.adminUser):\(environment.adminPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")@\(environment.postgresHost):\(environment.postgresPort)/\(name)?sslmode=disable")
                // The test writes through `admin` first; the imports then read one snapshot taken at their first query.
                let database = try await SourceDatabase.open(location, logger: TestEnvironment.logger)
                do {
                    try await body(ScratchSource(name: name, admin: admin, database: database))
                } catch {
                    await database.close()
                    throw error
                }
                await database.close()
            }
        } catch {
            _ = try? await postgres.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestEnvironment.logger)
            throw error
        }
        try await postgres.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestEnvironment.logger)
    }
}

/// Runs `body` with an admin connection to `database`, closed after it whether it threw or not.
func withAdminConnection<Result>(database: String, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
    let connection = try await adminConnection(database: database)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

/// An import into the test database as its admin, the way `colony-admin import supabase` runs one.
func withImportTarget(app: App = .habithive, dryRun: Bool = false, _ body: (ImportTarget) async throws -> Void) async throws -> ImportReport {
    let environment = try TestEnvironment.current()
    let report = ImportReport(title: "test import")
    try await withAdminConnection(database: environment.postgresDatabase) { connection in
        let target = ImportTarget(connection: connection, app: app, dryRun: dryRun, topicPrefix: "t", report: report, files: ImportFiles(source: nil, storage: nil), logger: TestEnvironment.logger)
        try await target.begin()
        try await body(target)
        try await target.end()
    }
    return report
}

func adminConnection(database: String) async throws -> PostgresConnection {
    let environment = try TestEnvironment.current()
    let configuration = PostgresConnection.Configuration(host: environment.postgresHost, port: environment.postgresPort, username: environment.adminUser,
                                                         password: environment.adminPassword, database: database, tls: .disable)
    return try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: Int.random(in: 1...Int.max), logger: TestEnvironment.logger)
}
