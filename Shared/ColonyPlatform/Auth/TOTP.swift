import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238: HOTP of RFC 4226 over the count of periods since
/// the epoch), as authenticator apps compute them. Independent of auth: the clock is a
/// parameter, the secret plain bytes, so operators' logins (the Console) use it too.
public struct TOTP: Sendable, Equatable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    public let secret: [UInt8]
    public let digits: Int
    public let period: Int
    public let algorithm: Algorithm

    /// Defaults are what every authenticator app understands (and Supabase Auth issues):
    /// SHA-1, 6 digits, 30 seconds. Digits are kept to 6...8 (RFC 4226's range) and the period
    /// to 1...3600 seconds; anything else is refused rather than trapping later.
    public init?(secret: [UInt8], digits: Int = 6, period: Int = 30, algorithm: Algorithm = .sha1) {
        guard !secret.isEmpty, (6...8).contains(digits), (1...3600).contains(period) else { return nil }
        self.secret = secret
        self.digits = digits
        self.period = period
        self.algorithm = algorithm
    }

    /// From the base32 text authenticator apps show (case, spaces and padding tolerated).
    public init?(base32Secret: String, digits: Int = 6, period: Int = 30, algorithm: Algorithm = .sha1) {
        guard let bytes = Base32.decode(base32Secret) else { return nil }
        self.init(secret: bytes, digits: digits, period: period, algorithm: algorithm)
    }

    /// A new secret from the system's CSPRNG: 20 bytes (160 bits, RFC 4226's recommendation;
    /// 32 base32 characters).
    public static func newSecret(byteCount: Int = 20) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<max(16, byteCount)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    public var base32Secret: String { Base32.encode(secret) }

    /// The time step `date` falls in; nil for a date before the epoch or beyond Int64's range.
    public func step(at date: Date) -> Int64? {
        let seconds = (date.timeIntervalSince1970 / Double(period)).rounded(.down)
        guard seconds >= 0, let step = Int64(exactly: seconds) else { return nil }
        return step
    }

    /// The code for one time step, zero-padded to `digits`.
    public func code(forStep step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        // RFC 4226 §5.3 dynamic truncation: the low nibble of the last byte picks 4 bytes.
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(binary % modulus)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The code at `date` (nil only for a date before the epoch).
    public func code(at date: Date) -> String? {
        step(at: date).map(code(forStep:))
    }

    /// The time step whose code `code` is, within `window` steps either side of `date` (clock
    /// drift between phone and server), and later than `lastUsedStep` so a code works once.
    /// Compared in constant time; nil when it matches none.
    public func verify(_ code: String, at date: Date, window: Int = 1, after lastUsedStep: Int64? = nil) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let now = step(at: date), now < Int64.max - 16 else { return nil }
        let window = Int64(max(0, min(window, 10)))
        var matched: Int64?
        for step in (now - window)...(now + window) where step >= 0 {
            if let lastUsedStep, step <= lastUsedStep { continue }
            if ConstantTime.equal(self.code(forStep: step).utf8, code.utf8), matched == nil { matched = step }
        }
        return matched
    }

    /// The `otpauth://totp/…` URI authenticator apps scan (Google Authenticator's key URI format).
    public func uri(issuer: String, accountName: String) -> String {
        let label = Self.escape(issuer) + ":" + Self.escape(accountName)
        let query = [
            ("algorithm", algorithm.rawValue), ("digits", "\(digits)"), ("issuer", Self.escape(issuer)),
            ("period", "\(period)"), ("secret", base32Secret),
        ].map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        return "otpauth://totp/\(label)?\(query)"
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@+")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

}

/// RFC 4648 base32 (the alphabet A-Z2-7), as TOTP secrets are written. Encoding leaves out the
/// padding, as authenticator URIs do.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 0x1f)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1f)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Nil for a character outside the alphabet (or a length no encoding has).
    public static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var count = 0
        for character in text.utf8 {
            if character == UInt8(ascii: " ") || character == UInt8(ascii: "-") || character == UInt8(ascii: "=") { continue }
            let upper = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(character) ? character - 32 : character
            guard let value = alphabet.firstIndex(of: upper) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            count += 1
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
            buffer &= 0xff
        }
        // 1, 3 and 6 characters past a full block encode no whole byte.
        guard ![1, 3, 6].contains(count % 8) else { return nil }
        return output
    }
}
