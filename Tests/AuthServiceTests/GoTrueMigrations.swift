import ColonyTesting
import Foundation
import PostgresNIO

/// GoTrue's own migrations (Tests/EndToEnd/supabase/gotrue-migrations, upstream's files kept as
/// they are) applied to a scratch source database as `gotrue migrate` applies them: in version
/// (file name) order, each in its own transaction as supabase_auth_admin with `auth` on the search
/// path and `{{ index .Options "Namespace" }}` read as `auth`, its version recorded in
/// `auth.schema_migrations`. platform.sql runs first (the roles, the `auth` schema).
enum GoTrueMigrations {
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("EndToEnd/supabase/gotrue-migrations")
    }

    /// The whole script, one transaction per migration.
    static func script(namespace: String = "auth") throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".up.sql") }.sorted()
        guard names.count > 50 else { throw MissingFixture(folder: folder.path) }
        let template = try Regex(#"\{\{\s*index\s+\.Options\s+"Namespace"\s*\}\}"#)
        return try names.map { name in
            let body = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8).replacing(template, with: namespace)
            let version = name.split(separator: "_", maxSplits: 1).first.map(String.init) ?? name
            return """
                BEGIN;
                SET LOCAL ROLE supabase_auth_admin;
                SET LOCAL search_path = \(namespace);
                \(body)
                ;
                INSERT INTO \(namespace).schema_migrations (version) VALUES ('\(version)');
                COMMIT;

                """
        }.joined()
    }

    static func apply(on connection: PostgresConnection) async throws {
        try await connection.execute(script: try script(), logger: TestEnvironment.logger)
    }

    struct MissingFixture: Error, CustomStringConvertible {
        var folder: String
        var description: String { "GoTrue's migrations are missing from \(folder) (scripts/lib/refresh-gotrue-migrations)" }
    }
}
