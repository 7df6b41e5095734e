import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import Hummingbird
import NIOCore

/// Colony's file storage: checks uploads against their bucket's rules, stores them in a
/// backend, and hands out and serves URLs (public ones, and signed ones for private buckets).
public struct Storage: Sendable {
    public let backend: any StorageBackend
    /// Where clients reach the download routes, without a trailing slash (the gateway's URL).
    public let publicBaseURL: String
    public let defaultSignedURLTTL: Duration
    /// How long the answer "may this signer still read this object" is reused by the signed-URL
    /// route of a members-only bucket: the bound on how long a signed URL outlives its signer's
    /// membership (at most `maxSignerCheckTTL`; zero asks every time).
    public let signerCheckTTL: Duration
    private let signingKey: SymmetricKey

    /// The longest `signerCheckTTL` may be: the documents promise a removed member's signed URL
    /// stops within a minute.
    public static let maxSignerCheckTTL: Duration = .seconds(60)

    /// `signingKey` signs download URLs; every replica serving the same buckets needs the same one.
    public init(backend: any StorageBackend, publicBaseURL: String, signingKey: [UInt8], defaultSignedURLTTL: Duration = .seconds(3600),
                signerCheckTTL: Duration = .seconds(30)) {
        precondition(!signingKey.isEmpty, "storage signing key must not be empty")
        var base = publicBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.backend = backend
        self.publicBaseURL = base
        self.signingKey = SymmetricKey(data: signingKey)
        self.defaultSignedURLTTL = defaultSignedURLTTL
        self.signerCheckTTL = min(max(signerCheckTTL, .zero), Self.maxSignerCheckTTL)
    }

    /// Checks, then stores (replacing any object under the same key). Throws APIError: 400
    /// `invalid_key`; 422 `unsupported_media_type` when the declared type is missing, not
    /// allowed for the bucket, or not what the bytes' signature says; 422 `empty_file`;
    /// 422 `file_too_large`. Content type parameters are ignored, case does not matter.
    public func upload(_ body: ByteBuffer, contentType: String?, to bucket: StorageBucket, key: String) async throws -> StoredObject {
        try StorageKey.validate(key)
        let type = contentType.map(ContentType.normalised) ?? ""
        guard bucket.allowedContentTypes.contains(type) else {
            let allowed = bucket.allowedContentTypes.sorted().joined(separator: ", ")
            throw APIError.unprocessable("content type must be one of: \(allowed)", code: "unsupported_media_type")
        }
        guard body.readableBytes > 0 else { throw APIError.unprocessable("the file is empty", code: "empty_file") }
        guard body.readableBytes <= bucket.maxBytes else {
            throw APIError.unprocessable("the file is larger than \(bucket.maxBytes) bytes", code: "file_too_large")
        }
        guard ContentType.matches(body, type: type) else {
            throw APIError.unprocessable("the file's content is not \(type)", code: "unsupported_media_type")
        }
        try await backend.put(bucket: bucket.name, key: key, body: body, contentType: type)
        let version = Int64(Date().timeIntervalSince1970 * 1000)
        return StoredObject(
            bucket: bucket.name, key: key, contentType: type, size: body.readableBytes, version: version,
            publicURL: publicURL(bucket, key: key, version: version)
        )
    }

    /// Stores a picture its owner replaces (a profile photo, a group picture, a cover) under a
    /// key of its own, `{owner}/{version}`, the version a fresh random number (`PictureKey`), and
    /// deletes the one it replaces: the old URL stops working, and knowing someone's id (a
    /// blocked user, an ex-member) leads to no picture of theirs. Returns the new version, which
    /// the owning service keeps (its `*_version` column) to build the URL.
    public func uploadPicture(_ body: ByteBuffer, contentType: String?, to bucket: StorageBucket, owner: UUID, replacing old: Int64?) async throws -> Int64 {
        let version = PictureKey.newVersion()
        let key = PictureKey.key(owner: owner, version: version)
        // A picture from before per-upload keys is the file `{owner}`, where the new key needs a
        // folder: it goes first (the upload is checked before anything is written, so a refused
        // upload has already failed by then only if the old picture was the problem).
        if let old, PictureKey.key(owner: owner, version: old) == owner.lowercased {
            try StorageKey.validate(key)
            try await removePicture(bucket, owner: owner, version: old)
            _ = try await upload(body, contentType: contentType, to: bucket, key: key)
            return version
        }
        _ = try await upload(body, contentType: contentType, to: bucket, key: key)
        try await removePicture(bucket, owner: owner, version: old)
        return version
    }

