import Foundation

// Unify's rows in the seed's shape (`unify.md`, section 1): the chat service answers with them
// and its events carry them, so the realtime service can present them as changes of the seed's
// tables (`message`, `group`, `group_members`, `event`).

public enum GroupRole: String, Codable, Sendable, CaseIterable {
    case owner
    case admin
    case user
}

public enum MessageType: String, Codable, Sendable, CaseIterable {
    case text
    case voice
}

/// `group`.
public struct GroupRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var ownerId: UUID
    public var pictureUrl: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, name: String, ownerId: UUID, pictureUrl: String?, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.name = name
        self.ownerId = ownerId
        self.pictureUrl = pictureUrl
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `group_members`.
public struct GroupMemberRow: Codable, Sendable, Equatable {
    public var groupId: UUID
    public var userId: UUID
    public var role: GroupRole
    public var joinedAt: Date
    public var lastReadAt: Date

    public init(groupId: UUID, userId: UUID, role: GroupRole, joinedAt: Date, lastReadAt: Date) {
        self.groupId = groupId
        self.userId = userId
        self.role = role
        self.joinedAt = joinedAt
        self.lastReadAt = lastReadAt
    }
}

/// `message`: text, or voice with its file's URL and duration in seconds.
public struct MessageRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var groupId: UUID
    public var content: String
    public var sentBy: UUID
    public var sentAt: Date
    public var isEdited: Bool
    public var messageType: MessageType
    public var voiceDuration: Double?
    public var voiceUrl: String?

    public init(id: UUID, groupId: UUID, content: String, sentBy: UUID, sentAt: Date, isEdited: Bool, messageType: MessageType, voiceDuration: Double?, voiceUrl: String?) {
        self.id = id
        self.groupId = groupId
        self.content = content
        self.sentBy = sentBy
        self.sentAt = sentAt
        self.isEdited = isEdited
        self.messageType = messageType
        self.voiceDuration = voiceDuration
        self.voiceUrl = voiceUrl
    }
}

/// `event`: a calendar event, personal when `groupId` is nil (visible to its creator only).
public struct CalendarEventRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var title: String
    public var details: String?
    public var startsAt: Date
    public var endsAt: Date
    public var groupId: UUID?
    public var createdBy: UUID
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, title: String, details: String?, startsAt: Date, endsAt: Date, groupId: UUID?, createdBy: UUID, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.title = title
        self.details = details
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.groupId = groupId
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
