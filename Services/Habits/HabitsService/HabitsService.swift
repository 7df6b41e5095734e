import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The habits service's own settings, from the environment.
public struct HabitsSettings: Sendable {
    /// The pepper auth hashes phone numbers with; habits hashes uploaded numbers with it. It
    /// never leaves the server.
    public var phonePepper: String
    /// How often the hive jobs (close days, at-risk alerts) run.
    public var jobInterval: Duration
    /// Contact matching: numbers per upload, uploads per user (`5/86400`), numbers uploaded per
    /// user (`5000/86400`), match lists read per user (`60/3600`).
    public var contactsPerUpload: Int
    /// What a contacts upload's body may be: 2 KiB a contact (a number and a name of up to 200
    /// code points, even each escaped as `\uXXXX`, fit within it) and one more, so that one
    /// contact too many is the document's 422, not 413.
    public var contactsBodyLimit: Int { (contactsPerUpload + 1) * 2048 }
    public var contactUploadQuota: Quota
    public var contactNumberQuota: Quota
    public var contactMatchQuota: Quota

    public init(phonePepper: String, jobInterval: Duration = .seconds(3600), contactsPerUpload: Int = 2000,
                contactUploadQuota: Quota = Quota(5, perSeconds: 86_400), contactNumberQuota: Quota = Quota(5000, perSeconds: 86_400),
                contactMatchQuota: Quota = Quota(60, perSeconds: 3600)) {
        self.phonePepper = phonePepper
        self.jobInterval = jobInterval
        self.contactsPerUpload = contactsPerUpload
        self.contactUploadQuota = contactUploadQuota
        self.contactNumberQuota = contactNumberQuota
        self.contactMatchQuota = contactMatchQuota
    }

    /// `COLONY_HABITS_PHONE_PEPPER` (required; the same value as auth's
    /// `COLONY_AUTH_PHONE_PEPPER`), `COLONY_HABITS_JOB_INTERVAL_SECONDS` (3600),
    /// `COLONY_HABITS_CONTACTS_PER_UPLOAD` (2000), `COLONY_HABITS_CONTACT_UPLOAD_RATE` (`5/86400`),
    /// `COLONY_HABITS_CONTACT_NUMBER_RATE` (`5000/86400`), `COLONY_HABITS_CONTACT_MATCH_RATE` (`60/3600`).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> HabitsSettings {
        HabitsSettings(
            phonePepper: try environment.secret("COLONY_HABITS_PHONE_PEPPER"),
            jobInterval: .seconds(try environment.int("COLONY_HABITS_JOB_INTERVAL_SECONDS", default: 3600, range: 10...86400)),
            contactsPerUpload: try environment.int("COLONY_HABITS_CONTACTS_PER_UPLOAD", default: 2000, range: 1...10_000),
            contactUploadQuota: try environment.quota("COLONY_HABITS_CONTACT_UPLOAD_RATE", default: Quota(5, perSeconds: 86_400)),
            contactNumberQuota: try environment.quota("COLONY_HABITS_CONTACT_NUMBER_RATE", default: Quota(5000, perSeconds: 86_400)),
            contactMatchQuota: try environment.quota("COLONY_HABITS_CONTACT_MATCH_RATE", default: Quota(60, perSeconds: 3600))
        )
    }
}

/// The habits service: HabitHive's habits, logs, insights, hives, shared streaks and contacts.
public enum HabitsService {
    public static var migrations: [Migration] { HabitsMigrations.all }

    /// What habits counts for the console's Overview: habit logs per day, by when they were
    /// written (UTC), not the user-local day they are for (`habit_logs_created`).
    public static let consoleStats = [
        ConsoleStat(name: "logs", app: .habithive, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM habit_logs WHERE created_at >= $1 AND created_at < $2 GROUP BY 1"),
    ]
    /// `exports`: where its part of a user's data export is written (the `exports` bucket).
    public static func definition(settings: HabitsSettings, exports: any StorageBackend) -> ServiceDefinition {
        var definition = ServiceDefinition(
            migrations: HabitsMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .habits),
            handleEvent: { event, connection, context in
                let profiles = Profiles(outbox: context.outbox, contacts: ContactMatching(settings: settings), logger: context.logger)
                try await AuthEventHandler(profiles: profiles).handle(event, on: connection)
                try await UserExportWriter(backend: exports, logger: context.logger).handle(event, plan: HabitsExport.plan, app: .habithive, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "habits.hive_days", interval: settings.jobInterval) { database, logger in
                    let jobs = HiveJobs(database: database, outbox: context.outbox, logger: logger)
                    try await jobs.closeDueDays()
                    try await jobs.alertHivesAtRisk()
                    try await database.transaction { try await IdempotencyStore(logger: logger).deleteExpired(on: $0) }
                    try await database.withConnection { try await Quotas(logger: logger).sweep(on: $0) }
                },
            ] },
            consoleStats: consoleStats,
            consoleHoldings: HabitsExport.plan.consoleHoldings,
            addRoutes: { router, context in
                let profiles = Profiles(outbox: context.outbox, contacts: ContactMatching(settings: settings), logger: context.logger)
                let hives = Hives(outbox: context.outbox, logger: context.logger)
                try HabitsAPI(
                    database: context.database,
                    habits: Habits(outbox: context.outbox, logger: context.logger),
                    hives: hives,
                    profiles: profiles,
                    invitations: HiveInvitations(outbox: context.outbox, logger: context.logger),
                    idempotency: IdempotencyStore(logger: context.logger),
                    reports: try context.requiredReports()
                ).register(on: router, context: context, contactsBodyLimit: settings.contactsBodyLimit)
                InternalMemberRoutes.add(to: router, context: context)
            }
        )
        // Hives and people can be reported (`HabitsReportables`); the console's moderation routes come with it.
        definition.reports = { context in HabitsReportables(hives: Hives(outbox: context.outbox, logger: context.logger)) }
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
