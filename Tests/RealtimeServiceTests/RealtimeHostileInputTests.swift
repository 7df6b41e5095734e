import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization
import Testing
@testable import RealtimeService

/// Frames no well-behaved client sends: the decoders answer each without a trap (issue 33).
@Suite("Realtime: hostile frames decode without a trap")
struct RealtimeHostileDecodingTests {
    /// The frame that ended colony-realtime with SIGILL: `ref` was `Int(1e300)`.
    static let heartbeat1e300 = #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":1e300}"#

    @Test("the 1e300 heartbeat decodes; refs of any size become strings")
    func hugeRefs() throws {
        let message = try PhoenixSerializer.v1.decode(Self.heartbeat1e300)
        #expect(message.topic == "phoenix" && message.event == "heartbeat")
        #expect(message.ref == "1e+300")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":-1e300,"join_ref":1e19}"#).ref == "-1e+300")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":10000000000000000000}"#).ref == "1e+19")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":-9223372036854775808}"#).ref == "-9223372036854775808")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":9223372036854775807}"#).ref != nil)
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":12}"#).ref == "12")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":1.5}"#).ref == "1.5")
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","ref":[1],"join_ref":{"a":1}}"#).ref == nil)
        #expect(try PhoenixSerializer.v2.decode(#"[1e300,-1e300,"phoenix","heartbeat",{}]"#).ref == "-1e+300")
        // Numbers JSON cannot carry as a Double, and the words that are not JSON at all.
        for text in [#"{"topic":"t","event":"e","ref":1e400}"#, #"{"topic":"t","event":"e","ref":NaN}"#, #"{"topic":"t","event":"e","ref":Infinity}"#,
                     #"{"topic":"t","event":"e","ref":-Infinity}"#, "NaN", "1e999"] {
            #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v1.decode(text) }
        }
    }

    @Test("payloads with huge numbers encode back as JSON")
    func hugeNumbersEncode() throws {
        let message = try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","payload":{"a":1e300,"b":-1e300,"c":1e19,"d":0.1,"e":-0}}"#)
        let text = JSONText.encode(message.payload)
        let again = try PhoenixJSON.decode(Array(text.utf8))
        #expect(again == message.payload)
    }

    @Test("nesting is bounded before decoding: depth 64 passes, 65 and 100000 are refused")
    func deepNesting() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(throws: Never.self) { try PhoenixJSON.decode(Array(nested(64).utf8)) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixJSON.decode(Array(nested(65).utf8)) }
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v2.decode(deep) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","payload":"# + String(repeating: #"{"a":"#, count: 100_000)) }
        // Brackets inside strings are text, not nesting.
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"t","event":"e","payload":{"x":""# + String(repeating: "[", count: 1000) + #"\"["}}"#).topic == "t")
    }