    /// Deletes an owner's picture of that version (nothing when nil).
    public func removePicture(_ bucket: StorageBucket, owner: UUID, version: Int64?) async throws {
        guard let version else { return }
        try await remove(bucket, key: PictureKey.key(owner: owner, version: version))
    }

    /// The URL of an owner's picture of that version (nil when there is none).
    public func pictureURL(_ bucket: StorageBucket, owner: UUID, version: Int64?) -> String? {
        version.map { publicURL(bucket, key: PictureKey.key(owner: owner, version: $0), version: $0) }
    }

    /// Deletes the object; a missing one is fine.
    public func remove(_ bucket: StorageBucket, key: String) async throws {
        try StorageKey.validate(key)
        try await backend.delete(bucket: bucket.name, key: key)
    }

    /// The URL clients fetch the object by. Public bucket: `{base}/storage/v1/object/public/{bucket}/{key}`,
    /// with `?v={version}` when given (then cached as immutable). Private bucket: a signed URL
    /// valid for the default TTL, so a service can rebuild a working URL from a stored key. It
    /// names no signer, so a members-only bucket (one with a `StorageAccess`) refuses it: rows of
    /// those carry `authenticatedURL`.
    public func publicURL(_ bucket: StorageBucket, key: String, version: Int64?) -> String {
        guard bucket.isPublic else { return signedURL(bucket, key: key, expiresIn: defaultSignedURLTTL) }
        return "\(publicBaseURL)/storage/v1/object/public/\(bucket.name)/\(key)" + (version.map { "?v=\($0)" } ?? "")
    }

    /// The stable URL of an object in a private bucket, for rows that are cached (feeds, realtime
    /// rows): `{base}/storage/v1/object/authenticated/{bucket}/{key}`. It never expires; it is
    /// served to a caller with a token the bucket's `StorageAccess` admits, and
    /// `POST /storage/v1/object/sign/{bucket}/{key}` turns it into a signed URL for a player that
    /// cannot send a token.
    public func authenticatedURL(_ bucket: StorageBucket, key: String) -> String {
        "\(publicBaseURL)/storage/v1/object/authenticated/\(bucket.name)/\(key)"
    }

    /// `{base}/storage/v1/object/sign/{bucket}/{key}?token={expiry}[.{signer}].{signature}`, for any
    /// bucket. With a `signer`, serving checks again that the signer may still read the object
    /// (members-only buckets require one).
    public func signedURL(_ bucket: StorageBucket, key: String, expiresIn: Duration, signer: UUID? = nil) -> String {
        let expires = Int64(Date().timeIntervalSince1970) + expiresIn.components.seconds
        return "\(publicBaseURL)/storage/v1/object/sign/\(bucket.name)/\(key)?token=\(token(bucket: bucket.name, key: key, expires: expires, signer: signer))"
    }

    /// Whether the backend answers, for `/ready`.
    public func isReachable() async -> Bool {
        await backend.isReachable()
    }

    /// `{expiry unix seconds}[.{signer}].{base64url(HMAC-SHA256(bucket \n key \n expiry [\n signer]))}`:
    /// the expiry and the signer (a lower-case user id) travel in the clear and are covered by the
    /// MAC, so no server-side state is needed to check them.
    func token(bucket: String, key: String, expires: Int64, signer: UUID? = nil) -> String {
        let signerText = signer?.lowercased
        let mac = HMAC<SHA256>.authenticationCode(for: Self.signedMessage(bucket, key, expires, signer: signerText), using: signingKey)
        return "\(expires)." + (signerText.map { "\($0)." } ?? "") + Base64URL.encode(mac)
    }

    /// What a genuine, current token says.
    struct SignedToken: Equatable {
        var expires: Int64
        /// Who asked for the URL; nil in tokens the service made for itself.
        var signer: UUID?
    }

