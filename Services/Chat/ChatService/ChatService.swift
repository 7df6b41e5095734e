import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The chat service's own settings, from the environment.
public struct ChatSettings: Sendable {
    public var maxImageBytes: Int
    public var maxVoiceBytes: Int
    public var maxVoiceSeconds: Double
    /// Addresses a user may look up when adding members by email (`MemberLookupBudget`).
    public var memberEmailLookups: Quota

    public init(maxImageBytes: Int = 5 << 20, maxVoiceBytes: Int = 10 << 20, maxVoiceSeconds: Double = 600, memberEmailLookups: Quota = Quota(100, perSeconds: 3600)) {
        self.maxImageBytes = maxImageBytes
        self.maxVoiceBytes = maxVoiceBytes
        self.maxVoiceSeconds = maxVoiceSeconds
        self.memberEmailLookups = memberEmailLookups
    }

    /// `COLONY_CHAT_MAX_IMAGE_BYTES` (5 MiB), `COLONY_CHAT_MAX_VOICE_BYTES` (10 MiB),
    /// `COLONY_CHAT_MAX_VOICE_SECONDS` (600), `COLONY_CHAT_EMAIL_LOOKUP_RATE` (100/3600). Auth's URL, asked about addresses chat has not heard of
    /// yet (`AccountDirectory`), is the platform's `ServiceConfiguration.authURL`.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> ChatSettings {
        ChatSettings(
            maxImageBytes: try environment.int("COLONY_CHAT_MAX_IMAGE_BYTES", default: 5 << 20, range: 1024...(64 << 20)),
            maxVoiceBytes: try environment.int("COLONY_CHAT_MAX_VOICE_BYTES", default: 10 << 20, range: 1024...(64 << 20)),
            maxVoiceSeconds: Double(try environment.int("COLONY_CHAT_MAX_VOICE_SECONDS", default: 600, range: 1...7200)),
            memberEmailLookups: try environment.quota("COLONY_CHAT_EMAIL_LOOKUP_RATE", default: Quota(100, perSeconds: 3600))
        )
    }

    /// The request body limit the service needs: twice the largest upload, so a file somewhat
    /// over its limit gets the bucket's clear 422 and only absurd bodies the platform's 413.
    public var maxUploadBytes: Int { 2 * max(maxImageBytes, maxVoiceBytes) }
}

/// The chat service: Unify's users, groups, members, messages, unread counts and calendar events.
public enum ChatService {
    public static var migrations: [Migration] { ChatMigrations.all }

    /// What chat counts for the console's Overview: messages sent per day (`messages_sent`).
    public static let consoleStats = [
        ConsoleStat(name: "messages", app: .unify, sql: "SELECT (sent_at AT TIME ZONE 'UTC')::date, count(*) FROM messages WHERE sent_at >= $1 AND sent_at < $2 GROUP BY 1"),
    ]
    public static func definition(settings: ChatSettings, storage: Storage) -> ServiceDefinition {
        let media = ChatMedia(settings: settings, storage: storage)
        let reportables: @Sendable (ServiceContext) -> ChatReportables = { context in
            ChatReportables(outbox: context.outbox, media: media, settings: settings, logger: context.logger)
        }
        var definition = ServiceDefinition(
            migrations: ChatMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .chat),
            handleEvent: { event, connection, context in
                let groups = Groups(outbox: context.outbox, media: media, logger: context.logger)
                try await AuthEventHandler(users: groups.users, groups: groups).handle(event, on: connection)
                try await UserExportWriter(backend: storage.backend, logger: context.logger).handle(event, plan: ChatExport.plan(media: media), app: .unify, on: connection)
            },
            jobs: { _ in [
                ScheduledJob(name: "chat.sweep_quotas", interval: .seconds(3600)) { database, logger in
                    try await database.withConnection { try await Quotas(logger: logger).sweep(on: $0) }
                },
            ] },
            consoleStats: consoleStats,
            consoleHoldings: ChatExport.plan(media: media).consoleHoldings,
            addRoutes: { router, context in
                // Voice messages (`{group_id}/{message_id}`) are for the group's members, except
                // those who blocked the sender.
                let members = StorageAccess { user, key in
                    let segments = key.split(separator: "/")
                    guard let first = segments.first, let group = UUID(uuidString: String(first)) else { return false }
                    let message = segments.dropFirst().first.flatMap { UUID(uuidString: String($0)) }
                    return try await context.database.withConnection { connection in
                        try await MessageStore(logger: context.logger).voiceReadable(group: group, message: message, by: user, on: connection)
                    }
                }
                storage.addRoutes(to: router, buckets: media.buckets, tokenMiddleware: context.tokenMiddleware, access: [media.voiceMessages.name: members])
                try ChatAPI(
                    database: context.database,
                    users: Users(outbox: context.outbox, media: media, logger: context.logger),
                    groups: Groups(outbox: context.outbox, media: media, logger: context.logger,
                                   directory: AccountDirectory.make(key: context.configuration.internalKey, authURL: context.configuration.authURL)),
                    messages: Messages(outbox: context.outbox, media: media, maxVoiceSeconds: settings.maxVoiceSeconds, logger: context.logger),
                    events: CalendarEvents(outbox: context.outbox, logger: context.logger),
                    lookups: MemberLookupBudget(database: context.database, quota: settings.memberEmailLookups, logger: context.logger),
                    reports: try context.requiredReports()
                ).register(on: router, context: context, uploadLimit: settings.maxUploadBytes)
                InternalMemberRoutes.add(to: router, context: context)
            }
        )
        definition.reports = reportables
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
