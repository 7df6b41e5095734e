import ColonyModels
import Foundation

/// Which row operations a `postgres_changes` binding listens to.
public enum ChangeEvent: String, Sendable, Equatable {
    case all = "*"
    case insert = "INSERT"
    case update = "UPDATE"
    case delete = "DELETE"

    public func matches(_ operation: RowOperation) -> Bool {
        switch self {
        case .all: true
        case .insert: operation == .insert
        case .update: operation == .update
        case .delete: operation == .delete
        }
    }
}

/// A `postgres_changes` filter, `column=op.value`, with the operators Supabase supports.
public struct RowFilter: Sendable, Equatable {
    public enum Operator: String, Sendable, CaseIterable {
        case eq, neq, lt, lte, gt, gte, `in`
    }

    public var column: String
    public var op: Operator
    /// One value, or several for `in`.
    public var values: [String]

    public init(column: String, op: Operator, values: [String]) {
        self.column = column
        self.op = op
        self.values = values
    }

    /// Parses `group_id=eq.5`, `age=gte.18`, `status=in.(a,b,"c d")`.
    public static func parse(_ text: String) throws(PhoenixProtocolError) -> RowFilter {
        guard let equals = text.firstIndex(of: "=") else { throw PhoenixProtocolError("Error parsing `filter` params: \(text)") }
        let column = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
        let rest = text[text.index(after: equals)...]
        guard !column.isEmpty, let dot = rest.firstIndex(of: "."), let op = Operator(rawValue: String(rest[..<dot])) else {
            throw PhoenixProtocolError("Error parsing `filter` params: \(text)")
        }
        let value = String(rest[rest.index(after: dot)...])
        if op == .in {
            guard value.hasPrefix("("), value.hasSuffix(")") else { throw PhoenixProtocolError("Error parsing `filter` params: \(text)") }
            let inner = value.dropFirst().dropLast()
            let items = inner.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard !items.isEmpty, items.count <= 100 else { throw PhoenixProtocolError("Error parsing `filter` params: \(text)") }
            return RowFilter(column: column, op: op, values: items)
        }
        return RowFilter(column: column, op: op, values: [value])
    }

    /// Whether a row passes. A missing column passes nothing.
    public func matches(_ row: [String: JSONValue]) -> Bool {
        guard let cell = row[column], let value = values.first else { return false }
        switch op {
        case .eq: return Self.compare(cell, value) == .orderedSame
        case .neq: return Self.compare(cell, value).map { $0 != .orderedSame } ?? (cell != .null)
        case .lt: return Self.compare(cell, value) == .orderedAscending
        case .lte: return Self.compare(cell, value).map { $0 != .orderedDescending } ?? false
        case .gt: return Self.compare(cell, value) == .orderedDescending
        case .gte: return Self.compare(cell, value).map { $0 != .orderedAscending } ?? false
        case .in: return values.contains { Self.compare(cell, $0) == .orderedSame }
        }
    }

    /// Compares a cell with a filter value the way Postgres would for the cell's type; nil when
    /// they cannot be compared (SQL's NULL).
    static func compare(_ cell: JSONValue, _ value: String) -> ComparisonResult? {
        switch cell {
        case .null:
            return nil
        case .number(let number):
            // `nan` parses, and compares neither less nor greater: it would equal every number.
            guard let other = Double(value), !other.isNaN else { return nil }
            return number < other ? .orderedAscending : number > other ? .orderedDescending : .orderedSame
        case .bool(let flag):
            guard let other = Bool(value.lowercased()) ?? (value == "t" ? true : value == "f" ? false : nil) else { return nil }
            return flag == other ? .orderedSame : (!flag ? .orderedAscending : .orderedDescending)
        case .string(let text):
            // UUIDs compare by value (supabase-swift sends them upper-case); timestamps by instant.
            if text.count == 36, let left = UUID(uuidString: text), let right = UUID(uuidString: value) {
                return left == right ? .orderedSame : (left.uuidString < right.uuidString ? .orderedAscending : .orderedDescending)
            }
            if let left = ISO8601.parse(text), let right = ISO8601.parse(value) {
                return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
            }
            return text < value ? .orderedAscending : text > value ? .orderedDescending : .orderedSame
        case .array, .object:
            return JSONText.encode(cell) == value ? .orderedSame : nil
        }
    }
}