    /// The token's expiry and signer when it is genuine and current. A token not of the form
    /// (`tokenPattern`) is 400 `invalid_signature`; one of the form that is not genuine, or has
    /// expired, is 403 `invalid_signature` (a well-formed request refused, as the services'
    /// documents state).
    @discardableResult
    func verify(token: String, bucket: String, key: String, requireSigner: Bool = false, now: Date = Date()) throws(APIError) -> SignedToken {
        let parts = token.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        let signerText = parts.count == 3 ? String(parts[1]) : nil
        // A members-only bucket's tokens name their signer (`signedByMemberTokenPattern`): one
        // without (from before signers were named) has nobody whose right to check.
        guard let expiryText = parts.first, let macText = parts.last, parts.count >= 2,
              signerText != nil || !requireSigner, (1...19).contains(expiryText.utf8.count), expiryText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let mac = Base64URL.decode(macText), mac.count == 32,
              // Only the canonical spelling: base64's last character carries two spare bits, so
              // four spellings would otherwise decode to the same MAC.
              Base64URL.encode(mac) == macText
        else {
            throw APIError.badRequest("malformed signature", code: "invalid_signature")
        }
        // The signer only as this service writes it (lower case), so one URL has one spelling.
        var signer: UUID?
        if let signerText {
            guard let id = UUID(uuidString: signerText), id.lowercased == signerText else {
                throw APIError.badRequest("malformed signature", code: "invalid_signature")
            }
            signer = id
        }
        guard let expires = Int64(expiryText),
              // Constant time, so timing does not reveal how much of a forged MAC was right.
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.signedMessage(bucket, key, expires, signer: signerText), using: signingKey)
        else {
            throw APIError.forbidden("invalid signature", code: "invalid_signature")
        }
        guard expires >= Int64(now.timeIntervalSince1970) else {
            throw APIError.forbidden("signature expired", code: "invalid_signature")
        }
        return SignedToken(expires: expires, signer: signer)
    }

    /// A signed URL's token as the documents state it: the expiry (decimal Unix seconds), the
    /// signer's id when the URL was signed for a user, and the MAC (32 bytes in canonical unpadded
    /// base64url).
    public static let tokenPattern = "^[0-9]{1,19}\\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.)?[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"
    /// The token of a members-only bucket's signed URL: the signer is required.
    public static let signedByMemberTokenPattern = "^[0-9]{1,19}\\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"

    private static func signedMessage(_ bucket: String, _ key: String, _ expires: Int64, signer: String?) -> Data {
        Data(("\(bucket)\n\(key)\n\(expires)" + (signer.map { "\n\($0)" } ?? "")).utf8)
    }

}

// MARK: - Download routes

