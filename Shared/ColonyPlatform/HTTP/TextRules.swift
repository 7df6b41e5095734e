import Foundation

/// How every service counts and trims text, the way its OpenAPI document states it, so that a
/// handler's check and the schema's `minLength`/`maxLength`/`pattern` agree exactly:
/// - lengths are Unicode code points of the value as sent (JSON Schema's count; Postgres's
///   `char_length` too), not grapheme clusters;
/// - values are stored trimmed of whitespace, the set `whitespace` spells out (Foundation's
///   `whitespacesAndNewlines`), and a required text must have something besides it
///   (`notBlankPattern` in the documents).
public enum TextRules {
    /// The value's length in code points.
    public static func length(_ text: some StringProtocol) -> Int { text.unicodeScalars.count }

    /// The value without leading and trailing whitespace.
    public static func trimmed(_ text: some StringProtocol) -> String { String(text).trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Whether the value has `range` code points as sent and, unless `blankAllowed`, something
    /// besides whitespace.
    public static func fits(_ text: some StringProtocol, _ range: ClosedRange<Int>, blankAllowed: Bool = false) -> Bool {
        range.contains(length(text)) && (blankAllowed || !trimmed(text).isEmpty)
    }

    /// Foundation's `whitespacesAndNewlines` as a regular-expression class body (ICU, ECMA-262
    /// and Python read it alike).
    public static let whitespace = #"\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200B\u2028\u2029\u202F\u205F\u3000"#
    /// The documents' pattern for "not blank": some character besides whitespace.
    public static let notBlankPattern = "[^\(whitespace)]"

    /// Whether the whole value, less surrounding whitespace, matches `pattern` (anchored here).
    public static func matches(_ text: some StringProtocol, _ pattern: String) -> Bool {
        trimmed(text).range(of: "^(?:\(pattern))$", options: .regularExpression) != nil
    }
}
