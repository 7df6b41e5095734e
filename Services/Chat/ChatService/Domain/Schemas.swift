import ColonyModels
import Foundation

// What the domain answers with: the document's own types (Generated/), the seed's rows with
// storage keys turned into URLs and the joins the app makes (the sender's name on a message, my
// role and unread count on a group). Ids are lower-case text, as the document has them.
typealias Schemas = Components.Schemas

extension Schemas.GroupRole {
    init(_ role: GroupRole) {
        self = switch role {
        case .owner: .owner
        case .admin: .admin
        case .user: .user
        }
    }
}

extension Schemas.MessageType {
    init(_ type: MessageType) {
        self = switch type {
        case .text: .text
        case .voice: .voice
        }
    }
}

extension GroupRole {
    /// The role asked for (the owner's is refused by `Groups.setRole`: that is a transfer).
    init(_ role: Schemas.RoleChange.RolePayload) {
        self = switch role {
        case .owner: .owner
        case .admin: .admin
        case .user: .user
        }
    }
}

extension Schemas.CalendarEvent {
    init(_ event: CalendarEventRow) {
        self.init(id: event.id.lowercased, title: event.title, details: event.details, startsAt: event.startsAt, endsAt: event.endsAt,
                  groupId: event.groupId?.lowercased, createdBy: event.createdBy.lowercased, createdAt: event.createdAt, updatedAt: event.updatedAt)
    }
}

// A history page is the app's busiest read: written straight into bytes (see ColonyJSONWritable)
// by the page's fast path (`ChatAPI+HistoryFastPath.swift`), byte for byte what the generated route's
// encoder writes for it (ChatFastPathTests holds the two equal, ChatJSONTests the writer and
// ColonyJSON's encoder).
extension Schemas.HistoryPage: ColonyJSONWritable {
    var jsonCapacity: Int { 128 + messages.count * 512 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("has_more"); json.bool(hasMore)
        json.key("messages"); try json.array(messages) { try $1.writeJSON(to: &$0) }
        json.member("newer_cursor", newerCursor) { $0.string($1) }
        json.member("older_cursor", olderCursor) { $0.string($1) }
        json.raw("}")
    }
}

extension Schemas.Message: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("content"); json.string(content)
        json.member("cursor", cursor) { $0.string($1) }
        json.key("group_id"); json.string(groupId)
        json.key("id"); json.string(id)
        json.key("is_edited"); json.bool(isEdited)
        json.key("message_type"); json.string(messageType.rawValue)
        json.key("sent_at"); json.date(sentAt)
        json.key("sent_by"); json.string(sentBy)
        json.key("user"); json.raw("{")
        json.key("display_name"); json.string(user.displayName)
        json.key("id"); json.string(user.id)
        json.raw("}")
        try json.member("voice_duration", voiceDuration) { try $0.double($1) }
        json.member("voice_url", voiceUrl) { $0.string($1) }
        json.raw("}")
    }
}