extension Storage {
    /// Download routes for `buckets` (the service that owns a bucket serves it; the gateway
    /// routes `/storage/v1/object/*/{bucket}/` to that service):
    /// - `GET /storage/v1/object/public/{bucket}/{key...}`: public buckets only (a private one
    ///   answers 404, as if the object did not exist); cached for a year when `?v=` is present.
    /// - `GET /storage/v1/object/sign/{bucket}/{key...}?token=`: any bucket; a missing or
    ///   malformed token is 400 `invalid_signature`, a wrong or expired one 403. A members-only
    ///   bucket's (a private one with an `access` entry) tokens name their signer, and serving asks
    ///   the bucket's `access` again whether the signer may still read the object (the answer
    ///   reused for at most `signerCheckTTL`): once not, 403 `invalid_signature`.
    /// - `GET /storage/v1/object/authenticated/{bucket}/{key...}`, with the caller's token: the
    ///   object when the bucket's `access` admits the caller, else 404 (as if it did not exist).
    /// - `POST /storage/v1/object/sign/{bucket}/{key...}`, with the caller's token and
    ///   `{"expiresIn": seconds}` (Supabase's `createSignedUrl`; 1 to 604800, default 3600): a
    ///   signed URL for an object the caller may read, `{"signedURL": "/object/sign/…?token=…",
    ///   "signed_url": absolute}`; signed by the caller in a members-only bucket.
    /// Buckets without an `access` entry: public ones admit any user of the service's app, private
    /// ones nobody.
    public func addRoutes(to router: Router<ColonyRequestContext>, buckets: [StorageBucket], tokenMiddleware: TokenMiddleware,
                          access: [String: StorageAccess] = [:]) {
        let authenticated = router.group(RouterPath("/storage/v1/object")).add(middleware: tokenMiddleware)
        let signers = SignerChecks(ttl: signerCheckTTL)
        for bucket in buckets {
            let rule = access[bucket.name] ?? (bucket.isPublic ? .anyUser : .nobody)
            // Its signed URLs follow the rule: they name who signed them, and stop serving once
            // that user may no longer read the object (a member removed from the group).
            let membersOnly = !bucket.isPublic && access[bucket.name] != nil
            // `…/{bucket}/` without a key: the routes below need at least one segment, and the
            // router's miss would otherwise become a 405 naming the very method asked.
            let noKey: @Sendable (Request, ColonyRequestContext) async throws -> Response = { _, _ in
                try StorageKey.validate("")  // always throws: 400 invalid_key
                throw APIError.notFound("object not found")
            }
            router.get(RouterPath("/storage/v1/object/public/\(bucket.name)"), use: noKey)
            router.get(RouterPath("/storage/v1/object/sign/\(bucket.name)"), use: noKey)
            router.post(RouterPath("/storage/v1/object/sign/\(bucket.name)"), use: noKey)
            router.get(RouterPath("/storage/v1/object/authenticated/\(bucket.name)"), use: noKey)
            router.get(RouterPath("/storage/v1/object/public/\(bucket.name)/**")) { request, context -> Response in
                guard bucket.isPublic else { throw APIError.notFound("object not found") }
                let key = try Self.key(context)
                let versioned = request.uri.queryParameters["v"] != nil
                return try await download(bucket, key: key, cacheControl: versioned ? "public, max-age=31536000, immutable" : "public, max-age=60")
            }
            authenticated.get(RouterPath("authenticated/\(bucket.name)/**")) { _, context -> Response in
                let key = try Self.key(context)
                guard try await rule.canRead(try context.requireUser().id, key) else { throw APIError.notFound("object not found") }
                return try await download(bucket, key: key, cacheControl: "private, max-age=3600")
            }
            authenticated.post(RouterPath("sign/\(bucket.name)/**")) { request, context -> Response in
                let key = try Self.key(context)
                let body = try RouteSupport.decode(SignRequest.self, try await RouteSupport.collect(request, context), emptyAs: SignRequest())
                guard let seconds = body.seconds else {
                    throw APIError.unprocessable("expiresIn must be a whole number of seconds from 1 to \(Self.maxSignedSeconds)")
                }
                let user = try context.requireUser().id
                guard try await rule.canRead(user, key), try await backend.get(bucket: bucket.name, key: key) != nil else {
                    throw APIError.notFound("object not found")
                }
                let expires = Int64(Date().timeIntervalSince1970) + Int64(seconds)
                let token = token(bucket: bucket.name, key: key, expires: expires, signer: membersOnly ? user : nil)
                let relative = "/object/sign/\(bucket.name)/\(key)?token=\(token)"
                let json = "{\"signedURL\":\(Self.quoted(relative)),\"signed_url\":\(Self.quoted(publicBaseURL + "/storage/v1" + relative))}"
                return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: json)))
            }
            router.get(RouterPath("/storage/v1/object/sign/\(bucket.name)/**")) { request, context -> Response in
                let key = try Self.key(context)
                guard let token = request.uri.queryParameters["token"] else {
                    throw APIError.badRequest("missing token", code: "invalid_signature")
                }
                let signed = try verify(token: String(token), bucket: bucket.name, key: key, requireSigner: membersOnly)
                if let signer = signed.signer, try await !signers.allows(signer, bucket: bucket.name, key: key, rule: rule) {
                    throw APIError.forbidden("the signer may no longer read this object", code: "invalid_signature")
                }
                // Clients may keep it until the token runs out (no longer than the signer check
                // would let it live), but no shared cache may.
                var remaining = max(0, signed.expires - Int64(Date().timeIntervalSince1970))
                if signed.signer != nil { remaining = min(remaining, signerCheckTTL.components.seconds) }
                return try await download(bucket, key: key, cacheControl: "private, max-age=\(remaining)")
            }
        }
    }

    /// The longest a signed URL made on request lives: a week.
    static let maxSignedSeconds = 604_800

    /// `{"expiresIn": N}` (Supabase's spelling; `expires_in` reads the same); absent is an hour.
    struct SignRequest: Decodable {
        var expiresIn: Double?

        var seconds: Int? {
            let value = expiresIn ?? 3600
            guard value == value.rounded(), (1...Double(Storage.maxSignedSeconds)).contains(value) else { return nil }
            return Int(value)
        }
    }

    static func quoted(_ text: String) -> String {
        String(decoding: (try? ColonyJSON.encode(text)) ?? Array("\"\"".utf8), as: UTF8.self)
    }

    private static func key(_ context: ColonyRequestContext) throws(APIError) -> String {
        let key = context.parameters.getCatchAll().joined(separator: "/")
        try StorageKey.validate(key)
        return key
    }

    private func download(_ bucket: StorageBucket, key: String, cacheControl: String) async throws -> Response {
        guard let object = try await backend.get(bucket: bucket.name, key: key) else {
            throw APIError.notFound("object not found")
        }
        let headers: HTTPFields = [
            .contentType: object.contentType,
            .cacheControl: cacheControl,
            // Uploads are user content: browsers must not second-guess the type we checked.
            .xContentTypeOptions: "nosniff",
        ]
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: object.body))
    }
}

