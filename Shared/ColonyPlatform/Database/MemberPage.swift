import Foundation
import Logging
import PostgresNIO

/// A keyset page of a list only members may read (a group's history, a circle's feed) in one
/// prepared statement: the reader's membership row, with the page beside it as one record of an
/// array per column (`PageColumns`). No row means the reader is not a member; a member of an
/// empty list gets a page of null columns. One round trip and one snapshot instead of a
/// membership query and then the page, and one cell instead of a row per item: PostgresNIO's row
/// stream cost the service about 40,000 instructions a row, most of a history page.
///
/// Parameters: `$1` the scope (the group or circle), `$2` the reader, `$3` and `$4` the cursor's
/// micros and id (bound but unused for the newest page), `$5` the page size plus one.
public enum MemberPage {
    public enum Direction: Sendable {
        /// The newest page.
        case latest
        /// Older than the cursor.
        case before
        /// Newer than the cursor, oldest first.
        case after
    }

    /// - Parameters:
    ///   - membership: the membership table and alias, e.g. `group_members gm`.
    ///   - member: the condition naming the reader's row, e.g. `gm.group_id = $1 AND gm.user_id = $2`.
    ///   - select: the page's columns (end with the cursor's micros), `columns` of them.
    ///   - from: the page's FROM, joins included.
    ///   - filter: the page's own WHERE (it must name `$1`).
    ///   - time, id: the keyset's columns, e.g. `m.sent_at` and `m.id`, and `sort`, the names they
    ///     have among the selected columns.
    ///   - maxPage: the largest page a request may ask for.
    ///
    /// The page is cut twice: at `maxPage + 1` written into the SQL, then at `$5`. A limit that is
    /// a parameter (or a subquery) is costed by the planner as a tenth of the rows, so with a
    /// large list and a costly row the estimate passed `jit_above_cost` and every page was
    /// JIT-compiled (about 20 ms). Written in, the estimate is bounded by the largest page; the
    /// parameter's tenth of that is close to a real page, so a custom plan costs about what the
    /// generic one does and Postgres keeps the generic plan instead of planning every execution.
    ///
    /// The arrays are aggregated from the ordered, limited page without an `ORDER BY` of their own:
    /// all of them in one pass over the same rows, so they line up, and in the page's order, which
    /// the aggregate takes as the sorted subquery gives it (an `ORDER BY` in each aggregate would
    /// sort the page once per column).
    public static func sql(direction: Direction, membership: String, member: String, select: String, columns: Int, from: String, filter: String,
                           time: String, id: String, sort: (time: String, id: String), maxPage: Int) -> String {
        let cursor = "('epoch'::timestamptz + $3::int8 * interval '1 microsecond', $4::uuid)"
        let (condition, order): (String, String)
        switch direction {
        case .latest: (condition, order) = ("", "DESC")
        case .before: (condition, order) = (" AND (\(time), \(id)) < \(cursor)", "DESC")
        case .after: (condition, order) = (" AND (\(time), \(id)) > \(cursor)", "ASC")
        }
        let names = (1...columns).map { "c\($0)" }
        return """
            SELECT (
                SELECT ROW(\(names.map { "array_agg(p.\($0))" }.joined(separator: ", "))) FROM (
                    SELECT * FROM (
                        SELECT \(select)
                        FROM \(from)
                        WHERE \(filter)\(condition)
                        ORDER BY \(time) \(order), \(id) \(order) LIMIT \(maxPage + 1)
                    ) page ORDER BY page.\(sort.time) \(order), page.\(sort.id) \(order) LIMIT $5::int8
                ) p(\(names.joined(separator: ", ")))
            ) FROM \(membership)
            WHERE \(member)
            """
    }

    /// The five parameters, in order.
    public static func bindings(scope: UUID, reader: UUID, cursor: KeysetCursor?, limit: Int) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(scope)
        bindings.append(reader)
        bindings.append(cursor?.micros ?? 0)
        bindings.append(cursor?.id ?? scope)
        bindings.append(Int64(limit + 1))
        return bindings
    }

    /// Runs a page statement, its page in keyset order (`newestFirst` or oldest first): nil when
    /// the reader is not a member. Inlinable, as `inOrder` is: called unspecialized from a
    /// service's module, the order check alone cost 240,000 instructions a chat history page.
    @inlinable
    public static func rows<Shape, Rows>(_ statement: MemberPageStatement<Shape, Rows>, newestFirst: Bool,
                                         on connection: PostgresConnection, logger: Logger) async throws -> [Rows.Element]? {
        for try await page in try await connection.execute(statement, logger: logger) {
            return inOrder(page, newestFirst: newestFirst, cursor: Rows.cursor(of:))
        }
        return nil
    }

    /// The page in keyset order. Postgres aggregates the arrays in the order the sorted subquery
    /// hands them over, which its documentation says "will usually work" rather than promises; the
    /// next page's cursor is the last row's, so the order is checked here and the page sorted if
    /// it is ever off.
    @inlinable
    public static func inOrder<Element>(_ page: [Element], newestFirst: Bool, cursor: (Element) -> KeysetCursor) -> [Element] {
        func before(_ a: KeysetCursor, _ b: KeysetCursor) -> Bool { newestFirst ? b < a : a < b }
        var index = page.startIndex + 1
        while index < page.endIndex, before(cursor(page[index - 1]), cursor(page[index])) { index += 1 }
        if index >= page.endIndex { return page }
        return page.sorted { before(cursor($0), cursor($1)) }
    }
}

/// How a member page's rows read: one row's columns in order, and the row's cursor.
public protocol MemberPageRow {
    associatedtype Element
    static func decode(_ columns: inout PageRow) throws -> Element
    static func cursor(of element: Element) -> KeysetCursor
}

/// A member page as a prepared statement: its SQL, one type per paging direction (`Shape`), and
/// how its rows read (`Rows`). Its one row is the page (`PageColumns.decode` of its one cell).
public struct MemberPageStatement<Shape: StatementSQL, Rows: MemberPageRow>: PostgresPreparedStatement {
    public static var sql: String { Shape.sql }
    /// The SQL type's full name (`ChatService.HistorySQL.Latest`): unique per statement, and short
    /// (the generic type's own name would run past 80 characters).
    public static var name: String { String(reflecting: Shape.self) }
    public typealias Row = [Rows.Element]

    public var scope: UUID
    public var reader: UUID
    public var cursor: KeysetCursor?
    public var limit: Int

    public init(scope: UUID, reader: UUID, cursor: KeysetCursor?, limit: Int) {
        self.scope = scope
        self.reader = reader
        self.cursor = cursor
        self.limit = limit
    }

    public func makeBindings() throws -> PostgresBindings {
        MemberPage.bindings(scope: scope, reader: reader, cursor: cursor, limit: limit)
    }

    public func decodeRow(_ row: PostgresRow) throws -> Row {
        try PageColumns.decode(row.first?.bytes, Rows.decode)
    }
}

/// A statement's SQL as a type, for prepared statements that differ only in their text (a page's
/// directions): `struct Page<SQL: StatementSQL>: PostgresPreparedStatement { static var sql: String { SQL.sql } }`.
public protocol StatementSQL: Sendable {
    static var sql: String { get }
}
