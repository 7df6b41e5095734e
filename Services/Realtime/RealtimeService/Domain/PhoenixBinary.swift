import ColonyModels
import Foundation

/// How a user broadcast's payload is encoded (the frame's encoding byte: 0 binary, anything else JSON,
/// as Supabase Realtime reads it).
public enum UserPayloadEncoding: UInt8, Sendable, Equatable {
    case binary = 0
    case json = 1
}

/// What a binary frame from a client carries besides its topic, event and refs.
public enum BinaryPayload: Sendable, Equatable {
    /// A push (kind 0): the event's payload as raw bytes.
    case push([UInt8])
    /// A user broadcast push (kind 3): the user's event, the payload's encoding and bytes (a JSON
    /// payload is checked to be JSON), and the metadata (JSON, when the frame has any).
    case userBroadcast(event: String, encoding: UserPayloadEncoding, payload: [UInt8], metadata: JSONValue?)
}

/// One frame for the socket's writer.
public enum OutboundFrame: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// Serializer 2.0.0's binary frames, laid out as Supabase Realtime's `RealtimeWeb.Socket.V2Serializer`
/// reads and writes them (supabase-swift's `RealtimeV2/RealtimeSerializer.swift` writes the same):
/// a kind byte, one length byte per string field, the fields, then the payload bytes.
///   push (0), client → server:           kind, join_ref, ref, topic, event lengths; the fields; payload
///   user broadcast push (3), client → server: kind, join_ref, ref, topic, user event, metadata lengths,
///                                        encoding; the fields; metadata (JSON); payload
///   broadcast (2), server → client:      kind, topic, event lengths; the fields; payload
///   user broadcast (4), server → client: kind, topic, user event, metadata lengths, encoding; the fields; payload
/// Replies (1) are sent as text, as Supabase does for every reply whose payload is a map. Any other
/// kind, or a frame shorter than its lengths say, is malformed (Supabase logs and ignores it).
public enum PhoenixBinary {
    public static let push: UInt8 = 0
    public static let reply: UInt8 = 1
    public static let broadcast: UInt8 = 2
    public static let userBroadcastPush: UInt8 = 3
    public static let userBroadcast: UInt8 = 4

    public static func decode(_ bytes: [UInt8]) throws(PhoenixProtocolError) -> PhoenixMessage {
        var reader = ByteReader(bytes)
        guard let kind = reader.byte() else { throw PhoenixProtocolError("empty binary frame") }
        switch kind {
        case push:
            guard let joinRefSize = reader.byte(), let refSize = reader.byte(), let topicSize = reader.byte(), let eventSize = reader.byte() else {
                throw PhoenixProtocolError("binary push: header too short")
            }
            let joinRef = try reader.string(joinRefSize, "join_ref")
            let ref = try reader.string(refSize, "ref")
            let topic = try reader.string(topicSize, "topic")
            let event = try reader.string(eventSize, "event")
            return PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: .null, binary: .push(reader.rest()))
        case userBroadcastPush:
            guard let joinRefSize = reader.byte(), let refSize = reader.byte(), let topicSize = reader.byte(), let eventSize = reader.byte(),
                  let metadataSize = reader.byte(), let encodingByte = reader.byte()
            else { throw PhoenixProtocolError("user broadcast push: header too short") }
            let joinRef = try reader.string(joinRefSize, "join_ref")
            let ref = try reader.string(refSize, "ref")
            let topic = try reader.string(topicSize, "topic")
            let userEvent = try reader.string(eventSize, "user event")
            guard let metadataBytes = reader.take(metadataSize) else { throw PhoenixProtocolError("user broadcast push: metadata shorter than its length") }
            let metadata = metadataBytes.isEmpty ? nil : try PhoenixJSON.decode(metadataBytes)
            let encoding: UserPayloadEncoding = encodingByte == 0 ? .binary : .json
            let payload = reader.rest()
            // A JSON payload reaches 1.0.0 sockets inside a JSON message: it must be JSON.
            if encoding == .json { _ = try PhoenixJSON.decode(payload) }
            return PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: PhoenixEvent.broadcast, payload: .null,
                                  binary: .userBroadcast(event: userEvent, encoding: encoding, payload: payload, metadata: metadata))
        default:
            throw PhoenixProtocolError("binary frame of kind \(kind) is not one a client sends")
        }
    }

    /// A user broadcast (kind 4) for a 2.0.0 socket; nil when the topic or event is over 255 bytes
    /// (Supabase cannot frame those either).
    public static func userBroadcastFrame(topic: String, event: String, encoding: UserPayloadEncoding, payload: [UInt8]) -> [UInt8]? {
        let topicBytes = Array(topic.utf8), eventBytes = Array(event.utf8)
        guard let topicSize = UInt8(exactly: topicBytes.count), let eventSize = UInt8(exactly: eventBytes.count) else { return nil }
        var frame: [UInt8] = [userBroadcast, topicSize, eventSize, 0, encoding.rawValue]
        frame.reserveCapacity(5 + topicBytes.count + eventBytes.count + payload.count)
        frame += topicBytes
        frame += eventBytes
        frame += payload
        return frame
    }

    /// A broadcast with a binary payload (kind 2) for a 2.0.0 socket; nil when a field is over 255 bytes.
    public static func broadcastFrame(topic: String, event: String, payload: [UInt8]) -> [UInt8]? {
        let topicBytes = Array(topic.utf8), eventBytes = Array(event.utf8)
        guard let topicSize = UInt8(exactly: topicBytes.count), let eventSize = UInt8(exactly: eventBytes.count) else { return nil }
        return [broadcast, topicSize, eventSize] + topicBytes + eventBytes + payload
    }
}

