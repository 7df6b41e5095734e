import ColonyPlatform
import Foundation
import NIOCore

/// A named set of objects with its own rules: who may read it by URL, which content types and
/// how many bytes an upload may have. The service that owns a bucket declares it in code.
public struct StorageBucket: Sendable, Hashable {
    public let name: String
    /// Public buckets are readable by URL without a token; private ones only through signed URLs.
    public let isPublic: Bool
    /// Normalised content types (see `ContentType.normalised`).
    public let allowedContentTypes: Set<String>
    public let maxBytes: Int

    public init(name: String, isPublic: Bool, allowedContentTypes: Set<String>, maxBytes: Int) {
        // A bucket name becomes a directory, a key prefix and a URL segment: keep it plain.
        precondition(Self.isValidName(name), "bucket name must match [a-z0-9-]+, got \"\(name)\"")
        precondition(maxBytes > 0, "bucket \(name): maxBytes must be positive")
        self.name = name
        self.isPublic = isPublic
        self.allowedContentTypes = Set(allowedContentTypes.map(ContentType.normalised))
        self.maxBytes = maxBytes
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
        }
    }

    /// JPEG and PNG pictures (profile, group and post photos).
    public static func images(_ name: String, maxBytes: Int = 5 << 20, isPublic: Bool = true) -> StorageBucket {
        StorageBucket(name: name, isPublic: isPublic, allowedContentTypes: ["image/jpeg", "image/png"], maxBytes: maxBytes)
    }

    /// The formats phones record voice messages in.
    public static func audio(_ name: String, maxBytes: Int = 10 << 20, isPublic: Bool = true) -> StorageBucket {
        StorageBucket(
            name: name, isPublic: isPublic,
            allowedContentTypes: ["audio/mp4", "audio/mpeg", "audio/aac", "audio/wav", "audio/ogg", "audio/webm"],
            maxBytes: maxBytes
        )
    }
}

/// The keys of pictures their owners replace: `{owner}/{version}`, the version a random number
/// from 2^62 to 2^63 drawn for each upload, so a key cannot be guessed from the owner's id and
/// dies with the picture it names. A version below 2^62 (an upload time in milliseconds) is a
/// picture stored before these keys, under `{owner}`: it keeps its key until it is replaced.
public enum PictureKey {
    static let firstRandomVersion: Int64 = 1 << 62

    public static func newVersion() -> Int64 {
        var generator = SystemRandomNumberGenerator()
        return Int64.random(in: firstRandomVersion...Int64.max, using: &generator)
    }

    public static func key(owner: UUID, version: Int64) -> String {
        version >= firstRandomVersion ? "\(owner.lowercased)/\(version)" : owner.lowercased
    }

    /// `key(owner:version:)` as a SQL expression over two columns (or expressions): for the
    /// queries that name a user's pictures, such as their data export.
    public static func sql(owner: String, version: String) -> String {
        "CASE WHEN \(version) >= \(firstRandomVersion) THEN \(owner)::text || '/' || \(version)::text ELSE \(owner)::text END"
    }
}

/// Who may read a bucket's objects through the authenticated routes (and get them signed): a
/// rule of the service that owns the bucket, given the user's id and the object's key (a member
/// of the group the key names, say). It reads the service's own data: it is asked again, for the
/// signer, each time a signed URL of the bucket is served (see `Storage.signerCheckTTL`).
public struct StorageAccess: Sendable {
    public let canRead: @Sendable (UUID, String) async throws -> Bool

    public init(canRead: @escaping @Sendable (UUID, String) async throws -> Bool) {
        self.canRead = canRead
    }

    /// Any user of the service's app (its token middleware already checked the app).
    public static let anyUser = StorageAccess { _, _ in true }
    public static let nobody = StorageAccess { _, _ in false }

