import AsyncHTTPClient
import ColonyModels
import Foundation
import NIOCore
import NIOHTTP1

extension RunningService {
    /// One request sent to this service (fast paths on) and then to `generated` (its twin with
    /// fast paths off, on the same data): nil when both answer the same status, `Content-Type` and
    /// bytes, else what differs. A write makes a new record each time: the string values of the
    /// `varying` keys (its ids and times) are compared by shape only (both present, or both absent).
    public func differenceFromGenerated(_ method: HTTPMethod, _ path: String, as user: User?, body: String?, contentType: String? = "application/json",
                                        headers: [(String, String)] = [], generated: RunningService, varying: Set<String> = []) async throws -> String? {
        let bytes = body.map { ByteBuffer(string: $0) }
        let fast = try await request(method, path, as: user, bytes: bytes, contentType: contentType, headers: headers)
        let other = try await generated.request(method, path, as: user, bytes: bytes, contentType: contentType, headers: headers)
        let (a, b) = (Self.masking(varying, in: String(buffer: fast.bytes)), Self.masking(varying, in: String(buffer: other.bytes)))
        guard fast.status == other.status, fast.headers["Content-Type"] == other.headers["Content-Type"], a == b else {
            return "\(method) \(path) \(body ?? "(no body)"): \(fast.status) \(fast.headers["Content-Type"]) \(a)\nagainst the generated \(other.status) \(other.headers["Content-Type"]) \(b)"
        }
        return nil
    }

    /// `"key":"…"` for each of `keys`, wherever it is in the text.
    static func masking(_ keys: Set<String>, in text: String) -> String {
        var text = text
        for key in keys {
            let pattern = "\"\(NSRegularExpression.escapedPattern(for: key))\":\"[^\"]*\""
            text = text.replacingOccurrences(of: pattern, with: "\"\(key)\":\"…\"", options: .regularExpression)
        }
        return text
    }
}

/// Text that every escape rule of a JSON writer meets: quotes, backslashes, the slash, control
/// characters, non-ASCII, an astral character and U+2028.
public let writerSampleText = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{7} nul \u{0} esc \u{1B} é 日本 🚀 \u{2028} end"

/// What `ColonyJSON.encode` writes for `value` through its own writer (`ColonyJSONWritable`)
/// against what ColonyJSON's encoder writes for the same value: nil when the bytes are equal, else
/// both texts. Each service's hand-written writers are held to the encoder with it.
public func writerDifference(_ value: some ColonyJSONWritable) throws -> String? {
    let written = try ColonyJSON.encode(value)
    let expected = Array(try ColonyJSON.encoder().encode(value))
    guard written != expected else { return nil }
    return "\(String(decoding: written, as: UTF8.self))\nagainst the encoder's\n\(String(decoding: expected, as: UTF8.self))"
}
