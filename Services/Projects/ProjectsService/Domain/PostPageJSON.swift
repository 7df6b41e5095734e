import ColonyModels
import Foundation

// A page of posts (the document's `PostPage`) written straight into bytes (see
// ColonyJSONWritable): the feed is the app's busiest read, and Foundation's encoder (what the
// generated route writes answers with) costs several times this per page in
// colony-projects-bench, so the feed's fast path (`ProjectsAPI.fastPaths`) writes it so. Byte for
// byte what the generated route writes; ProjectsFastPathTests holds the two equal.
extension Components.Schemas.PostPage: ColonyJSONWritable {
    var jsonCapacity: Int { 64 + posts.count * 900 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.member("next_cursor", nextCursor) { $0.string($1) }
        json.key("posts"); json.array(posts) { $1.write(to: &$0) }
        json.raw("}")
    }
}

extension Components.Schemas.Post {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.key("content"); json.string(content)
        json.key("created_at"); json.date(createdAt)
        json.key("id"); json.string(id)
        json.key("images"); json.array(images) { $0.string($1) }
        json.key("like_count"); json.int(likeCount)
        json.key("liked_by_me"); json.bool(likedByMe)
        json.key("project"); project.write(to: &json)
        json.key("project_id"); json.string(projectId)
        json.key("updated_at"); json.date(updatedAt)
        json.raw("}")
    }
}

extension Components.Schemas.PostProject {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.key("builder"); builder.write(to: &json)
        json.member("cover_image_url", coverImageUrl) { $0.string($1) }
        json.key("id"); json.string(id)
        json.key("public_slug"); json.string(publicSlug)
        json.key("title"); json.string(title)
        json.raw("}")
    }
}

extension Components.Schemas.BuilderCard {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.member("avatar_url", avatarUrl) { $0.string($1) }
        json.key("id"); json.string(id)
        json.key("name"); json.string(name)
        json.key("user_id"); json.string(userId)
        json.raw("}")
    }
}