    /// Keys `{scope id}/…`: the caller must belong to the scope the first segment names.
    public static func firstSegment(_ isMember: @escaping @Sendable (UUID, UUID) async throws -> Bool) -> StorageAccess {
        StorageAccess { user, key in
            guard let first = key.split(separator: "/").first, let scope = UUID(uuidString: String(first)) else { return false }
            return try await isMember(user, scope)
        }
    }
}

/// What `Storage.upload` stored, with the URL clients should use to fetch it.
public struct StoredObject: Sendable, Equatable {
    public let bucket: String
    public let key: String
    /// Normalised content type.
    public let contentType: String
    public let size: Int
    /// Upload time in milliseconds since 1970; part of public URLs so a replaced object gets a new URL.
    public let version: Int64
    /// Public bucket: the public URL with `?v={version}`; private bucket: a signed URL valid for
    /// the default TTL.
    public let publicURL: String

    public init(bucket: String, key: String, contentType: String, size: Int, version: Int64, publicURL: String) {
        self.bucket = bucket
        self.key = key
        self.contentType = contentType
        self.size = size
        self.version = version
        self.publicURL = publicURL
    }
}

/// Content type normalisation and the magic-number check that keeps a declared type honest.
public enum ContentType {
    // Names clients send for the same format; we store and compare the canonical one.
    static let aliases: [String: String] = [
        "audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4",
        "audio/x-wav": "audio/wav", "audio/wave": "audio/wav",
        "audio/mp3": "audio/mpeg", "image/jpg": "image/jpeg",
    ]

    /// Lower-cased, parameters (`;codecs=...`) dropped, aliases mapped to the canonical type.
    public static func normalised(_ contentType: String) -> String {
        let base = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let type = base.trimmingCharacters(in: .whitespaces).lowercased()
        return aliases[type] ?? type
    }

    /// Whether the bytes start like the (normalised) type says. Types we know no signature for
    /// are taken as declared; a bucket that allows them has chosen to trust the client.
    public static func matches(_ bytes: ByteBuffer, type: String) -> Bool {
        let head = bytes.getBytes(at: bytes.readerIndex, length: min(bytes.readableBytes, 12)) ?? []
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        switch type {
        case "image/jpeg": return starts([0xFF, 0xD8, 0xFF])
        case "image/png": return starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "audio/mp4": return starts(Array("ftyp".utf8), at: 4)
        // ID3 tag, or an MPEG frame sync (11 set bits).
        case "audio/mpeg": return starts(Array("ID3".utf8)) || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0)
        // ADTS header, MPEG-4 (F1) or MPEG-2 (F9), no CRC.
        case "audio/aac": return starts([0xFF, 0xF1]) || starts([0xFF, 0xF9])
        case "audio/wav": return starts(Array("RIFF".utf8)) && starts(Array("WAVE".utf8), at: 8)
        case "audio/ogg": return starts(Array("OggS".utf8))
        case "audio/webm": return starts([0x1A, 0x45, 0xDF, 0xA3])
        default: return true
        }
    }
}

/// Object keys: 1–512 characters, "/"-separated segments of `[A-Za-z0-9._-]`, none empty, "."
/// or "..". That alone keeps a key inside its bucket's directory and makes it URL-safe as is.
/// Segments are at most 255 characters, the longest file name filesystems allow.
public enum StorageKey {
    public static func isValid(_ key: String) -> Bool {
        guard (1...512).contains(key.utf8.count) else { return false }
        return key.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            (1...255).contains(segment.utf8.count) && segment != "." && segment != ".."
                && segment.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                         UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                        true
                    default:
                        false
                    }
                }
        }
    }

    /// Throws 400 `invalid_key` for a key `isValid` rejects.
    public static func validate(_ key: String) throws(APIError) {
        guard isValid(key) else {
            throw APIError.badRequest("object key must be 1-512 characters of A-Z a-z 0-9 . _ - in /-separated segments of at most 255, without . or .. segments", code: "invalid_key")
        }
    }
}
