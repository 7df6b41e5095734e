import AsyncHTTPClient
import ColonyPlatform
import ColonyStorage
import Foundation
import NIOCore
import NIOPosix

/// Where a Supabase project's Storage objects are read from.
public protocol ObjectSource: Sendable {
    /// The object's bytes, nil when there is none.
    func object(bucket: String, name: String) async throws -> ByteBuffer?
}

/// A folder as `supabase storage cp -r ss:///BUCKET DIR/BUCKET` leaves it: `{root}/{bucket}/{name}`.
public struct FolderObjects: ObjectSource {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public func object(bucket: String, name: String) async throws -> ByteBuffer? {
        // Object names are the source's data: nothing may climb out of the folder.
        let segments = (bucket + "/" + name).split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        let path = root + "/" + segments.joined(separator: "/")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return ByteBuffer(bytes: data)
    }
}

/// An S3-compatible endpoint where every Storage bucket is an S3 bucket, as Supabase's own
/// (`https://<project>.supabase.co/storage/v1/s3`, with the project's S3 access keys): objects
/// are `GET {endpoint}/{bucket}/{name}`, signed with AWS Signature Version 4.
public struct S3Objects: ObjectSource {
    public let endpoint: String
    let signer: SigV4Signer
    let httpClient: HTTPClient

    public init(endpoint: String, region: String, accessKeyID: String, secretAccessKey: String, httpClient: HTTPClient = .shared) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.signer = SigV4Signer(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, region: region)
        self.httpClient = httpClient
    }

    public func object(bucket: String, name: String) async throws -> ByteBuffer? {
        guard let components = URLComponents(string: endpoint), let host = components.host else { throw ImportFailure("bad S3 endpoint \(endpoint)") }
        let authority = host + (components.port.map { ":\($0)" } ?? "")
        var basePath = components.path
        if basePath.hasSuffix("/") { basePath.removeLast() }
        let path = basePath + "/" + ([bucket] + name.split(separator: "/").map(String.init)).map(SigV4Signer.uriEncode).joined(separator: "/")
        var request = HTTPClientRequest(url: "\(components.scheme ?? "https")://\(authority)\(path)")
        request.method = .GET
        for (header, value) in signer.sign(method: "GET", path: path, headers: ["host": authority], payloadHash: SigV4Signer.payloadHash(ByteBuffer()), date: Date()) {
            request.headers.add(name: header, value: value)
        }
        let response = try await httpClient.execute(request, timeout: .seconds(60))
        switch response.status.code {
        case 200: return try await response.body.collect(upTo: 256 << 20)
        case 404: return nil
        default:
            let body = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
            throw ImportFailure("S3 GET \(bucket)/\(name) answered \(response.status.code): \(body.prefix(300))")
        }
    }
}

/// How a row names a Storage object: Supabase's public, signed or authenticated URL
/// (`…/storage/v1/object/{public|sign|authenticated}/{bucket}/{name}[?…]`), or an object
/// path in the column's bucket (`{name}` or `{bucket}/{name}`). Anything else (a URL elsewhere)
/// is not an object Colony can copy.
public enum StorageReference: Equatable, Sendable {
    case object(bucket: String, name: String)
    case external(String)

    public init?(_ text: String?, defaultBucket: String) {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        let withoutQuery = String(text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        if let range = withoutQuery.range(of: "/storage/v1/object/") {
            var rest = withoutQuery[range.upperBound...].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if let first = rest.first, ["public", "sign", "authenticated"].contains(first) { rest.removeFirst() }
            guard rest.count >= 2 else { self = .external(text); return }
            let name = rest.dropFirst().joined(separator: "/")
            self = .object(bucket: rest[0], name: name.removingPercentEncoding ?? name)
        } else if withoutQuery.contains("://") {
            self = .external(text)
        } else {
            var name = withoutQuery.hasPrefix("/") ? String(withoutQuery.dropFirst()) : withoutQuery
            if name.hasPrefix(defaultBucket + "/") { name = String(name.dropFirst(defaultBucket.count + 1)) }
            self = .object(bucket: defaultBucket, name: name)
        }
    }
}

/// Copies the files rows refer to from the source into Colony's buckets, through Colony's
/// `Storage` (so a copied file meets its bucket's rules: type, signature, size).
public final class ImportFiles: Sendable {
    let source: (any ObjectSource)?
    let storage: Storage?
    /// `storage.objects` metadata of the source: "{bucket}/{name}" → its content type.
    let contentTypes: [String: String]

