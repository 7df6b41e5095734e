import Foundation

// I Believe In You's rows in the seed's shape (`ibelieveinyou.md`, section 2): the projects
// service answers with them and its events carry them. Storage keys are turned into URLs
// (`avatar_url`, `cover_image_url`, `images`). A support message's sender is left out whenever
// the message is anonymous, everywhere.

/// `projects.mood`: green "Going great!", yellow "Working on it", red "Need support".
public enum ProjectMood: String, Codable, Sendable, CaseIterable {
    case green
    case yellow
    case red
}

/// `support_actions.action_type`.
public enum SupportActionType: String, Codable, Sendable, CaseIterable {
    case follow
    case message
    case like
}

/// `builders`: a user's profile (every user has one, creator or supporter).
public struct BuilderRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var name: String
    public var bio: String?
    public var avatarUrl: String?
    public var websiteUrl: String?
    public var twitterHandle: String?
    public var isCreator: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, userId: UUID, name: String, bio: String?, avatarUrl: String?, websiteUrl: String?, twitterHandle: String?, isCreator: Bool,
                createdAt: Date, updatedAt: Date) {
        self.id = id
        self.userId = userId
        self.name = name
        self.bio = bio
        self.avatarUrl = avatarUrl
        self.websiteUrl = websiteUrl
        self.twitterHandle = twitterHandle
        self.isCreator = isCreator
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `karma`: a user's points and level (1–5, from the points by the seed's table).
public struct KarmaRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var totalPoints: Int
    public var level: Int
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, userId: UUID, totalPoints: Int, level: Int, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.userId = userId
        self.totalPoints = totalPoints
        self.level = level
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `projects`.
public struct ProjectRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var builderId: UUID
    public var title: String
    public var tagline: String?
    public var description: String?
    public var coverImageUrl: String?
    public var publicSlug: String
    public var mood: ProjectMood?
    public var followerCount: Int
    public var isPublished: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, builderId: UUID, title: String, tagline: String?, description: String?, coverImageUrl: String?, publicSlug: String,
                mood: ProjectMood?, followerCount: Int, isPublished: Bool, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.builderId = builderId
        self.title = title
        self.tagline = tagline
        self.description = description
        self.coverImageUrl = coverImageUrl
        self.publicSlug = publicSlug
        self.mood = mood
        self.followerCount = followerCount
        self.isPublished = isPublished
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `posts`: a project's update (the seed's table is `posts`; the Swift name says whose).
public struct ProjectPostRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var projectId: UUID
    public var content: String
    public var images: [String]
    public var likeCount: Int
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, projectId: UUID, content: String, images: [String], likeCount: Int, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.projectId = projectId
        self.content = content
        self.images = images
        self.likeCount = likeCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `follows`.
public struct FollowRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var projectId: UUID
    public var createdAt: Date

    public init(id: UUID, userId: UUID, projectId: UUID, createdAt: Date) {
        self.id = id
        self.userId = userId
        self.projectId = projectId
        self.createdAt = createdAt
    }
}

/// `likes`.
public struct PostLikeRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var postId: UUID
    public var createdAt: Date

    public init(id: UUID, userId: UUID, postId: UUID, createdAt: Date) {
        self.id = id
        self.userId = userId
        self.postId = postId
        self.createdAt = createdAt
    }
}

/// `milestones`.
public struct MilestoneRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var projectId: UUID
    public var title: String
    public var description: String?
    public var isCompleted: Bool
    public var targetDate: LocalDate?
    public var completedAt: Date?
    public var createdAt: Date

    public init(id: UUID, projectId: UUID, title: String, description: String?, isCompleted: Bool, targetDate: LocalDate?, completedAt: Date?, createdAt: Date) {
        self.id = id
        self.projectId = projectId
        self.title = title
        self.description = description
        self.isCompleted = isCompleted
        self.targetDate = targetDate
        self.completedAt = completedAt
        self.createdAt = createdAt
    }
}

/// `support_messages`. `senderId` (a builder id) is nil whenever `isAnonymous` is true: the
/// sender of an anonymous message is never handed out, not to the project's owner either.
public struct SupportMessageRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var projectId: UUID
    public var senderId: UUID?
    public var message: String
    public var isAnonymous: Bool
    public var createdAt: Date

    public init(id: UUID, projectId: UUID, senderId: UUID?, message: String, isAnonymous: Bool, createdAt: Date) {
        self.id = id
        self.projectId = projectId
        self.senderId = isAnonymous ? nil : senderId
        self.message = message
        self.isAnonymous = isAnonymous
        self.createdAt = createdAt
    }
}

/// `support_actions`: karma a user earned, shown to that user only.
public struct SupportActionRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var projectId: UUID
    public var actionType: SupportActionType
    public var pointsEarned: Int
    public var metadata: [String: JSONValue]?
    public var createdAt: Date

    public init(id: UUID, userId: UUID, projectId: UUID, actionType: SupportActionType, pointsEarned: Int, metadata: [String: JSONValue]?, createdAt: Date) {
        self.id = id
        self.userId = userId
        self.projectId = projectId
        self.actionType = actionType
        self.pointsEarned = pointsEarned
        self.metadata = metadata
        self.createdAt = createdAt
    }
}
