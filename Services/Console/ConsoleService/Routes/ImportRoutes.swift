import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// Imports: each `colony-admin import supabase` run of the operator's apps, with its summary
/// (`ImportHistory`).
struct ImportRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("imports", use: web.page(list))
    }

    @Sendable func list(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        let history = try await web.imports.runs(by: actor)
        var values = web.layout(actor, title: "Imports", section: "imports")
        values["apps"] = history.map { app, runs -> [String: Any] in
            ["app": app.rawValue, "runs": runs.map(Self.run), "none": runs.isEmpty]
        }
        return web.pages.render("imports", values)
    }

    static func run(_ run: ImportRun) -> [String: Any] {
        var row: [String: Any] = [
            "id": run.id.lowercased, "source": run.source, "storage": run.storage ?? "", "has_storage": run.storage != nil,
            "dry_run": run.dryRun, "run_by": run.runBy ?? "", "started_at": ISO8601.format(run.startedAt),
            "finished_at": run.finishedAt.map(ISO8601.format) ?? "", "finished": run.finishedAt != nil,
            "status": run.status, "bad": run.status == "failed" || run.status == "incomplete",
            "error": run.error ?? "", "has_error": run.error != nil,
        ]
        if let summary = run.summary {
            row["has_summary"] = true
            row["tables"] = summary.tables.map { table -> [String: Any] in
                let left = table.notImported.values.reduce(0, +)
                return [
                    "name": table.name, "read": table.read, "imported": table.imported, "already": table.already,
                    "not_imported": left == 0 ? "0" : "\(left) (" + table.notImported.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")",
                    "skipped": table.skipped, "changed": table.changed,
                ]
            }
            row["files_copied"] = summary.filesCopied
            row["incomplete_rows"] = summary.incompleteRows
            row["adjusted_rows"] = summary.adjustedRows
            row["issues"] = summary.issues.map { ["table": $0.table, "id": $0.id, "reason": $0.reason] }
            row["has_issues"] = !summary.issues.isEmpty
        }
        return row
    }
}
