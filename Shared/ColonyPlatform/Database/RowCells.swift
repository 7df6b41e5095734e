import PostgresNIO

/// A row's cells read in order, each through its own type's decoder. For the hot rows (a history
/// page, a feed page): PostgresNIO's variadic `row.decode((A, B, …).self)` is not specialized
/// across modules and asks the runtime for generic metadata on every cell, about 7% of a 50-row
/// page's instructions; this is inlined into the caller and specialized per type.
public struct RowCells {
    @usableFromInline var cells: PostgresRow.Iterator

    @inlinable
    public init(_ row: PostgresRow) {
        cells = row.makeIterator()
    }

    /// The next cell as `T` (an optional type for a nullable column).
    @inlinable
    public mutating func next<T: PostgresDecodable>(_: T.Type = T.self, file: String = #fileID, line: Int = #line) throws -> T {
        guard let cell = cells.next() else { throw MissingColumn(type: "\(T.self)", file: file, line: line) }
        return try cell.decode(T.self, file: file, line: line)
    }

    /// Passes over a cell that is not needed.
    @inlinable
    public mutating func skip() {
        _ = cells.next()
    }

    /// The statement returned fewer columns than the decoder reads: a programming error, reported
    /// with where it was read.
    public struct MissingColumn: Error, CustomStringConvertible {
        public let type: String
        public let file: String
        public let line: Int

        public init(type: String, file: String, line: Int) {
            self.type = type
            self.file = file
            self.line = line
        }

        public var description: String { "the row has no column left for a \(type) (\(file):\(line))" }
    }
}

// Colony reads every row one way: its cells in the statement's order, each through its own type
// (`RowCells`, `ColumnReader`); a page read as one cell (`PageColumns`) walks its rows the same
// way. PostgresNIO's tuple `decode((A, B, …).self)` and `makeRandomAccess()` by name are not used.
extension PostgresRow {
    /// The row read cell by cell by `read`, in the statement's column order.
    @inlinable
    public func read<Value>(_ read: (inout RowCells) throws -> Value) throws -> Value {
        var cells = RowCells(self)
        return try read(&cells)
    }

    /// The value of a one-column row (`SELECT count(*) …`).
    @inlinable
    public func value<T: PostgresDecodable>(_: T.Type = T.self, file: String = #fileID, line: Int = #line) throws -> T {
        var cells = RowCells(self)
        return try cells.next(T.self, file: file, line: line)
    }
}

extension PostgresRowSequence {
    /// Every row, each read by `read`.
    @inlinable
    public func read<Value>(_ read: (inout RowCells) throws -> Value) async throws -> [Value] {
        var values: [Value] = []
        for try await row in self { values.append(try row.read(read)) }
        return values
    }

    /// The values of a one-column result.
    @inlinable
    public func values<T: PostgresDecodable>(_: T.Type = T.self, file: String = #fileID, line: Int = #line) async throws -> [T] {
        var values: [T] = []
        for try await row in self { values.append(try row.value(T.self, file: file, line: line)) }
        return values
    }

    /// The first row's one value, or nil for no rows (the statement's other rows are drained).
    @inlinable
    public func firstValue<T: PostgresDecodable>(_: T.Type = T.self, file: String = #fileID, line: Int = #line) async throws -> T? {
        var first: T?
        for try await row in self where first == nil { first = try row.value(T.self, file: file, line: line) }
        return first
    }
}
