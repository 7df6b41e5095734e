import ColonyModels
import ColonyPlatform
import Foundation

/// The seed's karma table (section 7): points per action, and the five levels with their labels
/// and emoji. The database's `karma_level(points)` is the same table (a test holds them together).
struct KarmaLevel: Equatable, Sendable {
    let level: Int
    let label: String
    let emoji: String
    /// The fewest points of this level.
    let minPoints: Int

    static let all: [KarmaLevel] = [
        KarmaLevel(level: 1, label: "New Supporter", emoji: "🌱", minPoints: 0),
        KarmaLevel(level: 2, label: "Supporter", emoji: "💚", minPoints: 51),
        KarmaLevel(level: 3, label: "Super Supporter", emoji: "💜", minPoints: 201),
        KarmaLevel(level: 4, label: "Champion", emoji: "⭐", minPoints: 501),
        KarmaLevel(level: 5, label: "Legend", emoji: "👑", minPoints: 1001),
    ]

    /// The level `points` fall in (negative counts as 0).
    static func of(points: Int) -> KarmaLevel {
        all.last { points >= $0.minPoints } ?? all[0]
    }

    static func numbered(_ level: Int) -> KarmaLevel {
        all[min(max(level, 1), all.count) - 1]
    }

    /// The level after this one; nil for Legend.
    var next: KarmaLevel? { level < Self.all.count ? Self.all[level] : nil }

    /// Points per action: a follow 5, a support message 10, a like 1.
    static func points(for action: SupportActionType) -> Int {
        switch action {
        case .follow: 5
        case .message: 10
        case .like: 1
        }
    }

    /// Where `points` stand on the way to the next level: the next level's threshold, the points
    /// still missing, and the share of this level's span already covered (1 at Legend).
    static func progress(points: Int) -> (nextLevelAt: Int?, pointsToNextLevel: Int?, progress: Double) {
        let current = of(points: points)
        guard let next = current.next else { return (nil, nil, 1) }
        let span = Double(next.minPoints - current.minPoints)
        return (next.minPoints, next.minPoints - points, min(1, max(0, Double(points - current.minPoints) / span)))
    }
}

/// Who may do what on a project. Everyone sees a published project; an unpublished one exists
/// for its owner only (404 for anyone else, whatever they ask). On a project they can see, only
/// the owner changes anything (403); anyone may follow it and like its posts, and support it
/// unless it is their own.
enum ProjectPolicy {
    enum Action: Equatable, Sendable {
        /// Read the project, its posts, milestones, supporters and messages.
        case view
        /// Edit, delete, cover, mood, publish; create, edit and delete posts and milestones.
        case manage
        case follow
        case like
        case support
    }

    static func allows(isOwner: Bool, isPublished: Bool, _ action: Action) -> Bool {
        guard isOwner || isPublished else { return false }
        switch action {
        case .view, .follow, .like: return true
        case .manage: return isOwner
        case .support: return !isOwner
        }
    }

    /// `allows`, or the error that says why not.
    static func require(isOwner: Bool, isPublished: Bool, _ action: Action) throws {
        guard !allows(isOwner: isOwner, isPublished: isPublished, action) else { return }
        guard isOwner || isPublished else { throw ProjectsErrors.projectNotFound }
        switch action {
        case .manage: throw ProjectsErrors.notProjectOwner
        case .support: throw ProjectsErrors.ownProject
        case .view, .follow, .like: throw ProjectsErrors.projectNotFound
        }
    }

    /// Karma for following a project or liking one of its posts: none for your own project.
    static func karmaPoints(for action: SupportActionType, isOwner: Bool) -> Int {
        isOwner ? 0 : KarmaLevel.points(for: action)
    }
}

/// Public slugs (`projects.public_slug`): lowercase letters and digits in hyphen-separated runs,
/// made from the title; a taken slug gets a random suffix.
enum Slug {
    static let maxLength = 80
    /// Room left for `-` and a suffix after a slug made from a title.
    static let maxBaseLength = 60
    static let suffixLength = 6
    static let fallback = "project"

    /// `"Hello, Wörld! 2.0"` → `"hello-world-2-0"`. Accents are dropped; anything else that is not
    /// a letter or digit separates words. A title with none of those gives `"project"`.
    static func base(from title: String) -> String {
        let folded = title.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX")).lowercased()
        var words: [String] = []
        var current = ""
        for scalar in folded.unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        var slug = ""
        for word in words {
            let candidate = slug.isEmpty ? word : "\(slug)-\(word)"
            if candidate.count > maxBaseLength {
                if slug.isEmpty { slug = String(word.prefix(maxBaseLength)) }
                break
            }
            slug = candidate
        }
        return slug.isEmpty ? fallback : slug
    }

    /// `base` with a random suffix of lowercase letters and digits.
    static func withSuffix(_ base: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return withSuffix(base, using: &generator)
    }

    static func withSuffix<G: RandomNumberGenerator>(_ base: String, using generator: inout G) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let suffix = String((0..<suffixLength).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        return "\(base.prefix(maxLength - suffixLength - 1))-\(suffix)"
    }

    /// A slug a client sends, less the whitespace around it (the document's pattern; at most 80
    /// characters as sent): ASCII letters and digits in words joined by single hyphens.
    static let pattern = "[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"

