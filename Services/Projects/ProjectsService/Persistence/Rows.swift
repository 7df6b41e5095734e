import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

// Column lists and decoders for the service's SELECTs and RETURNINGs. Storage keys and versions
// stay here; the domain turns them into URLs.

extension PostgresQuery.StringInterpolation {
    /// A project's columns with its owner's (`StoredProject.from`), then whether `viewer` follows it.
    mutating func appendInterpolation(projectColumnsFor viewer: UUID) {
        appendLiteral("\(StoredProject.columns), EXISTS (SELECT 1 FROM follows f WHERE f.project_id = p.id AND f.user_id = ")
        appendInterpolation(viewer)
        appendLiteral(")")
    }

    /// A post's columns with its project's and owner's (`StoredPost.from`), then whether `viewer`
    /// liked it and its cursor.
    mutating func appendInterpolation(postColumnsFor viewer: UUID) {
        appendLiteral("\(StoredPost.columns), EXISTS (SELECT 1 FROM likes l WHERE l.user_id = ")
        appendInterpolation(viewer)
        appendLiteral(" AND l.post_id = po.id), \(Cursor.micros("po.created_at"))")
    }

    /// True when `viewer` blocked the user in `author` (a SQL expression of an account id): a
    /// read leaves out the content of those its viewer blocked with `AND NOT \(blockedBy: …)`
    /// (`BlockList.hiddenByBlock`, with the viewer bound).
    mutating func appendInterpolation(blockedBy viewer: UUID, author: String) {
        appendLiteral("EXISTS (SELECT 1 FROM user_blocks ub WHERE ub.blocker_id = ")
        appendInterpolation(viewer)
        appendLiteral(" AND ub.blocked_id = \(author))")
    }
}

/// `columns` with each name prefixed by `alias.`.
func prefixed(_ columns: String, _ alias: String) -> String {
    columns.split(separator: ", ").map { "\(alias).\($0)" }.joined(separator: ", ")
}

/// A position in a newest-first list: a number (a time in microseconds since 1970, Postgres's own
/// precision, so comparisons are exact; or a follower count) and the row's id as tie-breaker.
struct Cursor: Sendable, Equatable {
    var value: Int64
    var id: UUID

    /// Before everything: the first page (the value is 9999-12-31 in microseconds, above any
    /// time or count).
    static let start = Cursor(value: 253_402_300_800_000_000, id: UUID(uuidString: "ffffffff-ffff-ffff-ffff-ffffffffffff")!)

    init(value: Int64, id: UUID) {
        self.value = value
        self.id = id
    }

    /// `"<value>_<uuid>"`.
    init?(_ text: String) {
        // The same form as every keyset cursor (`KeysetCursor`'s, the documents' pattern); values
        // past `start` read as before everything.
        guard let cursor = KeysetCursor(text) else { return nil }
        self.init(value: min(cursor.micros, Self.start.value), id: cursor.id)
    }

    var text: String { "\(value)_\(id.uuidString.lowercased())" }

    /// A time's cursor value: whole microseconds since 1970 (exact for Postgres's times).
    static func micros(_ date: Date) -> Int64 { KeysetCursor.micros(of: date) }

    /// `created_at` (or another time column) in whole microseconds since 1970.
    static func micros(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000000)::int8" }
}

/// `builders` as stored.
struct StoredBuilder: Sendable {
    var id: UUID
    var userId: UUID
    var name: String
    var bio: String?
    var avatarVersion: Int64?
    var websiteUrl: String?
    var twitterHandle: String?
    var isCreator: Bool
    var createdAt: Date
    var updatedAt: Date

    static let columns = "id, user_id, name, bio, avatar_version, website_url, twitter_handle, is_creator, created_at, updated_at"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        id = try c.next(); userId = try c.next(); name = try c.next(); bio = try c.next(String?.self); avatarVersion = try c.next(Int64?.self)
        websiteUrl = try c.next(String?.self); twitterHandle = try c.next(String?.self); isCreator = try c.next(); createdAt = try c.next(); updatedAt = try c.next()
    }
}

/// The public part of a builder, as projects and posts embed it.
struct StoredOwner: Sendable {
    var builderId: UUID
    var userId: UUID
    var name: String
    var avatarVersion: Int64?
}

extension KarmaRow {
    static let columns = "id, user_id, total_points, level, created_at, updated_at"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        self.init(id: try c.next(UUID.self), userId: try c.next(UUID.self), totalPoints: try c.next(Int.self), level: try c.next(Int.self),
                  createdAt: try c.next(Date.self), updatedAt: try c.next(Date.self))
    }
}

/// `projects` as stored, with its owner's card and whether the viewer follows it.
struct StoredProject: Sendable {
    var id: UUID
    var builderId: UUID
    var title: String
    var tagline: String?
    var description: String?
    var coverVersion: Int64?
    var publicSlug: String
    var mood: ProjectMood?
    var followerCount: Int
    var isPublished: Bool
    var createdAt: Date
    var updatedAt: Date
    var owner: StoredOwner
    var isFollowing: Bool

    /// The project's own columns (alias `p`) and its owner's (alias `b`); then, in SELECTs,
    /// whether `$viewer` follows it.
    static let tableColumns = "id, builder_id, title, tagline, description, cover_version, public_slug, mood::text, follower_count, is_published, created_at, updated_at"
    static let columns = prefixed(tableColumns, "p") + ", b.user_id, b.name, b.avatar_version"

