import ColonyPlatform
import Testing

@Suite("Client address and secrets")
struct ClientAddressTests {
    let cidrs = TrustedProxies(.cidrs([IPNetwork("10.0.0.0/8")!, IPNetwork("127.0.0.1")!, IPNetwork("fd00::/8")!]))

    @Test("forwarded headers count only from trusted proxies; the right-most untrusted hop is the client")
    func trustedProxies() {
        // Straight from the client: whatever it writes is ignored.
        #expect(cidrs.clientAddress(peer: "198.51.100.7", forwardedFor: ["203.0.113.1"]) == "198.51.100.7")
        // Through the gateway, which appended what it saw: the client's own entries are left of it.
        #expect(cidrs.clientAddress(peer: "10.1.2.3", forwardedFor: ["203.0.113.1, 198.51.100.7"]) == "198.51.100.7")
        #expect(cidrs.clientAddress(peer: "10.1.2.3", forwardedFor: ["203.0.113.1", "198.51.100.7, 10.9.9.9"]) == "198.51.100.7")
        #expect(cidrs.clientAddress(peer: "10.1.2.3", forwardedFor: []) == "10.1.2.3")
        #expect(cidrs.clientAddress(peer: "127.0.0.1", forwardedFor: ["127.0.0.1"]) == "127.0.0.1")
        #expect(cidrs.clientAddress(peer: "::ffff:10.1.2.3", forwardedFor: ["[2001:db8::1]:443"]) == "2001:db8::1")
        #expect(cidrs.clientAddress(peer: "10.1.2.3", forwardedFor: ["198.51.100.7:5000"]) == "198.51.100.7")
        #expect(cidrs.clientAddress(peer: "10.1.2.3", forwardedFor: ["not-an-address"]) == "not-an-address")
        // A count: exactly that many proxies in front, the peer the first.
        let two = TrustedProxies(.count(2))
        #expect(two.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.1, 198.51.100.7, 10.0.0.1"]) == "198.51.100.7")
        #expect(TrustedProxies(.count(0)).clientAddress(peer: "10.0.0.2", forwardedFor: ["198.51.100.7"]) == "10.0.0.2")
        #expect(TrustedProxies.loopback.clientAddress(peer: "10.0.0.2", forwardedFor: ["198.51.100.7"]) == "10.0.0.2")
    }

    @Test("trusted proxies come from the environment, and a bad entry names the variable")
    func loading() throws {
        #expect(try TrustedProxies.load(environment: EnvironmentReader([:])) == .loopback)
        #expect(try TrustedProxies.load(environment: EnvironmentReader(["COLONY_TRUSTED_PROXY_COUNT": "1"])) == TrustedProxies(.count(1)))
        let listed = try TrustedProxies.load(environment: EnvironmentReader(["COLONY_TRUSTED_PROXIES": "172.16.0.0/12, 192.168.0.1"]))
        #expect(listed.clientAddress(peer: "172.20.0.5", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        #expect(listed.clientAddress(peer: "172.32.0.5", forwardedFor: ["198.51.100.7"]) == "172.32.0.5")
        #expect(throws: ConfigurationError.self) { try TrustedProxies.load(environment: EnvironmentReader(["COLONY_TRUSTED_PROXIES": "10.0.0.0/33"])) }
        #expect(throws: ConfigurationError.self) { try TrustedProxies.load(environment: EnvironmentReader(["COLONY_TRUSTED_PROXIES": "gateway"])) }
    }

    @Test("secrets: shipped defaults, placeholders, short and predictable values are refused")
    func secrets() {
        for weak in ["colony", "change-me-phone-pepper", "change-me-storage-signing-key-at-least-32-chars", "CHANGEME-please-0123456789",
                     "short", String(repeating: "a", count: 40), "abababababababababababab"] {
            #expect(SecretStrength.problem(weak, minimumLength: 16) != nil, "\(weak) was accepted")
        }
        for strong in ["9f2c41d8a7e35b60c4f18e2a9d73b5c0", "TYAkuOSkF54Ek6SoUgTqYhfkF0Pmv5Dn", "6F1C2B9E-4C1D-4A53-9A53-2F1D6C1E0B11"] {
            #expect(SecretStrength.problem(strong, minimumLength: 16) == nil, "\(strong) was refused")
        }
        do {
            _ = try EnvironmentReader(["COLONY_X": "colony"]).secret("COLONY_X")
            Issue.record("accepted")
        } catch {
            #expect(error.variable == "COLONY_X" && error.description.contains("known default"))
        }
    }
}
