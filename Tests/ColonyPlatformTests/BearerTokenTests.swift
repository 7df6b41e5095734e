import ColonyPlatform
import Foundation
import Testing

@Suite("Bearer tokens")
struct BearerTokenTests {
    @Test("the bearer scheme in any case, blanks around the token trimmed; other schemes and empty tokens are nil")
    func parsing() {
        #expect(BearerToken.from(authorization: "Bearer abc.def.ghi") == "abc.def.ghi")
        #expect(BearerToken.from(authorization: "bearer abc") == "abc")
        #expect(BearerToken.from(authorization: "BEARER abc") == "abc")
        #expect(BearerToken.from(authorization: "Bearer   abc \t") == "abc")
        #expect(BearerToken.from(authorization: "Bearer\tabc") == "abc")
        #expect(BearerToken.from(authorization: "Bearer a b") == "a b")
        #expect(BearerToken.from(authorization: "Bearer") == nil)
        #expect(BearerToken.from(authorization: "Bearer ") == nil)
        #expect(BearerToken.from(authorization: "Bearer \t ") == nil)
        #expect(BearerToken.from(authorization: "Bearerabc") == nil)
        #expect(BearerToken.from(authorization: "Basic YWxhZGRpbjpvcGVuc2VzYW1l") == nil)
        #expect(BearerToken.from(authorization: "Bearér abc") == nil)
        #expect(BearerToken.from(authorization: "") == nil)
        // `| 0x20` folds only letters onto letters: "BEARER" with an @ or a digit is not the scheme.
        #expect(BearerToken.from(authorization: "Be@rer abc") == nil)
        #expect(BearerToken.from(authorization: "Bearer 🐝") == "🐝")
    }
}
