import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// A reported thing as the service holds it now: whose it is and what a moderator reads of it.
/// Nothing of it is stored with a report (MyCirclee's posts are gone after 24 hours, and with
/// them what a moderator can see), only the ids.
public struct ReportedObject: Sendable, Equatable {
    public var ownerId: UUID
    /// What a moderator reads: the text, the name, the caption; a media item as its kind.
    public var content: String
    /// The author is not shown to someone who reports it (an anonymous support message), nor to
    /// a moderator whose role does not reveal anonymous authors.
    public var anonymous: Bool

    public init(ownerId: UUID, content: String, anonymous: Bool = false) {
        self.ownerId = ownerId
        self.content = content
        self.anonymous = anonymous
    }
}

/// What a domain service lets its users report, and how a moderator removes it. Each service
/// implements it with the same rules its own reads apply (`visible`) and its owners' deletes
/// (`remove`); `ReportDesk` does the rest, the same in every service.
public protocol ReportableContent: Sendable {
    /// The object types, as clients name them (`post`, `dm`, `profile`...), each with what `remove` does to it.
    var objectTypes: [String] { get }
    /// The object if `viewer` can see it now (nil: there is none, or not for them).
    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject?
    /// The object as it is now, for a moderator (nil once gone).
    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject?
    /// Deletes the object as its owner would (the service's own events tell realtime, counters and
    /// other services), inside the caller's transaction. false when it was gone already.
    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool
}

/// A report as its reporter sees it (`POST /<service>/v1/reports` answers it).
public struct FiledReport: Sendable, Equatable {
    public var id: UUID
    public var objectType: String
    public var objectId: UUID
    public var category: ReportCategory
    public var words: String?
    public var status: String
    public var createdAt: Date
}

/// Reports, kept in the service's own schema (the platform's `reports` table), and what
/// moderators do with them: `file` (a user reports what they can see), `queue` and `object`
/// (the console's moderation pages), `resolve` (dismiss, remove, warn, suspend).
public struct ReportDesk: Sendable {
    public let app: App
    public let content: any ReportableContent
    /// Reports per reporter: at most `count` in `seconds` (`COLONY_REPORTS_RATE`).
    public let quota: Quota
    public let logger: Logger

    /// A report's own words: at most this many characters.
    public static let maxWords = 1000

    public init(app: App, content: any ReportableContent, quota: Quota, logger: Logger) {
        self.app = app
        self.content = content
        self.quota = quota
        self.logger = logger
    }

    /// A report as a generated `createReport` handler has it (the document's strings): an id that
    /// is not a UUID or an unknown category breaks the body's schema, 422 `validation_failed`.
    public func file(objectType: String, objectId: String, category: String, words: String?, by reporter: UUID,
                     on connection: PostgresConnection) async throws -> FiledReport {
        guard let id = UUID(canonical: objectId) else { throw APIError.unprocessable("object_id must be a UUID") }
        guard let category = ReportCategory(rawValue: category) else { throw APIError.unprocessable("category must be one of \(ReportCategory.allCases.map(\.rawValue).joined(separator: ", "))") }
        return try await file(objectType: objectType, objectId: id, category: category, words: words, by: reporter, on: connection)
    }

