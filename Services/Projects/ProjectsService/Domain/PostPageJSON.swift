import ColonyModels
import Foundation

// A page of posts (the feed, a project's posts) written straight into bytes (see
// ColonyJSONWritable): the feed is the app's busiest read, and encoding it through a tree was
// about a quarter of the service's CPU per page in colony-projects-bench. Byte for byte what
// ColonyJSON's encoder writes for it; a test holds the two equal.
extension PostPage: ColonyJSONWritable {
    var jsonCapacity: Int { 64 + posts.count * 900 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.member("next_cursor", nextCursor) { $0.string($1) }
        json.key("posts"); json.array(posts) { $1.write(to: &$0) }
        json.raw("}")
    }
}

extension PostView {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.key("content"); json.string(content)
        json.key("created_at"); json.date(createdAt)
        json.key("id"); json.uuid(id)
        json.key("images"); json.array(images) { $0.string($1) }
        json.key("like_count"); json.int(likeCount)
        json.key("liked_by_me"); json.bool(likedByMe)
        json.key("project"); project.write(to: &json)
        json.key("project_id"); json.uuid(projectId)
        json.key("updated_at"); json.date(updatedAt)
        json.raw("}")
    }
}

extension PostProject {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.key("builder"); builder.write(to: &json)
        json.member("cover_image_url", coverImageUrl) { $0.string($1) }
        json.key("id"); json.uuid(id)
        json.key("public_slug"); json.string(publicSlug)
        json.key("title"); json.string(title)
        json.raw("}")
    }
}

extension BuilderCard {
    func write(to json: inout JSONBytesWriter) {
        json.raw("{")
        json.member("avatar_url", avatarUrl) { $0.string($1) }
        json.key("id"); json.uuid(id)
        json.key("name"); json.string(name)
        json.key("user_id"); json.uuid(userId)
        json.raw("}")
    }
}