/// One entry of a join's `config.postgres_changes`, with the id the server gives it.
public struct PostgresChangeBinding: Sendable, Equatable {
    public var event: ChangeEvent
    public var schema: String
    public var table: String?
    public var filterText: String?
    public var filter: RowFilter?
    public var id: Int

    /// Parses one binding from a join's config.
    public static func parse(_ value: JSONValue) throws(PhoenixProtocolError) -> PostgresChangeBinding {
        guard case .object(let object) = value else { throw PhoenixProtocolError("postgres_changes entries must be objects") }
        let eventText = object["event"]?.stringValue ?? "*"
        guard let event = ChangeEvent(rawValue: eventText.uppercased()) else {
            throw PhoenixProtocolError("Error parsing `event` params: \(eventText)")
        }
        let schema = object["schema"]?.stringValue ?? "public"
        let table = object["table"]?.stringValue.flatMap { $0 == "*" || $0.isEmpty ? nil : $0 }
        let filterText = object["filter"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let filter = try filterText.map { text throws(PhoenixProtocolError) in try RowFilter.parse(text) }
        var binding = PostgresChangeBinding(event: event, schema: schema, table: table, filterText: filterText, filter: filter, id: 0)
        binding.id = binding.stableID(eventText: eventText)
        return binding
    }

    /// A small positive id derived from the parameters (Supabase uses a hash of them as well).
    func stableID(eventText: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in "\(eventText)|\(schema)|\(table ?? "*")|\(filterText ?? "")".utf8 {
            hash = (hash ^ UInt32(byte)) &* 16_777_619
        }
        return Int(hash & 0x7FF_FFFF)
    }

    /// The binding as the join reply lists it: the client's parameters plus `id`.
    public var replyJSON: JSONValue {
        var object: [String: JSONValue] = [
            "id": .number(Double(id)),
            "event": .string(event.rawValue),
            "schema": .string(schema),
            "table": .string(table ?? "*"),
        ]
        if let filterText { object["filter"] = .string(filterText) }
        return .object(object)
    }

    public func matches(_ change: RowChange) -> Bool {
        guard event.matches(change.operation) else { return false }
        guard schema == "*" || schema == RowChange.schema else { return false }
        if let table, table != change.table { return false }
        if let filter {
            // Deletes are filtered on the old row (Supabase needs REPLICA IDENTITY FULL for that).
            return filter.matches(change.operation == .delete ? change.oldRecord : change.record)
        }
        return true
    }
}

/// A join's `config`: broadcast options, the presence key, the postgres_changes bindings.
public struct JoinConfig: Sendable, Equatable {
    public var broadcastSelf: Bool
    public var broadcastAck: Bool
    public var presenceKey: String?
    public var presenceEnabled: Bool
    public var postgresChanges: [PostgresChangeBinding]
    public var isPrivate: Bool

    public static func parse(_ payload: JSONValue, maxBindings: Int = 20) throws(PhoenixProtocolError) -> JoinConfig {
        let config = payload["config"]?.objectValue ?? [:]
        let broadcast = config["broadcast"]?.objectValue ?? [:]
        let presence = config["presence"]?.objectValue
        let entries = config["postgres_changes"]?.arrayValue ?? []
        // Counted before any is parsed: a join with thousands of them costs nothing.
        guard entries.count <= maxBindings else { throw PhoenixProtocolError(RealtimeQuotas.tooManyBindings(maxBindings)) }
        var bindings: [PostgresChangeBinding] = []
        for entry in entries {
            bindings.append(try PostgresChangeBinding.parse(entry))
        }
        let key = presence?["key"]?.stringValue
        return JoinConfig(
            broadcastSelf: broadcast["self"]?.boolValue ?? false,
            broadcastAck: broadcast["ack"]?.boolValue ?? false,
            presenceKey: key?.isEmpty == false ? key : nil,
            presenceEnabled: presence != nil && presence?["enabled"]?.boolValue != false,
            postgresChanges: bindings,
            isPrivate: config["private"]?.boolValue ?? false
        )
    }
}

/// A row change as subscribers see it: the seed's table, the operation, the new and old row.
public struct RowChange: Sendable, Equatable {
    /// Every table is presented in `public`, as the apps' Supabase projects had them.
    public static let schema = "public"