    /// `reporter` reports an object, inside the caller's transaction: 422 `validation_failed` for
    /// an unknown type or words too long, 404 for what they cannot see (the same answer as for
    /// what does not exist), 403 `own_content` for their own, 409 `already_reported` while their
    /// report of it is open, 429 `report_quota` past their budget.
    public func file(objectType: String, objectId: UUID, category: ReportCategory, words: String?, by reporter: UUID,
                     on connection: PostgresConnection) async throws -> FiledReport {
        guard content.objectTypes.contains(objectType) else {
            throw APIError.unprocessable("object_type must be one of \(content.objectTypes.joined(separator: ", "))")
        }
        let words = words.map(TextRules.trimmed).flatMap { $0.isEmpty ? nil : $0 }
        if let words, TextRules.length(words) > Self.maxWords {
            throw APIError.unprocessable("words must be at most \(Self.maxWords) characters")
        }
        guard let object = try await content.visible(objectType, objectId, to: reporter, on: connection) else {
            throw APIError.notFound("no such \(objectType)")
        }
        guard object.ownerId != reporter else {
            throw APIError.forbidden("you cannot report your own \(objectType)", code: "own_content")
        }
        // One reporter's reports take turns (the budget and the one-open-report rule hold under races).
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('reports'), hashtext(\(reporter.lowercased)))", logger: logger)
        var open = false
        for try await _ in try await connection.query("""
            SELECT 1 FROM reports WHERE reporter_id = \(reporter) AND object_type = \(objectType) AND object_id = \(objectId) AND status = 'open'
            """, logger: logger) { open = true }
        if open { throw APIError.conflict("you have reported this \(objectType) already; a moderator will look at it", code: "already_reported") }
        let recent = try await connection.query("""
            SELECT count(*)::int8 FROM reports WHERE reporter_id = \(reporter) AND created_at > now() - make_interval(secs => \(Double(quota.seconds)))
            """, logger: logger).values(Int64.self).first ?? 0
        if recent >= Int64(quota.count) {
            var error = APIError.tooManyRequests(retryAfterSeconds: quota.seconds, message: "you have sent many reports lately; try again later")
            error.code = "report_quota"
            throw error
        }
        let id = UUID.timeOrdered()
        let createdAt = try await connection.query("""
            INSERT INTO reports (id, app, object_type, object_id, reported_user_id, reporter_id, category, words)
            VALUES (\(id), \(app.rawValue), \(objectType), \(objectId), \(object.ownerId), \(reporter), \(category.rawValue), \(words))
            RETURNING created_at
            """, logger: logger).values(Date.self).first ?? Date()
        return FiledReport(id: id, objectType: objectType, objectId: objectId, category: category, words: words, status: "open", createdAt: createdAt)
    }

    /// One reported object in the moderators' queue: its open reports together.
    public struct QueueItem: Codable, Sendable, Equatable {
        public var objectType: String
        public var objectId: UUID
        public var reportedUserId: UUID
        public var openReports: Int
        /// Categories with how many open reports name each, most first.
        public var categories: [CategoryCount]
        public var firstReportedAt: Date
        public var lastReportedAt: Date
    }

    public struct CategoryCount: Codable, Sendable, Equatable {
        public var category: ReportCategory
        public var count: Int
    }

    /// Objects with open reports, oldest report first (guideline 1.2's "timely": what waited
    /// longest is done first).
    public func queue(limit: Int, on connection: PostgresConnection) async throws -> [QueueItem] {
        var items: [QueueItem] = []
        for try await row in try await connection.query("""
            SELECT object_type, object_id, (array_agg(reported_user_id ORDER BY created_at))[1], count(*)::int8,
                   array_agg(category ORDER BY created_at), min(created_at), max(created_at)
            FROM reports WHERE status = 'open'
            GROUP BY object_type, object_id ORDER BY min(created_at), object_id LIMIT \(Int64(limit))
            """, logger: logger) {
            var cells = RowCells(row)
            let type: String = try cells.next(), id: UUID = try cells.next(), owner: UUID = try cells.next(), count: Int64 = try cells.next()
            let categories: [String] = try cells.next(), first: Date = try cells.next(), last: Date = try cells.next()
            items.append(QueueItem(objectType: type, objectId: id, reportedUserId: owner, openReports: Int(count),
                                   categories: Self.tally(categories), firstReportedAt: first, lastReportedAt: last))
        }
        return items
    }

    /// A report as moderators read it.
    public struct Report: Codable, Sendable, Equatable {
        public var id: UUID
        public var reporterId: UUID
        public var category: ReportCategory
        public var words: String?
        public var status: String
        public var createdAt: Date
        public var resolvedAt: Date?
        public var resolvedBy: String?
    }

    /// What the reported user's reports came to, in this service.
    public struct UserHistory: Codable, Sendable, Equatable {
        public var userId: UUID
        /// Per status (`open`, `dismissed`, `removed`, `warned`, `suspended`): how many reports.
        public var reports: [String: Int]
        /// Objects of theirs that were reported.
        public var reportedObjects: Int
    }

    /// The moderation page of one object.
    public struct ObjectReview: Codable, Sendable, Equatable {
        public var app: App
        public var objectType: String
        public var objectId: UUID
        public var reportedUserId: UUID
        /// The object as it is now; nil once gone (deleted, expired, removed).
        public var content: String?
        public var anonymous: Bool
        public var reports: [Report]
        public var history: UserHistory
    }

    /// Every report of one object (open first, then the newest), with the object as it is now.
    public func review(_ objectType: String, _ objectId: UUID, on connection: PostgresConnection) async throws -> ObjectReview? {
        var reports: [Report] = []
        var owner: UUID?
        for try await row in try await connection.query("""
            SELECT id, reporter_id, category, words, status, created_at, resolved_at, resolved_by, reported_user_id
            FROM reports WHERE object_type = \(objectType) AND object_id = \(objectId)
            ORDER BY status <> 'open', created_at DESC LIMIT 500
            """, logger: logger) {
            var cells = RowCells(row)
            let id: UUID = try cells.next(), reporter: UUID = try cells.next(), category: String = try cells.next()
            let words: String? = try cells.next(), status: String = try cells.next(), createdAt: Date = try cells.next()
            let resolvedAt: Date? = try cells.next(), resolvedBy: String? = try cells.next()
            owner = try cells.next(UUID.self)
            reports.append(Report(id: id, reporterId: reporter, category: ReportCategory(rawValue: category) ?? .other, words: words, status: status,
                                  createdAt: createdAt, resolvedAt: resolvedAt, resolvedBy: resolvedBy))
        }
        guard let owner else { return nil }
        let object = try await content.current(objectType, objectId, on: connection)
        return ObjectReview(app: app, objectType: objectType, objectId: objectId, reportedUserId: owner, content: object?.content,
                            anonymous: object?.anonymous ?? false, reports: reports, history: try await history(of: owner, on: connection))
    }

    public func history(of user: UUID, on connection: PostgresConnection) async throws -> UserHistory {
        var counts: [String: Int] = [:]
        var objects = 0
        for try await row in try await connection.query("""
            SELECT status, count(*)::int8, count(DISTINCT (object_type, object_id))::int8 FROM reports WHERE reported_user_id = \(user) GROUP BY status
            """, logger: logger) {
            var cells = RowCells(row)
            let status: String = try cells.next(), count: Int64 = try cells.next(), distinct: Int64 = try cells.next()
            counts[status] = Int(count)
            objects += Int(distinct)
        }
        return UserHistory(userId: user, reports: counts, reportedObjects: objects)
    }

    /// What a moderator's action did.
    public struct Resolution: Codable, Sendable, Equatable {
        public var objectType: String
        public var objectId: UUID
        public var reportedUserId: UUID
        public var action: ModerationAction
        /// `remove`: whether the object was there to delete (false: its owner or time got there first).
        public var removed: Bool
        /// Whose open reports this closed: each hears the outcome.
        public var reporterIds: [UUID]
        /// The closed reports' categories, most first.
        public var categories: [ReportCategory]
    }

    /// Acts on an object's open reports, in the caller's transaction: `remove` deletes the object
    /// as its owner would; every open report of it takes the action's status. 404 when the
    /// object has no open report (acted on already, by another moderator say).
    public func resolve(_ objectType: String, _ objectId: UUID, action: ModerationAction, by operatorEmail: String,
                        on connection: PostgresConnection) async throws -> Resolution {
        guard content.objectTypes.contains(objectType) else { throw APIError.notFound("no such object type") }
        var reporters: [UUID] = [], categories: [String] = [], owner: UUID?
        for try await row in try await connection.query("""
            UPDATE reports SET status = \(action.reportStatus), resolved_at = now(), resolved_by = \(operatorEmail)
            WHERE object_type = \(objectType) AND object_id = \(objectId) AND status = 'open'
            RETURNING reporter_id, category, reported_user_id
            """, logger: logger) {
            var cells = RowCells(row)
            reporters.append(try cells.next(UUID.self))
            categories.append(try cells.next(String.self))
            owner = try cells.next(UUID.self)
        }
        guard let owner else {
            throw APIError.notFound("this \(objectType) has no open report: another moderator may have acted on it", code: "no_open_reports")
        }
        var removed = false
        if action == .remove {
            removed = try await content.remove(objectType, objectId, on: connection)
        }
        logger.info("reports resolved", metadata: ["object_type": "\(objectType)", "object_id": "\(objectId.lowercased)", "action": "\(action.rawValue)",
                                                   "reports": "\(reporters.count)", "operator": "\(operatorEmail)"])
        return Resolution(objectType: objectType, objectId: objectId, reportedUserId: owner, action: action, removed: removed,
                          reporterIds: Array(Set(reporters)).sorted { $0.uuidString < $1.uuidString }, categories: Self.tally(categories).map(\.category))
    }

    /// Seconds the oldest open report has waited (0 when none): `colony_reports_oldest_open_age_seconds`.
    public static func oldestOpenAge(_ database: Database) async throws -> (age: Double, open: Int) {
        var answer = (age: 0.0, open: 0)
        for try await row in try await database.query("""
            SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8, count(*)::int8 FROM reports WHERE status = 'open'
            """) {
            var cells = RowCells(row)
            let age: Double = try cells.next(), open: Int64 = try cells.next()
            answer = (age, Int(open))
        }
        return answer
    }

    /// A deleted account's reports go with it: those it filed, and those of its content (which
    /// the services erase in the same event).
    public static func erase(_ user: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM reports WHERE reporter_id = \(user) OR reported_user_id = \(user)", logger: logger)
    }

    static func tally(_ categories: [String]) -> [CategoryCount] {
        var counts: [ReportCategory: Int] = [:]
        for name in categories { counts[ReportCategory(rawValue: name) ?? .other, default: 0] += 1 }
        let order = ReportCategory.allCases
        return counts.map { CategoryCount(category: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : (order.firstIndex(of: $0.category) ?? 0) < (order.firstIndex(of: $1.category) ?? 0) }
    }
}
