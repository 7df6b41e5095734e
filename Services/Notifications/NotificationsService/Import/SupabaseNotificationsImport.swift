import ColonyImport
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// The apps' APNs tokens into the notifications service's devices, so imported users get pushes
/// on the phones they already have:
///
/// | Supabase (`public`) | Colony (`notifications.devices`) |
/// |---|---|
/// | MyCirclee `push_tokens` (`user_id`, `token`, `platform`) | a device of the app, environment production |
/// | HabitHive `device_tokens` (`apns_token`, `environment`: `prod`/`production` or `dev`/`development`/`sandbox`) | a device of the app |
///
/// A token someone registered in Colony since stays theirs (not imported). Other apps keep no
/// tokens in their databases.
public enum SupabaseNotificationsImport {
    static let tables: [App: (table: String, token: String)] = [.mycirclee: ("push_tokens", "token"), .habithive: ("device_tokens", "apns_token")]

    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts) async throws {
        guard let (table, tokenColumn) = tables[job.app] else { return }
        let app = job.app
        try await job.importRows("public.\(table)", from: source.rows("public", table, orderBy: "created_at, \(tokenColumn)"),
                                 id: { try $0.string(tokenColumn).lowercased() }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            let environment: String? = switch try row.optionalString("environment")?.lowercased() {
            case nil, "prod", "production": "production"
            case "dev", "development", "sandbox": "sandbox"
            case let other?: other
            }
            let device: NotificationsRules.Device
            do {
                device = try NotificationsRules.device(token: try row.string(tokenColumn), environment: environment, platform: try row.text("platform"),
                                                       appVersion: nil, locale: nil)
            } catch {
                throw RowProblem("\(error)")
            }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let inserted = try await writer.connection.query("""
                INSERT INTO devices (id, app, user_id, kind, token, environment, platform, created_at, updated_at)
                VALUES (\(UUID.timeOrdered(at: createdAt)), \(app.rawValue), \(userID), 'device', \(device.token), \(device.environment.rawValue), \(device.platform),
                        \(createdAt), \(createdAt))
                ON CONFLICT (app, token) DO NOTHING RETURNING 1
                """, logger: writer.logger).collect()
            return inserted.isEmpty ? .notImported("registered in Colony since") : .imported
        }
    }
}