    static func isValid(_ slug: String) -> Bool {
        guard (1...maxLength).contains(slug.count), !slug.hasPrefix("-"), !slug.hasSuffix("-"), !slug.contains("--") else { return false }
        return slug.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// A slug a client chose: trimmed and lowercased, then it must be valid.
    static func chosen(_ text: String) throws -> String {
        let slug = TextRules.trimmed(text).lowercased()
        guard TextRules.length(text) <= maxLength, TextRules.matches(text, pattern) else {
            throw ProjectsErrors.validation("public_slug must be 1–\(maxLength) lowercase letters, digits and single hyphens (not at either end)")
        }
        return slug
    }
}

/// Input rules, in one place so tests reach them without HTTP.
enum ProjectsRules {
    static let maxName = 60
    static let maxBio = 500
    static let maxURL = 2048
    static let maxTitle = 100
    static let maxTagline = 160
    static let maxDescription = 10_000
    static let maxPostContent = 5000
    static let maxPostImages = 10
    static let maxMilestoneTitle = 200
    static let maxMilestoneDescription = 2000
    static let maxSupportMessage = 1000
    static let maxSearch = 100

    static func trimmed(_ text: String) -> String { TextRules.trimmed(text) }

    /// Trimmed, empty as nil.
    static func optional(_ text: String?) -> String? {
        guard let text else { return nil }
        let value = trimmed(text)
        return value.isEmpty ? nil : value
    }

    static func name(_ name: String, errors: inout ValidationErrors) -> String {
        errors.check(TextRules.fits(name, 1...maxName), "name must be 1–\(maxName) characters, not blank")
        return trimmed(name)
    }

    static func title(_ title: String, errors: inout ValidationErrors) -> String {
        errors.check(TextRules.fits(title, 1...maxTitle), "title must be 1–\(maxTitle) characters, not blank")
        return trimmed(title)
    }

    static func text(_ text: String?, field: String, max: Int, errors: inout ValidationErrors) -> String? {
        errors.check(TextRules.length(text ?? "") <= max, "\(field) must be at most \(max) characters")
        return optional(text)
    }

    /// A website as sent, less the whitespace around it: an optional `http://` or `https://`
    /// (any case), a host of at least two dot-separated labels of ASCII letters, digits and `-`,
    /// an optional port, then a path, query or fragment of printable ASCII; at most 2048
    /// characters as sent (the document's pattern). Without a scheme, `https://` is added.
    static let websitePattern = #"(?:[Hh][Tt][Tt][Pp][Ss]?://)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]{1,5})?(?:[/?#][!-~]*)?"#

    static func websiteURL(_ text: String?, errors: inout ValidationErrors) -> String? {
        guard let text, let value = optional(text) else { return nil }
        guard TextRules.length(text) <= maxURL, TextRules.matches(text, websitePattern) else {
            errors.check(false, "website_url must be an http or https URL")
            return nil
        }
        return value.contains("://") ? value : "https://" + value
    }

    /// A Twitter/X handle as sent, less the whitespace around it: `name` or `@name` (1–15 ASCII
    /// letters, digits, `_`), or a twitter.com / x.com profile URL (the document's pattern);
    /// stored without `@`.
    static let twitterPattern = #"(?:(?:[Hh][Tt][Tt][Pp][Ss]?://)?(?:(?:[Ww][Ww][Ww]\.|[Mm][Oo][Bb][Ii][Ll][Ee]\.)?[Tt][Ww][Ii][Tt][Tt][Ee][Rr]\.[Cc][Oo][Mm]|(?:[Ww][Ww][Ww]\.)?[Xx]\.[Cc][Oo][Mm])/@?[A-Za-z0-9_]{1,15}/?|@?[A-Za-z0-9_]{1,15})"#

    static func twitterHandle(_ text: String?, errors: inout ValidationErrors) -> String? {
        guard let text, let value = optional(text) else { return nil }
        guard TextRules.matches(text, twitterPattern) else {
            errors.check(false, "twitter_handle must be 1–15 letters, digits or underscores (an optional @ first), or a twitter.com / x.com profile URL")
            return nil
        }
        let last = value.split(separator: "/").last.map(String.init) ?? value
        return last.hasPrefix("@") ? String(last.dropFirst()) : last
    }

    /// Post text: not blank, at most `maxPostContent` characters (kept as written).
    static func postContent(_ content: String, errors: inout ValidationErrors) -> String {
        errors.check(TextRules.fits(content, 1...maxPostContent), "content must be 1–\(maxPostContent) characters, not blank")
        return content
    }

    static func supportMessage(_ message: String) throws -> String {
        guard TextRules.fits(message, 1...maxSupportMessage) else { throw ProjectsErrors.validation("message must be 1–\(maxSupportMessage) characters, not blank") }
        return trimmed(message)
    }

    /// A search for titles and taglines: trimmed, 1–100 characters.
    static func search(_ query: String) throws -> String {
        guard TextRules.fits(query, 1...maxSearch) else { throw ProjectsErrors.validation("q must be 1–\(maxSearch) characters, not blank") }
        return trimmed(query)
    }

    /// `query` as an ILIKE pattern that matches it anywhere, its own `%`, `_` and `\` taken literally.
    static func likePattern(_ query: String) -> String {
        var escaped = ""
        for character in query {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return "%\(escaped)%"
    }
}
