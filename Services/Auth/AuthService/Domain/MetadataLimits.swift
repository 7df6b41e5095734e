import ColonyModels
import ColonyPlatform
import Foundation

/// Bounds on what an account may carry as `user_metadata` and `app_metadata`: every access token
/// and every `user_registered`/`user_updated` event copies them, so a client must not be able to
/// make them arbitrarily large or deep. Checked on the metadata an operation would store, before
/// anything is written.
public enum MetadataLimits {
    /// Both objects as compact JSON, together.
    public static let maximumBytes = 16 * 1024
    /// Objects and arrays nested in a metadata object (the object itself is level 1).
    public static let maximumDepth = 8

    /// 422 `metadata_too_large` or `metadata_too_deep` when the pair is over a limit.
    public static func check(user: [String: JSONValue], app: [String: JSONValue]) throws {
        let depth = max(Self.depth(of: .object(user)), Self.depth(of: .object(app)))
        guard depth <= maximumDepth else {
            throw APIError(.unprocessableContent, code: "metadata_too_deep",
                           message: "user_metadata and app_metadata may nest objects and arrays at most \(maximumDepth) levels deep")
        }
        let bytes = ((try? ColonyJSON.encode(user).count) ?? Int.max / 2) + ((try? ColonyJSON.encode(app).count) ?? Int.max / 2)
        guard bytes <= maximumBytes else {
            throw APIError(.unprocessableContent, code: "metadata_too_large",
                           message: "user_metadata and app_metadata may hold at most \(maximumBytes) bytes of JSON together (got \(bytes))")
        }
    }

    static func depth(of value: JSONValue) -> Int {
        switch value {
        case .object(let members): 1 + (members.values.map(depth(of:)).max() ?? 0)
        case .array(let items): 1 + (items.map(depth(of:)).max() ?? 0)
        default: 0
        }
    }
}
