import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import PostgresNIO

/// I Believe In You's Supabase tables (`ibelieveinyou.md`, section 2) into the projects schema.
/// Counts and karma are never copied: they are what the imported facts add up to, by the same
/// rules the service applies to live requests. Per table:
///
/// | Supabase (`public`) | Colony (`projects`) |
/// |---|---|
/// | `builders` | `builders`; its id kept unless the account already has a builder in Colony (then the rows below follow that one); a name over 60 characters is cut to 60, a blank one (the seed's sign-up trigger writes `''` when the sign-up gave no name) becomes the account's sign-up name or the address's local part, as a sign-up's would, and a bio over 500 is cut, each reported as changed, so the builder and everything of theirs comes over; a website or Twitter handle the service would refuse is left out and reported; `avatar_url`'s file copied to `builder-avatars` as `{builder_id}` |
/// | `karma` | not copied: every builder's karma is recomputed from `support_actions` |
/// | `projects` | `projects` (title over 100, tagline over 160, description over 10,000 characters cut there, a blank title "Untitled project", each reported as changed; slug as the service makes them, else a new one from the title, reported); `follower_count` counted from the imported follows; `cover_image_url`'s file copied to `project-covers` as `{project_id}` |
/// | `posts` | `posts` (content over 5,000 characters cut there, blank content "(no text)", reported as changed); each of `images` copied to `post-images` as `{project_id}/{image_id}`; `like_count` counted from the imported likes |
/// | `milestones` | as is (title over 200 and description over 2,000 characters cut, a blank title "Milestone", reported); completed exactly when `is_completed`: a `completed_at` left on one that is not is left out (reported), one that is without it counts as completed when created |
/// | `support_actions` | in time order, each earning what the service would give: a follow 5 and a like 1 once per user and project or post ever (`karma_awards`), a message 10, nothing for your own project; the sum is the karma, the level from the seed's table |
/// | `follows`, `likes` | as is, counted into their project and post (once per user: a duplicate is skipped); they mark the subject as awarded, so following again earns nothing |
/// | `support_messages` | as is (over 1,000 characters cut there, reported); a sender whose account is gone leaves the message anonymous, as Colony does on erasure |
///
/// Every project is announced (`project_imported`) for the notifications' names.
public enum SupabaseProjectsImport {
    static let untitledProject = "Untitled project"
    static let untitledMilestone = "Milestone"
    static let noText = "(no text)"

