import ColonyModels
import ColonyPlatform
import Foundation

/// `GET /admin/users?filter=TEXT` (GoTrue's parameter; Colony matches prefixes, which indexes
/// serve): the app's accounts whose id is TEXT (when it is a UUID), whose email starts with TEXT,
/// whose phone starts with TEXT's digits (when TEXT is typed as a number) or whose display name
/// starts with TEXT; email and name case-insensitively, LIKE's wildcards matched literally.
/// Each kind is one query on an index of its own (`UserStore.searchIDs`, migration 11).
public struct UserSearch: Sendable, Equatable {
    /// At most this many accounts match a search (the count says so): a broader text is refined.
    public static let maximumMatches = 1000
    /// Longer texts are refused: no address or name the console looks for is longer.
    public static let maximumLength = 256

    /// The text, trimmed.
    public var text: String
    /// TEXT as an account id, when it is one.
    public var id: UUID?
    /// TEXT's digits when TEXT is typed as a phone number (digits, an optional leading `+`,
    /// spaces, dashes), as phones are stored (digits only).
    public var phoneDigits: String?

    /// nil for no search (absent or blank): the plain list. 400 for a text no account can match
    /// (too long, a NUL, which Postgres text cannot hold).
    public static func parse(_ raw: String?) throws -> UserSearch? {
        guard let raw else { return nil }
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        guard text.count <= maximumLength else {
            throw APIError(.badRequest, code: "validation_failed", message: "filter must be at most \(maximumLength) characters")
        }
        guard !text.unicodeScalars.contains("\u{0}") else { throw APIError(.badRequest, code: "validation_failed", message: "filter must not contain NUL") }
        return UserSearch(text: text, id: UUID(uuidString: text), phoneDigits: phoneDigits(of: text))
    }

    /// The digits of a number typed as one: `+49 151-2`, `0151 2`; nil for anything else.
    static func phoneDigits(of text: String) -> String? {
        var rest = Substring(text)
        if rest.first == "+" { rest = rest.dropFirst() }
        guard rest.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == " " || $0 == "-") }) else { return nil }
        let digits = rest.filter(\.isNumber)
        return digits.isEmpty ? nil : String(digits)
    }

    /// TEXT as a LIKE pattern for what starts with it: `\`, `%` and `_` escaped (LIKE's default
    /// escape is `\`), so they match themselves. Lower-cased by the query, as the column is.
    public var prefixPattern: String { Self.prefixPattern(text) }

    /// The phone digits as a LIKE prefix (digits need no escaping).
    public var phonePattern: String? { phoneDigits.map { $0 + "%" } }

    static func prefixPattern(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "%"
    }
}
