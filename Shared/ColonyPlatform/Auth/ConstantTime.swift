/// Comparison of secrets (codes, hashes, nonces, PKCE challenges) in time that does not depend on
/// where they differ, so answers' timing tells an attacker nothing about how close a guess was.
public enum ConstantTime {
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
