import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

// Logging a habit is the busiest request: its statements are prepared once per connection
// instead of parsed and planned on every call (measured by colony-habits-bench: about half the
// database time of this request went into planning).

/// The habit with its owner's clock.
struct FindHabitWithClock: PostgresPreparedStatement {
    static let sql = """
        SELECT \(prefixed(HabitRow.columns, "h")), p.timezone, p.day_start_hour
        FROM habits h JOIN profiles p ON p.id = h.user_id
        WHERE h.id = $1 AND h.user_id = $2
        """
    typealias Row = PostgresRow

    var habitID: UUID
    var userID: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(habitID)
        bindings.append(userID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// One log per habit and day: insert, or set a different value; the previous value comes back.
struct WriteHabitLog: PostgresPreparedStatement {
    static let sql = """
        WITH previous AS (SELECT value FROM habit_logs WHERE habit_id = $1 AND log_date = $3)
        INSERT INTO habit_logs AS l (habit_id, user_id, log_date, value, source)
        VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (habit_id, log_date) DO UPDATE SET value = EXCLUDED.value, source = EXCLUDED.source, created_at = now()
            WHERE l.value <> EXCLUDED.value
        RETURNING \(HabitLogRow.columns), (SELECT value FROM previous)
        """
    typealias Row = PostgresRow

    var habitID: UUID
    var userID: UUID
    var day: LocalDate
    var value: Int
    var source: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(habitID)
        bindings.append(userID)
        bindings.append(day)
        bindings.append(value)
        bindings.append(source)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// Feed lines, as arrays (NULLs stand as the nil UUID and empty strings); duplicates by
/// `dedupe_key` are skipped and the written ids come back.
struct RecordActivity: PostgresPreparedStatement {
    static let sql = """
        INSERT INTO activity_events (id, actor_id, hive_id, habit_id, type, data, dedupe_key, created_at)
        SELECT id, nullif(actor, '00000000-0000-0000-0000-000000000000'), nullif(hive, '00000000-0000-0000-0000-000000000000'),
               nullif(habit, '00000000-0000-0000-0000-000000000000'), type::activity_type, data::jsonb, nullif(dedupe, ''), at
        FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
            AS e(id, actor, hive, habit, type, data, dedupe, at)
        ON CONFLICT (dedupe_key) DO NOTHING
        RETURNING id
        """
    typealias Row = UUID

    var ids: [UUID]
    var actors: [UUID]
    var hives: [UUID]
    var habits: [UUID]
    var types: [String]
    var data: [String]
    var dedupeKeys: [String]
    var times: [Date]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(ids)
        bindings.append(actors)
        bindings.append(hives)
        bindings.append(habits)
        bindings.append(types)
        bindings.append(data)
        bindings.append(dedupeKeys)
        bindings.append(times)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> UUID { try row.value(UUID.self) }
}

/// A habit's logged values over a span of days (a completed log's streak check reads the week or
/// so up to the logged day). Public so the benchmark runs exactly this SQL under pgbench: `$1` the
/// habit, `$2` its owner, `$3` the first day, `$4` the last. Bounded at the logged day: a day
/// filled in from the month view read every later log too, up to a year of rows a log.
public enum RecentValuesSQL {
    public static let sql = "SELECT log_date, value FROM habit_logs WHERE habit_id = $1 AND user_id = $2 AND log_date BETWEEN $3 AND $4"
}

struct RecentValues: PostgresPreparedStatement {
    static var sql: String { RecentValuesSQL.sql }
    typealias Row = (LocalDate, Int)

    var habitID: UUID
    var userID: UUID
    var since: LocalDate
    var through: LocalDate

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(habitID)
        bindings.append(userID)
        bindings.append(since)
        bindings.append(through)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = RowCells(row)
        return (try cells.next(), try cells.next())
    }
}
