import ColonyTesting
@testable import ColonyPlatform
import Foundation
import NIOCore
import PostgresNIO
import Testing

@Suite("Postgres: a page as one cell of column arrays")
struct PageColumnsTests {
    struct Item: Equatable {
        var id: UUID, name: String, note: String?, at: Date, size: Int64, flag: Bool, score: Double?, due: Date?, version: Int64?

        init(_ cells: inout some ColumnReader) throws {
            id = try cells.uuid(); name = try cells.text(); note = try cells.optionalText(); at = try cells.date(); size = try cells.int64()
            flag = try cells.bool(); score = try cells.optionalDouble(); due = try cells.optionalDate(); version = try cells.optionalInt64()
        }
    }

    static let select = "id, name, note, at, size, flag, score, due, version"
    static let columns = "c1, c2, c3, c4, c5, c6, c7, c8, c9"
    static let aggregated = "ROW(array_agg(p.c1), array_agg(p.c2), array_agg(p.c3), array_agg(p.c4), array_agg(p.c5), array_agg(p.c6), array_agg(p.c7), array_agg(p.c8), array_agg(p.c9))"

    static let table = Migration(version: 1, name: "items", sql: """
        CREATE TABLE items (id uuid PRIMARY KEY, name text NOT NULL, note text, at timestamptz NOT NULL, size int8 NOT NULL,
                            flag bool NOT NULL, score float8, due timestamptz, version int8);
        INSERT INTO items VALUES
          ('00000000-0000-4000-8000-000000000001', 'plain', NULL, '2026-11-27 04:00:00.123456+00', 1, true, NULL, NULL, NULL),
          ('00000000-0000-4000-8000-000000000002', 'émoji 😀 "quoted" \\ and , {braces}', 'a note', '1999-12-31 23:59:59.999999+00', -5, false, 2.5, '2030-01-01 00:00:00+00', 7),
          ('00000000-0000-4000-8000-000000000003', '', '', '2000-01-01 00:00:00+00', 9223372036854775807, true, -0.0, '1970-01-01 00:00:00+00', 0);
        """)

    @Test("the page's rows read back exactly as the same rows read one by one: nulls, emoji, quotes, extremes")
    func sameAsRows() async throws {
        try await withTestDatabase(migrations: [Self.table]) { database in
            let rows = try await database.query(PostgresQuery(unsafeSQL: "SELECT \(Self.select) FROM items ORDER BY id")).collect()
                .map { row in var cells = RowCells(row); return try Item(&cells) }
            let page = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.aggregated) FROM (SELECT \(Self.select) FROM items ORDER BY id) p(\(Self.columns))
                """)).collect()
            #expect(rows.count == 3)
            #expect(try PageColumns.decode(page.first?.first?.bytes) { try Item(&$0) } == rows)

            let empty = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.aggregated) FROM (SELECT \(Self.select) FROM items WHERE false) p(\(Self.columns))
                """)).collect()
            #expect(try PageColumns.decode(empty.first?.first?.bytes) { try Item(&$0) } == [])
            #expect(try PageColumns.decode(nil) { try Item(&$0) } == [])
        }
    }

    @Test("a decoder that reads a column as the wrong type, or leaves one unread, fails; cut bytes fail, never crash")
    func mismatches() async throws {
        try await withTestDatabase(migrations: [Self.table]) { database in
            let page = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.aggregated) FROM (SELECT \(Self.select) FROM items ORDER BY id) p(\(Self.columns))
                """)).collect()
            let cell = try #require(page.first?.first?.bytes)
            #expect(throws: PageColumns.Malformed.self) { try PageColumns.decode(cell) { try $0.text() } }
            #expect(throws: PageColumns.Malformed.self) { try PageColumns.decode(cell) { try $0.uuid() } }
            // `note` is null in the first row: read as required text, it is refused.
            func requiredNote(_ cells: inout PageRow) throws -> String {
                _ = try cells.uuid(); _ = try cells.text(); return try cells.text()
            }
            #expect(throws: PageColumns.Malformed.self) { try PageColumns.decode(cell, requiredNote) }
            for length in 0..<cell.readableBytes {
                let cut = cell.getSlice(at: cell.readerIndex, length: length)
                #expect(throws: PageColumns.Malformed.self) { try PageColumns.decode(cut) { try Item(&$0) } }
            }
        }
    }

    @Test("a cursor's text is <micros>_<lowercase uuid> and reads back; a NUL in a request target, raw or %00, is found")
    func cursorText() {
        for micros: Int64 in [0, 7, 10, 99, 1_790_000_000_123_456, 999_999_999_999_999_999, -1, -1_234_567, Int64.max, Int64.min] {
            let id = UUID()
            let cursor = KeysetCursor(micros: micros, id: id)
            #expect(cursor.text == "\(micros)_\(id.uuidString.lowercased())")
            if micros >= 0 && micros <= 999_999_999_999_999_999 { #expect(KeysetCursor(cursor.text) == cursor) }
        }
        #expect(UnstorableText.problem(inTarget: "/chat/v1/groups?before=1_a") == nil)
        #expect(UnstorableText.problem(inTarget: "/x?q=%0%00") != nil)
        #expect(UnstorableText.problem(inTarget: "/x/%00") != nil)
        #expect(UnstorableText.problem(inTarget: "/x/a\u{0}b") != nil)
        #expect(UnstorableText.problem(inTarget: "/x?q=%000") != nil)
        #expect(UnstorableText.problem(inTarget: "/x?q=%20%0a%0") == nil)
        #expect(UnstorableText.problem(inTarget: "/x?q=0%0") == nil)
    }

    @Test("KeysetCursor orders as Postgres orders (timestamp, id), ties broken by the id's bytes; a page out of order is put back in order")
    func keysetOrder() async throws {
        let table = Migration(version: 1, name: "marks", sql: "CREATE TABLE marks (at timestamptz NOT NULL, id uuid NOT NULL);")
        try await withTestDatabase(migrations: [table]) { database in
            // Few distinct times, so most neighbours tie on the time and are ordered by id.
            let marks = (0..<200).map { n in KeysetCursor(micros: 1_790_000_000_000_000 + Int64(n % 3), id: UUID()) }
            for mark in marks {
                try await database.query("INSERT INTO marks VALUES ('epoch'::timestamptz + \(mark.micros) * interval '1 microsecond', \(mark.id))")
            }
            let ordered = try await database.query("SELECT \(unescaped: KeysetCursor.microsSQL("at")), id FROM marks ORDER BY at, id").collect()
                .map { row in let (micros, id) = try row.decode((Int64, UUID).self); return KeysetCursor(micros: micros, id: id) }
            #expect(ordered == marks.sorted())

            #expect(MemberPage.inOrder(ordered, newestFirst: false, cursor: { $0 }) == ordered)
            #expect(MemberPage.inOrder(ordered.shuffled(), newestFirst: false, cursor: { $0 }) == ordered)
            #expect(MemberPage.inOrder(ordered.shuffled(), newestFirst: true, cursor: { $0 }) == ordered.reversed())
            #expect(MemberPage.inOrder([KeysetCursor](), newestFirst: true, cursor: { $0 }) == [])
        }
    }
}
