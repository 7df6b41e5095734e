import ColonyPlatform
import Foundation
import NIOCore
import NIOPosix

/// Where `Storage` keeps the bytes. Keys reaching a backend are valid (`StorageKey`); backends
/// check again anyway, since they can be called directly.
public protocol StorageBackend: Sendable {
    func put(bucket: String, key: String, body: ByteBuffer, contentType: String) async throws
    /// nil when there is no such object.
    func get(bucket: String, key: String) async throws -> (body: ByteBuffer, contentType: String)?
    /// A missing object is not an error.
    func delete(bucket: String, key: String) async throws
    /// For `/ready`.
    func isReachable() async -> Bool
}

/// Objects as files under `{root}/{bucket}/{key}`, for a single host or a shared volume.
///
/// Each file starts with one line holding its content type, then the bytes: type and body then
/// change together in one rename, which a separate metadata file could not promise. Writes go
/// to `{root}/.tmp` (no bucket can be called that), are fsynced, then renamed over the old file,
/// so readers see the old object or the new one, never half of one. Blocking file IO runs on
/// NIO's thread pool, off the event loops.
public struct FileSystemStorageBackend: StorageBackend {
    public let root: String
    private let threadPool: NIOThreadPool
    // The content-type line is short; a longer "header" means the file is not ours.
    private static let maxHeaderBytes = 256

    public init(root: String) {
        self.init(root: root, threadPool: .singleton)
    }

    public init(root: String, threadPool: NIOThreadPool) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.threadPool = threadPool
    }

    public func put(bucket: String, key: String, body: ByteBuffer, contentType: String) async throws {
        let path = try path(bucket: bucket, key: key)
        guard !contentType.isEmpty, contentType.utf8.count < Self.maxHeaderBytes, !contentType.contains(where: \.isNewline) else {
            throw APIError.unprocessable("invalid content type", code: "unsupported_media_type")
        }
        let temporaryDirectory = root + "/.tmp"
        try await threadPool.runIfActive {
            let directory = String(path[..<path.lastIndex(of: "/")!])
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
            var contents = ByteBuffer(string: contentType + "\n")
            contents.writeImmutableBuffer(body)
            let temporary = "\(temporaryDirectory)/\(UUID().uuidString)"
            do {
                try Self.writeFile(contents, to: temporary)
                guard rename(temporary, path) == 0 else { throw FileSystemStorageError("rename", path: path) }
            } catch {
                unlink(temporary)
                throw error
            }
        }
    }

    public func get(bucket: String, key: String) async throws -> (body: ByteBuffer, contentType: String)? {
        let path = try path(bucket: bucket, key: key)
        return try await threadPool.runIfActive { () throws -> (body: ByteBuffer, contentType: String)? in
            guard var contents = try Self.readFile(path) else { return nil }
            let newline = contents.readableBytesView.prefix(Self.maxHeaderBytes).firstIndex(of: UInt8(ascii: "\n"))
            guard let newline, let contentType = contents.readString(length: newline - contents.readerIndex) else {
                throw FileSystemStorageError("read", path: path, code: EINVAL)
            }
            contents.moveReaderIndex(forwardBy: 1)
            return (contents, contentType)
        }
    }

    public func delete(bucket: String, key: String) async throws {
        let path = try path(bucket: bucket, key: key)
        let bucketPath = "\(root)/\(bucket)"
        try await threadPool.runIfActive {
            guard unlink(path) == 0 || errno == ENOENT || errno == ENOTDIR else {
                throw FileSystemStorageError("unlink", path: path)
            }
            // Folders the key made (`{owner}/…`) go with their last object; rmdir leaves any
            // that still hold something.
            var directory = String(path[..<path.lastIndex(of: "/")!])
            while directory.count > bucketPath.count, rmdir(directory) == 0 {
                directory = String(directory[..<directory.lastIndex(of: "/")!])
            }
        }
    }

    /// The root exists (created if need be) and is writable.
    public func isReachable() async -> Bool {
        let root = root
        return (try? await threadPool.runIfActive {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            return access(root, W_OK) == 0
        }) ?? false
    }

    func path(bucket: String, key: String) throws -> String {
        guard StorageBucket.isValidName(bucket) else { throw APIError.badRequest("invalid bucket name", code: "invalid_bucket") }
        try StorageKey.validate(key)
        return "\(root)/\(bucket)/\(key)"
    }

    static func writeFile(_ contents: ByteBuffer, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemStorageError("open", path: path) }
        defer { close(descriptor) }
        try contents.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw FileSystemStorageError("write", path: path)
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw FileSystemStorageError("fsync", path: path) }
    }

    /// The file's bytes, or nil when there is no file (or a directory) at `path`.
    static func readFile(_ path: String) throws -> ByteBuffer? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileSystemStorageError("open", path: path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileSystemStorageError("fstat", path: path) }
        guard status.st_mode & S_IFMT == S_IFREG else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: Int(status.st_size))
        while true {
            var interrupted = false
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 << 10) { target in
                let count = read(descriptor, target.baseAddress!, target.count)
                guard count >= 0 else {
                    guard errno == EINTR else { throw FileSystemStorageError("read", path: path) }
                    interrupted = true
                    return 0
                }
                return count
            }
            if count == 0 && !interrupted { return buffer }
        }
    }
}

/// A failed system call of the filesystem backend (a 500 to clients; details in the log).
public struct FileSystemStorageError: Error, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}
