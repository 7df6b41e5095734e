import ColonyModels
import ColonyStorage
import Foundation

/// The seed's three buckets and how their files are named and addressed: profile pictures as
/// `{user_id}` and group pictures as `{group_id}` (public, with a `?v=` version so caches
/// refresh), voice messages as `{group_id}/{message_id}` in a private bucket, reached through
/// signed URLs that only members are handed.
struct ChatMedia: Sendable {
    let storage: Storage
    let profilePictures: StorageBucket
    let groupPictures: StorageBucket
    let voiceMessages: StorageBucket
    let voiceURLLifetime: Duration

    var buckets: [StorageBucket] { [profilePictures, groupPictures, voiceMessages] }

    init(storage: Storage, profilePictures: StorageBucket, groupPictures: StorageBucket, voiceMessages: StorageBucket, voiceURLLifetime: Duration) {
        self.storage = storage
        self.profilePictures = profilePictures
        self.groupPictures = groupPictures
        self.voiceMessages = voiceMessages
        self.voiceURLLifetime = voiceURLLifetime
    }

    /// The service's buckets as its settings size them.
    init(settings: ChatSettings, storage: Storage) {
        self.init(
            storage: storage,
            profilePictures: .images("profile-pictures", maxBytes: settings.maxImageBytes),
            groupPictures: .images("group-pictures", maxBytes: settings.maxImageBytes),
            voiceMessages: .audio("voice-messages", maxBytes: settings.maxVoiceBytes, isPublic: false),
            voiceURLLifetime: settings.voiceURLLifetime
        )
    }

    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }
    static func voiceKey(groupID: UUID, messageID: UUID) -> String { "\(key(groupID))/\(key(messageID))" }

    func avatarURL(_ userID: UUID, version: Int64?) -> String? {
        version.map { storage.publicURL(profilePictures, key: Self.key(userID), version: $0) }
    }

    func groupPictureURL(_ groupID: UUID, version: Int64?) -> String? {
        version.map { storage.publicURL(groupPictures, key: Self.key(groupID), version: $0) }
    }

    func voiceURL(_ path: String?) -> String? {
        path.map { storage.signedURL(voiceMessages, key: $0, expiresIn: voiceURLLifetime) }
    }
}
