import ColonyModels
import Foundation

/// One Phoenix channel message, as Supabase Realtime exchanges them.
public struct PhoenixMessage: Sendable, Equatable {
    public var joinRef: String?
    public var ref: String?
    public var topic: String
    public var event: String
    public var payload: JSONValue
    /// A binary frame's payload (serializer 2.0.0); `payload` is then `null`.
    public var binary: BinaryPayload?

    public init(joinRef: String? = nil, ref: String? = nil, topic: String, event: String, payload: JSONValue, binary: BinaryPayload? = nil) {
        self.joinRef = joinRef
        self.ref = ref
        self.topic = topic
        self.event = event
        self.payload = payload
        self.binary = binary
    }
}

/// Phoenix's event names and the topic of socket-level messages.
public enum PhoenixEvent {
    public static let join = "phx_join"
    public static let reply = "phx_reply"
    public static let leave = "phx_leave"
    public static let close = "phx_close"
    public static let error = "phx_error"
    public static let heartbeat = "heartbeat"
    public static let accessToken = "access_token"
    public static let system = "system"
    public static let broadcast = "broadcast"
    public static let presence = "presence"
    public static let presenceState = "presence_state"
    public static let presenceDiff = "presence_diff"
    public static let postgresChanges = "postgres_changes"
    public static let phoenixTopic = "phoenix"
}

public struct PhoenixProtocolError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The wire format: `1.0.0` JSON objects (the default without `vsn`, the Python client's) or
/// `2.0.0` arrays `[join_ref, ref, topic, event, payload]` (supabase-swift's default).
public enum PhoenixSerializer: String, Sendable {
    case v1 = "1.0.0"
    case v2 = "2.0.0"

    /// The serializer for the socket's `vsn` query parameter; nil for a version we do not speak.
    public init?(vsn: String?) {
        guard let vsn, !vsn.isEmpty else { self = .v1; return }
        switch vsn {
        case "1.0.0", "1.0": self = .v1
        case "2.0.0", "2.0": self = .v2
        default: return nil
        }
    }

    public func decode(_ text: String) throws(PhoenixProtocolError) -> PhoenixMessage {
        try decode(text: Array(text.utf8))
    }

    /// A frame from a client. Text frames are JSON (1.0.0: an object, 2.0.0: an array of at least
    /// five, as Supabase's serializers take them); binary frames are 2.0.0's binary kinds, while a
    /// 1.0.0 socket reads a binary frame's bytes as JSON, as Phoenix's V1 serializer does.
    public func decode(frame bytes: [UInt8], binary: Bool) throws(PhoenixProtocolError) -> PhoenixMessage {
        binary && self == .v2 ? try PhoenixBinary.decode(bytes) : try decode(text: bytes)
    }

    public func decode(text bytes: [UInt8]) throws(PhoenixProtocolError) -> PhoenixMessage {
        let value = try PhoenixJSON.decode(bytes)
        switch (self, value) {
        case (.v1, .object(let object)):
            guard let topic = object["topic"]?.stringValue, let event = object["event"]?.stringValue else {
                throw PhoenixProtocolError("message needs topic and event")
            }
            return PhoenixMessage(joinRef: Self.ref(object["join_ref"]), ref: Self.ref(object["ref"]), topic: topic, event: event,
                                  payload: object["payload"] ?? .object([:]))
        case (.v2, .array(let items)):
            guard items.count >= 5, let topic = items[2].stringValue, let event = items[3].stringValue else {
                throw PhoenixProtocolError("message must be [join_ref, ref, topic, event, payload]")
            }
            return PhoenixMessage(joinRef: Self.ref(items[0]), ref: Self.ref(items[1]), topic: topic, event: event, payload: items[4])
        default:
            throw PhoenixProtocolError(self == .v1 ? "message must be a JSON object" : "message must be a JSON array")
        }
    }

    /// Refs are strings on the wire; some clients send numbers, of any size (`1e300` is not an Int).
    static func ref(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): text
        case .number(let number): Int64(exactly: number).map { String($0) } ?? String(number)
        default: nil
        }
    }

    public func encode(_ message: PhoenixMessage) -> String {
        encode(joinRef: message.joinRef, ref: message.ref, topic: message.topic, event: message.event, payloadJSON: JSONText.encode(message.payload))
    }

    /// Encodes with an already-encoded payload, so a change fanned out to many sockets is encoded once.
    public func encode(joinRef: String?, ref: String?, topic: String, event: String, payloadJSON: String) -> String {
        switch self {
        case .v1:
            return "{\"topic\":\(JSONText.string(topic)),\"event\":\(JSONText.string(event)),\"payload\":\(payloadJSON),\"ref\":\(JSONText.optional(ref)),\"join_ref\":\(JSONText.optional(joinRef))}"
        case .v2:
            return "[\(JSONText.optional(joinRef)),\(JSONText.optional(ref)),\(JSONText.string(topic)),\(JSONText.string(event)),\(payloadJSON)]"
        }
    }
}

/// Compact JSON text for `JSONValue`s (whole numbers without a fraction, as Phoenix sends ids).
public enum JSONText {
    public static func encode(_ value: JSONValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    public static func write(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let number):
            if number == number.rounded(), abs(number) < 9e15 { out += String(Int64(number)) } else { out += "\(number)" }
        case .string(let text): out += string(text)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            var first = true
            for (key, item) in object.sorted(by: { $0.key < $1.key }) {
                if !first { out += "," }
                first = false
                out += string(key)
                out += ":"
                write(item, to: &out)
            }
            out += "}"
        }
    }

    public static func optional(_ text: String?) -> String {
        text.map(string) ?? "null"
    }

    public static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }
}

/// The replies and pushes the server sends, in Supabase Realtime's shapes.
public enum PhoenixReplies {
    public static func ok(_ request: PhoenixMessage, response: JSONValue = .object([:])) -> PhoenixMessage {
        reply(request, status: "ok", response: response)
    }

    public static func error(_ request: PhoenixMessage, reason: String) -> PhoenixMessage {
        reply(request, status: "error", response: .object(["reason": .string(reason)]))
    }

    /// `phx_reply` with `{status, response}`; Phoenix sends a bare atom response as a string
    /// (`{"status":"error","response":"payload_size_exceeded"}`).
    public static func reply(_ request: PhoenixMessage, status: String, response: JSONValue) -> PhoenixMessage {
        PhoenixMessage(joinRef: request.joinRef, ref: request.ref, topic: request.topic, event: PhoenixEvent.reply,
                       payload: .object(["status": .string(status), "response": response]))
    }

    /// `system` messages: `{extension, status, message, channel}`.
    public static func system(topic: String, joinRef: String?, extension: String, status: String, message: String) -> PhoenixMessage {
        PhoenixMessage(joinRef: joinRef, ref: nil, topic: topic, event: PhoenixEvent.system, payload: .object([
            "extension": .string(`extension`), "status": .string(status), "message": .string(message),
            "channel": .string(channelName(of: topic)),
        ]))
    }

    public static func close(topic: String, joinRef: String?) -> PhoenixMessage {
        PhoenixMessage(joinRef: joinRef, ref: joinRef, topic: topic, event: PhoenixEvent.close, payload: .object([:]))
    }

    public static func channelError(topic: String, joinRef: String?) -> PhoenixMessage {
        PhoenixMessage(joinRef: joinRef, ref: joinRef, topic: topic, event: PhoenixEvent.error, payload: .object([:]))
    }

    /// `realtime:room` → `room`.
    public static func channelName(of topic: String) -> String {
        topic.hasPrefix("realtime:") ? String(topic.dropFirst("realtime:".count)) : topic
    }
}