    public init(source: (any ObjectSource)?, storage: Storage?, contentTypes: [String: String] = [:]) {
        self.source = source
        self.storage = storage
        self.contentTypes = contentTypes
    }

    /// The content types Supabase recorded for the project's objects (`storage.objects`), when
    /// the source database has that table.
    public static func contentTypes(from database: SourceDatabase) async throws -> [String: String] {
        var types: [String: String] = [:]
        for try await page in database.rows("storage", "objects", orderBy: "bucket_id, name") {
            for row in page {
                guard let bucket = try? row.string("bucket_id"), let name = try? row.string("name"),
                      let type = (try? row.object("metadata"))?["mimetype"]?.stringValue else { continue }
                types[bucket + "/" + name] = type
            }
        }
        return types
    }

    func copy(_ text: String?, defaultBucket: String, into bucket: StorageBucket, key: String, dryRun: Bool,
              table: String, rowID: String, report: ImportReport, reportMissing: Bool = true) async throws -> StoredObject? {
        guard let reference = StorageReference(text, defaultBucket: defaultBucket) else { return nil }
        guard case .object(let sourceBucket, let name) = reference else {
            report.incomplete(table, id: rowID, reason: "\(text ?? "") is not a Supabase Storage object")
            return nil
        }
        guard let source, let storage else {
            if reportMissing { report.incomplete(table, id: rowID, reason: "\(sourceBucket)/\(name): no --storage given") }
            return nil
        }
        guard let bytes = try await source.object(bucket: sourceBucket, name: name) else {
            if reportMissing { report.incomplete(table, id: rowID, reason: "\(sourceBucket)/\(name) is not in the storage source") }
            return nil
        }
        let type = Self.contentType(declared: contentTypes[sourceBucket + "/" + name], name: name, bytes: bytes, allowed: bucket.allowedContentTypes)
        if dryRun {
            // Checked as an upload would be, not stored.
            guard let type, bucket.allowedContentTypes.contains(type), ContentType.matches(bytes, type: type), bytes.readableBytes <= bucket.maxBytes, bytes.readableBytes > 0 else {
                report.incomplete(table, id: rowID, reason: "\(sourceBucket)/\(name) would be refused by \(bucket.name) (type \(type ?? "unknown"), \(bytes.readableBytes) bytes)")
                return nil
            }
            report.fileCopied()
            return StoredObject(bucket: bucket.name, key: key, contentType: type, size: bytes.readableBytes, version: Int64(Date().timeIntervalSince1970 * 1000), publicURL: "")
        }
        do {
            let stored = try await storage.upload(bytes, contentType: type, to: bucket, key: key)
            report.fileCopied()
            return stored
        } catch let error as APIError {
            report.incomplete(table, id: rowID, reason: "\(sourceBucket)/\(name) refused by \(bucket.name): \(error.message)")
            return nil
        }
    }

    /// What Supabase recorded, else what the name's extension says, else the first of the
    /// bucket's types whose signature the bytes have.
    static func contentType(declared: String?, name: String, bytes: ByteBuffer, allowed: Set<String>) -> String? {
        if let declared { return ContentType.normalised(declared) }
        let byExtension: [String: String] = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "m4a": "audio/mp4", "mp4": "audio/mp4",
            "mp3": "audio/mpeg", "aac": "audio/aac", "wav": "audio/wav", "ogg": "audio/ogg", "webm": "audio/webm",
        ]
        if let dot = name.lastIndex(of: "."), let type = byExtension[name[name.index(after: dot)...].lowercased()] { return type }
        return allowed.sorted().first { ContentType.matches(bytes, type: $0) && $0 != "audio/aac" } ?? allowed.sorted().first { ContentType.matches(bytes, type: $0) }
    }
}
