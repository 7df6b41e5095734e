@testable import AuthService
import ColonyImport
import ColonyModels
import Foundation
import Testing

/// The import's pure rules (issue 33): texts fitted to Colony's limits, GoTrue's `auth.users`
/// conventions, password hashes Colony cannot verify, metadata over the limits, the report.
@Suite("Import mapping rules")
struct ImportMappingTests {
    @Test("texts over a limit are cut between characters, blank ones get the default, fitting ones stay as written")
    func fittingTexts() {
        #expect(ImportText.fit("  Cora  ", max: 60) == ("Cora", nil))
        #expect(ImportText.fit(" as written ", max: 60, trim: false) == (" as written ", nil))
        // Cut at 60, then the spaces the cut left at the end trimmed.
        let long = String(repeating: "a", count: 58) + "  bcdef"
        #expect(ImportText.fit(long, max: 60) == (String(repeating: "a", count: 58), .cut(from: 65)))
        #expect(ImportText.fit("", max: 60, fallback: "Someone") == ("Someone", .defaulted))
        #expect(ImportText.fit("   ", max: 60, fallback: nil) == (nil, nil))
        #expect(ImportText.fit(nil, max: 5, fallback: "A long default") == ("A lon", .defaulted))
        // A family emoji is 7 scalars: a cut never splits it.
        let family = "👨‍👩‍👧‍👦"
        #expect(ImportText.fit("ab" + family + "cd", max: 8) == ("ab", .cut(from: 11)))
        #expect(ImportText.fit("ab" + family + "cd", max: 9) == ("ab" + family, .cut(from: 11)))
        #expect(ImportText.reason(.cut(from: 61), field: "name", max: 60) == ImportText.reason(.cut(from: 99), field: "name", max: 60))
    }

    @Test("bcrypt hashes are kept; argon2 and Firebase scrypt ones are named and left out; '' and NULL are none")
    func passwordHashes() {
        let bcrypt = "$2a$10$abcdefghijklmnopqrstuu5RjVwTPOaUuS1M2Q6ZyQyGm3cNxN3bK"
        #expect(ImportedPasswordHash(bcrypt) == .bcrypt(bcrypt))
        #expect(ImportedPasswordHash("$2b$04$" + String(repeating: "x", count: 53)) == .bcrypt("$2b$04$" + String(repeating: "x", count: 53)))
        #expect(ImportedPasswordHash("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2g") == .unusable(scheme: "argon2id"))
        #expect(ImportedPasswordHash("$argon2i$v=19$m=4096,t=3,p=1$c2FsdA$aGFzaA") == .unusable(scheme: "argon2i"))
        #expect(ImportedPasswordHash("$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=c2lnbmVy$c2FsdA==$aGFzaA==") == .unusable(scheme: "firebase-scrypt"))
        #expect(ImportedPasswordHash("plain") == .unusable(scheme: "unknown"))
        #expect(ImportedPasswordHash("") == .none)
        #expect(ImportedPasswordHash(nil) == .none)
    }

    @Test("auth.users as GoTrue writes it: '' for no email or phone, another hash scheme, no address at all, an old confirmed_at, a ban for ever")
    func goTrueUsers() throws {
        let id = UUID()
        let argon = try UserImportParser.user(from: [
            "id": id.uuidString, "email": "Imported@Example.com", "phone": "", "encrypted_password": "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
            "email_confirmed_at": "2024-01-02 03:04:05.123456+00", "phone_confirmed_at": nil, "confirmed_at": "2024-01-02 03:04:05.123456+00",
            "banned_until": "infinity", "raw_app_meta_data": #"{"provider":"email","providers":["email"]}"#,
        ], line: 1, requireAddress: false)
        #expect(argon.email == "imported@example.com" && argon.phone == nil)
        #expect(argon.encryptedPassword == nil && argon.unusablePasswordScheme == "argon2id")
        #expect(argon.emailConfirmedAt != nil && argon.bannedUntil == .distantFuture)

        let phoneOnly = try UserImportParser.user(from: ["id": id.uuidString, "email": "", "phone": "15551234567", "encrypted_password": "",
                                                          "phone_confirmed_at": "2024-01-02T03:04:05Z"], line: 1)
        #expect(phoneOnly.email == nil && phoneOnly.phone == "15551234567" && phoneOnly.encryptedPassword == nil && phoneOnly.unusablePasswordScheme == nil)

        // An OAuth account whose provider gave no address: a Supabase import takes it, a users file does not.
        let bare: [String: String?] = ["id": id.uuidString, "email": nil, "phone": nil, "encrypted_password": nil]
        #expect(try UserImportParser.user(from: bare, line: 1, requireAddress: false).email == nil)
        #expect(throws: UserImportParser.Failure.self) { try UserImportParser.user(from: bare, line: 1) }

        // An export from before `email_confirmed_at` existed keeps the confirmation in `confirmed_at`.
        let old = try UserImportParser.user(from: ["id": id.uuidString, "email": "a@b.io", "confirmed_at": "2020-05-06 07:08:09+00"], line: 1)
        #expect(old.emailConfirmedAt != nil)
        let unconfirmed = try UserImportParser.user(from: ["id": id.uuidString, "email": "a@b.io", "email_confirmed_at": nil, "confirmed_at": "2020-05-06 07:08:09+00"], line: 1)
        #expect(unconfirmed.emailConfirmedAt == nil)
    }

    @Test("metadata over Colony's limits loses its largest keys, never the providers")
    func metadataFit() {
        let big = JSONValue.string(String(repeating: "x", count: MetadataLimits.maximumBytes))
        let fitted = ImportedMetadata.fit(user: ["full_name": .string("Ann"), "avatar_blob": big], app: ["provider": .string("email"), "providers": .array([.string("email")])])
        #expect(fitted.dropped == ["user_metadata.avatar_blob"])
        #expect(fitted.user == ["full_name": .string("Ann")] && fitted.app["providers"] != nil)
        var deep = JSONValue.string("bottom")
        for _ in 0..<10 { deep = .object(["next": deep]) }
        #expect(ImportedMetadata.fit(user: ["name": .string("B"), "tree": deep], app: [:]).dropped == ["user_metadata.tree"])
        #expect(ImportedMetadata.fit(user: ["name": .string("C")], app: [:]).dropped.isEmpty)
    }

    @Test("the report counts changed rows per reason, lists each, forgets those of a row that did not come over, and does not fail the run for them")
    func reportOfChanges() throws {
        let report = ImportReport(title: "t")
        report.imported("public.builders")
        report.adjusted("public.builders", id: "b1", reason: "name blank: given a default")
        report.adjusted("public.builders", id: "b2", reason: "name blank: given a default")
        report.adjusted("public.builders", id: "b3", reason: "bio over Colony's 500 characters: cut to 500")
        report.discardAdjustments("public.builders", id: "b3")
        #expect(report.tables.first?.adjusted == ["name blank: given a default": 2])
        #expect(report.adjustedRows.map(\.id) == ["b1", "b2"])
        #expect(!report.isIncomplete)
        let json = try report.json(dryRun: false)
        #expect(json.contains(#""adjusted_rows":"#) && json.contains(#""complete":true"#))
        #expect(report.render(dryRun: false).contains("public.builders: 2 name blank: given a default"))
    }
}
