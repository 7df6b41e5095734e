import CCrypt
import ColonyModels
import Crypto
import Foundation
import NIOPosix
import ServiceLifecycle

/// bcrypt through libxcrypt (auth's users and the console's operators): `$2b$` hashes for new passwords, and verification of the
/// `$2a$`/`$2b$`/`$2y$` hashes Supabase Auth exports.
public enum Bcrypt {
    public struct Failure: Error {}

    public static func hash(_ password: String, cost: Int) throws -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        // nil random bytes: libxcrypt draws the salt from the kernel's entropy.
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &salt, Int32(salt.count)) != nil else { throw Failure() }
        let setting = salt.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return try crypt(password, setting: String(decoding: setting, as: UTF8.self))
    }

    public static func verify(_ password: String, hash: String) -> Bool {
        guard hash.hasPrefix("$2"), let computed = try? crypt(password, setting: hash) else { return false }
        return ConstantTime.equal(computed.utf8, hash.utf8)
    }

    static func crypt(_ password: String, setting: String) throws -> String {
        let data = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<crypt_data>.size, alignment: MemoryLayout<crypt_data>.alignment)
        defer { data.deallocate() }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        let state = data.bindMemory(to: crypt_data.self, capacity: 1)
        guard let result = crypt_rn(password, setting, state, Int32(MemoryLayout<crypt_data>.size)) else { throw Failure() }
        let text = String(cString: result)
        guard !text.hasPrefix("*") else { throw Failure() }
        return text
    }

}

/// Hashes and verifies passwords on threads of its own, at a lower priority: bcrypt takes tens
/// of milliseconds of CPU, which must never run on the event loops or Swift's cooperative pool.
public final class PasswordHasher: Service, Sendable {
    private let pool: NIOThreadPool
    public let cost: Int
    public let threads: Int
    private let dummyHash: String

    public init(cost: Int, threads: Int) {
        self.cost = cost
        self.threads = threads
        self.pool = NIOThreadPool(numberOfThreads: threads)
        // Verified against when an account does not exist, at the same cost as real hashes.
        self.dummyHash = (try? Bcrypt.hash(SymmetricKey(size: .bits256).withUnsafeBytes { Base64URL.encode(Array($0)) }, cost: cost)) ?? ""
        pool.start()
    }

    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await pool.runIfActive {
            colony_lower_current_thread_priority()
            return try Bcrypt.hash(password, cost: cost)
        }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await pool.runIfActive {
            colony_lower_current_thread_priority()
            return Bcrypt.verify(password, hash: hash)
        }
    }

    /// A hash to compare against when the account does not exist, so a wrong email costs as
    /// much time as a wrong password (no account enumeration by timing).
    public func dummyVerify(_ password: String) async throws {
        _ = try await verify(password, hash: dummyHash)
    }

    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }

    /// Stops the threads (a hasher used outside a service group: a command, a test).
    public func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}
