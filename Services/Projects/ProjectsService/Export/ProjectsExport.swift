import ColonyStorage

/// What projects exports of a user (`user_export_requested`): their builder profile and karma,
/// the projects they own with everything in them, what they did to others' projects (follows,
/// likes, support messages sent, support actions) and what reached them (support messages and
/// follow notices on their projects). Another person appears only by id, and an anonymous message
/// to them not even by that: anonymity holds in the export as in the app.
enum ProjectsExport {
    /// The user's projects: a project names its builder, not the builder's user.
    static let ownProjects = "SELECT p.id FROM projects p JOIN builders b ON b.id = p.builder_id WHERE b.user_id = $1"

    static func plan(media: ProjectsMedia) -> ExportPlan {
        ExportPlan(
            service: .projects,
            about: "I Believe In You: your builder profile and karma, your projects with their posts and milestones, the projects you follow, the posts you like, the support you gave and the support and follows your projects received.",
            tables: [
                ExportTable("builders", about: "Your builder profile.", sql: """
                    SELECT id, name, bio, avatar_version::text AS avatar_version, website_url, twitter_handle, is_creator, name_is_default, created_at, updated_at
                    FROM builders WHERE user_id = $1
                    """, fields: [
                        "id": "Your builder id (support messages name their sender by it).",
                        "name": "Your name as others see it.",
                        "bio": "Your bio.",
                        "avatar_version": "The version of your avatar, part of its file's name under files/builder-avatars/; empty when you have none.",
                        "website_url": "Your website.",
                        "twitter_handle": "Your Twitter handle.",
                        "is_creator": "Whether you said you build projects (rather than only support them).",
                        "name_is_default": "Whether your name was made from your email address and not yet chosen.",
                        "created_at": "When your profile was made.",
                        "updated_at": "When your profile last changed.",
                    ]),
                ExportTable("karma", about: "Your karma: points earned by supporting projects.", sql: """
                    SELECT id, total_points, level, created_at, updated_at FROM karma WHERE user_id = $1
                    """, fields: [
                        "id": "Your karma record's id.",
                        "total_points": "Your karma points.",
                        "level": "Your karma level (1 to 5) for those points.",
                        "created_at": "When your karma started.",
                        "updated_at": "When your karma last changed.",
                    ]),
                ExportTable("karma_awards", about: "Karma you were given once for following a project or liking a post (following or liking again earns nothing more).", sql: """
                    SELECT kind::text AS kind, subject_id, awarded_at FROM karma_awards WHERE user_id = $1 ORDER BY awarded_at
                    """, fields: [
                        "kind": "follow or like.",
                        "subject_id": "The project followed or the post liked.",
                        "awarded_at": "When the karma was given.",
                    ]),
                ExportTable("projects", about: "The projects you own.", sql: """
                    SELECT p.id, p.title, p.tagline, p.description, p.cover_version::text AS cover_version, p.public_slug, p.mood::text AS mood, p.follower_count,
                           p.is_published, p.created_at, p.updated_at
                    FROM projects p JOIN builders b ON b.id = p.builder_id WHERE b.user_id = $1 ORDER BY p.created_at, p.id
                    """, fields: [
                        "id": "The project's id.",
                        "title": "The project's title.",
                        "tagline": "The project's one-line pitch.",
                        "description": "The project's description.",
                        "cover_version": "The version of the project's cover, part of its file's name under files/project-covers/; empty when it has none.",
                        "public_slug": "The name in the project's public link.",
                        "mood": "How the project is going: green, yellow or red.",
                        "follower_count": "How many people follow the project.",
                        "is_published": "Whether others can see the project.",
                        "created_at": "When you created the project.",
                        "updated_at": "When the project last changed.",
                    ]),
                ExportTable("posts", about: "The updates you posted on your projects.", sql: """
                    SELECT id, project_id, content, images, like_count, created_at, updated_at
                    FROM posts WHERE project_id IN (\(ownProjects)) ORDER BY created_at, id
                    """, fields: [
                        "id": "The post's id.",
                        "project_id": "The project it is an update of.",
                        "content": "The post's text.",
                        "images": "The post's pictures, under files/post-images/.",
                        "like_count": "How many people like the post.",
                        "created_at": "When you posted it.",
                        "updated_at": "When you last edited it.",
                    ]),
                ExportTable("post_uploads", about: "Pictures you uploaded for a post not yet written (removed after a day).", sql: """
                    SELECT key, project_id, uploaded_at FROM post_uploads WHERE project_id IN (\(ownProjects)) ORDER BY uploaded_at, key
                    """, fields: [
                        "key": "The picture, under files/post-images/.",
                        "project_id": "The project it was uploaded for.",
                        "uploaded_at": "When you uploaded it.",
                    ]),
                ExportTable("milestones", about: "The milestones of your projects.", sql: """
                    SELECT id, project_id, title, description, is_completed, target_date, completed_at, created_at
                    FROM milestones WHERE project_id IN (\(ownProjects)) ORDER BY created_at, id
                    """, fields: [
                        "id": "The milestone's id.",
                        "project_id": "Its project.",
                        "title": "The milestone's title.",
                        "description": "The milestone's description.",
                        "is_completed": "Whether it is done.",
                        "target_date": "The day you aim to reach it.",
                        "completed_at": "When you marked it done.",
                        "created_at": "When you added it.",
                    ]),
                ExportTable("follows", about: "The projects you follow.", sql: """
                    SELECT id, project_id, created_at FROM follows WHERE user_id = $1 ORDER BY created_at, id
                    """, fields: [
                        "id": "The follow's id.",
                        "project_id": "The project you follow.",
                        "created_at": "When you followed it.",
                    ]),
                ExportTable("likes", about: "The posts you like.", sql: """
                    SELECT id, post_id, created_at FROM likes WHERE user_id = $1 ORDER BY created_at, id
                    """, fields: [
                        "id": "The like's id.",
                        "post_id": "The post you like.",
                        "created_at": "When you liked it.",
                    ]),
                ExportTable("support_messages_sent", about: "The support messages you sent to others' projects, anonymous ones included.", sources: ["support_messages"], sql: """
                    SELECT id, project_id, message, is_anonymous, created_at
                    FROM support_messages WHERE sender_id = (SELECT id FROM builders WHERE user_id = $1) ORDER BY created_at, id
                    """, fields: [
                        "id": "The message's id.",
                        "project_id": "The project you sent it to.",
                        "message": "What you wrote.",
                        "is_anonymous": "Whether you sent it anonymously (the project's owner was not told it was you).",
                        "created_at": "When you sent it.",
                    ]),
                // An anonymous message names no sender here either: its sender's id is the sender's secret.
                ExportTable("support_messages_received", about: "The support messages your projects received.", sources: ["support_messages"], sql: """
                    SELECT id, project_id, CASE WHEN is_anonymous THEN NULL ELSE sender_id END AS sender_id, message, is_anonymous, created_at
                    FROM support_messages WHERE project_id IN (\(ownProjects)) ORDER BY created_at, id
                    """, fields: [
                        "id": "The message's id.",
                        "project_id": "Your project it was sent to.",
                        "sender_id": "The sender's builder id; empty when the message is anonymous.",
                        "message": "What they wrote.",
                        "is_anonymous": "Whether it was sent anonymously.",
                        "created_at": "When it was sent.",
                    ]),
                ExportTable("support_actions", about: "Your support of projects (follows, messages, likes) and the karma each earned you.", sql: """
                    SELECT id, project_id, action_type::text AS action_type, points_earned, metadata, created_at
                    FROM support_actions WHERE user_id = $1 ORDER BY created_at, id
                    """, fields: [
                        "id": "The action's id.",
                        "project_id": "The project you supported.",
                        "action_type": "follow, message or like.",
                        "points_earned": "The karma it earned you.",
                        "metadata": "What the action was about (the message or post id).",
                        "created_at": "When you did it.",
                    ]),
                ExportTable("follow_notices", about: "Follows announced to a project's owner: your follows of others' projects, and others' follows of your projects.", sql: """
                    SELECT user_id AS follower_id, project_id, notified_at FROM follow_notices
                    WHERE user_id = $1 OR project_id IN (\(ownProjects)) ORDER BY notified_at
                    """, fields: [
                        "follower_id": "Who followed (your own user id for your follows).",
                        "project_id": "The project followed.",
                        "notified_at": "When the project's owner was last told of the follow.",
                    ]),
                .blocks,
                .reportsFiled,
            ],
            files: [
                ExportFiles(media.avatars, about: "your avatar", sql: """
                    SELECT \(PictureKey.sql(owner: "id", version: "avatar_version")) FROM builders WHERE user_id = $1 AND avatar_version IS NOT NULL
                    """),
                ExportFiles(media.covers, about: "your projects' covers", sql: """
                    SELECT \(PictureKey.sql(owner: "id", version: "cover_version")) FROM projects WHERE id IN (\(ownProjects)) AND cover_version IS NOT NULL
                    """),
                ExportFiles(media.postImages, about: "the pictures of your posts, and those uploaded for posts not yet written", sql: """
                    SELECT unnest(images) FROM posts WHERE project_id IN (\(ownProjects))
                    UNION SELECT key FROM post_uploads WHERE project_id IN (\(ownProjects))
                    """),
            ],
            // The platform's tables (outbox, inbox...) are `ExportPlan.platformTables`.
            notExported: ["deleted_users": "ids of erased accounts only"]
        )
    }
}
