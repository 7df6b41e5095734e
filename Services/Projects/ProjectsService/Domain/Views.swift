import ColonyModels
import Foundation

// What the API answers with: the seed's rows, with storage keys turned into URLs and the joins
// the app makes (a project's builder, a post's project and builder, whether I follow or liked).
// A builder's own profile is `BuilderRow` as it is.

/// The public part of a builder, embedded in projects, posts and messages.
struct BuilderCard: Codable, Sendable {
    var id: UUID
    var userId: UUID
    var name: String
    var avatarUrl: String?
}

/// `projects` with its builder, and the caller's relation to it.
struct ProjectView: Codable, Sendable {
    var id: UUID
    var builderId: UUID
    var title: String
    var tagline: String?
    var description: String?
    var coverImageUrl: String?
    var publicSlug: String
    var mood: ProjectMood?
    var followerCount: Int
    var isPublished: Bool
    var createdAt: Date
    var updatedAt: Date
    var builder: BuilderCard
    var isFollowing: Bool
    var isOwner: Bool
}

struct ProjectPage: Codable, Sendable {
    var projects: [ProjectView]
    /// Pass as `cursor` for the next page; absent on the last.
    var nextCursor: String?
}

/// The project a post belongs to, as a feed line shows it (the seed's `project:projects(…)` join).
struct PostProject: Codable, Sendable {
    var id: UUID
    var title: String
    var publicSlug: String
    var coverImageUrl: String?
    var builder: BuilderCard
}

/// `posts` with its project and builder, and whether the caller liked it.
struct PostView: Codable, Sendable {
    var id: UUID
    var projectId: UUID
    var content: String
    var images: [String]
    var likeCount: Int
    var createdAt: Date
    var updatedAt: Date
    var project: PostProject
    var likedByMe: Bool
}

struct PostPage: Codable, Sendable {
    var posts: [PostView]
    var nextCursor: String?
}

/// The caller's karma with the seed's level label and emoji and the way to the next level.
struct KarmaView: Codable, Sendable {
    var id: UUID
    var userId: UUID
    var totalPoints: Int
    var level: Int
    var label: String
    var emoji: String
    /// The points at which the next level starts; absent at Legend.
    var nextLevelAt: Int?
    var pointsToNextLevel: Int?
    /// 0…1 through the current level's span (1 at Legend).
    var progress: Double
    var createdAt: Date
    var updatedAt: Date
}

/// The seed's `getUserSupportStats`.
struct SupportStats: Codable, Sendable {
    var projectsSupported: Int
    var messagesSent: Int
    var postsLiked: Int
}

struct ActionProject: Codable, Sendable {
    var id: UUID
    var title: String
    var publicSlug: String
}

/// `support_actions` with the project's title and slug (recent activity).
struct SupportActionView: Codable, Sendable {
    var id: UUID
    var userId: UUID
    var projectId: UUID
    var actionType: SupportActionType
    var pointsEarned: Int
    var metadata: [String: JSONValue]?
    var createdAt: Date
    var project: ActionProject
}

/// `support_messages` as everyone sees them: an anonymous one has neither `sender_id` nor `sender`.
struct SupportMessageView: Codable, Sendable {
    var id: UUID
    var projectId: UUID
    var senderId: UUID?
    var message: String
    var isAnonymous: Bool
    var createdAt: Date
    var sender: BuilderCard?
}

/// After a follow or unfollow.
struct FollowState: Codable, Sendable {
    var projectId: UUID
    var following: Bool
    var followerCount: Int
    /// Karma this request earned (5 for a first follow of someone else's project, else 0).
    var karmaEarned: Int
    var karma: KarmaView?
}

/// After a like or unlike.
struct LikeState: Codable, Sendable {
    var postId: UUID
    var liked: Bool
    var likeCount: Int
    var karmaEarned: Int
    var karma: KarmaView?
}

/// A sent support message, with the karma it earned.
struct SupportSentView: Codable, Sendable {
    var message: SupportMessageView
    var karmaEarned: Int
    var karma: KarmaView
}

struct SlugCheck: Codable, Sendable {
    var slug: String
    var exists: Bool
}

/// An uploaded post picture: put `key` (or `url`) in a post's `images`.
struct UploadedImage: Codable, Sendable {
    var key: String
    var url: String
}
