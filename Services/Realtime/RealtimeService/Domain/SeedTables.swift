import ColonyModels

/// The tables the apps subscribe to, as their Supabase projects had them: every column with its
/// Postgres type name (what `columns` lists) and the primary key. A row change carries every
/// column (absent values as null, as Postgres sends them), and an UPDATE whose event does not
/// carry the previous row gets the primary key as `old_record`, as under Postgres's default
/// replica identity.
public struct SeedTable: Sendable {
    public var columns: [(name: String, type: String)]
    public var primaryKey: [String]

    init(_ columns: KeyValuePairs<String, String>, key: [String]) {
        self.columns = columns.map { (name: $0.key, type: $0.value) }
        self.primaryKey = key
    }

    /// The row with every column present (missing ones null), columns this table does not have
    /// dropped.
    public func complete(_ row: [String: JSONValue]) -> [String: JSONValue] {
        var complete: [String: JSONValue] = [:]
        for column in columns { complete[column.name] = row[column.name] ?? .null }
        return complete
    }

    /// The primary key's columns of a row.
    public func key(of row: [String: JSONValue]) -> [String: JSONValue] {
        var key: [String: JSONValue] = [:]
        for column in primaryKey { key[column] = row[column] ?? .null }
        return key
    }

    /// `columns` of a `postgres_changes` payload.
    public var columnsJSON: [JSONValue] {
        columns.map { .object(["name": .string($0.name), "type": .string($0.type)]) }
    }
}

public enum SeedTables {
    /// The tables of each app, by name.
    public static func table(_ name: String, of app: App) -> SeedTable? {
        switch app {
        case .unify: unify[name]
        case .mycirclee: mycirclee[name]
        case .habithive: habithive[name]
        default: nil
        }
    }

    static let unify: [String: SeedTable] = [
        "message": SeedTable(["id": "uuid", "group_id": "uuid", "content": "text", "sent_by": "uuid", "sent_at": "timestamptz", "is_edited": "bool",
                              "message_type": "text", "voice_duration": "float8", "voice_url": "text"], key: ["id"]),
        "group": SeedTable(["id": "uuid", "name": "text", "owner_id": "uuid", "picture_url": "text", "created_at": "timestamptz", "updated_at": "timestamptz"], key: ["id"]),
        "group_members": SeedTable(["user_id": "uuid", "group_id": "uuid", "role": "group_role", "joined_at": "timestamptz", "last_read_at": "timestamptz"],
                                   key: ["group_id", "user_id"]),
        "event": SeedTable(["id": "uuid", "title": "text", "details": "text", "starts_at": "timestamptz", "ends_at": "timestamptz", "group_id": "uuid",
                            "created_by": "uuid", "created_at": "timestamptz", "updated_at": "timestamptz"], key: ["id"]),
        // An erased account's row, as those who shared a group see it (never the email).
        "user": SeedTable(["id": "uuid", "display_name": "text"], key: ["id"]),
    ]

    static let mycirclee: [String: SeedTable] = [
        "circles": SeedTable(["id": "uuid", "name": "text", "created_by": "uuid", "created_at": "timestamptz"], key: ["id"]),
        "circle_members": SeedTable(["circle_id": "uuid", "user_id": "uuid", "role": "circle_role", "joined_at": "timestamptz"], key: ["circle_id", "user_id"]),
        "posts": SeedTable(["id": "uuid", "circle_id": "uuid", "author_id": "uuid", "type": "post_type", "body": "text", "mood": "text", "category": "text",
                            "urgency": "ask_urgency", "location": "text", "latitude": "float8", "longitude": "float8", "starts_at": "timestamptz",
                            "photo_url": "text", "expires_at": "timestamptz", "created_at": "timestamptz", "updated_at": "timestamptz"], key: ["id"]),
        "post_reactions": SeedTable(["post_id": "uuid", "user_id": "uuid", "emoji": "text", "created_at": "timestamptz"], key: ["post_id", "user_id", "emoji"]),
        "poll_votes": SeedTable(["option_id": "uuid", "user_id": "uuid", "post_id": "uuid", "created_at": "timestamptz"], key: ["post_id", "user_id"]),
        "event_rsvps": SeedTable(["post_id": "uuid", "user_id": "uuid", "status": "rsvp_status", "created_at": "timestamptz"], key: ["post_id", "user_id"]),
        "dm_threads": SeedTable(["id": "uuid", "circle_id": "uuid", "user_a": "uuid", "user_b": "uuid", "last_message_at": "timestamptz", "notify_a": "bool",
                                 "notify_b": "bool"], key: ["id"]),
        "dm_messages": SeedTable(["id": "uuid", "thread_id": "uuid", "sender_id": "uuid", "body": "text", "reply_to_id": "uuid", "created_at": "timestamptz",
                                  "read_at": "timestamptz"], key: ["id"]),
        "dm_reactions": SeedTable(["message_id": "uuid", "user_id": "uuid", "emoji": "text", "created_at": "timestamptz"], key: ["message_id", "user_id", "emoji"]),
        "presence_states": SeedTable(["user_id": "uuid", "circle_id": "uuid", "status": "presence_status", "updated_at": "timestamptz"], key: ["user_id", "circle_id"]),
    ]

    static let habithive: [String: SeedTable] = [
        "habit_logs": SeedTable(["id": "uuid", "habit_id": "uuid", "user_id": "uuid", "log_date": "date", "value": "int4", "source": "text",
                                 "created_at": "timestamptz"], key: ["id"]),
        "hives": SeedTable(["id": "uuid", "name": "text", "owner_id": "uuid", "color_hex": "text", "type": "habit_type", "target_per_day": "int4", "rule": "text",
                            "threshold": "int4", "schedule_daily": "bool", "schedule_weekmask": "int4", "current_length": "int4", "last_advanced_on": "date",
                            "source_habit_id": "uuid", "created_at": "timestamptz"], key: ["id"]),
        "hive_members": SeedTable(["hive_id": "uuid", "user_id": "uuid", "role": "text", "joined_at": "timestamptz"], key: ["hive_id", "user_id"]),
        "hive_member_days": SeedTable(["hive_id": "uuid", "user_id": "uuid", "day_date": "date", "value": "int4", "done": "bool"], key: ["hive_id", "user_id", "day_date"]),
        "hive_days": SeedTable(["hive_id": "uuid", "day_date": "date", "complete_count": "int4", "required_count": "int4", "advanced": "bool"], key: ["hive_id", "day_date"]),
        "activity_events": SeedTable(["id": "uuid", "actor_id": "uuid", "hive_id": "uuid", "habit_id": "uuid", "type": "activity_type", "data": "jsonb",
                                      "created_at": "timestamptz"], key: ["id"]),
        "hive_invitations": SeedTable(["id": "uuid", "hive_id": "uuid", "user_id": "uuid", "invited_by": "uuid", "status": "text", "created_at": "timestamptz",
                                       "decided_at": "timestamptz"], key: ["id"]),
    ]
}
