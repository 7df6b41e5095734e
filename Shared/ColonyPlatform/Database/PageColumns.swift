import Foundation
import NIOCore

/// A page read back as one cell: a record of one array per column (`ROW(array_agg(p.c1), …)`,
/// see `MemberPage`), in Postgres's binary format, walked over its bytes row by row.
///
/// A page of rows cost the service about 40,000 instructions a row in PostgresNIO's row stream
/// (a message, an async iteration and a cell per column). An array per column costs Postgres
/// what the rows did (an array of records cost it twice as much: a tuple built and sent per
/// row). Each array's element type is checked against what the reader asks for, so a statement
/// and its decoder that drift apart fail as an error, not as a wrong value.
///
/// Layout (Postgres's `record_send` and `array_send`): a record is its field count, then each
/// field as a type oid, a length (-1 for null) and its bytes; an array is its dimensions, flags
/// and element type, then each element as a length (-1 for null) and its bytes.
public enum PageColumns {
    public struct Malformed: Error, CustomStringConvertible {
        public let reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { "a page the statement did not write: \(reason)" }
    }

    /// The rows of `cell`, decoded by `row` from their columns in order. A null cell, or a
    /// record of nulls (`array_agg` of no rows), is no rows.
    @inlinable
    public static func decode<Element>(_ cell: ByteBuffer?, _ row: (inout PageRow) throws -> Element) throws -> [Element] {
        guard let cell else { return [] }
        return try cell.withUnsafeReadableBytes { bytes in
            var record = ByteReader(bytes)
            let fields = Int(try record.int32())
            guard fields > 0, fields <= bytes.count / 8 else { throw Malformed("a record of \(fields) fields") }
            var columns: [PageRow.Column] = []
            columns.reserveCapacity(fields)
            var count: Int?
            for _ in 0..<fields {
                _ = try record.uint32()  // the array's type; its elements' type is checked as they are read
                guard let array = try record.field() else {
                    columns.append(PageRow.Column(elements: ByteReader(UnsafeRawBufferPointer(start: nil, count: 0)), type: 0))
                    guard count == nil || count == 0 else { throw Malformed("columns of different lengths") }
                    count = 0
                    continue
                }
                var elements = ByteReader(array)
                let (length, type) = try elements.arrayHeader()
                guard count == nil || count == length else { throw Malformed("columns of different lengths") }
                count = length
                columns.append(PageRow.Column(elements: elements, type: type))
            }
            var page = PageRow(columns: columns)
            var elements: [Element] = []
            elements.reserveCapacity(count ?? 0)
            for _ in 0..<(count ?? 0) {
                page.column = 0
                elements.append(try row(&page))
                guard page.column == fields else { throw Malformed("\(fields - page.column) columns left unread") }
            }
            return elements
        }
    }
}

/// One row of a `PageColumns` page: its columns read in order. Valid only inside
/// `PageColumns.decode`'s closure.
public struct PageRow: ColumnReader {
    @usableFromInline
    struct Column {
        @usableFromInline var elements: ByteReader
        /// The elements' type oid (0 for a null column, which has no elements).
        @usableFromInline var type: UInt32

        @usableFromInline
        init(elements: ByteReader, type: UInt32) {
            self.elements = elements
            self.type = type
        }
    }

    @usableFromInline var columns: [Column]
    @usableFromInline var column = 0

    @usableFromInline
    init(columns: [Column]) {
        self.columns = columns
    }

    /// The next column's value in this row, nil for null, after checking its type.
    @inlinable
    mutating func next(_ oid: UInt32, _ type: StaticString) throws -> UnsafeRawBufferPointer? {
        guard column < columns.count else { throw PageColumns.Malformed("no column left for a \(type)") }
        defer { column += 1 }
        guard columns[column].type == oid else { throw PageColumns.Malformed("a column of type \(columns[column].type) read as \(type)") }
        return try columns[column].elements.field()
    }

