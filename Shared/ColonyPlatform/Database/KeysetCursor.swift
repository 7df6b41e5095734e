import ColonyModels
import Foundation

/// A position in a list ordered by a timestamp and an id (newest-first feeds, message
/// histories): the timestamp in whole microseconds since 1970 — Postgres's own precision, so
/// comparisons are exact — and the id as tie-breaker. Clients see it as `"<micros>_<uuid>"`.
public struct KeysetCursor: Sendable, Equatable, Comparable {
    public var micros: Int64
    public var id: UUID

    public init(micros: Int64, id: UUID) {
        self.micros = micros
        self.id = id
    }

    public init?(_ text: String) {
        let parts = text.split(separator: "_", maxSplits: 1)
        // Digits only (no sign), at most 18 of them: the documents' `^[0-9]{1,18}_<uuid>$` exactly.
        guard parts.count == 2, (1...18).contains(parts[0].utf8.count), parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
              let micros = Int64(parts[0]), let id = UUID(canonical: parts[1]) else { return nil }
        self.init(micros: micros, id: id)
    }

    /// `"<micros>_<uuid>"`, written into one string: every message of a history page and every
    /// card of a feed carries one, and interpolation cost about 2,500 instructions each.
    public var text: String {
        String(unsafeUninitializedCapacity: 20 + 1 + 36) { buffer in
            let digits = micros.decimalBytes(into: buffer)
            buffer[digits] = UInt8(ascii: "_")
            id.writeCanonical(into: buffer, from: digits + 1, upperCase: false)
            return digits + 37
        }
    }

    /// Postgres's order of `(timestamp, id)`: the time, then the id's bytes (as `uuid` compares).
    public static func < (a: KeysetCursor, b: KeysetCursor) -> Bool {
        if a.micros != b.micros { return a.micros < b.micros }
        return withUnsafeBytes(of: a.id.uuid) { x in
            withUnsafeBytes(of: b.id.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 }
        }
    }

    /// The pattern the OpenAPI documents give cursor parameters.
    public static let pattern = "^[0-9]{1,18}_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"

    /// A decoded timestamp's cursor value (rounded: a `Date` holds microseconds inexactly).
    public static func micros(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }

    /// SQL for a timestamp column's cursor value (select it beside the row).
    public static func microsSQL(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000000)::int8" }

    /// The cursor's timestamp, exactly, as a bindable value: compare with
    /// `(col, id) < ('epoch'::timestamptz + \(cursor.micros) * interval '1 microsecond', \(cursor.id))`.
}
