import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The projects REST API under `/projects/v1` (described by `ProjectsOpenAPI`). Handlers
/// decode, call the domain on a pooled connection (reads) or in one transaction (writes), and
/// encode. Pictures are raw bodies with their `Content-Type`.
struct ProjectsRoutes: Sendable {
    let support: RouteSupport
    let builders: Builders
    let projects: Projects
    let posts: Posts
    let milestones: Milestones
    let messages: SupportMessages
    let uploadLimit: Int

    static let prefix = "/projects/v1"
    typealias R = RouteSupport

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)
        let support = self.support, builders = self.builders, projects = self.projects, posts = self.posts
        let milestones = self.milestones, messages = self.messages, uploadLimit = self.uploadLimit

        // Me
        routes.on(.get, "me") { _, context in
            let email = context.user?.email
            return try await support.read(context) { user, connection in try await builders.me(user, email: email, on: connection) }
        }
        routes.on(.patch, "me") { request, context in
            try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(ProfilePatch.self, body)
                return try await builders.edit(user, .init(name: patch.name, bio: patch.bio, websiteUrl: patch.websiteUrl, twitterHandle: patch.twitterHandle,
                                                           isCreator: patch.isCreator), on: connection)
            }
        }
        routes.on(.put, "me/avatar") { request, context in
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await builders.setAvatar(user, image: body, contentType: type, on: connection)
            }
        }
        routes.on(.delete, "me/avatar") { request, context in
            try await support.write(request, context) { _, user, connection in try await builders.removeAvatar(user, on: connection) }
        }
        routes.on(.get, "me/karma") { _, context in
            try await support.read(context) { user, connection in try await builders.karma(user, on: connection) }
        }
        routes.on(.get, "me/stats") { _, context in
            try await support.read(context) { user, connection in try await builders.stats(user, on: connection) }
        }
        routes.on(.get, "me/support-actions") { request, context in
            let limit = try R.limit(request, default: 20, range: 1...100)
            return try await support.read(context) { user, connection in try await builders.actions(user, limit: limit, on: connection) }
        }
        routes.on(.get, "me/following") { request, context in
            let limit = try R.limit(request, default: 50, range: 1...200)
            let cursor = Self.cursor(request)
            return try await support.read(context) { user, connection in try await projects.following(userID: user, cursor: cursor, limit: limit, on: connection) }
        }
        routes.on(.get, "me/projects") { request, context in
            let limit = try R.limit(request, default: 50, range: 1...100)
            return try await support.read(context) { user, connection in try await projects.mine(userID: user, limit: limit, on: connection) }
        }

        // Builders
        routes.on(.get, "builders/{builder_id}") { _, context in
            let id = try R.uuid(context, "builder_id", ProjectsErrors.builderNotFound)
            return try await support.read(context) { _, connection in try await builders.get(id, on: connection) }
        }
        routes.on(.get, "builders/{builder_id}/projects") { request, context in
            let id = try R.uuid(context, "builder_id", ProjectsErrors.builderNotFound)
            let limit = try R.limit(request, default: 50, range: 1...100)
            return try await support.read(context) { user, connection in try await projects.byBuilder(id, userID: user, limit: limit, on: connection) }
        }
        routes.on(.get, "users/{user_id}/builder") { _, context in
            let id = try R.uuid(context, "user_id", ProjectsErrors.builderNotFound)
            return try await support.read(context) { _, connection in try await builders.get(userID: id, on: connection) }
        }

        // Projects
        routes.on(.get, "projects") { request, context in
            let limit = try R.limit(request, default: 20, range: 1...100)
            let sort = try R.query(request, "sort", "sort must be new or trending") { ProjectStore.Sort(rawValue: $0) } ?? .new
            let query = request.uri.queryParameters["q"].map(String.init)
            let cursor = Self.cursor(request)
            return try await support.read(context) { user, connection in
                try await projects.list(sort: sort, query: query, cursor: cursor, limit: limit, userID: user, on: connection)
            }
        }
        routes.on(.post, "projects") { request, context in
            try await support.write(request, context, status: .created) { body, user, connection in
                let create = try R.decode(CreateProject.self, body)
                return try await projects.create(.init(title: create.title, tagline: create.tagline, description: create.description, publicSlug: create.publicSlug,
                                                       mood: create.mood, isPublished: create.isPublished), userID: user, on: connection)
            }
        }
        routes.on(.get, "projects/by-slug/{slug}") { _, context in
            let slug = context.parameters.get("slug") ?? ""
            return try await support.read(context) { user, connection in try await projects.get(slug: slug, userID: user, on: connection) }
        }
        routes.on(.get, "slugs/{slug}") { _, context in
            let slug = context.parameters.get("slug") ?? ""
            return try await support.read(context) { _, connection in try await projects.slugExists(slug, on: connection) }
        }
        routes.on(.get, "projects/{project_id}") { _, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.read(context) { user, connection in try await projects.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "projects/{project_id}") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(ProjectPatch.self, body)
                return try await projects.update(id, .init(title: patch.title, tagline: patch.tagline, description: patch.description, publicSlug: patch.publicSlug,
                                                           mood: patch.mood, isPublished: patch.isPublished), userID: user, on: connection)
            }
        }
        routes.on(.delete, "projects/{project_id}") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await projects.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.put, "projects/{project_id}/cover") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await projects.setCover(id, image: body, contentType: type, userID: user, on: connection)
            }
        }
        routes.on(.delete, "projects/{project_id}/cover") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context) { _, user, connection in try await projects.removeCover(id, userID: user, on: connection) }
        }
        routes.on(.post, "projects/{project_id}/follow") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context) { _, user, connection in try await projects.follow(id, userID: user, on: connection) }
        }
        routes.on(.delete, "projects/{project_id}/follow") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context) { _, user, connection in try await projects.unfollow(id, userID: user, on: connection) }
        }
        routes.on(.get, "projects/{project_id}/supporters") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            let limit = try R.limit(request, default: 50, range: 1...200)
            return try await support.read(context) { user, connection in try await projects.supporters(id, userID: user, limit: limit, on: connection) }
        }

        // Posts
        routes.on(.get, "projects/{project_id}/posts") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            let limit = try R.limit(request, default: 20, range: 1...50)
            let cursor = Self.cursor(request)
            let user = try context.requireUser().id
            let page = try await support.database.withConnection { connection in try await posts.list(id, cursor: cursor, limit: limit, userID: user, on: connection) }
            return try R.json(page, status: .ok)
        }
        routes.on(.post, "projects/{project_id}/posts") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context, status: .created) { body, user, connection in
                let create = try R.decode(CreatePost.self, body)
                return try await posts.create(id, content: create.content, images: create.images ?? [], userID: user, on: connection)
            }
        }
        routes.on(.post, "projects/{project_id}/images") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            let type = request.headers[.contentType]
            return try await support.write(request, context, status: .created, limit: uploadLimit) { body, user, connection in
                try await posts.uploadImage(id, image: body, contentType: type, userID: user, on: connection)
            }
        }
        routes.on(.get, "feed") { request, context in
            let limit = try R.limit(request, default: FeedPage.pageSize, range: 1...50)
            let cursor = Self.cursor(request)
            let user = try context.requireUser().id
            let page = try await support.database.withConnection { connection in try await posts.feed(userID: user, cursor: cursor, limit: limit, on: connection) }
            return try R.json(page, status: .ok)
        }
        routes.on(.get, "posts/{post_id}") { _, context in
            let id = try R.uuid(context, "post_id", ProjectsErrors.postNotFound)
            return try await support.read(context) { user, connection in try await posts.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "posts/{post_id}") { request, context in
            let id = try R.uuid(context, "post_id", ProjectsErrors.postNotFound)
            return try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(PostPatch.self, body)
                return try await posts.update(id, content: patch.content, images: patch.images, userID: user, on: connection)
            }
        }
        routes.on(.delete, "posts/{post_id}") { request, context in
            let id = try R.uuid(context, "post_id", ProjectsErrors.postNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await posts.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }
        routes.on(.post, "posts/{post_id}/like") { request, context in
            let id = try R.uuid(context, "post_id", ProjectsErrors.postNotFound)
            return try await support.write(request, context) { _, user, connection in try await posts.like(id, userID: user, on: connection) }
        }
        routes.on(.delete, "posts/{post_id}/like") { request, context in
            let id = try R.uuid(context, "post_id", ProjectsErrors.postNotFound)
            return try await support.write(request, context) { _, user, connection in try await posts.unlike(id, userID: user, on: connection) }
        }

        // Milestones
        routes.on(.get, "projects/{project_id}/milestones") { _, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.read(context) { user, connection in try await milestones.list(id, userID: user, on: connection) }
        }
        routes.on(.post, "projects/{project_id}/milestones") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context, status: .created) { body, user, connection in
                let create = try R.decode(CreateMilestone.self, body)
                return try await milestones.create(id, .init(title: create.title, description: create.description, targetDate: create.targetDate), userID: user, on: connection)
            }
        }
        routes.on(.patch, "milestones/{milestone_id}") { request, context in
            let id = try R.uuid(context, "milestone_id", ProjectsErrors.milestoneNotFound)
            return try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(MilestonePatch.self, body)
                return try await milestones.update(id, .init(title: patch.title, description: patch.description, targetDate: patch.targetDate, isCompleted: patch.isCompleted),
                                                   userID: user, on: connection)
            }
        }
        routes.on(.post, "milestones/{milestone_id}/toggle") { request, context in
            let id = try R.uuid(context, "milestone_id", ProjectsErrors.milestoneNotFound)
            return try await support.write(request, context) { body, user, connection in
                try await milestones.toggle(id, isCompleted: try R.decode(Toggle.self, body, emptyAs: Toggle()).isCompleted, userID: user, on: connection)
            }
        }
        routes.on(.delete, "milestones/{milestone_id}") { request, context in
            let id = try R.uuid(context, "milestone_id", ProjectsErrors.milestoneNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await milestones.delete(id, userID: user, on: connection)
                return R.Empty()
            }
        }

        // Support messages
        routes.on(.get, "projects/{project_id}/support-messages") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            let limit = try R.limit(request, default: 5, range: 1...50)
            return try await support.read(context) { user, connection in try await messages.recent(id, limit: limit, userID: user, on: connection) }
        }
        routes.on(.post, "projects/{project_id}/support-messages") { request, context in
            let id = try R.uuid(context, "project_id", ProjectsErrors.projectNotFound)
            return try await support.write(request, context, status: .created) { body, user, connection in
                let send = try R.decode(SendSupport.self, body)
                return try await messages.send(id, message: send.message, isAnonymous: send.isAnonymous ?? false, userID: user, on: connection)
            }
        }
    }

    static func cursor(_ request: Request) -> String? { request.uri.queryParameters["cursor"].map(String.init) }

    // MARK: bodies

    /// Absent leaves a field; null (or "") clears bio, website and Twitter handle.
    struct ProfilePatch: Decodable {
        var name: String?
        var bio: String??
        var websiteUrl: String??
        var twitterHandle: String??
        var isCreator: Bool?

        enum CodingKeys: String, CodingKey { case name, bio, websiteUrl, twitterHandle, isCreator }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            bio = container.contains(.bio) ? .some(try container.decodeIfPresent(String.self, forKey: .bio)) : nil
            websiteUrl = container.contains(.websiteUrl) ? .some(try container.decodeIfPresent(String.self, forKey: .websiteUrl)) : nil
            twitterHandle = container.contains(.twitterHandle) ? .some(try container.decodeIfPresent(String.self, forKey: .twitterHandle)) : nil
            isCreator = try container.decodeIfPresent(Bool.self, forKey: .isCreator)
        }
    }

    struct CreateProject: Decodable {
        var title: String
        var tagline: String?
        var description: String?
        var publicSlug: String?
        var mood: ProjectMood?
        var isPublished: Bool?
    }

    /// Absent leaves a field; null (or "") clears tagline and description, null clears mood.
    struct ProjectPatch: Decodable {
        var title: String?
        var tagline: String??
        var description: String??
        var publicSlug: String?
        var mood: ProjectMood??
        var isPublished: Bool?

        enum CodingKeys: String, CodingKey { case title, tagline, description, publicSlug, mood, isPublished }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            tagline = container.contains(.tagline) ? .some(try container.decodeIfPresent(String.self, forKey: .tagline)) : nil
            description = container.contains(.description) ? .some(try container.decodeIfPresent(String.self, forKey: .description)) : nil
            publicSlug = try container.decodeIfPresent(String.self, forKey: .publicSlug)
            mood = container.contains(.mood) ? .some(try container.decodeIfPresent(ProjectMood.self, forKey: .mood)) : nil
            isPublished = try container.decodeIfPresent(Bool.self, forKey: .isPublished)
        }
    }

    struct CreatePost: Decodable {
        var content: String
        var images: [String]?
    }

    struct PostPatch: Decodable {
        var content: String?
        var images: [String]?
    }

    struct CreateMilestone: Decodable {
        var title: String
        var description: String?
        var targetDate: LocalDate?
    }

    /// Absent leaves a field; null clears description and target date.
    struct MilestonePatch: Decodable {
        var title: String?
        var description: String??
        var targetDate: LocalDate??
        var isCompleted: Bool?

        enum CodingKeys: String, CodingKey { case title, description, targetDate, isCompleted }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            description = container.contains(.description) ? .some(try container.decodeIfPresent(String.self, forKey: .description)) : nil
            targetDate = container.contains(.targetDate) ? .some(try container.decodeIfPresent(LocalDate.self, forKey: .targetDate)) : nil
            isCompleted = try container.decodeIfPresent(Bool.self, forKey: .isCompleted)
        }
    }

    struct Toggle: Decodable { var isCompleted: Bool? }

    struct SendSupport: Decodable {
        var message: String
        var isAnonymous: Bool?
    }
}
