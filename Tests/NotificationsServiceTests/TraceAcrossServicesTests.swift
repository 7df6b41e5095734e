import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import Testing

/// One trace from a request to the push: colony-circles and colony-notifications run as their
/// own processes (the executables an operator runs, JSON logs), with a real broker between them
/// and the APNs stand-in after them. The post's request carries a `traceparent`; its trace id
/// must be in circles' request log line, in notifications' line for the push, and in the APNs
/// request (the stand-in's log).
@Suite("A trace across services")
struct TraceAcrossServicesTests {
    @Test("one post's trace id is in the logs of colony-circles, colony-notifications and the APNs stand-in")
    func postToPush() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let prefix = TestKafka.topicPrefix()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("colony-trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let apns = try APNsStandIn(bundleIDs: Set(bundleIDs.values))
        let providerKeyFile = folder.appendingPathComponent("apns.p8").path
        let caFile = folder.appendingPathComponent("apns-ca.pem").path
        try apns.providerKey.pemRepresentation.write(toFile: providerKeyFile, atomically: true, encoding: .utf8)
        try apns.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)

        try await apns.run { apns in
            try await withJWKSServer({ [tokens] }) { jwksURL in
                try await withTestSchema { circlesDatabase in
                    try await withTestSchema { notificationsDatabase in
                        func settings(_ database: DatabaseConfiguration) -> [String: String] {
                            ["COLONY_PG_HOST": environment.postgresHost, "COLONY_PG_PORT": "\(environment.postgresPort)",
                             "COLONY_PG_DATABASE": environment.postgresDatabase, "COLONY_PG_USER": database.user,
                             "COLONY_PG_PASSWORD": database.password, "COLONY_PG_SCHEMA": database.schema,
                             "COLONY_KAFKA_BROKERS": environment.kafkaBrokers, "COLONY_TOPIC_PREFIX": prefix,
                             "COLONY_JWKS_URL": jwksURL.absoluteString, "COLONY_LOG_FORMAT": "json", "LOG_LEVEL": "info"]
                        }
                        let circles = try await ServiceProcess.start("colony-circles", environment: settings(circlesDatabase).merging([
                            "COLONY_STORAGE_PATH": folder.appendingPathComponent("storage").path,
                            "COLONY_STORAGE_SIGNING_KEY": "trace-test-signing-key-0123456789abcdef",
                        ]) { $1 })
                        defer { circles.stop() }
                        let notifications = try await ServiceProcess.start("colony-notifications", environment: settings(notificationsDatabase).merging([
                            "COLONY_APNS_TEAM_ID": apns.teamID, "COLONY_APNS_KEY_ID": apns.keyID, "COLONY_APNS_PRIVATE_KEY_FILE": providerKeyFile,
                            "COLONY_APNS_TOPIC_MYCIRCLEE": bundleIDs[.mycirclee]!, "COLONY_APNS_PRODUCTION_URL": apns.url,
                            "COLONY_APNS_SANDBOX_URL": apns.url, "COLONY_APNS_CA_FILE": caFile,
                            // Where its parts of data exports go.
                            "COLONY_STORAGE_PATH": folder.appendingPathComponent("storage").path,
                            "COLONY_STORAGE_SIGNING_KEY": "trace-test-signing-key-0123456789abcdef",
                        ]) { $1 })
                        defer { notifications.stop() }

                        let owner = UUID(), friend = UUID()
                        let ownerToken = try await tokens.token(user: owner, app: .mycirclee)
                        let friendToken = try await tokens.token(user: friend, app: .mycirclee)
                        let deviceToken = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                        #expect(try await call(notifications, "POST", "/notifications/v1/devices", token: friendToken, json: ["token": deviceToken]).status == .ok)
                        let circle = try await call(circles, "POST", "/circles/v1/circles", token: ownerToken, json: ["name": "Climbing"])
                        let circleID = try #require(circle.json["id"] as? String, "\(circle.json)")
                        let invite = try await call(circles, "POST", "/circles/v1/circles/\(circleID)/invites", token: ownerToken, json: [:])
                        let code = try #require(invite.json["code"] as? String, "\(invite.json)")
                        #expect(try await call(circles, "POST", "/circles/v1/invites/claim", token: friendToken, json: ["code": code]).status.code < 300)

                        // Membership reaches notifications through the broker; until it has, a post
                        // pushes nobody. Each try is a new post with a new trace of its own.
                        var traced: (traceID: String, received: APNsStandIn.Received)?
                        var sent: [String] = []
                        let deadline = ContinuousClock.now + .seconds(120)
                        while traced == nil && ContinuousClock.now < deadline {
                            let trace = TraceParent.random()
                            sent.append(trace.traceID)
                            let post = try await call(circles, "POST", "/circles/v1/circles/\(circleID)/posts", token: ownerToken,
                                                      json: ["type": "note", "body": "Bouldering at 6?"], traceParent: trace)
                            #expect(post.status == .created, "\(post.json)")
                            let waitUntil = ContinuousClock.now + .seconds(20)
                            while ContinuousClock.now < waitUntil {
                                if let received = apns.received.first(where: { $0.token == deviceToken && $0.traceParent.flatMap(TraceParent.init(header:))?.traceID == trace.traceID }) {
                                    traced = (trace.traceID, received)
                                    break
                                }
                                try await Task.sleep(for: .milliseconds(200))
                            }
                        }
                        guard let (traceID, received) = traced else {
                            Issue.record("""
                                no push reached the APNs stand-in within 120 s in the traces sent: \(sent)
                                APNs requests: \(apns.received.map { "\($0.token) \($0.traceParent ?? "no traceparent")" })
                                colony-circles:
                                \(circles.logText.suffix(3000))
                                colony-notifications:
                                \(notifications.logText.suffix(8000))
                                """)
                            return
                        }
                        #expect(received.alertBody == "Bouldering at 6?" && received.status == 200)

                        // Logs are complete once the processes stopped.
                        circles.stop()
                        notifications.stop()
                        let circlesLines = circles.logLines.filter { $0["trace_id"] as? String == traceID }
                        #expect(circlesLines.contains { $0["message"] as? String == "request" && ($0["path"] as? String)?.hasSuffix("/posts") == true },
                                "circles logged the request in the trace: \(circlesLines)")
                        let pushLines = notifications.logLines.filter { $0["trace_id"] as? String == traceID }
                        #expect(pushLines.contains { $0["message"] as? String == "push" && $0["outcome"] as? String == "sent" },
                                "notifications logged the push in the trace: \(pushLines)")
                        #expect(apns.logLines.contains { $0.contains("trace_id=\(traceID)") }, "\(apns.logLines)")
                    }
                }
            }
        }
    }

    struct Reply {
        var status: HTTPResponse.Status
        var json: [String: Any]
    }

    func call(_ service: ServiceProcess, _ method: String, _ path: String, token: String, json: [String: Any], traceParent: TraceParent? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: service.base + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        if let traceParent { request.headers.add(name: "traceparent", value: traceParent.description) }
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: .init(code: Int(response.status.code)), json: (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:])
    }
}
