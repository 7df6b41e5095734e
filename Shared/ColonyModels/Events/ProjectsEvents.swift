import Foundation

// The projects service's events (topic `colony.projects`). Project, post, follow, support and
// milestone events are keyed by project id, so one project's story stays in order; builder and
// karma events are keyed by user id. Each carries the rows in the seed's shape. An anonymous
// support message's sender appears nowhere: not in the row, not as the envelope's actor.

extension EventType {
    public static let builderUpdated: EventType = "builder_updated"
    public static let projectCreated: EventType = "project_created"
    public static let projectUpdated: EventType = "project_updated"
    public static let projectDeleted: EventType = "project_deleted"
    public static let projectFollowed: EventType = "project_followed"
    public static let projectUnfollowed: EventType = "project_unfollowed"
    public static let projectPostCreated: EventType = "project_post_created"
    public static let postLiked: EventType = "post_liked"
    public static let supportSent: EventType = "support_sent"
    public static let milestoneCompleted: EventType = "milestone_completed"
    public static let karmaLevelUp: EventType = "karma_level_up"
}

/// A builder's profile changed (name, bio, avatar, links, creator flag).
public struct BuilderUpdated: EventPayload {
    public static let eventType = EventType.builderUpdated
    public static let source = ColonyService.projects

    public var builder: BuilderRow

    public init(builder: BuilderRow) {
        self.builder = builder
    }
}

public struct ProjectCreated: EventPayload {
    public static let eventType = EventType.projectCreated
    public static let source = ColonyService.projects

    public var project: ProjectRow
    /// The owner's user id (`builders.user_id`).
    public var ownerId: UUID

    public init(project: ProjectRow, ownerId: UUID) {
        self.project = project
        self.ownerId = ownerId
    }
}

/// Edited, new mood, published or unpublished, new cover.
public struct ProjectUpdated: EventPayload {
    public static let eventType = EventType.projectUpdated
    public static let source = ColonyService.projects

    public var project: ProjectRow
    public var ownerId: UUID

    public init(project: ProjectRow, ownerId: UUID) {
        self.project = project
        self.ownerId = ownerId
    }
}

/// The project is gone with its posts, milestones, follows and messages; `followerIds` (user
/// ids) were following it.
public struct ProjectDeleted: EventPayload {
    public static let eventType = EventType.projectDeleted
    public static let source = ColonyService.projects

    public var project: ProjectRow
    public var ownerId: UUID
    public var followerIds: [UUID]

    public init(project: ProjectRow, ownerId: UUID, followerIds: [UUID]) {
        self.project = project
        self.ownerId = ownerId
        self.followerIds = followerIds
    }
}

/// A new follow; `followerCount` is the project's count after it.
public struct ProjectFollowed: EventPayload {
    public static let eventType = EventType.projectFollowed
    public static let source = ColonyService.projects

    public var follow: FollowRow
    public var followerCount: Int
    /// The project owner's user id, for a notification.
    public var ownerId: UUID
    /// false when this user's follow of the project was already announced to the owner within
    /// a day (an unfollow and re-follow): no second "new follower". Absent (older events): true.
    public var notifyOwner: Bool?

    public init(follow: FollowRow, followerCount: Int, ownerId: UUID, notifyOwner: Bool? = nil) {
        self.follow = follow
        self.followerCount = followerCount
        self.ownerId = ownerId
        self.notifyOwner = notifyOwner
    }
}

/// Why a follow ended.
public enum UnfollowReason: String, Codable, Sendable {
    case unfollowed
    case accountDeleted = "account_deleted"
}

public struct ProjectUnfollowed: EventPayload {
    public static let eventType = EventType.projectUnfollowed
    public static let source = ColonyService.projects

    public var follow: FollowRow
    public var followerCount: Int
    public var reason: UnfollowReason

    public init(follow: FollowRow, followerCount: Int, reason: UnfollowReason) {
        self.follow = follow
        self.followerCount = followerCount
        self.reason = reason
    }
}

/// A new update on a project, with what a follower's feed shows beside it.
public struct ProjectPostCreated: EventPayload {
    public static let eventType = EventType.projectPostCreated
    public static let source = ColonyService.projects

    public var post: ProjectPostRow
    public var projectTitle: String
    public var projectSlug: String
    public var ownerId: UUID

    public init(post: ProjectPostRow, projectTitle: String, projectSlug: String, ownerId: UUID) {
        self.post = post
        self.projectTitle = projectTitle
        self.projectSlug = projectSlug
        self.ownerId = ownerId
    }
}

/// A new like; `likeCount` is the post's count after it.
public struct ProjectPostLiked: EventPayload {
    public static let eventType = EventType.postLiked
    public static let source = ColonyService.projects

    public var like: PostLikeRow
    public var projectId: UUID
    public var likeCount: Int

    public init(like: PostLikeRow, projectId: UUID, likeCount: Int) {
        self.like = like
        self.projectId = projectId
        self.likeCount = likeCount
    }
}

/// A support message to a project; an anonymous one has no sender (and the envelope no actor).
public struct SupportSent: EventPayload {
    public static let eventType = EventType.supportSent
    public static let source = ColonyService.projects

    public var message: SupportMessageRow
    /// The sender's builder name; nil when anonymous.
    public var senderName: String?
    public var ownerId: UUID

    public init(message: SupportMessageRow, senderName: String?, ownerId: UUID) {
        self.message = message
        self.senderName = message.isAnonymous ? nil : senderName
        self.ownerId = ownerId
    }
}

public struct MilestoneCompleted: EventPayload {
    public static let eventType = EventType.milestoneCompleted
    public static let source = ColonyService.projects

    public var milestone: MilestoneRow
    public var projectTitle: String

    public init(milestone: MilestoneRow, projectTitle: String) {
        self.milestone = milestone
        self.projectTitle = projectTitle
    }
}

/// The user's karma reached a higher level. It names no project or action, so it cannot point
/// at an anonymous message.
public struct KarmaLevelUp: EventPayload {
    public static let eventType = EventType.karmaLevelUp
    public static let source = ColonyService.projects

    public var karma: KarmaRow
    public var previousLevel: Int
    public var label: String
    public var emoji: String

    public init(karma: KarmaRow, previousLevel: Int, label: String, emoji: String) {
        self.karma = karma
        self.previousLevel = previousLevel
        self.label = label
        self.emoji = emoji
    }
}
