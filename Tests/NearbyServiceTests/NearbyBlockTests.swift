import ColonyClientTesting
import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOPosix
import PostgresNIO
import Testing
@testable import NearbyService

/// SocialSpot's blocks on the platform's `user_blocks` (`BlockList`): the move of the older
/// `blocks` table, the limit, the erasure of a deleted profile's blocks both ways, and the
/// import of a Supabase project's blocks. What a
/// block hides is in `NearbyServiceTests.blocking`, `NearbyReportTests` and `NearbyExportTests`.
@Suite("Nearby: blocks")
struct NearbyBlockTests {
    @Test("migration 4 copies the old blocks into user_blocks (times kept, one already there once) and drops the old table")
    func migrationMovesBlocks() async throws {
        try await withTestSchema(extensions: NearbyService.extensions) { configuration in
            let database = Database(configuration: configuration, logger: TestEnvironment.logger)
            try await withRunning(database) {
                let runner = MigrationRunner(database: database)
                // The schema as it was before: the platform's tables (user_blocks among them) and nearby's 1-3.
                try await runner.migrate(NearbyMigrations.all.filter { $0.version < 4 })
                let (ada, bob, cy) = (UUID(), UUID(), UUID())
                let madeAt = Date(timeIntervalSince1970: 1_700_000_000)
                try await database.query("INSERT INTO profiles (id, name) VALUES (\(ada), 'Ada'), (\(bob), 'Bob'), (\(cy), 'Cy')")
                try await database.query("""
                    INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (\(ada), \(bob), \(madeAt)), (\(bob), \(cy), \(madeAt)), (\(cy), \(ada), \(madeAt))
                    """)
                // A block also made through the platform's table in between stays as it is.
                try await database.query("INSERT INTO user_blocks (blocker_id, blocked_id) VALUES (\(cy), \(ada))")

                #expect(try await runner.migrate(NearbyMigrations.all) == [4])
                let moved = try await database.query("SELECT blocker_id, blocked_id, created_at FROM user_blocks ORDER BY created_at, blocker_id").collect()
                    .map { try $0.decode((UUID, UUID, Date).self) }
                #expect(moved.count == 3)
                #expect(Set(moved.filter { $0.2 == madeAt }.map { "\($0.0)>\($0.1)" }) == ["\(ada)>\(bob)", "\(bob)>\(cy)"])
                #expect(moved.first { $0.0 == cy }.map { $0.1 == ada && $0.2 != madeAt } == true, "the block already in user_blocks is kept, not replaced")
                let oldTable = try await database.query("""
                    SELECT count(*)::int FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'blocks'
                    """).collect().first?.decode(Int.self)
                #expect(oldTable == 0, "the old blocks table is dropped")
            }
        }
    }

    @Test("a user blocks at most BlockList.limit others: past it 409 block_limit, blocking again someone blocked still 201")
    func blockLimit() async throws {
        try await withRunningNearby { nearby in
            let me = try await nearby.user(name: "Many")
            let other = try await nearby.user(name: "One more")
            let mine = nearby.api(me)
            // All but one of the limit made directly (blocking strangers' ids is allowed: a block names any user).
            try await nearby.service.withDatabase { database in
                try await database.query("""
                    INSERT INTO user_blocks (blocker_id, blocked_id) SELECT \(me.id), gen_random_uuid() FROM generate_series(1, \(BlockList.limit - 1))
                    """)
            }
            let last = try await mine.blockUser(body: .json(.init(userId: other.id.lowercased))).created.body.json
            #expect(last.count == BlockList.limit)
            #expect(last.first?.userId == other.id.lowercased, "most recent first")
            let again = try await answer { try await mine.blockUser(body: .json(.init(userId: other.id.lowercased))) }
            #expect(again.status == 201, "blocking someone already blocked changes nothing, even at the limit")
            let over = try await answer { try await mine.blockUser(body: .json(.init(userId: UUID().uuidString.lowercased()))) }
            #expect(over.status == 409 && over.code == "block_limit", "\(over.body)")
            #expect(try await mine.listBlocks().ok.body.json.count == BlockList.limit)
            #expect(try await answer { try await mine.unblockUser(path: .init(userId: other.id.lowercased)) }.status == 204)
            #expect(try await answer { try await mine.blockUser(body: .json(.init(userId: other.id.lowercased))) }.status == 201, "room again after an unblock")
        }
    }

    @Test("erasing a profile removes its blocks both ways (user_blocks has no cascade from profiles); others' blocks stay")
    func eraseRemovesBlocksBothWays() async throws {
        try await withRunningNearby { nearby in
            let gone = try await nearby.user(name: "Gone")
            let (blocked, blocker, bystander) = (try await nearby.user(name: "Blocked"), try await nearby.user(name: "Blocker"), try await nearby.user(name: "Bystander"))
            _ = try await nearby.api(gone).blockUser(body: .json(.init(userId: blocked.id.lowercased))).created
            _ = try await nearby.api(blocker).blockUser(body: .json(.init(userId: gone.id.lowercased))).created
            _ = try await nearby.api(bystander).blockUser(body: .json(.init(userId: blocked.id.lowercased))).created
            try await nearby.service.withDatabase { database in
                try await database.transaction { connection in try await ProfileStore(logger: TestEnvironment.logger).erase(gone.id, on: connection) }
                let left = try await database.query("SELECT blocker_id, blocked_id FROM user_blocks ORDER BY blocker_id").collect()
                    .map { try $0.decode((UUID, UUID).self) }
                #expect(left.map { "\($0.0)>\($0.1)" } == ["\(bystander.id)>\(blocked.id)"])
            }
            #expect(try await nearby.api(blocker).listBlocks().ok.body.json.isEmpty)
        }
    }

