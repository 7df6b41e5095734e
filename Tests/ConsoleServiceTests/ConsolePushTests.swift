import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import ConsoleService
import Foundation
import NotificationsService
import Testing

/// The console's push pages and a user's holdings, with notifications running beside auth and the
/// console as a deployment runs it (no APNs configured: pushes are recorded as skipped).
@Suite("Console: push devices, test pushes, holdings and imports")
struct ConsolePushTests {
    /// Notifications with the console's credential, then auth and the console pointed at it.
    func withNotificationsAndConsole(_ body: @Sendable (RunningService, RunningConsole) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("console-push-exports")).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let exports = FileSystemStorageBackend(root: root)
        try await withRunningService(.notifications, app: .mycirclee, apiPrefix: "/notifications/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
            configuration.consoleKey = consoleTestKey
        }, definition: { _ in
            try! NotificationsService.definition(settings: NotificationsSettings(apns: nil, pollInterval: .milliseconds(200)), exports: exports)
        }) { notifications in
            try await withRunningConsole(configure: { $0.serviceURLs = [.notifications: notifications.base] }) { console in
                try await body(notifications, console)
            }
        }
    }

    @Test("support sees a user's push devices, deliveries and what notifications holds of them, sends a test push that is logged and audited; a viewer and another app's support are refused by the server")
    func testPush() async throws {
        try await withNotificationsAndConsole { notifications, console in
            let userID = try await console.user("pushy@example.com", app: .mycirclee)
            let user = try await notifications.user(userID, app: .mycirclee)
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let registered = try await notifications.request(.POST, "\(notifications.base)/notifications/v1/devices", as: user,
                                                             json: ["token": token, "environment": "production", "app_version": "2.1", "locale": "de-DE"])
            #expect(registered.status == 200, "\(registered.body)")

            let (support, _) = try await console.operatorSignedIn("support@colony.test", role: .support, apps: [.mycirclee])
            let page = try await support.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(page.status == 200, "\(page)")
            #expect(page.body.contains("…\(token.suffix(8))") && page.body.contains("2.1") && page.body.contains("de-DE"), "the device: \(page.body)")
            #expect(page.body.contains("devices: <strong>1</strong>"), "notifications' holdings: \(page.body)")
            #expect(page.body.contains("circles not in COLONY_CONSOLE_SERVICE_URLS"), "a service the console is not told of is shown as such")
            let device = try #require(page.find(#"action="/console/push/mycirclee/[0-9a-f-]{36}/([0-9a-f-]{36})/test""#), "a test push form")

            let sent = try await support.submit("/console/push/mycirclee/\(userID.lowercased)/\(device)/test", from: page, ["back": "user"])
            #expect(sent.status == 303 && sent.location == "/console/users/mycirclee/\(userID.lowercased)?done=test_push", "\(sent)")
            // The push goes through the normal queue: without APNs it is recorded as skipped.
            try await waitUntil(timeout: .seconds(30)) {
                let log = try await support.get("/console/push?app=mycirclee&user=\(userID.lowercased)")
                return log.body.contains("test_push") && log.body.contains(#"<span class="tag">skipped</span>"#)
            }
            let appLog = try await support.get("/console/push?app=mycirclee&status=skipped")
            #expect(appLog.status == 200 && appLog.body.contains(userID.lowercased) && appLog.body.contains("test_push"), "\(appLog)")
            let audit = try await support.get("/console/audit?action=send_test_push")
            #expect(audit.body.contains("send_test_push") && audit.body.contains("<td>ok</td>") && audit.body.contains("device \(device)"), "\(audit)")

            // A device that is not theirs: refused by notifications, shown and audited as failed.
            let unknown = try await support.submit("/console/push/mycirclee/\(userID.lowercased)/\(UUID().lowercased)/test", from: page)
            #expect(unknown.status == 404, "\(unknown)")

            // A viewer sees the devices without the form; sending anyway is refused by the server.
            let (viewer, _) = try await console.operatorSignedIn("viewer@colony.test", role: .viewer)
            let viewed = try await viewer.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(viewed.status == 200 && viewed.body.contains("…\(token.suffix(8))") && !viewed.body.contains("/test\""), "\(viewed)")
            let refused = try await viewer.submit("/console/push/mycirclee/\(userID.lowercased)/\(device)/test", from: viewed)
            #expect(refused.status == 403, "\(refused)")

            // Support of another app: neither the page nor the push.
            let (other, _) = try await console.operatorSignedIn("unify-support@colony.test", role: .support, apps: [.unify])
            let otherPage = try await other.get("/console/push?app=mycirclee&user=\(userID.lowercased)")
            #expect(otherPage.status == 403, "\(otherPage)")
            let otherUsers = try await other.get("/console/users")
            let otherPush = try await other.submit("/console/push/mycirclee/\(userID.lowercased)/\(device)/test", from: otherUsers)
            #expect(otherPush.status == 403, "\(otherPush)")

            // One push went out: the refused attempts queued nothing.
            let deliveries = try await notifications.request(.GET, "\(notifications.base)/notifications/v1/deliveries", as: user)
            #expect(deliveries.body["deliveries"]?.arrayValue?.count == 1, "\(deliveries.body)")
            let outcomes = try await console.withConsoleDatabase { database in
                try await database.withConnection { connection in
                    try await connection.query("SELECT operator_email, outcome FROM audit_log WHERE action = 'send_test_push' ORDER BY id", logger: TestEnvironment.logger)
                        .collect().map { row in try row.decode((String, String).self) }
                }
            }
            #expect(outcomes.map { "\($0.0) \($0.1)" } == [
                "support@colony.test ok", "support@colony.test failed", "viewer@colony.test refused", "unify-support@colony.test refused",
            ])
        }
    }

    @Test("the Imports page lists each app's runs for roles that see the pipeline, and is refused to a moderator")
    func importsPage() async throws {
        try await withRunningConsole { console in
            let (support, _) = try await console.operatorSignedIn("support@colony.test", role: .support, apps: [.habithive])
            let page = try await support.get("/console/imports")
            #expect(page.status == 200 && page.body.contains("<h2>habithive</h2>") && page.body.contains("No import yet."), "\(page)")
            #expect(!page.body.contains("<h2>unify</h2>"), "only the operator's apps")
            let (moderator, _) = try await console.operatorSignedIn("moderator@colony.test", role: .moderator)
            let refused = try await moderator.get("/console/imports")
            #expect(refused.status == 403, "\(refused)")
        }
    }
}
