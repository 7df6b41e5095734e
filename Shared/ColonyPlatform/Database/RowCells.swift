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