    @Test("a SocialSpot project's blocks are imported into user_blocks (times kept); one already made here stays; a deleted blocker's are not")
    func importedBlocks() async throws {
        try await withRunningNearby { nearby in
            let (ada, bob) = (try await nearby.user(name: "Ada"), try await nearby.user(name: "Bob"))
            let gone = UUID()
            try await nearby.service.withDatabase { database in
                try await database.query("INSERT INTO deleted_users (user_id) VALUES (\(gone))")
            }
            _ = try await nearby.api(bob).blockUser(body: .json(.init(userId: ada.id.lowercased))).created
            let madeAt = Date(timeIntervalSince1970: 1_700_000_000)
            let report = try await withScratchProject("""
                CREATE TABLE public.profiles (id uuid PRIMARY KEY, name text NOT NULL DEFAULT '');
                CREATE TABLE public.blocks (blocker_id uuid NOT NULL, blocked_id uuid NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
                                            PRIMARY KEY (blocker_id, blocked_id));
                INSERT INTO public.profiles (id, name) VALUES ('\(ada.id.lowercased)', 'Ada'), ('\(bob.id.lowercased)', 'Bob'), ('\(gone.lowercased)', 'Gone');
                INSERT INTO public.blocks (blocker_id, blocked_id, created_at) VALUES
                    ('\(ada.id.lowercased)', '\(bob.id.lowercased)', to_timestamp(1700000000)),
                    ('\(bob.id.lowercased)', '\(ada.id.lowercased)', to_timestamp(1700000000)),
                    ('\(gone.lowercased)', '\(ada.id.lowercased)', to_timestamp(1700000000));
                """) { source, target in
                let job = try await target.service(.nearby, schema: nearby.service.database.schema, role: nearby.service.database.user)
                let accounts = ImportedAccounts(Dictionary(uniqueKeysWithValues: [ada.id, bob.id, gone].map {
                    ($0, ImportedAccount(id: $0, email: nil, phone: nil, userMetadata: [:], createdAt: madeAt))
                }))
                let storage = Storage(backend: FileSystemStorageBackend(root: nearby.storageRoot), publicBaseURL: nearby.service.base,
                                      signingKey: Array("nearby-tests-signing-key-0123456789abcdef".utf8))
                try await SupabaseNearbyImport.run(job, from: source, accounts: accounts, settings: NearbySettings(maxPhotoBytes: 64 << 10), storage: storage)
            }
            let blocks = try #require(report.tables.first { $0.name == "public.blocks" })
            #expect(blocks.imported == 2 && blocks.notImported == ["the blocker's account was deleted": 1] && blocks.skipped.isEmpty, "\(blocks)")
            try await nearby.service.withDatabase { database in
                let rows = try await database.query("SELECT blocker_id, blocked_id, created_at FROM user_blocks ORDER BY blocker_id").collect()
                    .map { try $0.decode((UUID, UUID, Date).self) }
                #expect(Set(rows.map { "\($0.0)>\($0.1)" }) == ["\(ada.id)>\(bob.id)", "\(bob.id)>\(ada.id)"])
                #expect(rows.first { $0.0 == ada.id }?.2 == madeAt, "the project's time kept")
                #expect(rows.first { $0.0 == bob.id }?.2 != madeAt, "the block made here first stays as it was")
            }
            // Imported blocks are blocks: Ada's list names Bob.
            #expect(try await nearby.api(ada).listBlocks().ok.body.json.map(\.userId) == [bob.id.lowercased])
        }
    }
}

/// A scratch database with `script`'s tables in `public` (the part of a SocialSpot project the
/// import reads), read as the import reads a project, into an import target on the test database
/// as `colony-admin import supabase` runs one. Dropped afterwards. Answers the import's report.
func withScratchProject(_ script: String, _ body: (SourceDatabase, ImportTarget) async throws -> Void) async throws -> ImportReport {
    let environment = try TestEnvironment.current()
    let name = uniqueName("socialspot")
    let report = ImportReport(title: "test import")
    try await withAdminConnection(database: environment.postgresDatabase) { postgres in
        try await postgres.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: TestEnvironment.logger)
        do {
            try await withAdminConnection(database: name) { admin in try await admin.execute(script: script, logger: TestEnvironment.logger) }
            let password = environment.adminPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let location = try SourceDatabase.Location(
                url: "postgres://\(environment.adminUser):\(password)@\(environment.postgresHost):\(environment.postgresPort)/\(name)?sslmode=disable")
            let source = try await SourceDatabase.open(location, logger: TestEnvironment.logger)
            do {
                let target = ImportTarget(connection: postgres, app: .socialspot, dryRun: false, topicPrefix: "t", report: report,
                                          files: ImportFiles(source: nil, storage: nil), logger: TestEnvironment.logger)
                try await target.begin()
                try await body(source, target)
                try await target.end()
            } catch {
                await source.close()
                throw error
            }
            await source.close()
        } catch {
            _ = try? await postgres.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestEnvironment.logger)
            throw error
        }
        try await postgres.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestEnvironment.logger)
    }
    return report
}

/// An admin connection to `database`, closed after `body` whether it threw or not (one dropped
/// unclosed traps in a debug build).
func withAdminConnection<Result>(database: String, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
    let environment = try TestEnvironment.current()
    let configuration = PostgresConnection.Configuration(host: environment.postgresHost, port: environment.postgresPort, username: environment.adminUser,
                                                         password: environment.adminPassword, database: database, tls: .disable)
    let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration,
                                                          id: Int.random(in: 1...Int.max), logger: TestEnvironment.logger)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}