    public var app: App
    public var table: String
    public var operation: RowOperation
    public var record: [String: JSONValue]
    public var oldRecord: [String: JSONValue]
    public var commitTimestamp: Date
    public var audience: Audience
    /// The table's columns with their types (`SeedTables`); nil: guessed from the row.
    public var columns: [JSONValue]?

    public init(app: App, table: String, operation: RowOperation, record: [String: JSONValue], oldRecord: [String: JSONValue] = [:], commitTimestamp: Date, audience: Audience,
                columns: [JSONValue]? = nil) {
        self.app = app
        self.table = table
        self.operation = operation
        self.record = record
        self.oldRecord = oldRecord
        self.commitTimestamp = commitTimestamp
        self.audience = audience
        self.columns = columns
    }

    /// `data` of a `postgres_changes` push. Carries the wire names (`type`, `record`, `old_record`,
    /// which the clients read) and the client-side names (`eventType`, `new`, `old`).
    public var dataJSON: JSONValue {
        let newRow: JSONValue = operation == .delete ? .object([:]) : .object(record)
        let oldRow: JSONValue = .object(oldRecord)
        var data: [String: JSONValue] = [
            "schema": .string(Self.schema),
            "table": .string(table),
            "commit_timestamp": .string(ISO8601.format(commitTimestamp)),
            "type": .string(operation.rawValue),
            "eventType": .string(operation.rawValue),
            "columns": .array(columns ?? Self.columns(of: operation == .delete ? oldRecord : record)),
            "errors": .null,
            "new": newRow,
            "old": oldRow,
        ]
        if operation != .delete { data["record"] = newRow }
        if operation != .insert { data["old_record"] = oldRow }
        return .object(data)
    }

    /// The payload JSON without `ids` and its closing brace: `{"data":{…},"ids":` (ids appended per socket).
    public var payloadPrefix: String {
        "{\"data\":\(JSONText.encode(dataJSON)),\"ids\":"
    }

    /// `columns`: names with Postgres type names guessed from the JSON values.
    static func columns(of row: [String: JSONValue]) -> [JSONValue] {
        row.sorted(by: { $0.key < $1.key }).map { name, value in
            let type: String
            switch value {
            case .bool: type = "bool"
            case .number(let number): type = number == number.rounded() ? "int8" : "float8"
            case .string(let text):
                if text.count == 36, UUID(uuidString: text) != nil { type = "uuid" } else if ISO8601.parse(text) != nil { type = "timestamptz" } else { type = "text" }
            case .array, .object: type = "jsonb"
            case .null: type = "text"
            }
            return .object(["name": .string(name), "type": .string(type)])
        }
    }
}

/// Who may see a row change: the members of a group, circle or hive (from the projection), plus
/// named users; or every subscriber of the app (SocialSpot's map shows rounded positions only).
public struct Audience: Sendable, Equatable {
    public typealias Scope = MembershipScope

    public var scope: (kind: Scope, id: UUID)?
    public var users: Set<UUID>
    public var wholeApp: Bool
    /// Never shown to these, whatever the rest says: those who blocked the change's author.
    public var withheldFrom: Set<UUID> = []

    public static func members(_ kind: Scope, _ id: UUID, plus users: [UUID] = []) -> Audience {
        Audience(scope: (kind, id), users: Set(users), wholeApp: false)
    }

    public static func only(_ users: [UUID]) -> Audience {
        Audience(scope: nil, users: Set(users), wholeApp: false)
    }

    public static let everyone = Audience(scope: nil, users: [], wholeApp: true)

    public static func == (lhs: Audience, rhs: Audience) -> Bool {
        lhs.scope?.kind == rhs.scope?.kind && lhs.scope?.id == rhs.scope?.id && lhs.users == rhs.users && lhs.wholeApp == rhs.wholeApp
            && lhs.withheldFrom == rhs.withheldFrom
    }
}
