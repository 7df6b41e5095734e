import ColonyModels
import ColonyStorage
import Foundation

/// The seed's three buckets and how their files are named and addressed: profile and group
/// pictures under per-upload keys `{user_id}/{version}` and `{group_id}/{version}` (`PictureKey`:
/// public, but not to be found from an id, and gone once replaced); voice messages as
/// `{group_id}/{message_id}` in a private bucket, with a stable authenticated URL that the
/// group's members (only) fetch with their token or have signed.
struct ChatMedia: Sendable {
    let storage: Storage
    let profilePictures: StorageBucket
    let groupPictures: StorageBucket
    let voiceMessages: StorageBucket

    var buckets: [StorageBucket] { [profilePictures, groupPictures, voiceMessages] }

    init(storage: Storage, profilePictures: StorageBucket, groupPictures: StorageBucket, voiceMessages: StorageBucket) {
        self.storage = storage
        self.profilePictures = profilePictures
        self.groupPictures = groupPictures
        self.voiceMessages = voiceMessages
    }

    /// The service's buckets as its settings size them.
    init(settings: ChatSettings, storage: Storage) {
        self.init(
            storage: storage,
            profilePictures: .images("profile-pictures", maxBytes: settings.maxImageBytes),
            groupPictures: .images("group-pictures", maxBytes: settings.maxImageBytes),
            voiceMessages: .audio("voice-messages", maxBytes: settings.maxVoiceBytes, isPublic: false)
        )
    }

    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }
    static func voiceKey(groupID: UUID, messageID: UUID) -> String { "\(key(groupID))/\(key(messageID))" }

    func avatarURL(_ userID: UUID, version: Int64?) -> String? {
        storage.pictureURL(profilePictures, owner: userID, version: version)
    }

    func groupPictureURL(_ groupID: UUID, version: Int64?) -> String? {
        storage.pictureURL(groupPictures, owner: groupID, version: version)
    }

    /// Stable (rows carrying it are cached for days): members fetch it with their token.
    func voiceURL(_ path: String?) -> String? {
        path.map { storage.authenticatedURL(voiceMessages, key: $0) }
    }
}
