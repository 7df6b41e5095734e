import Crypto
import Foundation

/// HabitHive's phone hashes: auth puts one in its events for each account with a phone
/// (`phone_hash`), and habits hashes the numbers a client uploads the same way to match them.
/// The pepper is a server-side secret: clients send numbers (over TLS) and never see it, so
/// nobody can hash arbitrary numbers to look accounts up.
public enum PhoneHash {
    /// E.164: "+" and 8 to 15 digits, the first not 0.
    public static func isE164(_ number: String) -> Bool {
        let digits = number.utf8.dropFirst()
        return number.utf8.first == UInt8(ascii: "+") && (8...15).contains(digits.count)
            && digits.first != UInt8(ascii: "0") && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Lower-case hex SHA-256 of the pepper followed by the E.164 number ("+" included).
    public static func of(e164 number: String, pepper: String) -> String {
        SHA256.hash(data: Data((pepper + number).utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