    @Test("wrong types, short arrays, invalid UTF-8 and huge strings are refused or read, never a trap")
    func wrongShapes() throws {
        for text in ["", "null", "[]", "{}", "[1,2,3,4]", #"[null,null,5,"e",{}]"#, #"{"topic":5,"event":"e"}"#, #"{"topic":"t"}"#, "\"text\"", "42", "{", "[\"a\""] {
            #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v1.decode(text) }
            #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v2.decode(text) }
        }
        // Supabase's V2 serializer takes arrays of five or more.
        #expect(try PhoenixSerializer.v2.decode(#"["1","2","t","e",{},"extra",7]"#).event == "e")
        // A payload of another type than a map is kept; its fields are simply absent.
        #expect(try PhoenixSerializer.v2.decode(#"[null,null,"t","phx_join",[1,2]]"#).payload["access_token"] == nil)
        let invalid: [UInt8] = Array(#"{"topic":"t","event":""#.utf8) + [0xFF, 0xFE, 0xC0] + Array(#""}"#.utf8)
        #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v1.decode(text: invalid) }
        let huge = String(repeating: "x", count: 2_000_000)
        #expect(try PhoenixSerializer.v1.decode(#"{"topic":"\#(huge)","event":"e"}"#).topic.count == 2_000_000)
    }

    /// The bytes supabase-swift's `RealtimeSerializer.encodeBroadcastPush(joinRef:ref:topic:event:jsonPayload:)`
    /// (Sources/RealtimeV2/RealtimeSerializer.swift) writes for its own test vector
    /// (Tests/RealtimeTests/RealtimeSerializerTests.swift, `encodeBroadcastPush_jsonPayload`).
    static let swiftUserBroadcastPush: [UInt8] = [3, 1, 1, 13, 8, 0, 1] + Array("12realtime:testmy_event".utf8) + Array(#"{"hello":"world"}"#.utf8)

    @Test("a user broadcast push as supabase-swift encodes it")
    func userBroadcastPush() throws {
        let message = try PhoenixSerializer.v2.decode(frame: Self.swiftUserBroadcastPush, binary: true)
        #expect(message.joinRef == "1" && message.ref == "2" && message.topic == "realtime:test" && message.event == "broadcast")
        #expect(message.binary == .userBroadcast(event: "my_event", encoding: .json, payload: Array(#"{"hello":"world"}"#.utf8), metadata: nil))
        // Its binary payload variant (`encodeBroadcastPush_binaryPayload`): no refs, raw bytes.
        let binary: [UInt8] = [3, 0, 0, 13, 9, 0, 0] + Array("realtime:testbin_event".utf8) + [0x01, 0x02, 0x03, 0xFF]
        let decoded = try PhoenixSerializer.v2.decode(frame: binary, binary: true)
        #expect(decoded.binary == .userBroadcast(event: "bin_event", encoding: .binary, payload: [0x01, 0x02, 0x03, 0xFF], metadata: nil))
        #expect(decoded.joinRef == "" && decoded.ref == "")
        // Metadata is JSON; any encoding byte but 0 means JSON, as Supabase reads it.
        let withMeta: [UInt8] = [3, 0, 1, 1, 1, 8, 7] + Array("5te".utf8) + Array(#"{"id":1}"#.utf8) + Array("[1]".utf8)
        #expect(try PhoenixSerializer.v2.decode(frame: withMeta, binary: true).binary
            == .userBroadcast(event: "e", encoding: .json, payload: Array("[1]".utf8), metadata: .object(["id": .number(1)])))
        // A binary push (kind 0).
        let push: [UInt8] = [0, 1, 1, 7, 9] + Array("12phoenixheartbeat".utf8) + [0, 0xFF]
        let pushed = try PhoenixSerializer.v2.decode(frame: push, binary: true)
        #expect(pushed.topic == "phoenix" && pushed.event == "heartbeat" && pushed.binary == .push([0, 0xFF]))
        // A 1.0.0 socket reads a binary frame's bytes as JSON, as Phoenix's V1 serializer does.
        #expect(try PhoenixSerializer.v1.decode(frame: Array(Self.heartbeat1e300.utf8), binary: true).event == "heartbeat")
    }

    @Test("every binary kind, cut at every length, with every length byte: refused or decoded, never a trap")
    func truncatedBinaryFrames() throws {
        let frames: [[UInt8]] = [
            Self.swiftUserBroadcastPush,
            [0, 1, 1, 7, 9] + Array("12phoenixheartbeat".utf8) + [1, 2, 3],
            [1, 1, 1, 1, 2] + Array("12tok".utf8),
            [2, 1, 1] + Array("te".utf8) + [9],
            [4, 1, 1, 0, 1] + Array("te{}".utf8),
        ]
        for frame in frames {
            for end in 0...frame.count {
                _ = try? PhoenixSerializer.v2.decode(frame: Array(frame[..<end]), binary: true)
            }
            // Every header byte at every value.
            for index in 0..<min(frame.count, 7) {
                for value in UInt8.min...UInt8.max {
                    var changed = frame
                    changed[index] = value
                    _ = try? PhoenixSerializer.v2.decode(frame: changed, binary: true)
                }
            }
        }
        for kind in UInt8.min...UInt8.max where kind != 0 && kind != 3 {
            #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([kind, 0, 0, 0, 0, 0, 0]) }
        }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([]) }
        // Declared lengths past the end, invalid UTF-8 in a field, metadata or a JSON payload that is not JSON.
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([3, 255, 255, 255, 255, 255, 1]) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([3, 0, 0, 2, 1, 0, 1, 0xFF, 0xFE, 0x65]) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([3, 0, 0, 1, 1, 1, 0, 0x74, 0x65, 0x7B]) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([3, 0, 0, 1, 1, 0, 1, 0x74, 0x65, 0x7B]) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixBinary.decode([3, 0, 0, 1, 1, 0, 1, 0x74, 0x65] + Array(String(repeating: "[", count: 100_000).utf8)) }
    }

