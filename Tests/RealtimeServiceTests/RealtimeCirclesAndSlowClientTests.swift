import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import RealtimeService
#if canImport(Glibc)
import Glibc
#endif

@Suite("Realtime: MyCirclee posts through the Python client; slow clients", .serialized)
struct RealtimeCirclesAndSlowClientTests {
    @Test("the official Supabase Python realtime client receives a MyCirclee post created through circles' API (posts, circle_id=eq filter)")
    func pythonClientCirclePost() async throws {
        try await withRealtimeAndCircles { realtime, circles in
            let owner = try await circles.user()
            let member = try await circles.user()
            for user in [owner, member] { _ = try await circles.circlesAPI(as: user).getProfile().ok }
            let circle = try await circles.circle(owner: owner, members: [member])
            try await waitUntil {
                try await realtime.withDatabase { db in
                    try await db.query("SELECT count(*) FROM memberships WHERE scope = 'circle' AND scope_id = \(circle)").collect().first?.decode(Int.self) == 2
                }
            }

            let (status, output) = try await PythonClient.run([PythonClient.path("Tests/RealtimeClientTests/receive_circle_post.py")], environment: [
                "COLONY_REALTIME_URL": "\(realtime.base)/realtime/v1",
                "COLONY_API_KEY": try await realtime.tokens.apiKey(app: .mycirclee),
                "COLONY_CIRCLES_URL": circles.apiURL,
                "COLONY_MEMBER_TOKEN": member.token,
                "COLONY_AUTHOR_TOKEN": owner.token,
                "COLONY_CIRCLE_ID": circle.uuidString.lowercased(),
            ])
            #expect(status == 0, "python client failed:\n\(output)")
        }
    }

    @Test("a client that never reads is disconnected once its outgoing queue overflows; the others stay connected")
    func slowClientIsDisconnected() async throws {
        // A public lobby (mycirclee's unscoped topics open) and no message rate limit to speak of.
        let settings = RealtimeSettings(socketBufferMessages: 16, quotas: RealtimeQuotas(messagesPerSecond: 100_000),
                                        topics: TopicRules(unscoped: [.mycirclee: .open]))
        let hub = RealtimeHub(settings: settings, replicaID: settings.replicaID)
        try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
        }, definition: { _ in RealtimeService.definition(settings: settings, hub: hub) }) { realtime in
            let port = try #require(URL(string: realtime.base)?.port)
            let slowToken = try await realtime.tokens.token(user: UUID(), app: .mycirclee)
            let key = try await realtime.tokens.apiKey(app: .mycirclee)
            let slow = try RawWebSocket(port: port, path: "/realtime/v1/websocket?apikey=\(key)")
            defer { slow.close() }
            try slow.sendText(#"{"topic":"realtime:firehose","event":"phx_join","payload":{"config":{"broadcast":{"self":false}},"access_token":"\#(slowToken)"},"ref":"1","join_ref":"1"}"#)
            try slow.readUntil("phx_reply")  // the join reply; from here on it never reads again
            #expect(hub.connectionCount == 1)

            let fast = TestSocket(base: realtime.base, apiKey: key)
            let fastToken = try await realtime.tokens.token(user: UUID(), app: .mycirclee)
            #expect(try await fast.join("realtime:firehose", token: fastToken, config: .object(["broadcast": .object(["self": .bool(false)])])).payload["status"] == "ok")
            try await waitUntil { hub.connectionCount == 2 }

            // ~6 KB broadcasts until the slow socket's kernel buffers, NIO's and its 16-frame queue are full.
            let filler = String(repeating: "x", count: 6000)
            var sent = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while hub.connectionCount == 2, ContinuousClock.now < deadline {
                for _ in 0..<100 {
                    fast.send(topic: "realtime:firehose", event: "broadcast", payload: .object(["type": "broadcast", "event": "fill", "payload": .object(["x": .string(filler)])]))
                }
                sent += 100
                // paced by the server: the heartbeat's reply comes after the batch was handled
                let ref = fast.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
                _ = try await fast.wait(timeout: .seconds(30)) { $0.event == "phx_reply" && $0.ref == ref }
            }
            #expect(hub.connectionCount == 1, "the slow client is still connected after \(sent) broadcasts")
            #expect(!fast.isClosed)
            // the slow socket's end is closed by the server: reading it reaches the end of the stream
            #expect(slow.drainsToEnd())
        }
    }
}

/// A blocking WebSocket client over a POSIX socket with a small receive buffer, for a client that stops reading.
final class RawWebSocket: @unchecked Sendable {
    let fd: Int32

    init(port: Int, path: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PhoenixProtocolError("socket failed") }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // A read waits at most this long: a deadline a busy 2-core machine meets.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw PhoenixProtocolError("connect failed") }
        try write(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        try readUntil("\r\n\r\n")
    }

    private var received: [UInt8] = []

    /// Reads until `marker` has arrived (anywhere in what was read so far).
    func readUntil(_ marker: String) throws {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { throw PhoenixProtocolError("read failed waiting for \(marker)") }
            received += buffer[0..<count]
        }
    }

    /// Reads whatever is left; true when the server closed the connection.
    func drainsToEnd() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { return true }
            if count < 0 { return false }
        }
    }

    /// A masked (zero mask) text frame.
    func sendText(_ text: String) throws {
        try write(Self.frame(text))
    }

    /// Several frames in one write: they reach the server at once.
    func sendTexts(_ texts: [String]) throws {
        try write(texts.flatMap(Self.frame))
    }

    static func frame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        frame += [0, 0, 0, 0]
        return frame + payload
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw PhoenixProtocolError("write failed") }
            offset += written
        }
    }

    func close() { Glibc.close(fd) }
}
