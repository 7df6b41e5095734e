import Foundation

/// An entry of an app's `redirect_urls`: an exact URL, or a pattern with `*`. A pattern is
/// matched on the parsed URL, never as a string prefix: the scheme and the host (and port) must be
/// the pattern's own (`*.` as the first label of the host stands for exactly one label), and only
/// the rest (path, query, fragment) is matched with `*` standing for anything. So
/// `https://app.example.com*` allows `https://app.example.com/welcome` but not
/// `https://app.example.com.evil.com` or `https://app.example.com@evil.com`.
public struct RedirectPattern: Sendable, Equatable {
    let scheme: String
    let host: String
    let port: String?
    /// The pattern after the authority: the glob of path, query and fragment.
    let rest: String

    public init?(_ pattern: String) {
        guard let separator = pattern.range(of: "://") else { return nil }
        let scheme = String(pattern[..<separator.lowerBound])
        guard !scheme.isEmpty, !scheme.contains("*") else { return nil }
        let afterScheme = pattern[separator.upperBound...]
        // The authority ends at the first '/', '?', '#', or a '*' that is not a leading "*." label.
        var index = afterScheme.startIndex
        if afterScheme.hasPrefix("*.") { index = afterScheme.index(index, offsetBy: 2) }
        while index < afterScheme.endIndex, !"/?#*".contains(afterScheme[index]) { index = afterScheme.index(after: index) }
        let authority = afterScheme[afterScheme.startIndex..<index]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close]).lowercased()
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? String(after.dropFirst()) : nil
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon]).lowercased()
            port = String(authority[authority.index(after: colon)...])
        } else {
            host = authority.lowercased()
            port = nil
        }
        self.scheme = scheme.lowercased()
        self.rest = String(afterScheme[index...])
    }

    /// Whether `url` is allowed by this pattern.
    public func matches(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), components.user == nil, components.password == nil,
              let candidateScheme = components.scheme?.lowercased(), candidateScheme == scheme,
              let candidateHost = components.host?.lowercased(), !candidateHost.isEmpty
        else { return false }
        guard components.port.map(String.init) == port else { return false }
        if host.hasPrefix("*.") {
            let suffix = host.dropFirst(1)  // ".example.com"
            guard candidateHost.hasSuffix(suffix) else { return false }
            let label = candidateHost.dropLast(suffix.count)
            guard !label.isEmpty, !label.contains(".") else { return false }
        } else if candidateHost != host {
            return false
        }
        var candidateRest = components.percentEncodedPath
        if let query = components.percentEncodedQuery { candidateRest += "?" + query }
        if let fragment = components.percentEncodedFragment { candidateRest += "#" + fragment }
        return Self.glob(rest, matches: candidateRest)
    }

    /// `*` matches any run of characters; everything else matches itself.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        let pattern = Array(pattern), text = Array(text)
        var p = 0, t = 0, starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] != "*", pattern[p] == text[t] {
                p += 1; t += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starP = p; starT = t; p += 1
            } else if starP >= 0 {
                p = starP + 1; starT += 1; t = starT
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
