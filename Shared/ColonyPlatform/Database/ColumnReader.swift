import Foundation
import PostgresNIO

/// Reads a row's columns in order by type, from a row (`RowCells`) or from a record in an array
/// (`RecordFields`), so one decoder serves a statement's rows and a page's records alike.
public protocol ColumnReader {
    mutating func uuid() throws -> UUID
    mutating func text() throws -> String
    mutating func optionalText() throws -> String?
    mutating func bool() throws -> Bool
    mutating func int64() throws -> Int64
    mutating func optionalInt64() throws -> Int64?
    mutating func optionalDouble() throws -> Double?
    mutating func date() throws -> Date
    mutating func optionalDate() throws -> Date?
}

extension RowCells: ColumnReader {
    @inlinable public mutating func uuid() throws -> UUID { try next() }
    @inlinable public mutating func text() throws -> String { try next() }
    @inlinable public mutating func optionalText() throws -> String? { try next() }
    @inlinable public mutating func bool() throws -> Bool { try next() }
    @inlinable public mutating func int64() throws -> Int64 { try next() }
    @inlinable public mutating func optionalInt64() throws -> Int64? { try next() }
    @inlinable public mutating func optionalDouble() throws -> Double? { try next() }
    @inlinable public mutating func date() throws -> Date { try next() }
    @inlinable public mutating func optionalDate() throws -> Date? { try next() }
}
