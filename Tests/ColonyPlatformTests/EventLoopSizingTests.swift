import ColonyPlatform
import Testing

@Suite("Event loops sized to the CPUs a service may use")
struct EventLoopSizingTests {
    @Test("the affinity mask's CPUs are counted from /proc's status; a missing or garbled mask is nil")
    func allowedCPUs() {
        #expect(EventLoopSizing.allowedCPUs(status: "Name:\tcolony-auth\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n") == 1)
        #expect(EventLoopSizing.allowedCPUs(status: "Cpus_allowed:\t3\n") == 2)
        #expect(EventLoopSizing.allowedCPUs(status: "Cpus_allowed:\tff,00000f0f\n") == 16)
        #expect(EventLoopSizing.allowedCPUs(status: "Cpus_allowed:\t0\n") == nil)
        #expect(EventLoopSizing.allowedCPUs(status: "Cpus_allowed:\tzz\n") == nil)
        #expect(EventLoopSizing.allowedCPUs(status: "Name:\tx\n") == nil)
        // This process's own mask reads: at least one CPU.
        #expect((EventLoopSizing.allowedCPUs() ?? 0) >= 1)
    }
}