    @Test("subscribers get a user broadcast as Supabase sends it: kind 4 to 2.0.0, converted JSON to 1.0.0, binary only to 2.0.0")
    func broadcastFrames() throws {
        let json = BroadcastBody.user(event: "my_event", encoding: .json, payload: Array(#"{"hello":"world"}"#.utf8))
        #expect(json.frame(for: .v2, joinRef: "9", topic: "realtime:test", event: "broadcast")
            == .binary([4, 13, 8, 0, 1] + Array("realtime:testmy_event".utf8) + Array(#"{"hello":"world"}"#.utf8)))
        guard case .text(let text)? = json.frame(for: .v1, joinRef: "9", topic: "realtime:test", event: "broadcast") else {
            Issue.record("a JSON user broadcast reaches 1.0.0 sockets as text")
            return
        }
        let converted = try PhoenixSerializer.v1.decode(text)
        #expect(converted.event == "broadcast" && converted.payload == .object(["event": "my_event", "type": "broadcast", "payload": .object(["hello": "world"])]))
        let binary = BroadcastBody.user(event: "b", encoding: .binary, payload: [0, 1, 2])
        #expect(binary.frame(for: .v1, joinRef: nil, topic: "realtime:t", event: "broadcast") == nil)
        #expect(binary.frame(for: .v2, joinRef: nil, topic: "realtime:t", event: "broadcast") == .binary([4, 10, 1, 0, 0] + Array("realtime:tb".utf8) + [0, 1, 2]))
        #expect(BroadcastBody.binary([7]).frame(for: .v2, joinRef: nil, topic: "realtime:t", event: "broadcast")
            == .binary([2, 10, 9] + Array("realtime:tbroadcast".utf8) + [7]))
        #expect(BroadcastBody.binary([7]).frame(for: .v1, joinRef: nil, topic: "realtime:t", event: "broadcast") == nil)
        // A topic over 255 bytes cannot be framed in binary: skipped, not trapped.
        #expect(binary.frame(for: .v2, joinRef: nil, topic: String(repeating: "t", count: 256), event: "broadcast") == nil)
        // Between replicas: the body survives its envelope.
        for body in [json, binary, BroadcastBody.binary([0, 255]), BroadcastBody.json(#"{"a":1}"#)] {
            let envelope = try PhoenixJSON.decode(Array("{\"k\":\(body.relayFields)}".utf8))
            #expect(BroadcastBody.relayed(kind: envelope["k"]?.stringValue ?? "", envelope: envelope) == body)
        }
        #expect(BroadcastBody.binary(Array(repeating: 0, count: 5250)).relaySize == 7000)
    }

    @Test("messages are assembled up to the limit; over it, or a stray continuation, is refused with a reason")
    func assembler() {
        var assembler = MessageAssembler(limit: 10)
        #expect(assembler.add(opcode: .text, data: Array("12345".utf8), fin: false) == .incomplete)
        #expect(assembler.add(opcode: .continuation, data: Array("67890".utf8), fin: true) == .message(Array("1234567890".utf8), binary: false))
        #expect(assembler.add(opcode: .binary, data: [1], fin: true) == .message([1], binary: true))
        #expect(assembler.add(opcode: .binary, data: Array(repeating: 0, count: 6), fin: false) == .incomplete)
        #expect(assembler.add(opcode: .continuation, data: Array(repeating: 0, count: 6), fin: true) == .refused("message too big: at most 10 bytes", .messageTooBig))
        #expect(assembler.add(opcode: .continuation, data: [1], fin: true) == .refused("continuation frame without a message to continue", .protocolError))
    }

    @Test("other input traps: NaN filters, row columns, an exp of -1e300")
    func otherTraps() throws {
        #expect(try RowFilter.parse("n=eq.nan").matches(["n": .number(1)]) == false)
        #expect(RowFilter(column: "n", op: .eq, values: []).matches(["n": .number(1)]) == false)
        #expect(TokenExpiry.secondsSince(Date(timeIntervalSince1970: -1e300)) == 1_000_000_000_000_000)
        #expect(TokenExpiry.secondsSince(Date.distantFuture) == 0)
        #expect(RealtimeSocket.reason(for: APIError.unauthorized("expired", code: "token_expired"), token: "a.eyJleHAiOi0xZTMwMH0.c").hasPrefix("Token has expired"))
    }
}

/// A socket that sends raw frames (text or binary) and records every frame and the close frame.
final class RawSocket: Sendable {
    enum Frame: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
    }

    private final class Inbox: Sendable {
        let received = Mutex<[Frame]>([])
        let closeFrame = Mutex<(code: Int, reason: String?)?>(nil)
        let done = Mutex(false)
    }
    private let inbox = Inbox()
    private let outgoing: AsyncStream<Frame>.Continuation
    private let task: Task<Void, Never>

    /// `maxFrameSize`: the client's own frame size (larger messages go as continuation frames).
    init(base: String, apiKey: String, vsn: String? = "2.0.0", maxFrameSize: Int = 1 << 23) {
        let (stream, continuation) = AsyncStream<Frame>.makeStream()
        outgoing = continuation
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/realtime/v1/websocket?apikey=\(apiKey)" + (vsn.map { "&vsn=\($0)" } ?? "")
        let inbox = self.inbox
        task = Task {
            let close = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: maxFrameSize), logger: Logger(label: "raw-socket")) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await frame in stream {
                            switch frame {
                            case .text(let text): try await outbound.write(.text(text))
                            case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                            }
                        }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 23) {
                        switch message {
                        case .text(let text): inbox.received.withLock { $0.append(.text(text)) }
                        case .binary(let buffer): inbox.received.withLock { $0.append(.binary(Array(buffer.readableBytesView))) }
                        }
                    }
                    group.cancelAll()
                }
            }
            if let close { inbox.closeFrame.withLock { $0 = (Int(UInt16(webSocketErrorCode: close.closeCode)), close.reason) } }
            inbox.done.withLock { $0 = true }
        }
    }

    deinit { outgoing.finish(); task.cancel() }

    func send(_ frame: Frame) { outgoing.yield(frame) }
    func send(_ text: String) { outgoing.yield(.text(text)) }
    var frames: [Frame] { inbox.received.withLock { $0 } }
    var isClosed: Bool { inbox.done.withLock { $0 } }
    var close: (code: Int, reason: String?)? { inbox.closeFrame.withLock { $0 } }

    /// The text frames, decoded as 2.0.0 arrays.
    var messages: [PhoenixMessage] {
        frames.compactMap { if case .text(let text) = $0 { try? PhoenixSerializer.v2.decode(text) } else { nil } }
    }

    func wait(timeout: Duration = .seconds(20), _ predicate: @Sendable (Frame) -> Bool) async throws -> Frame {
        var found: Frame?
        do {
            try await waitUntil(timeout: timeout) {
                found = frames.first(where: predicate)
                return found != nil
            }
        } catch {
            throw TestSetupError("\(error); received: \(frames.suffix(8))")
        }
        return found!
    }

    func waitForMessage(timeout: Duration = .seconds(20), _ predicate: @Sendable (PhoenixMessage) -> Bool) async throws -> PhoenixMessage {
        let frame = try await wait(timeout: timeout) { frame in
            if case .text(let text) = frame, let message = try? PhoenixSerializer.v2.decode(text) { return predicate(message) }
            return false
        }
        guard case .text(let text) = frame else { throw TestSetupError("not text") }
        return try PhoenixSerializer.v2.decode(text)
    }

    /// Sends a heartbeat with a fresh ref and waits for its reply.
    func heartbeat(_ ref: String) async throws {
        send("[null,\"\(ref)\",\"phoenix\",\"heartbeat\",{}]")
        _ = try await waitForMessage { $0.event == "phx_reply" && $0.ref == ref && $0.payload["status"] == "ok" }
    }

    func stop() { outgoing.finish(); task.cancel() }
}