    @inlinable
    mutating func required(_ oid: UInt32, _ type: StaticString) throws -> UnsafeRawBufferPointer {
        guard let bytes = try next(oid, type) else { throw PageColumns.Malformed("a null \(type)") }
        return bytes
    }

    @inlinable public mutating func uuid() throws -> UUID { try BinaryValue.uuid(required(2950, "uuid")) }
    @inlinable public mutating func text() throws -> String { String(decoding: try required(25, "text"), as: UTF8.self) }
    @inlinable public mutating func optionalText() throws -> String? { try next(25, "text").map { String(decoding: $0, as: UTF8.self) } }
    @inlinable public mutating func bool() throws -> Bool { try BinaryValue.bool(required(16, "bool")) }
    @inlinable public mutating func int64() throws -> Int64 { try BinaryValue.int64(required(20, "int8")) }
    @inlinable public mutating func optionalInt64() throws -> Int64? { try next(20, "int8").map(BinaryValue.int64) }
    @inlinable public mutating func optionalDouble() throws -> Double? {
        try next(701, "float8").map { Double(bitPattern: UInt64(bitPattern: try BinaryValue.int64($0))) }
    }
    @inlinable public mutating func date() throws -> Date { try BinaryValue.date(required(1184, "timestamptz")) }
    @inlinable public mutating func optionalDate() throws -> Date? { try next(1184, "timestamptz").map(BinaryValue.date) }
}

/// Values in Postgres's binary format, from their bytes.
@usableFromInline
enum BinaryValue {
    @inlinable
    static func int64(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
        guard bytes.count == 8 else { throw PageColumns.Malformed("an 8-byte value of \(bytes.count) bytes") }
        return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
    }

    @inlinable
    static func uuid(_ bytes: UnsafeRawBufferPointer) throws -> UUID {
        guard bytes.count == 16 else { throw PageColumns.Malformed("a uuid of \(bytes.count) bytes") }
        return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }

    @inlinable
    static func bool(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        guard bytes.count == 1 else { throw PageColumns.Malformed("a bool of \(bytes.count) bytes") }
        return bytes[0] != 0
    }

    /// A `timestamptz`: microseconds since 2000-01-01 UTC, made into a `Date` the way PostgresNIO
    /// does, so both read the same instant to the same bits.
    @inlinable
    static func date(_ bytes: UnsafeRawBufferPointer) throws -> Date {
        Date(timeIntervalSinceReferenceDate: -31_622_400 + Double(try int64(bytes)) / 1_000_000)
    }
}

/// Big-endian integers and length-prefixed fields off raw bytes, bounds checked.
@usableFromInline
struct ByteReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var offset = 0

    @usableFromInline
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    @inlinable
    mutating func uint32() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw PageColumns.Malformed("cut short") }
        defer { offset += 4 }
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inlinable
    mutating func int32() throws -> Int32 {
        Int32(bitPattern: try uint32())
    }

    /// A one-dimensional array's header: its element count and their type oid (0 elements and
    /// type 0 for an empty array, which has no dimensions).
    @inlinable
    mutating func arrayHeader() throws -> (count: Int, type: UInt32) {
        let dimensions = try int32()
        if dimensions == 0 { return (0, 0) }
        guard dimensions == 1 else { throw PageColumns.Malformed("an array of \(dimensions) dimensions") }
        _ = try int32()  // whether any element is null
        let type = try uint32()
        let count = Int(try int32())
        _ = try int32()  // lower bound
        // Every element has at least its 4-byte length: a count past that is not one to allocate for.
        guard count >= 0, count <= (bytes.count - offset) / 4 else { throw PageColumns.Malformed("an array of \(count) elements in \(bytes.count) bytes") }
        return (count, type)
    }

    /// A length, then that many bytes; nil for the length -1 (null).
    @inlinable
    mutating func field() throws -> UnsafeRawBufferPointer? {
        let length = Int(try int32())
        if length == -1 { return nil }
        guard length >= 0, bytes.count - offset >= length else { throw PageColumns.Malformed("a value longer than its array") }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
    }
}
