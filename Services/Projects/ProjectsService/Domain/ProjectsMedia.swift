import ColonyModels
import ColonyStorage
import Foundation

/// The service's three public buckets and how their files are named: avatars and covers under
/// per-upload keys `{builder_id}/{version}` and `{project_id}/{version}` (`PictureKey`: not to be
/// found from an id, gone once replaced), post pictures as `{project_id}/{image_id}` (a UUIDv7:
/// 74 random bits, never replaced; the version is its time).
struct ProjectsMedia: Sendable {
    let storage: Storage
    let avatars: StorageBucket
    let covers: StorageBucket
    let postImages: StorageBucket

    init(storage: Storage, maxImageBytes: Int) {
        self.storage = storage
        self.avatars = .images("builder-avatars", maxBytes: maxImageBytes)
        self.covers = .images("project-covers", maxBytes: maxImageBytes)
        self.postImages = .images("post-images", maxBytes: maxImageBytes)
    }

    var buckets: [StorageBucket] { [avatars, covers, postImages] }

    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }
    static func imageKey(projectID: UUID, imageID: UUID) -> String { "\(key(projectID))/\(key(imageID))" }

    func avatarURL(_ builderID: UUID, version: Int64?) -> String? {
        storage.pictureURL(avatars, owner: builderID, version: version)
    }

    func coverURL(_ projectID: UUID, version: Int64?) -> String? {
        storage.pictureURL(covers, owner: projectID, version: version)
    }

    func imageURL(_ key: String) -> String {
        let version = key.split(separator: "/").last.flatMap { UUID(uuidString: String($0))?.timeOrderedDate }.map { Int64($0.timeIntervalSince1970 * 1000) }
        return storage.publicURL(postImages, key: key, version: version)
    }

    /// The key of a post picture given as a key or as the URL `imageURL` made, if it is one of
    /// this project's (`{project_id}/{uuid}`); nil otherwise.
    func imageKey(_ text: String, projectID: UUID) -> String? {
        var value = text
        let marker = "/storage/v1/object/public/\(postImages.name)/"
        if let range = value.range(of: marker) {
            value = String(value[range.upperBound...])
            if let query = value.firstIndex(of: "?") { value = String(value[..<query]) }
        }
        let parts = value.lowercased().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == Self.key(projectID), let image = UUID(uuidString: String(parts[1])) else { return nil }
        return Self.imageKey(projectID: projectID, imageID: image)
    }
}
