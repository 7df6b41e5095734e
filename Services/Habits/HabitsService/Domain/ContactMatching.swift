import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The rules of contact matching: what an upload may hold, how numbers are hashed (auth's
/// `phone_hash`, with the pepper only servers know) and the per-user quotas.
struct ContactMatching: Sendable {
    let pepper: String
    let perUpload: Int
    let uploadQuota: Quota
    let numberQuota: Quota
    let matchQuota: Quota

    init(settings: HabitsSettings) {
        pepper = settings.phonePepper
        perUpload = settings.contactsPerUpload
        uploadQuota = settings.contactUploadQuota
        numberQuota = settings.contactNumberQuota
        matchQuota = settings.contactMatchQuota
    }

    /// A number as the client sends it: E.164, with the name the user's address book gives it.
    struct Number: Sendable {
        var phone: String
        var displayName: String?
    }

    struct Hashed: Sendable {
        var phone: String
        var hash: String
        var displayName: String?
    }

    /// Checks an upload and hashes its numbers, one entry per number (the last name wins).
    func validate(_ numbers: [Number]) throws -> [Hashed] {
        var errors = ValidationErrors()
        errors.check(numbers.count <= perUpload, "at most \(perUpload) contacts per upload")
        errors.check(numbers.allSatisfy { PhoneHash.isE164($0.phone) }, "each phone is an E.164 number: + and 8 to 15 digits")
        errors.check(numbers.allSatisfy { TextRules.length($0.displayName ?? "") <= 200 }, "display_name is at most 200 code points")
        try errors.throwIfAny()
        var unique: [String: Hashed] = [:]
        for number in numbers {
            let hash = PhoneHash.of(e164: number.phone, pepper: pepper)
            unique[hash] = Hashed(phone: number.phone, hash: hash, displayName: number.displayName)
        }
        return unique.values.sorted { $0.hash < $1.hash }
    }

    /// Counts an upload of `numbers` numbers against the user's quotas (429 over either).
    func chargeUpload(numbers: Int, userID: UUID, logger: Logger, on connection: PostgresConnection) async throws {
        let quotas = Quotas(logger: logger)
        try await quotas.check("contact_uploads|\(userID.lowercased)", uploadQuota, code: "contact_quota_exceeded",
                               message: "too many contact uploads, try again later", on: connection)
        try await quotas.check("contact_numbers|\(userID.lowercased)", numberQuota, amount: max(1, numbers), code: "contact_quota_exceeded",
                               message: "too many contact numbers uploaded, try again later", on: connection)
    }

    func chargeMatches(userID: UUID, logger: Logger, on connection: PostgresConnection) async throws {
        try await Quotas(logger: logger).check("contact_matches|\(userID.lowercased)", matchQuota, code: "contact_quota_exceeded",
                                                          message: "too many contact match reads, try again later", on: connection)
    }
}
