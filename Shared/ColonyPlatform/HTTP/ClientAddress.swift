import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which peers may tell a service who the client is through `X-Forwarded-For`, and how the client
/// address is read from it. Every service resolves the address the same way (per-address limits
/// key on it), so a client cannot pick its own address by writing the header.
///
/// - `cidrs`: the hops (the peer, then `X-Forwarded-For` from right to left) are walked while they
///   are trusted proxies; the first hop that is not one is the client. A peer that is not a trusted
///   proxy is the client itself, whatever headers it sent.
/// - `count`: exactly that many proxies stand in front of the service (the peer is the first):
///   the client is the hop that many places from the right.
///
/// Read from `COLONY_TRUSTED_PROXIES` (comma-separated CIDRs or addresses; default loopback only,
/// the local gateway) or `COLONY_TRUSTED_PROXY_COUNT` (a number; overrides the list).
public struct TrustedProxies: Sendable, Equatable {
    public enum Rule: Sendable, Equatable {
        case cidrs([IPNetwork])
        case count(Int)
    }

    public var rule: Rule

    public init(_ rule: Rule) {
        self.rule = rule
    }

    /// The gateway on the same machine (`scripts/run`'s nginx).
    public static let loopback = TrustedProxies(.cidrs([IPNetwork("127.0.0.0/8")!, IPNetwork("::1/128")!]))

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> TrustedProxies {
        if environment.optionalString("COLONY_TRUSTED_PROXY_COUNT") != nil {
            return TrustedProxies(.count(try environment.int("COLONY_TRUSTED_PROXY_COUNT", default: 0, range: 0...16)))
        }
        guard let list = environment.optionalString("COLONY_TRUSTED_PROXIES") else { return .loopback }
        var networks: [IPNetwork] = []
        for item in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            guard let network = IPNetwork(item) else {
                try environment.problem(ConfigurationError(variable: "COLONY_TRUSTED_PROXIES", problem: "has \"\(item)\", which is not an IP address or CIDR (e.g. 10.0.0.0/8, fd00::/8)"))
                continue
            }
            networks.append(network)
        }
        return TrustedProxies(.cidrs(networks))
    }

    /// The client's address for a request from `peer` carrying `forwardedFor` (every
    /// `X-Forwarded-For` field value, in order).
    public func clientAddress(peer: String?, forwardedFor: [String]) -> String {
        let peerHop = peer.map(Self.normalized) ?? "unknown"
        let forwarded = forwardedFor.flatMap { $0.split(separator: ",") }
            .map { Self.normalized(String($0)) }
            .filter { !$0.isEmpty }
        switch rule {
        case .count(let proxies):
            guard proxies > 0 else { return peerHop }
            let hops = forwarded + [peerHop]
            return hops[max(0, hops.count - 1 - proxies)]
        case .cidrs(let networks):
            func trusted(_ hop: String) -> Bool {
                guard let address = IPAddress(hop) else { return false }
                return networks.contains { $0.contains(address) }
            }
            guard trusted(peerHop) else { return peerHop }
            // The right-most hop that is not a trusted proxy; if every hop is one, the left-most.
            return forwarded.last { !trusted($0) } ?? forwarded.first ?? peerHop
        }
    }

    /// One hop as written: trimmed, without brackets or a port, IPv4-mapped IPv6 as IPv4, at
    /// most 64 characters (a hop that is no address is kept as text, never longer).
    static func normalized(_ hop: String) -> String {
        var text = hop.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])  // IPv4 with a port
        }
        if let address = IPAddress(text) { return address.description }
        return String(text.prefix(64))
    }
}

/// An IPv4 or IPv6 address as its bytes (4 or 16).
public struct IPAddress: Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let raw = withUnsafeBytes(of: &v6) { Array($0) }
            // ::ffff:a.b.c.d is the IPv4 address a dual-stack socket reports.
            bytes = raw.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] ? Array(raw.suffix(4)) : raw
        } else {
            return nil
        }
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A CIDR block (`10.0.0.0/8`, `fd00::/8`) or a single address.
public struct IPNetwork: Sendable, Equatable {
    public let address: IPAddress
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.address = address
    }

    public func contains(_ other: IPAddress) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(address.bytes, other.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if mine & mask != theirs & mask { return false }
            remaining -= 8
        }
        return true
    }
}
