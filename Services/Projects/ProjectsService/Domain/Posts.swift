import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Posts (a project's updates): the owner writes, edits and deletes them with pictures uploaded
/// beforehand; everyone who sees the project reads and likes them; the feed gathers the posts
/// of the projects one follows.
struct Posts: Sendable {
    let outbox: Outbox
    let media: ProjectsMedia
    let uploadTTLSeconds: Int
    let logger: Logger
    var store: PostStore { PostStore(logger: logger) }
    var projects: Projects { Projects(outbox: outbox, media: media, logger: logger) }
    var builders: Builders { Builders(outbox: outbox, media: media, logger: logger) }

    // MARK: views

    func row(_ post: ProjectPostRow) -> ProjectPostRow {
        var row = post
        row.images = post.images.map(media.imageURL)
        return row
    }

    func view(_ post: StoredPost) -> Post {
        Post(id: post.id.lowercased, projectId: post.projectId.lowercased, content: post.content, images: post.images.map(media.imageURL), likeCount: post.likeCount,
             createdAt: post.createdAt, updatedAt: post.updatedAt,
             project: PostProject(id: post.projectId.lowercased, title: post.projectTitle, publicSlug: post.projectSlug,
                                  coverImageUrl: media.coverURL(post.projectId, version: post.projectCoverVersion), builder: builders.card(post.owner)),
             likedByMe: post.likedByMe)
    }

    func view(_ post: ProjectPostRow, project: StoredProject, likedByMe: Bool) -> Post {
        Post(id: post.id.lowercased, projectId: post.projectId.lowercased, content: post.content, images: post.images.map(media.imageURL), likeCount: post.likeCount,
             createdAt: post.createdAt, updatedAt: post.updatedAt,
             project: PostProject(id: project.id.lowercased, title: project.title, publicSlug: project.publicSlug,
                                  coverImageUrl: media.coverURL(project.id, version: project.coverVersion), builder: builders.card(project.owner)),
             likedByMe: likedByMe)
    }

    func page(_ found: [StoredPost], limit: Int) -> PostPage {
        let page = Array(found.prefix(limit))
        return PostPage(posts: page.map(view), nextCursor: found.count > limit ? page.last?.cursor.text : nil)
    }

    /// The post if `userID` may do `action` on its project (`ProjectPolicy`).
    func access(_ postID: UUID, userID: UUID, _ action: ProjectPolicy.Action, on connection: PostgresConnection) async throws -> StoredPost {
        guard let post = try await store.find(postID, viewer: userID, on: connection) else { throw ProjectsErrors.postNotFound }
        do {
            try ProjectPolicy.require(isOwner: post.owner.userId == userID, isPublished: post.projectIsPublished, action)
        } catch let error as APIError where error == ProjectsErrors.projectNotFound {
            throw ProjectsErrors.postNotFound
        }
        return post
    }

    // MARK: reading

    func get(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Post {
        view(try await access(postID, userID: userID, .view, on: connection))
    }

    func list(_ projectID: UUID, cursor: String?, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> PostPage {
        _ = try await projects.access(projectID, userID: userID, .view, on: connection)
        return page(try await store.page(projectID: projectID, after: try Projects.cursor(cursor), limit: limit, viewer: userID, on: connection), limit: limit)
    }

    /// Posts of the projects I follow, newest first, with project, builder and `liked_by_me`.
    func feed(userID: UUID, cursor: String?, limit: Int, on connection: PostgresConnection) async throws -> PostPage {
        page(try await store.feed(userID: userID, after: try Projects.cursor(cursor), limit: limit, on: connection), limit: limit)
    }

    // MARK: writing

    /// The storage keys for `images` (keys or URLs of this project's pictures), in order and
    /// without repeats; 422 for anything else or too many.
    func imageKeys(_ images: [String], projectID: UUID) throws -> [String] {
        var keys: [String] = []
        for image in images {
            guard let key = media.imageKey(image, projectID: projectID) else { throw ProjectsErrors.unknownImage }
            if !keys.contains(key) { keys.append(key) }
        }
        guard keys.count <= ProjectsRules.maxPostImages else { throw ProjectsErrors.validation("a post has at most \(ProjectsRules.maxPostImages) images") }
        return keys
    }

    /// Creates a post (owner only). Its pictures must have been uploaded to the project and not
    /// used yet; they stop waiting for a post.
    func create(_ projectID: UUID, content: String, images: [String], userID: UUID, on connection: PostgresConnection) async throws -> Post {
        var errors = ValidationErrors()
        let content = ProjectsRules.postContent(content, errors: &errors)
        try errors.throwIfAny()
        let project = try await projects.access(projectID, userID: userID, .manage, on: connection)
        let keys = try imageKeys(images, projectID: projectID)
        guard try await store.claimUploads(keys, projectID: projectID, on: connection) == Set(keys) else { throw ProjectsErrors.unknownImage }
        let post = try await store.insert(id: .timeOrdered(), projectID: projectID, content: content, images: keys, on: connection)
        try await outbox.publish(ProjectPostCreated(post: row(post), projectTitle: project.title, projectSlug: project.publicSlug, ownerId: userID),
                                 key: projectID, actor: userID, on: connection, logger: logger)
        return view(post, project: project, likedByMe: false)
    }

    /// Edits a post (owner only): new text and/or a new list of pictures (kept ones, or new
    /// uploads); pictures left out are deleted.
    func update(_ postID: UUID, content: String?, images: [String]?, userID: UUID, on connection: PostgresConnection) async throws -> Post {
        var errors = ValidationErrors()
        let content = content.map { ProjectsRules.postContent($0, errors: &errors) }
        try errors.throwIfAny()
        let post = try await access(postID, userID: userID, .manage, on: connection)
        var removed: [String] = []
        var keys: [String]?
        if let images {
            let wanted = try imageKeys(images, projectID: post.projectId)
            let new = Set(wanted).subtracting(post.images)
            guard try await store.claimUploads(Array(new), projectID: post.projectId, on: connection) == new else { throw ProjectsErrors.unknownImage }
            removed = post.images.filter { !wanted.contains($0) }
            keys = wanted
        }
        guard let updated = try await store.update(postID, content: content, images: keys, on: connection) else { throw ProjectsErrors.postNotFound }
        for key in removed { try await media.storage.remove(media.postImages, key: key) }
        var result = view(post)
        result.content = updated.content
        result.images = updated.images.map(media.imageURL)
        result.updatedAt = updated.updatedAt
        return result
    }

    /// Deletes a post (owner only) with its pictures.
    func delete(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await deletePost(try await access(postID, userID: userID, .manage, on: connection), on: connection)
    }

    /// Deletes the post with its pictures (its likes go with it; the likers keep their karma):
    /// the owner's delete, and a moderator's removal (`ProjectsReportables`).
    func deletePost(_ post: StoredPost, on connection: PostgresConnection) async throws {
        try await store.delete(post.id, on: connection)
        for key in post.images { try await media.storage.remove(media.postImages, key: key) }
    }

    /// Uploads a picture for a post of this project (owner only), as `{project_id}/{image_id}`.
    /// It waits for a post to use it; unused, it is deleted after the upload TTL.
    func uploadImage(_ projectID: UUID, image: ByteBuffer, contentType: String?, userID: UUID, on connection: PostgresConnection) async throws -> UploadedImage {
        _ = try await projects.access(projectID, userID: userID, .manage, on: connection)
        let key = ProjectsMedia.imageKey(projectID: projectID, imageID: .timeOrdered())
        _ = try await media.storage.upload(image, contentType: contentType, to: media.postImages, key: key)
        do {
            try await store.addUpload(key: key, projectID: projectID, on: connection)
        } catch {
            try? await media.storage.remove(media.postImages, key: key)
            throw error
        }
        return UploadedImage(key: key, url: media.imageURL(key))
    }

    /// The upload job: deletes pictures no post took within the TTL, 500 per transaction.
    func expireUploads(database: Database) async throws -> Int {
        var total = 0
        while true {
            let expired = try await database.transaction { connection in
                let keys = try await store.expireUploads(ttlSeconds: uploadTTLSeconds, limit: 500, on: connection)
                for key in keys { try await media.storage.remove(media.postImages, key: key) }
                return keys.count
            }
            total += expired
            if expired < 500 { return total }
        }
    }

    // MARK: likes

    /// Likes the post (idempotent): the counter goes up once, and the first like of this post
    /// ever (on someone else's project) earns 1 karma with a support action.
    func like(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> LikeState {
        _ = try await builders.require(userID, on: connection)
        let post = try await access(postID, userID: userID, .like, on: connection)
        let points = ProjectPolicy.karmaPoints(for: .like, isOwner: post.owner.userId == userID)
        guard let liked = try await store.like(postID, projectID: post.projectId, userID: userID, points: points, on: connection) else {
            return LikeState(postId: postID.lowercased, liked: true, likeCount: post.likeCount, karmaEarned: 0, karma: nil)
        }
        try await outbox.publish(ProjectPostLiked(like: liked.like, projectId: post.projectId, likeCount: liked.likeCount),
                                 key: post.projectId, actor: userID, on: connection, logger: logger)
        if let karma = liked.karma { try await builders.karmaChanged(karma, earned: points, on: connection) }
        return LikeState(postId: postID.lowercased, liked: true, likeCount: liked.likeCount, karmaEarned: liked.karma == nil ? 0 : points,
                         karma: try liked.karma.map(Karma.init))
    }

    /// Unlikes (idempotent): the counter goes down; karma stays.
    func unlike(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> LikeState {
        let post = try await access(postID, userID: userID, .like, on: connection)
        let count = try await store.unlike(postID, userID: userID, on: connection)
        return LikeState(postId: postID.lowercased, liked: false, likeCount: count ?? post.likeCount, karmaEarned: 0, karma: nil)
    }
}