// MARK: - Configuration

extension Storage {
    enum BackendKind: String {
        case filesystem, s3
    }

    /// Reads `COLONY_STORAGE_BACKEND` ("filesystem" | "s3"), `COLONY_STORAGE_PATH`,
    /// `COLONY_STORAGE_PUBLIC_URL`, `COLONY_STORAGE_SIGNING_KEY` (required, 32+ characters, no known default),
    /// `COLONY_STORAGE_SIGNER_CHECK_SECONDS` (`signerCheckTTL`: 0–60, default 30) and,
    /// for S3, `COLONY_STORAGE_S3_ENDPOINT`, `_REGION`, `_BUCKET`, `_ACCESS_KEY_ID`, `_SECRET_ACCESS_KEY`.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> Storage {
        let kind = try environment.enumeration("COLONY_STORAGE_BACKEND", default: BackendKind.filesystem)
        let baseURL = try environment.url("COLONY_STORAGE_PUBLIC_URL")?.absoluteString ?? "http://localhost:8080"
        let signingKey = try environment.secret("COLONY_STORAGE_SIGNING_KEY", minimumLength: 32)
        let signerCheck = try environment.int("COLONY_STORAGE_SIGNER_CHECK_SECONDS", default: 30, range: 0...Int(Self.maxSignerCheckTTL.components.seconds))
        let backend: any StorageBackend
        switch kind {
        case .filesystem:
            backend = FileSystemStorageBackend(root: environment.string("COLONY_STORAGE_PATH", default: "/var/lib/colony/storage"))
        case .s3:
            guard let endpoint = try environment.url("COLONY_STORAGE_S3_ENDPOINT") else {
                throw ConfigurationError(variable: "COLONY_STORAGE_S3_ENDPOINT", problem: "is required when COLONY_STORAGE_BACKEND is s3")
            }
            backend = S3StorageBackend(configuration: S3Configuration(
                endpoint: endpoint.absoluteString,
                region: environment.string("COLONY_STORAGE_S3_REGION", default: "us-east-1"),
                bucket: try environment.string("COLONY_STORAGE_S3_BUCKET"),
                accessKeyID: try environment.string("COLONY_STORAGE_S3_ACCESS_KEY_ID"),
                secretAccessKey: try environment.string("COLONY_STORAGE_S3_SECRET_ACCESS_KEY")
            ))
        }
        return Storage(backend: backend, publicBaseURL: baseURL, signingKey: Array(signingKey.utf8), signerCheckTTL: .seconds(signerCheck))
    }
}
