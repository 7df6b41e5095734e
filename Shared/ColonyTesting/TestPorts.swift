import Foundation
import Synchronization

/// A port for a server a test starts (in process or as a child process), not handed out before
/// in this test process and free when asked for.
///
/// Asking the kernel (bind to port 0, read the port, close) raced: between the close and the
/// server's own bind, seconds later after its migrations, another test asked and got the same
/// port, or an outgoing connection took it as its ephemeral port. One server then failed to
/// bind and a test talked to another test's service. So ports come from below the kernel's
/// ephemeral range (no outgoing connection uses them), each once per process.
public func freePort() throws -> Int {
    try TestPorts.shared.next()
}

/// The process's port allocator. Its one piece of shared state is the point of it: every test
/// in the process draws from the same sequence.
final class TestPorts: Sendable {
    static let shared = TestPorts()

    /// Where the allocator draws from: the 12,000 ports just below the ephemeral range
    /// (32768–60999 on Linux by default).
    let range: Range<Int>
    private let cursor: Mutex<Int>

    init() {
        let ephemeralStart = Self.ephemeralRangeStart() ?? 32768
        let upper = max(ephemeralStart, 13024)
        range = (upper - 12000)..<upper
        // A start that differs between processes: two test runs side by side (two worktrees)
        // rarely meet, and the probe below skips what the other one holds.
        cursor = Mutex(Int.random(in: 0..<12000))
    }

    func next() throws -> Int {
        for _ in 0..<range.count {
            let offset = cursor.withLock { value -> Int in
                defer { value = (value + 1) % range.count }
                return value
            }
            let port = range.lowerBound + offset
            if Self.canBind(port) { return port }
        }
        throw TestSetupError("no free port in \(range)")
    }

    /// Whether a socket can bind `port` now (nothing bound or lingering there).
    static func canBind(_ port: Int) -> Bool {
        withLoopbackSocket(port: port) { socket, address, length in bind(socket, address, length) } == 0
    }

    static func ephemeralRangeStart() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) }
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func canConnect(port: Int) -> Bool {
    withLoopbackSocket(port: port) { socket, address, length in connect(socket, address, length) } == 0
}

/// Calls `body` with a fresh TCP socket and the address 127.0.0.1:`port`, then closes the
/// socket; -1 when no socket could be made.
private func withLoopbackSocket(port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return -1 }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}