    /// A milestone's `completed_at`: set exactly when it is completed (the source's `is_completed`
    /// says so; a `completed_at` left on one that is not is a leftover), the time it was created
    /// when the source has none.
    static func completion(isCompleted: Bool, completedAt: Date?, createdAt: Date) -> Date? {
        isCompleted ? (completedAt ?? createdAt) : nil
    }

    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts, settings: ProjectsSettings, storage: Storage) async throws {
        let media = ProjectsMedia(storage: storage, maxImageBytes: settings.maxImageBytes)
        let logger = job.logger
        let builders = BuilderStore(logger: logger)

        let builderIDs = try await job.importRows("public.builders", from: source.rows("public", "builders", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let sourceID = try row.uuid("id"), userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            // Too long or blank names and bios are fitted, not the builder (and all of theirs) left out.
            let account = accounts.byID[userID]
            let sourceName = try row.optionalString("name")
            let nameIsBlank = TextRules.trimmed(sourceName ?? "").isEmpty
            let name = writer.fit(sourceName, "name", max: ProjectsRules.maxName,
                                  fallback: SignUpMetadata.displayName(account?.userMetadata ?? [:], maxLength: ProjectsRules.maxName) ?? BuilderStore.defaultName(email: account?.email))
                ?? BuilderStore.defaultName(email: nil)
            let bio = writer.fit(try row.optionalString("bio"), "bio", max: ProjectsRules.maxBio)
            var dropped = ValidationErrors()
            let website = ProjectsRules.websiteURL(try row.optionalString("website_url"), errors: &dropped)
            let twitter = ProjectsRules.twitterHandle(try row.optionalString("twitter_handle"), errors: &dropped)
            if !dropped.isEmpty { writer.service.report.incomplete(writer.table, id: writer.sourceID, reason: "left out: \(dropped)") }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            // The account may have a builder already (its sign-up event, a first request): that one stays.
            let builderID = try await writer.connection.query("""
                INSERT INTO builders (id, user_id, name, name_is_default, bio, website_url, twitter_handle, is_creator, created_at, updated_at)
                SELECT \(sourceID), \(userID), \(name), \(nameIsBlank), \(bio), \(website), \(twitter), \(try row.bool("is_creator", default: false)), \(createdAt),
                       \(try row.optionalDate("updated_at") ?? createdAt)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, bio = EXCLUDED.bio, website_url = EXCLUDED.website_url,
                    twitter_handle = EXCLUDED.twitter_handle, is_creator = EXCLUDED.is_creator, name_is_default = EXCLUDED.name_is_default,
                    created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                RETURNING id
                """, logger: logger).firstValue(UUID.self)
            guard let builderID else { throw RowProblem("the account was deleted in Colony") }
            try await writer.connection.query("INSERT INTO karma (id, user_id) VALUES (\(UUID.timeOrdered()), \(userID)) ON CONFLICT (user_id) DO NOTHING", logger: logger)
            if let avatar = try await writer.copyFile(try row.optionalString("avatar_url"), defaultBucket: media.avatars.name, into: media.avatars, key: ProjectsMedia.key(builderID)) {
                try await writer.connection.query("UPDATE builders SET avatar_version = \(avatar.version) WHERE id = \(builderID)", logger: logger)
            }
            return .imported(target: builderID == sourceID ? nil : builderID.lowercased)
        }
        /// The Colony builder of a source builder id (the same id, unless the account had one).
        func builder(_ sourceID: UUID) -> UUID? {
            guard let entry = builderIDs[sourceID.lowercased] else { return nil }
            return entry.flatMap(UUID.init(uuidString:)) ?? sourceID
        }
        try await job.once("builders#ensured", keys: accounts.all.map(\.id.lowercased)) { key, writer in
            guard let account = UUID(uuidString: key).flatMap({ accounts.byID[$0] }) else { return }
            try await builders.upsertFromAuth(account.id, name: SignUpMetadata.displayName(account.userMetadata, maxLength: ProjectsRules.maxName), email: account.email, on: writer.connection)
        }
        try await job.importRows("public.karma", from: source.rows("public", "karma", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { _, _ in
            .notImported("recomputed from support_actions")
        }

        try await job.importRows("public.projects", from: source.rows("public", "projects", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let id = try row.uuid("id")
            guard let builderID = builder(try row.uuid("builder_id")) else { throw RowProblem("builder_id is not an imported builder") }
            let title = writer.fit(try row.optionalString("title"), "title", max: ProjectsRules.maxTitle, fallback: Self.untitledProject) ?? Self.untitledProject
            let tagline = writer.fit(try row.optionalString("tagline"), "tagline", max: ProjectsRules.maxTagline)
            let description = writer.fit(try row.optionalString("description"), "description", max: ProjectsRules.maxDescription)
            var slug = try row.string("public_slug").lowercased()
            let taken = try await !writer.connection.query("SELECT 1 FROM projects WHERE public_slug = \(slug)", logger: logger).collect().isEmpty
            if !Slug.isValid(slug) || taken {
                let made = Slug.withSuffix(Slug.base(from: title))
                writer.service.report.incomplete(writer.table, id: writer.sourceID, reason: "public_slug \"\(slug.prefix(80))\" invalid or taken in Colony: now \(made)")
                slug = made
            }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO projects (id, builder_id, title, tagline, description, public_slug, mood, is_published, created_at, updated_at)
                VALUES (\(id), \(builderID), \(title), \(tagline), \(description), \(slug), \(try row.optionalEnumeration("mood", ProjectMood.self)?.rawValue)::project_mood,
                        \(try row.bool("is_published", default: true)), \(createdAt), \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: logger)
            if let cover = try await writer.copyFile(try row.optionalString("cover_image_url"), defaultBucket: media.covers.name, into: media.covers, key: ProjectsMedia.key(id)) {
                try await writer.connection.query("UPDATE projects SET cover_version = \(cover.version) WHERE id = \(id)", logger: logger)
            }
            try await writer.publish(EventEnvelope(app: .ibelieveinyou, aggregateId: id.lowercased, occurredAt: job.now, payload: ProjectImported(projectId: id, title: title)))
            return .imported
        }

        try await job.importRows("public.posts", from: source.rows("public", "posts", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let id = try row.uuid("id"), projectID = try row.uuid("project_id")
            // Kept as written when it fits, as the service keeps post text.
            let content = writer.fit(try row.optionalString("content"), "content", max: ProjectsRules.maxPostContent, fallback: Self.noText, trim: false) ?? Self.noText
            guard try await writer.connection.query("SELECT 1 FROM projects WHERE id = \(projectID)", logger: logger).collect().count == 1 else {
                throw RowProblem("project_id \(projectID.lowercased) is not an imported project")
            }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            var keys: [String] = []
            for (index, image) in try row.stringArray("images").prefix(ProjectsRules.maxPostImages).enumerated() {
                // The image's id carries the post's time, as a new upload's would carry its own.
                let key = ProjectsMedia.imageKey(projectID: projectID, imageID: .timeOrdered(at: createdAt.addingTimeInterval(Double(index) / 1000)))
                if try await writer.copyFile(image, defaultBucket: media.postImages.name, into: media.postImages, key: key) != nil { keys.append(key) }
            }
            try await writer.connection.query("""
                INSERT INTO posts (id, project_id, content, images, created_at, updated_at)
                VALUES (\(id), \(projectID), \(content), \(keys), \(createdAt), \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.milestones", from: source.rows("public", "milestones", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let title = writer.fit(try row.optionalString("title"), "title", max: ProjectsRules.maxMilestoneTitle, fallback: Self.untitledMilestone) ?? Self.untitledMilestone
            let description = writer.fit(try row.optionalString("description"), "description", max: ProjectsRules.maxMilestoneDescription)
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let isCompleted = try row.bool("is_completed", default: false), completedAt = try row.optionalDate("completed_at")
            if !isCompleted, completedAt != nil { writer.adjusted("completed_at on a milestone that is not completed: left out") }
            try await writer.connection.query("""
                INSERT INTO milestones (id, project_id, title, description, is_completed, target_date, completed_at, created_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("project_id")), \(title), \(description), \(isCompleted), \(try row.optionalLocalDate("target_date")),
                        \(Self.completion(isCompleted: isCompleted, completedAt: completedAt, createdAt: createdAt)), \(createdAt))
                """, logger: logger)
            return .imported
        }

        // Karma, action by action in time order, by the live rules.
        try await job.importRows("public.support_actions", from: source.rows("public", "support_actions", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id"), projectID = try row.uuid("project_id")
            try accounts.require(userID, "user_id")
            let type = try row.enumeration("action_type", SupportActionType.self)
            guard let owner = try await writer.connection.query("""
                SELECT b.user_id FROM projects p JOIN builders b ON b.id = p.builder_id WHERE p.id = \(projectID)
                """, logger: logger).firstValue(UUID.self) else { throw RowProblem("project_id \(projectID.lowercased) is not an imported project") }
            let metadata = try row.object("metadata")
            var points = ProjectPolicy.karmaPoints(for: type, isOwner: owner == userID)
            let subject: UUID? = switch type {
            case .follow: projectID
            case .like: metadata["post_id"]?.stringValue.flatMap(UUID.init(uuidString:))
            case .message: nil
            }
            if points > 0, let subject {
                let awarded = try await writer.connection.query("""
                    INSERT INTO karma_awards (user_id, kind, subject_id, awarded_at) VALUES (\(userID), \(type.rawValue)::support_action_type, \(subject), \(try row.optionalDate("created_at") ?? job.now))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger).collect()
                if awarded.isEmpty { points = 0 }  // that subject earned its karma before
            }
            try await writer.connection.query("""
                INSERT INTO support_actions (id, user_id, project_id, action_type, points_earned, metadata, created_at)
                VALUES (\(try row.uuid("id")), \(userID), \(projectID), \(type.rawValue)::support_action_type, \(points),
                        \(metadata.isEmpty ? nil : try ImportJSON.text(metadata))::jsonb, \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            if points > 0 { _ = try await builders.addKarma(userID, points: points, on: writer.connection) }
            return .imported
        }

        try await job.importRows("public.follows", from: source.rows("public", "follows", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id"), projectID = try row.uuid("project_id")
            try accounts.require(userID, "user_id")
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let inserted = try await writer.connection.query("""
                INSERT INTO follows (id, user_id, project_id, created_at) VALUES (\(try row.uuid("id")), \(userID), \(projectID), \(createdAt))
                ON CONFLICT (user_id, project_id) DO NOTHING RETURNING 1
                """, logger: logger).collect()
            guard !inserted.isEmpty else { throw RowProblem("a second follow of the same project by the same user") }
            try await writer.connection.query("UPDATE projects SET follower_count = follower_count + 1 WHERE id = \(projectID)", logger: logger)
            try await writer.connection.query("""
                INSERT INTO karma_awards (user_id, kind, subject_id, awarded_at) VALUES (\(userID), 'follow', \(projectID), \(createdAt)) ON CONFLICT DO NOTHING
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.likes", from: source.rows("public", "likes", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id"), postID = try row.uuid("post_id")
            try accounts.require(userID, "user_id")
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let inserted = try await writer.connection.query("""
                INSERT INTO likes (id, user_id, post_id, created_at) VALUES (\(try row.uuid("id")), \(userID), \(postID), \(createdAt))
                ON CONFLICT (user_id, post_id) DO NOTHING RETURNING 1
                """, logger: logger).collect()
            guard !inserted.isEmpty else { throw RowProblem("a second like of the same post by the same user") }
            try await writer.connection.query("UPDATE posts SET like_count = like_count + 1 WHERE id = \(postID)", logger: logger)
            try await writer.connection.query("""
                INSERT INTO karma_awards (user_id, kind, subject_id, awarded_at) VALUES (\(userID), 'like', \(postID), \(createdAt)) ON CONFLICT DO NOTHING
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.support_messages", from: source.rows("public", "support_messages", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            guard let message = writer.fit(try row.optionalString("message"), "message", max: ProjectsRules.maxSupportMessage) else {
                throw RowProblem("message is blank")
            }
            // A sender whose account is gone leaves the message anonymous (Colony's erasure).
            let sender = try row.optionalUUID("sender_id").flatMap(builder)
            let anonymous = try row.bool("is_anonymous", default: false) || sender == nil
            try await writer.connection.query("""
                INSERT INTO support_messages (id, project_id, sender_id, message, is_anonymous, created_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("project_id")), \(sender), \(message), \(anonymous), \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }
    }
}
