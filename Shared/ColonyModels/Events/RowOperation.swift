/// What happened to the row an event carries, in the words Supabase Realtime uses for
/// `postgres_changes` (`eventType`).
public enum RowOperation: String, Codable, Sendable {
    case insert = "INSERT"
    case update = "UPDATE"
    case delete = "DELETE"
}
