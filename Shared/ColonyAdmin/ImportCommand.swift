import ArgumentParser
import AuthService
import ChatService
import CirclesService
import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import HabitsService
import Logging
import NearbyService
import NIOPosix
import NotificationsService
import PostgresNIO
import ProjectsService


/// `colony-admin import supabase`: moves one app's Supabase project into Colony.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Bring an app's existing data into Colony.",
        subcommands: [Supabase.self]
    )

    struct Supabase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import an app's Supabase project: its users and identities, its tables, its Storage files.",
            discussion: """
                Reads the project's database (--source, one consistent snapshot) and Storage objects (--storage), and writes them \
                into the services' schemas through each service's import code, keeping ids. Every row is written with its entry in \
                the service's import ledger, so running it again (after a failure, or to catch up) writes only what is missing. \
                Colony may serve traffic meanwhile; start each service of this build once before the first import (it applies \
                its migrations). Exits 0 when everything came over, 2 when rows were skipped or came over incomplete (the summary \
                lists them with their ids), 1 on errors.

                Environment: the admin database settings (COLONY_PG_HOST, COLONY_PG_PORT, COLONY_PG_DATABASE, \
                COLONY_PG_ADMIN_USER, COLONY_PG_ADMIN_PASSWORD), COLONY_TOPIC_PREFIX, COLONY_AUTH_PHONE_PEPPER (auth's, for the \
                announced accounts' phone hashes), the storage settings of the services (COLONY_STORAGE_*), the services' own \
                limits (COLONY_CHAT_MAX_IMAGE_BYTES, …); for an S3 source COLONY_IMPORT_S3_ACCESS_KEY_ID, \
                COLONY_IMPORT_S3_SECRET_ACCESS_KEY and COLONY_IMPORT_S3_REGION (us-east-1).
                """
        )

        @Option(help: "The app whose project this is (\(App.allCases.map(\.rawValue).joined(separator: ", "))).")
        var app: App

        @Option(help: "The project's Postgres: postgres://user:password@host:5432/postgres?sslmode=require (or a restored pg_dump).")
        var source: String

        @Option(help: "The project's Storage objects: a folder (DIR/<bucket>/<name>, as `supabase storage cp -r` leaves them), or s3://host/path (https) or s3+http://host:port/path of an S3-compatible endpoint (Supabase's is https://<project>.supabase.co/storage/v1/s3).")
        var storage: String?

        @Flag(help: "Do everything in a transaction that is rolled back, and copy no file: print what would change.")
        var dryRun = false

        @Option(name: .customLong("summary-json"), help: "Also write the summary as JSON to this file.")
        var summaryJSON: String?

        func run() async throws {
            let environment = EnvironmentReader()
            var logger = Logger(label: "colony.import")
            logger.logLevel = .warning
            let location = try SourceDatabase.Location(url: source)
            let report = ImportReport(title: "import of \(app.rawValue) from \(location.redacted)")
            let pepper = try environment.secret("COLONY_AUTH_PHONE_PEPPER")
            let colonyStorage = try Self.servicesWithFiles.contains(app) ? Storage.load(environment: environment) : nil

            let connection = try await Self.connectAdmin(environment: environment, logger: logger)
            // The run is recorded for the console's Imports page before anything else can fail, and
            // before `target.begin()` opens a dry run's transaction (which would roll it back).
            let runLog = ImportRunLog(connection: connection, logger: logger)
            let run: UUID
            do {
                run = try await runLog.start(app: app, source: location.redacted, storage: ImportRunLog.redactedStorage(storage),
                                             dryRun: dryRun, runBy: ImportRunLog.runner())
            } catch {
                try? await connection.close()
                throw Self.operatorError(error)
            }
            let sourceDatabase: SourceDatabase
            do {
                sourceDatabase = try await SourceDatabase.open(location, logger: logger)
            } catch {
                await record(run, in: runLog, report: report, failure: error, environment: environment)
                try? await connection.close()
                throw Self.operatorError(error)
            }
            do {
                let files = ImportFiles(source: try objectSource(environment: environment), storage: colonyStorage,
                                        contentTypes: try await ImportFiles.contentTypes(from: sourceDatabase))
                let target = ImportTarget(connection: connection, app: app, dryRun: dryRun,
                                          topicPrefix: environment.string("COLONY_TOPIC_PREFIX", default: EventTopics.defaultPrefix),
                                          report: report, files: files, logger: logger)
                try await target.begin()
                let auth = try await target.service(.auth)
                let accounts = try await SupabaseAuthImport.importAccounts(auth, from: sourceDatabase)
                try await importTables(target: target, source: sourceDatabase, accounts: accounts, environment: environment, storage: colonyStorage)
                try await SupabaseAuthImport.announce(auth, phonePepper: pepper)
                try await target.end()
            } catch {
                await sourceDatabase.close()
                await record(run, in: runLog, report: report, failure: error, environment: environment)
                try? await connection.close()
                try summarize(report)
                throw Self.operatorError(error)
            }
            await sourceDatabase.close()
            await record(run, in: runLog, report: report, failure: nil, environment: environment)
            try? await connection.close()
            try summarize(report)
            if report.isIncomplete { throw ExitCode(2) }
        }

        /// Records how the run ended (`ImportRunLog.finish`) on the import's connection, or on one of
        /// its own when that one is gone (the failure may have been its loss). A record that cannot
        /// be written does not change the import's outcome: the summary notes it.
        func record(_ run: UUID, in log: ImportRunLog, report: ImportReport, failure: (any Error)?, environment: EnvironmentReader) async {
            do {
                try await log.finish(run, report: report, dryRun: dryRun, error: failure)
                return
            } catch {
                log.logger.debug("recording the run's end on the import's connection failed", metadata: ["error": "\(error)"])
            }
            do {
                let connection = try await Self.connectAdmin(environment: environment, logger: log.logger)
                do {
                    try await ImportRunLog(connection: connection, schema: log.schema, role: log.role, logger: log.logger)
                        .finish(run, report: report, dryRun: dryRun, error: failure)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                report.note("the run's end could not be recorded for the console (auth's import_runs): \(ImportRunLog.describe(error))")
            }
        }

        /// The database's own words (PostgresNIO hides them from plain descriptions).
        static func operatorError(_ error: any Error) -> any Error {
            if let error = error as? PSQLError { return AdminFailure(String(reflecting: error)) }
            return error
        }

        func summarize(_ report: ImportReport) throws {
            print(report.render(dryRun: dryRun))
            if let summaryJSON {
                try Data(try report.json(dryRun: dryRun).utf8).write(to: URL(fileURLWithPath: summaryJSON), options: .atomic)
            }
        }

        /// The apps whose services keep files.
        static let servicesWithFiles: Set<App> = [.mycirclee, .unify, .socialspot, .ibelieveinyou]

        /// The app's own tables, by the service that owns them.
        func importTables(target: ImportTarget, source: SourceDatabase, accounts: ImportedAccounts, environment: EnvironmentReader, storage: Storage?) async throws {
            switch app {
            case .mycirclee:
                try await SupabaseCirclesImport.run(try await target.service(.circles), from: source, accounts: accounts,
                                                    settings: try CirclesSettings.load(environment: environment), storage: storage!)
            case .unify:
                try await SupabaseChatImport.run(try await target.service(.chat), from: source, accounts: accounts,
                                                 settings: try ChatSettings.load(environment: environment), storage: storage!)
            case .habithive:
                try await SupabaseHabitsImport.run(try await target.service(.habits), from: source, accounts: accounts)
            case .socialspot:
                try await SupabaseNearbyImport.run(try await target.service(.nearby), from: source, accounts: accounts,
                                                   settings: try NearbySettings.load(environment: environment), storage: storage!)
            case .ibelieveinyou:
                try await SupabaseProjectsImport.run(try await target.service(.projects), from: source, accounts: accounts,
                                                     settings: try ProjectsSettings.load(environment: environment), storage: storage!)
            }
            try await SupabaseNotificationsImport.run(try await target.service(.notifications), from: source, accounts: accounts)
        }

        func objectSource(environment: EnvironmentReader) throws -> (any ObjectSource)? {
            guard let storage else { return nil }
            for (scheme, web) in [("s3://", "https://"), ("s3+https://", "https://"), ("s3+http://", "http://")] where storage.hasPrefix(scheme) {
                return S3Objects(endpoint: web + storage.dropFirst(scheme.count), region: environment.string("COLONY_IMPORT_S3_REGION", default: "us-east-1"),
                                 accessKeyID: try environment.string("COLONY_IMPORT_S3_ACCESS_KEY_ID"),
                                 secretAccessKey: try environment.string("COLONY_IMPORT_S3_SECRET_ACCESS_KEY"))
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: storage, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ImportFailure("--storage \(storage) is neither a folder nor an s3:// endpoint")
            }
            return FolderObjects(root: storage)
        }

        /// One connection of its own as the database admin (the import's session: its lock, its transactions).
        static func connectAdmin(environment: EnvironmentReader, logger: Logger) async throws -> PostgresConnection {
            let configuration = PostgresConnection.Configuration(
                host: try environment.string("COLONY_PG_HOST"), port: try environment.int("COLONY_PG_PORT", default: 5432, range: 1...65535),
                username: environment.string("COLONY_PG_ADMIN_USER", default: "postgres"), password: try environment.secret("COLONY_PG_ADMIN_PASSWORD"),
                database: environment.string("COLONY_PG_DATABASE", default: "colony"), tls: .disable)
            return try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 2, logger: logger)
        }
    }
}
