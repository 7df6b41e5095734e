import ColonyModels
import ColonyPlatform
import Crypto
import Foundation

/// Input rules for the identifiers and secrets users type, as Supabase Auth applies them.
public enum Credentials {
    /// Lowercased and trimmed, or nil when it is not a plausible address.
    public static func normalizedEmail(_ raw: String) -> String? {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard email.count <= 255 else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              email.allSatisfy({ !$0.isWhitespace && $0 != "<" && $0 != ">" && $0 != "," })
        else { return nil }
        return email
    }

    /// Digits only, without the plus, as Supabase Auth stores phones (`15551234567`); nil when
    /// it cannot be an E.164 number.
    public static func normalizedPhone(_ raw: String) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let allowed = trimmed.allSatisfy { $0.isASCII && ($0.isNumber || " +-().".contains($0)) }
        let digits = trimmed.filter { $0.isASCII && $0.isNumber }
        guard allowed, (8...15).contains(digits.count), !digits.hasPrefix("0") else { return nil }
        return digits
    }

    /// The reasons a password is refused, in Supabase Auth's `weak_password.reasons` terms.
    public static func passwordProblems(_ password: String, minimumLength: Int) -> [String] {
        var reasons: [String] = []
        if password.count < minimumLength { reasons.append("length") }
        return reasons
    }

    /// bcrypt reads only the first 72 bytes; longer passwords are refused rather than cut.
    public static let maximumPasswordBytes = 72

    /// Hex SHA-256 of (pepper ‖ E.164 phone): HabitHive matches contacts by this, never by number.
    public static func phoneHash(digits: String, pepper: String) -> String {
        PhoneHash.of(e164: "+" + digits, pepper: pepper)
    }
}

/// Secrets handed to clients (refresh tokens, link tokens, codes) are random; the database keeps
/// refresh tokens only as SHA-256. A live code and its link are looked up by their hashes but
/// derived from a random seed kept beside them until they expire, so asking again re-sends the
/// same code (the signing keys live in the same database: protect it as the keys it holds).
public enum Secrets {
    /// 32 random bytes, base64url without padding.
    public static func opaqueToken() -> String {
        Base64URL.encode(randomBytes(32))
    }

    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A 6-digit code, uniformly drawn.
    public static func numericCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    /// The 6-digit code of a seed (64 bits of HMAC reduced mod 10^6: uniform to within 2^-44).
    public static func numericCode(seed: [UInt8]) -> String {
        let mac = Array(HMAC<SHA256>.authenticationCode(for: Array("code".utf8), using: SymmetricKey(data: seed)))
        let value = mac.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(format: "%06d", Int(value % 1_000_000))
    }

    /// The link token of a seed: 32 bytes, base64url.
    public static func linkToken(seed: [UInt8]) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array("link".utf8), using: SymmetricKey(data: seed))))
    }

    public static func hash(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// A code's hash is bound to the recipient, so the same code for two people differs.
    public static func codeHash(_ code: String, recipient: String) -> [UInt8] {
        hash(recipient + ":" + code)
    }
}

func hex(_ digest: some Sequence<UInt8>) -> String {
    digest.map { String(format: "%02x", $0) }.joined()
}
