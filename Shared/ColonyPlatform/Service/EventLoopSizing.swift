import Foundation
import NIOCore

/// NIO sizes its shared event loops by the machine's cores, or a cgroup's quota or cpuset, but
/// not by the CPUs this process may run on. A service pinned to one core (`taskset`, a
/// scheduler's CPU affinity) got a loop per core of the machine all sharing it, and a request
/// whose socket and database connection sat on different loops waited for one to be scheduled
/// off the core before the other could run: up to milliseconds of the scheduler's time slice.
public enum EventLoopSizing {
    /// Sizes the shared loops to the CPUs the process may run on, when that is fewer. Call once,
    /// before anything uses NIO's singletons. `NIO_SINGLETON_GROUP_LOOP_COUNT`, when set, wins.
    public static func fitToAllowedCPUs(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil,
              let allowed = allowedCPUs(), allowed < System.coreCount
        else { return }
        NIOSingletons.groupLoopCountSuggestion = allowed
    }

    /// How many CPUs this process's affinity mask allows (`Cpus_allowed` in /proc/self/status:
    /// glibc's `sched_getaffinity` does not import into Swift), or nil when it cannot be read.
    public static func allowedCPUs(status: String? = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) -> Int? {
        guard let status,
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return nil }
        var count = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && character != " " && character != "\t" {
            guard let nibble = character.hexDigitValue else { return nil }
            count += nibble.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }
}
