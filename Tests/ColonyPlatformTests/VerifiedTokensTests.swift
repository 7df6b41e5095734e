import ColonyPlatform
import Foundation
import Testing

@Suite("Verified tokens")
struct VerifiedTokensTests {
    func claims(expiring exp: Date) -> AccessTokenClaims {
        AccessTokenClaims(sub: UUID().uuidString.lowercased(), aud: "mycirclee", iss: "colony-auth", exp: exp)
    }

    @Test("a verified token is served until its exp; a verification that began before the keys changed is not kept")
    func cache() {
        let now = Date()
        var tokens = VerifiedTokens(limit: 3)
        let live = claims(expiring: now.addingTimeInterval(60))
        tokens.remember("a", live, verifiedAtGeneration: tokens.generation, now: now)
        #expect(tokens.claims(of: "a", now: now)?.sub.value == live.sub.value)
        #expect(tokens.claims(of: "a", now: now.addingTimeInterval(61)) == nil, "served after its exp")
        #expect(tokens.claims(of: "b", now: now) == nil)

        // The keys changed while a verification was suspended: its result is dropped.
        let before = tokens.generation
        tokens.forgetAll()
        #expect(tokens.claims(of: "a", now: now) == nil, "kept across a change of keys")
        tokens.remember("b", live, verifiedAtGeneration: before, now: now)
        #expect(tokens.claims(of: "b", now: now) == nil, "a verification against the old keys was kept")

        // Full: expired entries go first; still full of live ones, it starts over rather than grow.
        tokens.remember("old", claims(expiring: now.addingTimeInterval(-1)), verifiedAtGeneration: tokens.generation, now: now)
        tokens.remember("c", live, verifiedAtGeneration: tokens.generation, now: now)
        tokens.remember("d", live, verifiedAtGeneration: tokens.generation, now: now)
        tokens.remember("e", live, verifiedAtGeneration: tokens.generation, now: now)
        #expect(tokens.count == 3 && tokens.claims(of: "c", now: now) != nil && tokens.claims(of: "e", now: now) != nil)
        tokens.remember("f", live, verifiedAtGeneration: tokens.generation, now: now)
        #expect(tokens.count == 1 && tokens.claims(of: "f", now: now) != nil)
    }

    @Test("a token is served for the hold at most, and what is past its time is swept, not kept")
    func hold() {
        let now = Date()
        var tokens = VerifiedTokens(limit: 10_000, holdSeconds: 300)
        let long = claims(expiring: now.addingTimeInterval(7200))
        tokens.remember("a", long, verifiedAtGeneration: tokens.generation, now: now)
        #expect(tokens.claims(of: "a", now: now.addingTimeInterval(299)) != nil)
        #expect(tokens.claims(of: "a", now: now.addingTimeInterval(301)) == nil, "served past the hold: checked again")
        // An hour of one new session a second holds about the hold's worth, not the hour's.
        for second in 1...3600 {
            tokens.remember("t\(second)", long, verifiedAtGeneration: tokens.generation, now: now.addingTimeInterval(Double(second)))
        }
        #expect(tokens.count <= 360 + 1, "kept \(tokens.count) tokens")
        #expect(tokens.claims(of: "t3600", now: now.addingTimeInterval(3600)) != nil)
    }
}
