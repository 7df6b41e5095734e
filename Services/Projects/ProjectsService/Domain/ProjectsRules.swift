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

    static func isValid(_ slug: String) -> Bool {
        guard (1...maxLength).contains(slug.count), !slug.hasPrefix("-"), !slug.hasSuffix("-"), !slug.contains("--") else { return false }
        return slug.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// A slug a client chose: trimmed and lowercased, then it must be valid.
    static func chosen(_ text: String) throws -> String {
        let slug = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard isValid(slug) else {
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

    static func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Trimmed, empty as nil.
    static func optional(_ text: String?) -> String? {
        guard let text else { return nil }
        let value = trimmed(text)
        return value.isEmpty ? nil : value
    }

    static func name(_ name: String, errors: inout ValidationErrors) -> String {
        let value = trimmed(name)
        errors.check((1...maxName).contains(value.count), "name must be 1–\(maxName) characters")
        return value
    }

    static func title(_ title: String, errors: inout ValidationErrors) -> String {
        let value = trimmed(title)
        errors.check((1...maxTitle).contains(value.count), "title must be 1–\(maxTitle) characters")
        return value
    }

    static func text(_ text: String?, field: String, max: Int, errors: inout ValidationErrors) -> String? {
        let value = optional(text)
        errors.check((value?.count ?? 0) <= max, "\(field) must be at most \(max) characters")
        return value
    }

    /// An http(s) URL with a host; `example.com` is taken as `https://example.com`.
    static func websiteURL(_ text: String?, errors: inout ValidationErrors) -> String? {
        guard var value = optional(text) else { return nil }
        if !value.contains("://") { value = "https://" + value }
        guard value.count <= maxURL, !value.contains(where: { $0.isWhitespace }), let url = URL(string: value),
              let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, host.contains("."), !host.hasPrefix("."), !host.hasSuffix(".") else {
            errors.check(false, "website_url must be an http or https URL")
            return nil
        }
        return value
    }

    /// A Twitter/X handle: `name`, `@name`, or a twitter.com / x.com profile URL; stored without `@`.
    static func twitterHandle(_ text: String?, errors: inout ValidationErrors) -> String? {
        guard var value = optional(text) else { return nil }
        for prefix in ["https://", "http://"] where value.lowercased().hasPrefix(prefix) { value = String(value.dropFirst(prefix.count)) }
        for host in ["www.twitter.com/", "twitter.com/", "www.x.com/", "x.com/", "mobile.twitter.com/"] where value.lowercased().hasPrefix(host) {
            value = String(value.dropFirst(host.count))
            if value.hasSuffix("/") { value.removeLast() }
        }
        if value.hasPrefix("@") { value.removeFirst() }
        let valid = (1...15).contains(value.count) && value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
        errors.check(valid, "twitter_handle must be 1–15 letters, digits or underscores (an optional @ first), or a twitter.com / x.com profile URL")
        return valid ? value : nil
    }

    /// Post text: not blank, at most `maxPostContent` characters (kept as written).
    static func postContent(_ content: String, errors: inout ValidationErrors) -> String {
        errors.check(!trimmed(content).isEmpty, "content must not be empty")
        errors.check(content.count <= maxPostContent, "content must be at most \(maxPostContent) characters")
        return content
    }

    static func supportMessage(_ message: String) throws -> String {
        let value = trimmed(message)
        guard (1...maxSupportMessage).contains(value.count) else { throw ProjectsErrors.validation("message must be 1–\(maxSupportMessage) characters") }
        return value
    }

    /// A search for titles and taglines: trimmed, 1–100 characters.
    static func search(_ query: String) throws -> String {
        let value = trimmed(query)
        guard (1...maxSearch).contains(value.count) else { throw ProjectsErrors.validation("q must be 1–\(maxSearch) characters") }
        return value
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