@Suite("Realtime: hostile frames over a real socket", .serialized)
struct RealtimeHostileSocketTests {
    /// Unify's unscoped topics open to broadcast (the default allows postgres_changes only); a new
    /// replica id each time.
    static var open: RealtimeSettings { RealtimeSettings(topics: TopicRules(unscoped: [.unify: .open])) }

    @Test("the 1e300 heartbeat on an anon-key socket is answered, and the service goes on")
    func heartbeat1e300() async throws {
        try await withRunningRealtime { realtime in
            let key = try await realtime.tokens.apiKey(app: .unify)
            let socket = TestSocket(base: realtime.base, apiKey: key)
            let raw = RawSocket(base: realtime.base, apiKey: key, vsn: nil)
            raw.send(RealtimeHostileDecodingTests.heartbeat1e300)
            let reply = try await raw.wait { if case .text(let text) = $0 { text.contains("phx_reply") } else { false } }
            guard case .text(let text) = reply else { return }
            let message = try PhoenixSerializer.v1.decode(text)
            #expect(message.ref == "1e+300" && message.payload["status"] == "ok")
            // Garbage of every kind on the same socket: ignored (Supabase logs malformed frames), the socket stays.
            let deep = String(repeating: "[", count: 100_000)
            for frame: RawSocket.Frame in [.text(deep), .text("NaN"), .text(#"{"topic":1e999}"#), .binary([0xFF, 0xFE]), .binary([]),
                                           .text(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":-1e300}"#)] {
                raw.send(frame)
            }
            raw.send(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"after"}"#)
            _ = try await raw.wait { if case .text(let text) = $0 { text.contains("\"after\"") } else { false } }
            #expect(!raw.isClosed)
            // Another socket opened before the frames still works.
            socket.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
            _ = try await socket.wait { $0.event == "phx_reply" }
        }
    }

    @Test("every binary kind, truncated, on a 2.0.0 socket: ignored; the socket answers heartbeats after each")
    func binaryGarbage() async throws {
        try await withRunningRealtime { realtime in
            let key = try await realtime.tokens.apiKey(app: .unify)
            let raw = RawSocket(base: realtime.base, apiKey: key)
            var index = 0
            for kind in UInt8(0)...5 {
                for length in 0...8 {
                    raw.send(.binary(Array([kind, 255, 255, 255, 255, 255, 255, 1].prefix(length))))
                }
                index += 1
                try await raw.heartbeat("hb-\(index)")
            }
            // A binary heartbeat push (kind 0) is answered like a text one.
            raw.send(.binary([0, 0, 2, 7, 9] + Array("b1phoenixheartbeat".utf8)))
            _ = try await raw.waitForMessage { $0.ref == "b1" && $0.payload["status"] == "ok" }
            #expect(!raw.isClosed)
        }
    }

    @Test("a message over the frame limit ends with a 1009 close frame and a reason, as one frame or as continuations")
    func oversized() async throws {
        try await withRunningRealtime(settings: RealtimeSettings(maxFrameBytes: 64 * 1024)) { realtime in
            let key = try await realtime.tokens.apiKey(app: .unify)
            let payload = String(repeating: "x", count: 100 * 1024)
            for clientFrameSize in [1 << 20, 16 * 1024] {
                let raw = RawSocket(base: realtime.base, apiKey: key, maxFrameSize: clientFrameSize)
                try await raw.heartbeat("before")
                raw.send("[null,\"big\",\"phoenix\",\"heartbeat\",{\"x\":\"\(payload)\"}]")
                try await waitUntil(timeout: .seconds(20)) { raw.isClosed }
                let close = try #require(raw.close, "no close frame (client frames of \(clientFrameSize) bytes)")
                #expect(close.code == 1009)
                #expect(close.reason == "message too big: at most 65536 bytes")
            }
            // The service goes on.
            let after = RawSocket(base: realtime.base, apiKey: key)
            try await after.heartbeat("after")
        }
    }

    @Test("two 2.0.0 sockets exchange a user broadcast push with ack, in supabase-swift's bytes; a 1.0.0 socket gets it as JSON")
    func userBroadcastWithAck() async throws {
        try await withRunningRealtime(settings: Self.open) { realtime in
            let key = try await realtime.tokens.apiKey(app: .unify)
            let topic = "realtime:swift-\(UUID().uuidString.lowercased().prefix(8))"
            let sender = RawSocket(base: realtime.base, apiKey: key)
            let receiver = RawSocket(base: realtime.base, apiKey: key)
            let legacy = TestSocket(base: realtime.base, apiKey: key)
            let token = try await realtime.tokens.token(user: UUID(), app: .unify)
            let join = #"{"config":{"broadcast":{"ack":true,"self":false},"presence":{"key":""},"postgres_changes":[],"private":false},"access_token":"\#(token)"}"#
            sender.send("[\"1\",\"1\",\"\(topic)\",\"phx_join\",\(join)]")
            receiver.send("[\"1\",\"1\",\"\(topic)\",\"phx_join\",\(join)]")
            _ = try await sender.waitForMessage { $0.event == "phx_reply" && $0.payload["status"] == "ok" }
            _ = try await receiver.waitForMessage { $0.event == "phx_reply" && $0.payload["status"] == "ok" }
            #expect(try await legacy.join(topic, token: try await realtime.tokens.token(user: UUID(), app: .unify)).payload["status"] == "ok")

            // RealtimeChannelV2.broadcast(event:message:) → RealtimeSerializer.encodeBroadcastPush: join ref "1", ref "2".
            let topicBytes = Array(topic.utf8), event = Array("my_event".utf8), payload = Array(#"{"hello":"world"}"#.utf8)
            let push: [UInt8] = [3, 1, 1, UInt8(topicBytes.count), UInt8(event.count), 0, 1] + Array("12".utf8) + topicBytes + event + payload
            sender.send(.binary(push))
            let ack = try await sender.waitForMessage { $0.event == "phx_reply" && $0.ref == "2" }
            #expect(ack.joinRef == "1" && ack.topic == topic && ack.payload == .object(["status": "ok", "response": .object([:])]))
            let delivered = try await receiver.wait { if case .binary = $0 { true } else { false } }
            #expect(delivered == .binary([4, UInt8(topicBytes.count), UInt8(event.count), 0, 1] + topicBytes + event + payload))
            let converted = try await legacy.wait { $0.event == "broadcast" }
            #expect(converted.payload == .object(["event": "my_event", "type": "broadcast", "payload": .object(["hello": "world"])]))
            #expect(!sender.frames.contains { if case .binary = $0 { true } else { false } })

            // A binary payload reaches 2.0.0 sockets only; over the quota (as base64) the ack says so.
            let bytes: [UInt8] = [0, 1, 2, 0xFF]
            sender.send(.binary([3, 1, 1, UInt8(topicBytes.count), 3, 0, 0] + Array("13".utf8) + topicBytes + Array("bin".utf8) + bytes))
            _ = try await sender.waitForMessage { $0.ref == "3" && $0.payload["status"] == "ok" }
            _ = try await receiver.wait { $0 == .binary([4, UInt8(topicBytes.count), 3, 0, 0] + topicBytes + Array("bin".utf8) + bytes) }
            let big = Array(repeating: UInt8(7), count: 6000)
            sender.send(.binary([3, 1, 1, UInt8(topicBytes.count), 3, 0, 0] + Array("14".utf8) + topicBytes + Array("big".utf8) + big))
            let refused = try await sender.waitForMessage { $0.ref == "4" }
            #expect(refused.payload == .object(["status": "error", "response": "payload_size_exceeded"]))
            try await Task.sleep(for: .milliseconds(300))
            #expect(!legacy.messages.contains { $0.payload["event"] == "bin" })
        }
    }

    @Test("a user broadcast crosses replicas")
    func userBroadcastAcrossReplicas() async throws {
        try await withRunningRealtime(settings: Self.open) { realtime in
            try await withSecondReplica(of: realtime, settings: Self.open) { second in
                let key = try await realtime.tokens.apiKey(app: .unify)
                let topic = "realtime:replicas-\(UUID().uuidString.lowercased().prefix(8))"
                let sender = RawSocket(base: realtime.base, apiKey: key)
                let receiver = RawSocket(base: second, apiKey: key)
                let token = try await realtime.tokens.token(user: UUID(), app: .unify)
                let join = #"{"config":{"broadcast":{"ack":true}},"access_token":"\#(token)"}"#
                for socket in [sender, receiver] {
                    socket.send("[\"1\",\"1\",\"\(topic)\",\"phx_join\",\(join)]")
                    _ = try await socket.waitForMessage { $0.event == "phx_reply" && $0.payload["status"] == "ok" }
                }
                let topicBytes = Array(topic.utf8)
                sender.send(.binary([3, 1, 1, UInt8(topicBytes.count), 1, 0, 0] + Array("12".utf8) + topicBytes + Array("e".utf8) + [9, 8, 7]))
                _ = try await sender.waitForMessage { $0.ref == "2" && $0.payload["status"] == "ok" }
                _ = try await receiver.wait { $0 == .binary([4, UInt8(topicBytes.count), 1, 0, 0] + topicBytes + Array("e".utf8) + [9, 8, 7]) }
            }
        }
    }
}
