import ColonyModels
import Foundation

/// One source row as `to_jsonb` gave it: columns by name. The accessors read a column as the
/// type Colony needs and throw `RowProblem` (the row is reported and skipped) when it is
/// missing where required or not of that type. Columns a project lacks read as absent, so an
/// optional column added to the seed's table later does not break older projects.
public struct SourceRow: Sendable {
    public let table: String
    public let values: [String: JSONValue]

    public init(table: String, values: [String: JSONValue]) {
        self.table = table
        self.values = values
    }

    public func has(_ column: String) -> Bool { values[column] != nil && values[column] != .null }

    public func uuid(_ column: String) throws(RowProblem) -> UUID {
        guard let value = try optionalUUID(column) else { throw RowProblem("\(column) is missing") }
        return value
    }

    public func optionalUUID(_ column: String) throws(RowProblem) -> UUID? {
        guard let text = try optionalString(column) else { return nil }
        guard let id = UUID(uuidString: text) else { throw RowProblem("\(column) \"\(text.prefix(60))\" is not a UUID") }
        return id
    }

    public func string(_ column: String) throws(RowProblem) -> String {
        guard let value = try optionalString(column) else { throw RowProblem("\(column) is missing") }
        return value
    }

    /// Text, or a number or boolean written as text; nil for null or absent.
    public func optionalString(_ column: String) throws(RowProblem) -> String? {
        switch values[column] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case .number(let number)?: return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let flag)?: return flag ? "true" : "false"
        default: throw RowProblem("\(column) is not text")
        }
    }

    /// Text with surrounding whitespace trimmed; nil when blank.
    public func text(_ column: String) throws(RowProblem) -> String? {
        guard let value = try optionalString(column)?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    public func int(_ column: String, default defaultValue: Int? = nil) throws(RowProblem) -> Int {
        guard let value = try optionalInt(column) ?? defaultValue else { throw RowProblem("\(column) is missing") }
        return value
    }

    public func optionalInt(_ column: String) throws(RowProblem) -> Int? {
        switch values[column] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard number == number.rounded(), abs(number) < 1e15 else { throw RowProblem("\(column) \(number) is not an integer") }
            return Int(number)
        case .string(let text)?:
            guard let number = Int(text) else { throw RowProblem("\(column) \"\(text.prefix(60))\" is not an integer") }
            return number
        default: throw RowProblem("\(column) is not an integer")
        }
    }

    public func optionalDouble(_ column: String) throws(RowProblem) -> Double? {
        switch values[column] {
        case nil, .null?: return nil
        case .number(let number)?: return number
        case .string(let text)?:
            guard let number = Double(text), number.isFinite else { throw RowProblem("\(column) \"\(text.prefix(60))\" is not a number") }
            return number
        default: throw RowProblem("\(column) is not a number")
        }
    }

    public func bool(_ column: String, default defaultValue: Bool) throws(RowProblem) -> Bool {
        switch values[column] {
        case nil, .null?: return defaultValue
        case .bool(let flag)?: return flag
        case .string(let text)? where ["true", "t"].contains(text.lowercased()): return true
        case .string(let text)? where ["false", "f"].contains(text.lowercased()): return false
        default: throw RowProblem("\(column) is not a boolean")
        }
    }

    public func date(_ column: String) throws(RowProblem) -> Date {
        guard let value = try optionalDate(column) else { throw RowProblem("\(column) is missing") }
        return value
    }

    /// A `timestamptz` (or `timestamp`, read as UTC) as `to_jsonb` writes it.
    public func optionalDate(_ column: String) throws(RowProblem) -> Date? {
        guard let text = try optionalString(column) else { return nil }
        guard let date = SourceTimestamp.parse(text) else { throw RowProblem("\(column) \"\(text.prefix(60))\" is not a timestamp") }
        return date
    }

    /// A `date` column (`YYYY-MM-DD`).
    public func optionalLocalDate(_ column: String) throws(RowProblem) -> LocalDate? {
        guard let text = try optionalString(column) else { return nil }
        guard let day = LocalDate(String(text.prefix(10))) else { throw RowProblem("\(column) \"\(text.prefix(60))\" is not a date") }
        return day
    }

    public func localDate(_ column: String) throws(RowProblem) -> LocalDate {
        guard let value = try optionalLocalDate(column) else { throw RowProblem("\(column) is missing") }
        return value
    }

    /// A `text[]` column; absent or null is empty.
    public func stringArray(_ column: String) throws(RowProblem) -> [String] {
        switch values[column] {
        case nil, .null?: return []
        case .array(let items)?:
            return try items.map { item throws(RowProblem) -> String in
                guard case .string(let text) = item else { throw RowProblem("\(column) holds a value that is not text") }
                return text
            }
        default: throw RowProblem("\(column) is not an array")
        }
    }

    /// A column holding one of an enum's values (case-insensitive); `aliases` map the source's
    /// other spellings. nil when absent, a `RowProblem` when it is none of them.
    public func optionalEnumeration<Value: RawRepresentable>(_ column: String, _: Value.Type, aliases: [String: Value] = [:]) throws(RowProblem) -> Value?
    where Value.RawValue == String {
        guard let text = try optionalString(column)?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty else { return nil }
        guard let value = Value(rawValue: text) ?? aliases[text] else { throw RowProblem("\(column) \"\(text.prefix(40))\" is not an accepted value") }
        return value
    }

    public func enumeration<Value: RawRepresentable>(_ column: String, _ type: Value.Type, default defaultValue: Value? = nil, aliases: [String: Value] = [:]) throws(RowProblem) -> Value
    where Value.RawValue == String {
        guard let value = try optionalEnumeration(column, type, aliases: aliases) ?? defaultValue else { throw RowProblem("\(column) is missing") }
        return value
    }

    public func json(_ column: String) -> JSONValue? {
        guard let value = values[column], value != .null else { return nil }
        return value
    }

    public func object(_ column: String) throws(RowProblem) -> [String: JSONValue] {
        switch values[column] {
        case nil, .null?: return [:]
        case .object(let object)?: return object
        // A json column written as text.
        case .string(let text)?:
            guard let object = try? ColonyJSON.decoder().decode([String: JSONValue].self, from: Data(text.utf8)) else { throw RowProblem("\(column) is not a JSON object") }
            return object
        default: throw RowProblem("\(column) is not a JSON object")
        }
    }
}

