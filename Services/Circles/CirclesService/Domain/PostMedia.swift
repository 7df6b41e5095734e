import ColonyModels
import ColonyStorage
import Foundation
import NIOCore

/// Post photos: `{circle_id}/{post_id}` in a private bucket, as private as the circle: the URL
/// in posts (and their events and realtime rows) is stable, and only the circle's members fetch
/// it with their token or have it signed. Deleted with their post.
struct PostMedia: Sendable {
    let storage: Storage
    let photos: StorageBucket

    init(storage: Storage, photos: StorageBucket) {
        self.storage = storage
        self.photos = photos
    }

    /// The service's bucket as its settings size it.
    init(settings: CirclesSettings, storage: Storage) {
        self.init(storage: storage, photos: .images("post-photos", maxBytes: settings.maxPhotoBytes, isPublic: false))
    }

    static func key(circleID: UUID, postID: UUID) -> String { "\(circleID.uuidString.lowercased())/\(postID.uuidString.lowercased())" }

    func url(_ post: PostStore.Stored) -> String? {
        post.photoVersion.map { _ in storage.authenticatedURL(photos, key: Self.key(circleID: post.row.circleId, postID: post.row.id)) }
    }

    func upload(_ image: ByteBuffer, contentType: String?, circleID: UUID, postID: UUID) async throws -> StoredObject {
        try await storage.upload(image, contentType: contentType, to: photos, key: Self.key(circleID: circleID, postID: postID))
    }

    func remove(circleID: UUID, postID: UUID) async throws {
        try await storage.remove(photos, key: Self.key(circleID: circleID, postID: postID))
    }
}
