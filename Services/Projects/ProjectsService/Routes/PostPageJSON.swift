import ColonyModels
import Foundation
import NIOCore

/// A page of posts written straight into bytes, for the feed and a project's posts. The feed is
/// the app's busiest read, and Foundation's `JSONEncoder` (key conversion, key sorting, boxing
/// every value) was about a quarter of the service's CPU per page in colony-projects-bench. This
/// writes exactly what `ColonyJSON.encoder()` writes for a `PostPage`: the same keys in the same
/// sorted order, the same string escapes, upper-case UUIDs, ISO 8601 times with milliseconds,
/// absent optionals left out. A test holds the two byte for byte.
enum PostPageJSON {
    static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)
    static let lowerHex: [UInt8] = Array("0123456789abcdef".utf8)

    static func encode(_ page: PostPage) -> ByteBuffer {
        var writer = Writer(capacity: 64 + page.posts.count * 900)
        writer.raw("{")
        if let next = page.nextCursor {
            writer.key("next_cursor")
            writer.string(next)
            writer.raw(",")
        }
        writer.key("posts")
        writer.raw("[")
        for (index, post) in page.posts.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.post(post)
        }
        writer.raw("]}")
        return writer.buffer
    }

    struct Writer {
        var buffer: ByteBuffer

        init(capacity: Int) {
            buffer = ByteBufferAllocator().buffer(capacity: capacity)
        }

        mutating func raw(_ text: StaticString) {
            buffer.writeStaticString(text)
        }

        /// `"name":`
        mutating func key(_ name: StaticString) {
            buffer.writeInteger(UInt8(ascii: "\""))
            buffer.writeStaticString(name)
            buffer.writeStaticString("\":")
        }

        mutating func post(_ post: PostView) {
            raw("{")
            key("content"); string(post.content); raw(",")
            key("created_at"); date(post.createdAt); raw(",")
            key("id"); uuid(post.id); raw(",")
            key("images"); raw("[")
            for (index, image) in post.images.enumerated() {
                if index > 0 { raw(",") }
                string(image)
            }
            raw("],")
            key("like_count"); int(post.likeCount); raw(",")
            key("liked_by_me"); bool(post.likedByMe); raw(",")
            key("project"); project(post.project); raw(",")
            key("project_id"); uuid(post.projectId); raw(",")
            key("updated_at"); date(post.updatedAt)
            raw("}")
        }

        mutating func project(_ project: PostProject) {
            raw("{")
            key("builder"); builder(project.builder); raw(",")
            if let cover = project.coverImageUrl {
                key("cover_image_url"); string(cover); raw(",")
            }
            key("id"); uuid(project.id); raw(",")
            key("public_slug"); string(project.publicSlug); raw(",")
            key("title"); string(project.title)
            raw("}")
        }

        mutating func builder(_ builder: BuilderCard) {
            raw("{")
            if let avatar = builder.avatarUrl {
                key("avatar_url"); string(avatar); raw(",")
            }
            key("id"); uuid(builder.id); raw(",")
            key("name"); string(builder.name); raw(",")
            key("user_id"); uuid(builder.userId)
            raw("}")
        }

        mutating func bool(_ value: Bool) {
            if value { raw("true") } else { raw("false") }
        }

        mutating func int(_ value: Int) {
            buffer.writeString(String(value))
        }

        mutating func date(_ value: Date) {
            string(ISO8601.format(value))
        }

        /// Upper case, as `UUID.uuidString`.
        mutating func uuid(_ value: UUID) {
            let hex = PostPageJSON.upperHex
            buffer.writeInteger(UInt8(ascii: "\""))
            withUnsafeBytes(of: value.uuid) { bytes in
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 { buffer.writeInteger(UInt8(ascii: "-")) }
                    buffer.writeInteger(hex[Int(byte >> 4)])
                    buffer.writeInteger(hex[Int(byte & 0x0F)])
                }
            }
            buffer.writeInteger(UInt8(ascii: "\""))
        }

        /// A JSON string with Foundation's escapes: `"`, `\`, `/`, the named control characters,
        /// `\u00XX` for the other control characters; everything else as UTF-8.
        mutating func string(_ value: String) {
            buffer.writeInteger(UInt8(ascii: "\""))
            var utf8 = value
            utf8.withUTF8 { bytes in
                var start = 0
                for (index, byte) in bytes.enumerated() {
                    let escape: StaticString?
                    switch byte {
                    case UInt8(ascii: "\""): escape = "\\\""
                    case UInt8(ascii: "\\"): escape = "\\\\"
                    case UInt8(ascii: "/"): escape = "\\/"
                    case 0x0A: escape = "\\n"
                    case 0x0D: escape = "\\r"
                    case 0x09: escape = "\\t"
                    case 0x08: escape = "\\b"
                    case 0x0C: escape = "\\f"
                    case 0x00..<0x20: escape = nil
                    default: continue
                    }
                    buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index]))
                    if let escape {
                        buffer.writeStaticString(escape)
                    } else {
                        let hex = PostPageJSON.lowerHex
                        buffer.writeStaticString("\\u00")
                        buffer.writeInteger(hex[Int(byte >> 4)])
                        buffer.writeInteger(hex[Int(byte & 0x0F)])
                    }
                    start = index + 1
                }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
            }
            buffer.writeInteger(UInt8(ascii: "\""))
        }
    }
}