/// Why one row cannot come over; the report shows it with the row's id.
public struct RowProblem: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Postgres timestamps as `to_jsonb` and `pg_dump` write them: `2024-01-02T03:04:05.123456+00:00`,
/// `2024-01-02 03:04:05+00`, without a zone for `timestamp` (UTC), any number of fraction digits.
public enum SourceTimestamp {
    public static func parse(_ text: String) -> Date? {
        var value = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "T")
        guard value.count >= 19 else { return nil }
        // Split off the zone: Z, or ±HH[:MM] after the time.
        var zone = "Z"
        let timeStart = value.index(value.startIndex, offsetBy: 11)
        if value.hasSuffix("Z") {
            value.removeLast()
        } else if let sign = value[timeStart...].lastIndex(where: { $0 == "+" || $0 == "-" }) {
            zone = String(value[sign...])
            value = String(value[..<sign])
            if zone.count == 3 { zone += ":00" }
            if zone.count == 5, !zone.contains(":") { zone.insert(":", at: zone.index(zone.startIndex, offsetBy: 3)) }
        }
        var fraction = ""
        if let dot = value.firstIndex(of: ".") {
            fraction = String(value[value.index(after: dot)...])
            value = String(value[..<dot])
        }
        guard fraction.allSatisfy(\.isNumber) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let whole = formatter.date(from: value + zone) else { return nil }
        let seconds = fraction.isEmpty ? 0 : (Double("0." + fraction) ?? 0)
        return whole.addingTimeInterval(seconds)
    }
}

/// JSON text for a `jsonb` parameter.
public enum ImportJSON {
    public static func text(_ value: some Encodable) throws -> String {
        String(decoding: try ColonyJSON.encoder().encode(value), as: UTF8.self)
    }
}
