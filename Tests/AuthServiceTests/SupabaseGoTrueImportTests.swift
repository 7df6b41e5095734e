@testable import AuthService
import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// The accounts step over `auth.users` and `auth.identities` as GoTrue's own migrations make them
/// (issue 33): identities exactly as the source has them, hashes Colony cannot verify left out
/// and counted, GoTrue's `''` conventions, an account without any address.
@Suite("Importing GoTrue's auth.users exactly")
struct SupabaseGoTrueImportTests {
    @Test("an Apple-only account keeps Apple as its only identity; argon2 and Firebase scrypt users come over without a password, counted per scheme; '' is no phone; a user with no address comes over")
    func goTrueAccounts() async throws {
        try await withRunningAuth { auth in
            try await withSupabaseSource { source in
                let apple = UUID(), argon = UUID(), firebase = UUID(), bare = UUID()
                let sub = "001999.\(UUID().uuidString.lowercased().prefix(12)).0420", tag = UUID().uuidString.prefix(8).lowercased()
                let identity = UUID()
                try await source.execute("""
                    INSERT INTO auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, phone, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                                            confirmation_token, recovery_token, email_change_token_new, email_change)
                    VALUES ('00000000-0000-0000-0000-000000000000', '\(apple)', 'authenticated', 'authenticated', 'apple-\(tag)@privaterelay.appleid.com', '', now(), NULL,
                            '{"provider": "apple", "providers": ["apple"]}', '{"sub": "\(sub)", "iss": "https://appleid.apple.com", "email_verified": true}', now(), now(), '', '', '', ''),
                           ('00000000-0000-0000-0000-000000000000', '\(argon)', 'authenticated', 'authenticated', 'argon-\(tag)@example.com',
                            '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo', now(), '', '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), '', '', '', ''),
                           ('00000000-0000-0000-0000-000000000000', '\(firebase)', 'authenticated', 'authenticated', 'firebase-\(tag)@example.com',
                            '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=c2lnbmVy$c2FsdA==$aGFzaA==', now(), NULL, '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), '', '', '', ''),
                           ('00000000-0000-0000-0000-000000000000', '\(bare)', 'authenticated', 'authenticated', NULL, '', NULL, NULL,
                            '{"provider": "github", "providers": ["github"]}', '{}', now(), now(), '', '', '', '');
                    INSERT INTO auth.identities (id, provider_id, user_id, identity_data, provider, created_at, updated_at, last_sign_in_at)
                    VALUES ('\(identity)', '\(sub)', '\(apple)', '{"sub": "\(sub)", "email": "apple-\(tag)@privaterelay.appleid.com", "is_private_email": true}', 'apple', now() - interval '9 days', now(), now() - interval '2 days'),
                           (gen_random_uuid(), '\(argon)', '\(argon)', '{"sub": "\(argon)", "email": "argon-\(tag)@example.com"}', 'email', now(), now(), NULL),
                           (gen_random_uuid(), '\(firebase)', '\(firebase)', '{"sub": "\(firebase)", "email": "firebase-\(tag)@example.com"}', 'email', now(), now(), NULL),
                           (gen_random_uuid(), '4242\(tag)', '\(bare)', '{"sub": "4242\(tag)", "user_name": "bare"}', 'github', now(), now(), NULL);
                    """)
                let report = try await withImportTarget(app: .ibelieveinyou) { target in
                    let job = try await target.service(.auth, schema: auth.database.schema, role: auth.database.user)
                    _ = try await SupabaseAuthImport.importAccounts(job, from: source.database)
                }
                #expect(report.tables.map { [$0.name, "\($0.read)", "\($0.imported)", "\($0.skipped.count)"] } == [["auth.users", "4", "4", "0"], ["auth.identities", "4", "4", "0"]])
                #expect(report.tables.first?.adjusted == [
                    SupabaseAuthImport.passwordReason(scheme: "argon2id"): 1, SupabaseAuthImport.passwordReason(scheme: "firebase-scrypt"): 1,
                ])
                #expect(!report.isIncomplete)

                let service = try #require(auth.serviceKeys[.ibelieveinyou])
                func account(_ id: UUID) async throws -> [String: Any] {
                    let answer = try await auth.request(.GET, "/admin/users/\(id.uuidString.lowercased())", app: .ibelieveinyou, bearer: service, apiKey: service)
                    #expect(answer.status == 200)
                    return answer.json
                }
                func identities(_ json: [String: Any]) -> [[String]] {
                    ((json["identities"] as? [[String: Any]]) ?? []).map { [$0["provider"] as? String ?? "", $0["id"] as? String ?? "", $0["identity_id"] as? String ?? ""] }
                }
                let appleAccount = try await account(apple)
                #expect(identities(appleAccount).map { Array($0.prefix(2)) } == [["apple", sub]])
                #expect(identities(appleAccount).first?.last == identity.uuidString.lowercased())
                #expect((appleAccount["app_metadata"] as? [String: Any])?["providers"] as? [String] == ["apple"])
                #expect(identities(try await account(argon)).map { $0[0] } == ["email"])
                #expect(try await account(argon)["phone"] as? String ?? "" == "")
                #expect(identities(try await account(bare)).map { $0[0] } == ["github"])
                // No password signs the argon2 user in: theirs is not in Colony.
                #expect(try await auth.signIn(app: .ibelieveinyou, email: "argon-\(tag)@example.com", password: "whatever-it-was").status == 400)
            }
        }
    }
}
