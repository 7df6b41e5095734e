import ColonyModels
import ColonyPlatform
import Crypto
import Foundation

/// PKCE parameters a client sends with requests that end in a redirect (RFC 7636, as Supabase
/// Auth checks them): a challenge and its method together or neither; `s256`, or `plain` only when
/// asked for by name.
public struct PKCEChallenge: Sendable, Equatable {
    public enum Method: String, Sendable {
        case s256, plain
    }

    public var challenge: String
    public var method: Method

    public init(challenge: String, method: Method) {
        self.challenge = challenge
        self.method = method
    }

    /// The challenge of a request: nil when it has none, 400 when half of it is missing, the
    /// method is unknown, or the challenge is not 43-128 characters of `[A-Za-z0-9._~-]`.
    public static func parse(challenge: String?, method: String?) throws -> PKCEChallenge? {
        let challenge = challenge ?? "", method = method ?? ""
        if challenge.isEmpty && method.isEmpty { return nil }
        guard !challenge.isEmpty, !method.isEmpty else {
            throw AuthErrors.badRequest("PKCE flow requires code_challenge_method and code_challenge")
        }
        guard let known = Method(rawValue: method.lowercased()) else {
            throw AuthErrors.badRequest("unsupported code_challenge method \"\(method)\"; use s256 (or plain)")
        }
        guard (43...128).contains(challenge.utf8.count) else {
            throw AuthErrors.badRequest("code challenge has to be between 43 and 128 characters")
        }
        guard challenge.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._~-".contains($0)) }) else {
            throw AuthErrors.badRequest("code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes")
        }
        return PKCEChallenge(challenge: challenge, method: known)
    }

    /// A stored challenge (written by `parse`); nil for anything else.
    init?(stored challenge: String?, method: String?) {
        guard let challenge, !challenge.isEmpty, let method = method.flatMap(Method.init(rawValue:)) else { return nil }
        self.init(challenge: challenge, method: method)
    }

    func matches(verifier: String) -> Bool {
        let expected: String
        switch method {
        case .s256: expected = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
        case .plain: expected = verifier
        }
        return ConstantTime.equal(expected.utf8, challenge.utf8)
    }
}