/// Reads a frame front to back; every read is checked against what is left.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: UInt8) -> [UInt8]? {
        let count = Int(count)
        guard bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func string(_ count: UInt8, _ name: String) throws(PhoenixProtocolError) -> String {
        guard let bytes = take(count) else { throw PhoenixProtocolError("binary frame: \(name) shorter than its length") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw PhoenixProtocolError("binary frame: \(name) is not UTF-8") }
        return text
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// JSON from clients: nesting is bounded before anything is decoded (a deeper document is refused,
/// not recursed into), and the bytes must be UTF-8.
public enum PhoenixJSON {
    /// Arrays and objects nested deeper than this are refused; no client payload needs more.
    public static let maxDepth = 64

    public static func decode(_ bytes: some Collection<UInt8>) throws(PhoenixProtocolError) -> JSONValue {
        guard !exceedsDepth(bytes, limit: maxDepth) else { throw PhoenixProtocolError("JSON nested deeper than \(maxDepth) levels") }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { throw PhoenixProtocolError("message is not JSON") }
        return value
    }

    /// Whether the text nests arrays or objects deeper than `limit`, brackets inside strings aside.
    static func exceedsDepth(_ bytes: some Collection<UInt8>, limit: Int) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }
}

/// What a client's broadcast carries to the channel's other members: a JSON payload (text
/// frames, both serializers), a user broadcast push's payload, or a binary push's bytes.
public enum BroadcastBody: Sendable, Equatable {
    case json(String)
    case user(event: String, encoding: UserPayloadEncoding, payload: [UInt8])
    case binary([UInt8])

    /// What the quota counts: the JSON text; a user broadcast's payload with its event; binary
    /// bytes as the base64 text that carries them between replicas.
    public var relaySize: Int {
        switch self {
        case .json(let text): text.utf8.count
        case .user(let event, .json, let payload): payload.count + JSONText.string(event).utf8.count
        case .user(let event, .binary, let payload): Self.base64Size(payload.count) + JSONText.string(event).utf8.count
        case .binary(let payload): Self.base64Size(payload.count)
        }
    }

    static func base64Size(_ count: Int) -> Int { (count / 3 + (count % 3 == 0 ? 0 : 1)) * 4 }

    /// The frame a subscriber gets, as Supabase's `MessageDispatcher` sends it: JSON broadcasts as
    /// text; user broadcasts as kind 4 to 2.0.0 sockets and, when JSON, converted to a `broadcast`
    /// message `{event, payload, type}` for 1.0.0 sockets; binary broadcasts as kind 2 to 2.0.0
    /// sockets only. Nil: this subscriber cannot be sent it.
    public func frame(for serializer: PhoenixSerializer, joinRef: String?, topic: String, event: String) -> OutboundFrame? {
        switch (self, serializer) {
        case (.json(let payload), _):
            return .text(serializer.encode(joinRef: joinRef, ref: nil, topic: topic, event: event, payloadJSON: payload))
        case (.user(let userEvent, let encoding, let payload), .v2):
            return PhoenixBinary.userBroadcastFrame(topic: topic, event: userEvent, encoding: encoding, payload: payload).map(OutboundFrame.binary)
        case (.user(let userEvent, .json, let payload), .v1):
            guard let json = String(validating: payload, as: UTF8.self) else { return nil }
            let converted = "{\"event\":\(JSONText.string(userEvent)),\"payload\":\(json),\"type\":\"broadcast\"}"
            return .text(serializer.encode(joinRef: joinRef, ref: nil, topic: topic, event: event, payloadJSON: converted))
        case (.user(_, .binary, _), .v1):
            return nil
        case (.binary(let payload), .v2):
            return PhoenixBinary.broadcastFrame(topic: topic, event: event, payload: payload).map(OutboundFrame.binary)
        case (.binary, .v1):
            return nil
        }
    }

    /// The body inside the replicas' NOTIFY envelope (after `"k":`): kind and fields.
    public var relayFields: String {
        switch self {
        case .json(let payload): "\"broadcast\",\"p\":\(payload)"
        case .user(let event, let encoding, let payload):
            "\"user_broadcast\",\"e\":\(JSONText.string(event)),\"j\":\(encoding == .json),\"b\":\"\(Data(payload).base64EncodedString())\""
        case .binary(let payload): "\"binary_broadcast\",\"b\":\"\(Data(payload).base64EncodedString())\""
        }
    }

    /// A body from another replica's envelope; nil for a kind that is not a broadcast.
    public static func relayed(kind: String, envelope: JSONValue) -> BroadcastBody? {
        switch kind {
        case "broadcast":
            return envelope["p"].map { .json(JSONText.encode($0)) }
        case "user_broadcast":
            guard let event = envelope["e"]?.stringValue, let json = envelope["j"]?.boolValue,
                  let text = envelope["b"]?.stringValue, let data = Data(base64Encoded: text) else { return nil }
            return .user(event: event, encoding: json ? .json : .binary, payload: Array(data))
        case "binary_broadcast":
            guard let text = envelope["b"]?.stringValue, let data = Data(base64Encoded: text) else { return nil }
            return .binary(Array(data))
        default:
            return nil
        }
    }
}
