import ColonyModels
import Foundation
import OpenAPIRuntime

// What the API answers with: the document's own types (Generated/), under its names. The
// stores' rows become them here, with storage keys already turned into URLs by the domain and
// the joins the app makes (a project's builder, a post's project and builder, whether I follow
// or liked). Events keep carrying the shared rows (ColonyModels).

/// A builder's own profile (`builders` with the avatar's URL).
typealias Builder = Components.Schemas.Builder
/// The public part of a builder, embedded in projects, posts and messages.
typealias BuilderCard = Components.Schemas.BuilderCard
/// `projects` with its builder, and the caller's relation to it.
typealias Project = Components.Schemas.Project
typealias ProjectPage = Components.Schemas.ProjectPage
/// `posts` with its project and builder, and whether the caller liked it.
typealias Post = Components.Schemas.Post
typealias PostPage = Components.Schemas.PostPage
/// The project a post belongs to, as a feed line shows it (the seed's `project:projects(…)` join).
typealias PostProject = Components.Schemas.PostProject
/// The caller's karma with the seed's level label and emoji and the way to the next level.
typealias Karma = Components.Schemas.Karma
typealias SupportStats = Components.Schemas.SupportStats
/// `support_actions` with the project's title and slug (recent activity).
typealias SupportAction = Components.Schemas.SupportAction
/// `support_messages` as everyone sees them: an anonymous one has neither `sender_id` nor `sender`.
typealias SupportMessage = Components.Schemas.SupportMessage
typealias Milestone = Components.Schemas.Milestone
typealias FollowState = Components.Schemas.FollowState
typealias LikeState = Components.Schemas.LikeState
typealias SlugCheck = Components.Schemas.SlugCheck
/// An uploaded post picture: put `key` (or `url`) in a post's `images`.
typealias UploadedImage = Components.Schemas.UploadedImage

/// A row that does not fit its document type (a value the tables' checks should have kept out).
struct UnexpectedRow: Error, CustomStringConvertible {
    let description: String
}

extension Components.Schemas.Builder {
    init(_ row: BuilderRow) {
        self.init(id: row.id.lowercased, userId: row.userId.lowercased, name: row.name, bio: row.bio, avatarUrl: row.avatarUrl, websiteUrl: row.websiteUrl,
                  twitterHandle: row.twitterHandle, isCreator: row.isCreator, createdAt: row.createdAt, updatedAt: row.updatedAt)
    }
}

extension Components.Schemas.Mood {
    init(_ mood: ProjectMood) {
        switch mood {
        case .green: self = .green
        case .yellow: self = .yellow
        case .red: self = .red
        }
    }

    /// As the domain keeps it.
    var mood: ProjectMood {
        switch self {
        case .green: .green
        case .yellow: .yellow
        case .red: .red
        }
    }
}

extension Components.Schemas.SupportAction.ActionTypePayload {
    init(_ type: SupportActionType) {
        switch type {
        case .follow: self = .follow
        case .message: self = .message
        case .like: self = .like
        }
    }
}

extension Components.Schemas.Karma {
    /// The row with its level's label and emoji (`KarmaLevel`) and the way to the next level.
    init(_ karma: KarmaRow) throws {
        let level = KarmaLevel.numbered(karma.level)
        let progress = KarmaLevel.progress(points: karma.totalPoints)
        guard let label = LabelPayload(rawValue: level.label), let emoji = EmojiPayload(rawValue: level.emoji) else {
            throw UnexpectedRow(description: "karma level \(karma.level)")
        }
        self.init(id: karma.id.lowercased, userId: karma.userId.lowercased, totalPoints: karma.totalPoints, level: level.level, label: label, emoji: emoji,
                  nextLevelAt: progress.nextLevelAt, pointsToNextLevel: progress.pointsToNextLevel, progress: progress.progress,
                  createdAt: karma.createdAt, updatedAt: karma.updatedAt)
    }
}

extension Components.Schemas.SupportAction {
    init(_ action: SupportActionRow, project: ProjectPayload) throws {
        // The document's free-form object, from the stored JSON (decoded by its own Codable).
        let metadata = try action.metadata.map { try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(ColonyJSON.encode($0))) }
        self.init(id: action.id.lowercased, userId: action.userId.lowercased, projectId: action.projectId.lowercased, actionType: .init(action.actionType),
                  pointsEarned: action.pointsEarned, metadata: metadata, createdAt: action.createdAt, project: project)
    }
}

extension Components.Schemas.Milestone {
    init(_ row: MilestoneRow) {
        self.init(id: row.id.lowercased, projectId: row.projectId.lowercased, title: row.title, description: row.description, isCompleted: row.isCompleted,
                  targetDate: row.targetDate?.description, completedAt: row.completedAt, createdAt: row.createdAt)
    }
}