    static let from = "projects p JOIN builders b ON b.id = p.builder_id"

    init(row: PostgresRow, hasFollowColumn: Bool = true) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells, hasFollowColumn: hasFollowColumn)
    }

    /// `columns` (and the follow column), cell by cell from where `cells` stands (what a
    /// statement selects after them is read next).
    init(cells c: inout RowCells, hasFollowColumn: Bool = true) throws {
        id = try c.next()
        builderId = try c.next()
        title = try c.next()
        tagline = try c.next(String?.self)
        description = try c.next(String?.self)
        coverVersion = try c.next(Int64?.self)
        publicSlug = try c.next()
        mood = try c.next(String?.self).flatMap(ProjectMood.init(rawValue:))
        followerCount = try c.next(Int.self)
        isPublished = try c.next()
        createdAt = try c.next()
        updatedAt = try c.next()
        owner = StoredOwner(builderId: builderId, userId: try c.next(UUID.self), name: try c.next(String.self), avatarVersion: try c.next(Int64?.self))
        isFollowing = hasFollowColumn ? try c.next(Bool.self) : false
    }
}

/// `posts` as stored, with the project and owner a feed line shows, whether the viewer liked
/// it, and its cursor.
struct StoredPost: Sendable {
    var id: UUID
    var projectId: UUID
    var content: String
    var images: [String]
    var likeCount: Int
    var createdAt: Date
    var updatedAt: Date
    var projectTitle: String
    var projectSlug: String
    var projectCoverVersion: Int64?
    var projectIsPublished: Bool
    var owner: StoredOwner
    var likedByMe: Bool
    var cursor: Cursor

    static let tableColumns = "id, project_id, content, images, like_count, created_at, updated_at"

    /// From `posts po JOIN projects p JOIN builders b`, then whether `$viewer` liked it and the cursor.
    static let columns = prefixed(tableColumns, "po")
        + ", p.title, p.public_slug, p.cover_version, p.is_published, p.builder_id, b.user_id, b.name, b.avatar_version"

    static let from = "posts po JOIN projects p ON p.id = po.project_id JOIN builders b ON b.id = p.builder_id"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        id = try c.next()
        projectId = try c.next()
        content = try c.next()
        images = try c.next([String].self)
        likeCount = try c.next(Int.self)
        createdAt = try c.next()
        updatedAt = try c.next()
        projectTitle = try c.next()
        projectSlug = try c.next()
        projectCoverVersion = try c.next(Int64?.self)
        projectIsPublished = try c.next()
        owner = StoredOwner(builderId: try c.next(UUID.self), userId: try c.next(UUID.self), name: try c.next(String.self), avatarVersion: try c.next(Int64?.self))
        likedByMe = try c.next()
        cursor = Cursor(value: try c.next(Int64.self), id: id)
    }
}

extension MilestoneRow {
    static let columns = "id, project_id, title, description, is_completed, target_date, completed_at, created_at"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        self.init(id: try c.next(UUID.self), projectId: try c.next(UUID.self), title: try c.next(String.self), description: try c.next(String?.self),
                  isCompleted: try c.next(Bool.self), targetDate: try c.next(LocalDate?.self), completedAt: try c.next(Date?.self), createdAt: try c.next(Date.self))
    }
}

/// `support_messages` as stored (the sender stays inside the service), with the sender's card.
struct StoredSupportMessage: Sendable {
    var id: UUID
    var projectId: UUID
    var senderId: UUID?
    var message: String
    var isAnonymous: Bool
    var createdAt: Date
    var sender: StoredOwner?

    /// From `support_messages m LEFT JOIN builders s` (joined only when not anonymous); an
    /// anonymous message's sender is not even read.
    static let columns = "m.id, m.project_id, CASE WHEN m.is_anonymous THEN NULL ELSE m.sender_id END, m.message, m.is_anonymous, m.created_at, s.user_id, s.name, s.avatar_version"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        id = try c.next(); projectId = try c.next(); senderId = try c.next(UUID?.self); message = try c.next(); isAnonymous = try c.next(); createdAt = try c.next()
        let userId: UUID? = try c.next(), name: String? = try c.next(), avatarVersion: Int64? = try c.next()
        if let senderId, let userId, let name {
            sender = StoredOwner(builderId: senderId, userId: userId, name: name, avatarVersion: avatarVersion)
        }
    }

    /// The row others see: no sender when anonymous.
    var row: SupportMessageRow {
        SupportMessageRow(id: id, projectId: projectId, senderId: senderId, message: message, isAnonymous: isAnonymous, createdAt: createdAt)
    }
}

extension SupportActionRow {
    static let columns = "a.id, a.user_id, a.project_id, a.action_type::text, a.points_earned, a.metadata::text, a.created_at"

    /// The action's columns (`columns`), cell by cell from where `cells` stands (a statement
    /// selects the project's title and slug after them).
    init(cells c: inout RowCells) throws {
        let id: UUID = try c.next(), userId: UUID = try c.next(), projectId: UUID = try c.next(), actionType: String = try c.next(), pointsEarned: Int = try c.next()
        let metadata = try c.next(String?.self).flatMap { try? JSONDecoder().decode([String: JSONValue].self, from: Data($0.utf8)) }
        self.init(id: id, userId: userId, projectId: projectId, actionType: SupportActionType(rawValue: actionType) ?? .follow, pointsEarned: pointsEarned,
                  metadata: metadata, createdAt: try c.next(Date.self))
    }
}
